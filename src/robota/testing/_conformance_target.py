"""What the provider conformance kit runs against: scenarios and targets.

A fixture describes one provider under test as a :class:`ConformanceTarget` — the provider, the
model to address, and what it knows about the answers its transport will give (exact text, the
error status a scripted failure carries, the tool-call ids a replayed response uses). The kit
(:func:`robota.testing.run_provider_conformance`) asks for a fresh target per scenario.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, final

from robota.core import ConfigurationError
from robota.core.providers import Provider, ToolChoice, ToolSpec
from robota.core.schema import check_parameter_schema

__all__ = [
    "CONFORMANCE_SCENARIOS",
    "DEFAULT_OUTPUT_SCHEMA",
    "DEFAULT_TOOL",
    "ConformanceScenario",
    "ConformanceTarget",
]

ConformanceScenario: TypeAlias = Literal[
    "text",
    "stream",
    "tool_round_trip",
    "parallel_tool_calls",
    "structured_output",
    "abort_mid_stream",
    "error_mapping",
    "usage_and_model",
]
"""One behaviour the conformance kit checks; see :func:`~robota.testing.run_provider_conformance`
for what each asserts and which calls it makes, in order."""

CONFORMANCE_SCENARIOS: Final[tuple[ConformanceScenario, ...]] = (
    "text",
    "stream",
    "tool_round_trip",
    "parallel_tool_calls",
    "structured_output",
    "abort_mid_stream",
    "error_mapping",
    "usage_and_model",
)
"""Every scenario, in the order the kit runs them."""

DEFAULT_TOOL: Final = ToolSpec(
    name="get_capital",
    description="Look up the capital city of a country.",
    parameters=MappingProxyType(
        {
            "type": "object",
            "properties": {
                "country": {"type": "string", "description": "The country, e.g. 'France'."}
            },
            "required": ["country"],
        }
    ),
)
"""The tool the kit offers unless a target names its own: ``get_capital(country: str)``."""

DEFAULT_OUTPUT_SCHEMA: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "type": "object",
        "properties": {
            "country": {"type": "string"},
            "capital": {"type": "string"},
        },
        "required": ["country", "capital"],
    }
)
"""The structured-output schema the kit asks for unless a target names its own:
``{"country": str, "capital": str}``, both required, no other keys (S16 closure)."""

Verify: TypeAlias = Callable[[], Awaitable[None] | None]
"""A fixture's own after-scenario check (see :attr:`ConformanceTarget.verify`)."""


@final
@dataclass(frozen=True, slots=True)
class ConformanceTarget:
    """One provider under test, as a fixture returns it for one scenario.

    Only ``provider`` and ``model`` are required. Every ``expected_*`` field is an expectation
    the fixture can state when its transport's answers are known (a replay server); ``None``
    means "not known", and the kit then checks only the shape of the answer.

    The kit owns the provider for the scenario: it calls ``await provider.aclose()`` when the
    scenario ends, pass or fail. Return a fresh provider for every scenario.

    Attributes:
        provider: The provider under test.
        model: The model to address (the provider's own name for it).
        expected_text: The exact text of every final text reply the scenario checks (a plain
            reply, a full stream, the reply after tool results, the agent's output) — not of
            tool-call responses, aborted or early-closed streams, nor structured replies.
        expected_model: The model the responses report as the one that answered
            (``usage_and_model``).
        expected_error_status: The HTTP status the ``error_mapping`` failure must carry.
        expected_error_switchable: The ``switchable`` verdict that failure must carry (S42).
        expected_tool_call_ids: The ids, in order, of the scenario's first tool-calling response
            (``tool_round_trip``, ``parallel_tool_calls``); they must arrive unchanged (S36).
        tools: The tools offered on tool-calling requests. The kit runs each as a real tool
            body in its :class:`~robota.Agent` checks, answering ``tool_result``.
        tool_choice: The ``tool_choice`` of the scenario's first tool-calling request;
            ``"required"`` helps a live model that is shy of tools. Follow-up requests and agent
            runs use ``"auto"``.
        tool_result: What the kit answers every tool call with.
        output_schema: The object schema of ``structured_output`` (the parameter-schema
            subset, S16).
        verify: Called (and awaited, if it returns an awaitable) after the scenario's own
            checks passed and before the provider is closed. Raise ``AssertionError`` to fail
            the scenario — a replay server checks here that the requests it received carried
            the tool-call ids back verbatim, say.

    Raises:
        ConfigurationError: a field that cannot work (no tools, an empty model, a schema outside
            the subset); the message says which.

    Example:
        A fixture for an adapter pointed at a local replay server that serves one script per
        scenario (the calls each scenario makes, in order, are listed on
        :func:`~robota.testing.run_provider_conformance`)::

            def factory(scenario: ConformanceScenario) -> ConformanceTarget:
                replay.load(f"fixtures/{scenario}.jsonl")
                return ConformanceTarget(
                    MyProvider(base_url=replay.url),
                    "my-model",
                    expected_text="Paris." if scenario in ("text", "stream") else None,
                    expected_error_status=503 if scenario == "error_mapping" else None,
                    verify=replay.assert_all_served,
                )
    """

    provider: Provider
    model: str
    expected_text: str | None = None
    expected_model: str | None = None
    expected_error_status: int | None = None
    expected_error_switchable: bool | None = None
    expected_tool_call_ids: tuple[str, ...] | None = None
    tools: tuple[ToolSpec, ...] = (DEFAULT_TOOL,)
    tool_choice: ToolChoice = "auto"
    tool_result: str = "Paris"
    output_schema: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_OUTPUT_SCHEMA)
    verify: Verify | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.provider, Provider):
            raise ConfigurationError(
                f"ConformanceTarget.provider must be a robota Provider, got {self.provider!r}"
            )
        model: object = self.model  # untyped fixture code can pass anything
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(
                f"ConformanceTarget.model must be a non-empty string, got {self.model!r}"
            )
        if not self.tools or not all(isinstance(spec, ToolSpec) for spec in self.tools):
            raise ConfigurationError(
                "ConformanceTarget.tools must be a non-empty tuple of ToolSpec; omit it to offer "
                "the kit's own get_capital tool"
            )
        if self.tool_choice not in ("auto", "required"):
            raise ConfigurationError(
                "ConformanceTarget.tool_choice must be 'auto' or 'required' (the request must be "
                f"allowed to call a tool), got {self.tool_choice!r}"
            )
        if self.expected_tool_call_ids is not None and not isinstance(
            self.expected_tool_call_ids, tuple
        ):
            raise ConfigurationError(
                "ConformanceTarget.expected_tool_call_ids must be a tuple of strings or None, "
                f"got {self.expected_tool_call_ids!r}"
            )
        issues = check_parameter_schema(self.output_schema)
        if issues:
            raise ConfigurationError(
                "ConformanceTarget.output_schema must be an object schema in the "
                "parameter-schema subset (S16): " + "; ".join(issues)
            )
