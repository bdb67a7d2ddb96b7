"""Structured output (S18): a run that returns a validated, typed object.

Before the first model call the provider's capability table is asked which transport can carry
the schema for this model (:func:`choose_output_transport`):

* ``json_schema`` — the provider takes a native schema parameter: use it;
* ``json_mode`` — it guarantees valid JSON but not a shape: JSON mode, plus the schema stated as a
  system instruction on the first attempt;
* ``instruction`` — neither (or silence in a table that exists): no transport option, the schema
  stated as a system instruction on the first attempt, so the first attempt is not spent
  discovering the shape;
* ``unchanged`` — the provider publishes no capability table at all: the request is sent as is
  (silence is not a stated absence).

Endpoint provenance is a separate fact (:meth:`Provider.endpoint_provenance`): behind a custom base
URL, the vendor's *default* claims are not relied on, only what the table states for the model.

The final text is parsed and validated on every run with the one validator (S16), then converted
to the requested type. A failure appends a feedback turn carrying the issues and the schema —
through the ordinary append-only path; structured output never rewrites history — up to a bounded
number of retries, then :class:`~robota.StructuredOutputError`. No forced-tool transport (S18).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, final, overload

import pydantic

from robota.core._errors import ConfigurationError, StorageError
from robota.core._messages import Message, SystemMessage
from robota.core.providers._capabilities import lookup_model_capabilities
from robota.core.providers._contract import Provider, ResponseFormat
from robota.core.schema._convert import schema_from_type
from robota.core.schema._subset import check_parameter_schema
from robota.core.schema._validate import pydantic_issues, validate_against_json_schema

__all__ = [
    "OutputSpec",
    "OutputTransport",
    "choose_output_transport",
]

OutputTransport: TypeAlias = Literal["json_schema", "json_mode", "instruction", "unchanged"]

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL)


@final
class OutputSpec:
    """A requested output: its schema and how to turn a valid value into the typed object."""

    __slots__ = ("_adapter", "name", "schema", "schema_text")

    def __init__(self, output: object) -> None:
        if isinstance(output, Mapping):
            issues = check_parameter_schema(output)
            if issues:
                raise ConfigurationError(
                    "the output schema is not in the parameter-schema subset (S16): "
                    + "; ".join(issues)
                )
            self.schema: Mapping[str, Any] = output
            self._adapter: pydantic.TypeAdapter[Any] | None = None
            self.name = str(output.get("title", "output"))
        else:
            self.schema = schema_from_type(output)
            self._adapter = pydantic.TypeAdapter(output)  # type: ignore[arg-type]
            self.name = getattr(output, "__name__", "output")
        self.schema_text = json.dumps(self.schema, ensure_ascii=False, sort_keys=True)

    def parse(self, text: str) -> tuple[object, list[str]]:
        """The typed object from a reply, or the issues that stand in its way."""
        _, typed, issues = self.validate(text)
        return typed, issues

    def validate(self, text: str) -> tuple[str | None, object, list[str]]:
        """The reply's validated JSON value as canonical JSON text, the typed object, the issues.

        The JSON text is what a journal keeps (S40): :meth:`rebuild` turns it back into the same
        typed object without the reply's parsing leniency (fences, surrounding prose).
        """
        try:
            value = _parse_json(text)
        except ValueError as exc:
            return None, None, [f"$: the reply is not valid JSON ({exc})"]
        typed, issues = self._typed(value)
        if issues:
            return None, None, issues
        return _canonical(value), typed, []

    def rebuild(self, saved: str) -> object:
        """The typed object from JSON text :meth:`validate` returned (validated again).

        Raises:
            StorageError: the text is not JSON or no longer validates (a damaged journal).
        """
        try:
            value = json.loads(saved)
        except ValueError as exc:
            raise StorageError(
                f"a saved structured output is not JSON ({exc}); the journal is damaged",
                code="journal_damaged",
                cause=exc,
            ) from exc
        typed, issues = self._typed(value)
        if issues:
            raise StorageError(
                "a saved structured output does not validate against its schema: "
                + "; ".join(issues),
                code="journal_damaged",
            )
        return typed

    def _typed(self, value: object) -> tuple[object, list[str]]:
        issues = validate_against_json_schema(self.schema, value)
        if issues:
            return None, issues
        if self._adapter is None:
            return value, []
        try:
            return self._adapter.validate_python(value), []
        except pydantic.ValidationError as exc:
            return None, pydantic_issues(exc)

    def response_format(self, transport: OutputTransport) -> ResponseFormat | None:
        """The transport option for ``transport`` (``None`` when the request carries none)."""
        if transport == "json_schema":
            return ResponseFormat("json_schema", self.schema, _wire_name(self.name))
        if transport == "json_mode":
            return ResponseFormat("json_object")
        return None


def _canonical(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _wire_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]
    return cleaned or "output"


def _parse_json(text: str) -> object:
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError as first:
        fenced = _FENCE.search(stripped)
        if fenced:
            return json.loads(fenced.group(1).strip())
        for opener, closer in (("{", "}"), ("[", "]")):
            start, end = stripped.find(opener), stripped.rfind(closer)
            if 0 <= start < end:
                try:
                    return json.loads(stripped[start : end + 1])
                except ValueError:
                    continue
        raise first


def choose_output_transport(provider: Provider, model: str) -> OutputTransport:
    """Which transport carries a schema for ``model`` on ``provider`` (S18)."""
    found = lookup_model_capabilities(provider, model)
    if found.capabilities is None:
        return "unchanged"
    # The model's own row or its family's rule (S30); the vendor default only for its own
    # endpoint (S18).
    declared = found.own.structured_output if found.own is not None else None
    if declared is None and provider.endpoint_provenance() != "custom":
        declared = found.capabilities.structured_output
    if declared == "json_schema":
        return "json_schema"
    if declared == "json_mode":
        return "json_mode"
    return "instruction"


@final
class InstructedMessages(Sequence[Message]):
    """A request's messages with a per-call instruction added to the system head (S18).

    The instruction exists only in the request: history keeps its single, unchanged head (S35).
    O(1) to build, whatever the history length.
    """

    __slots__ = ("_base", "_head", "_offset")

    def __init__(self, base: Sequence[Message], instruction: str) -> None:
        self._base = base
        if base and isinstance(base[0], SystemMessage):
            self._head = SystemMessage(f"{base[0].content}\n\n{instruction}", id=base[0].id)
            self._offset = 0
        else:
            self._head = SystemMessage(instruction)
            self._offset = 1

    def __len__(self) -> int:
        return len(self._base) + self._offset

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += len(self)
        if index == 0:
            return self._head
        if not 0 < index < len(self):
            raise IndexError("message index out of range")
        return self._base[index - self._offset]

    def __iter__(self) -> Iterator[Message]:
        yield self._head
        iterator = iter(self._base)
        if self._offset == 0:
            next(iterator, None)
        yield from iterator


@dataclass(frozen=True, slots=True)
class StructuredSettings:
    """Per-run structured-output settings."""

    spec: OutputSpec
    retries: int
    instruction: str
    feedback: str
