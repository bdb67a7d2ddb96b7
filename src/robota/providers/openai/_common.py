"""What both OpenAI wire APIs share beyond the vendor-neutral provider kit.

The kit (:mod:`robota.host._provider_kit`) drives SDK calls; this module adds OpenAI's own parts:
:func:`map_error` (the ``openai`` SDK's exceptions through :mod:`._errors`, everything else
through the kit's transport mapping) and :func:`output_schema` (when Structured Outputs may be
``strict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from robota.core.schema import project_tool_schema
from robota.host._provider_kit import (
    SDKProvider,
    StreamTranslator,
    ToolProjector,
    attested,
    check_adapter_options,
    check_base_url,
    count,
    drive_call,
    drive_stream,
    given,
    incomplete_stream,
    invalid_response,
    map_transport_error,
    member,
    no_capture,
    replayed,
    sdk_call,
    traced_call,
    with_extra_fields,
)
from robota.providers.openai._errors import map_openai_error
from robota.providers.openai._projection import OPENAI_STRICT_POLICY

__all__ = [
    "SDKProvider",
    "StreamTranslator",
    "ToolProjector",
    "attested",
    "check_adapter_options",
    "check_base_url",
    "count",
    "drive_call",
    "drive_stream",
    "given",
    "incomplete_stream",
    "invalid_response",
    "map_error",
    "member",
    "no_capture",
    "output_schema",
    "replayed",
    "sdk_call",
    "traced_call",
    "with_extra_fields",
]


def map_error(error: BaseException, *, provider: str, model: str | None) -> BaseException:
    """An exception from the ``openai`` SDK or its transport as the error to raise (S42)."""
    import openai  # noqa: PLC0415 - loaded by now; adapters import it lazily

    if isinstance(error, openai.OpenAIError):
        return map_openai_error(error, provider=provider, model=model)
    return map_transport_error(error, provider=provider, model=model)


def output_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The structured-output schema to send and whether it can be ``strict`` (S17, S18).

    Strict mode is used when the strict projection changes nothing that matters: annotations
    dropped and objects closed explicitly (a node with properties is already closed, S16) are
    fine; a field made nullable-and-required or a constraint dropped is not, because the reply
    is validated against the original schema and strict mode would then ask for something else.
    """
    result = project_tool_schema(schema, OPENAI_STRICT_POLICY)
    if (
        result.schema is not None
        and result.outcome != "rejected"
        and not result.nullable_paths
        and not result.dropped_constraints
    ):
        return dict(result.schema), True
    return dict(schema), False
