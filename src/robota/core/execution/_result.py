"""The value a run returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, Literal, TypeAlias, final

from typing_extensions import TypeVar

from robota.core._guardrails import GuardrailRecord
from robota.core._messages import Message
from robota.core._models import ContextWindow
from robota.core._plugin_failure import PluginFailure
from robota.core._usage import Usage
from robota.core.execution._journal import OutsideRequest
from robota.core.providers._effort import EffortOutcome

__all__ = ["AgentUsage", "OutputT", "RunResult", "RunStatus", "StopReason"]

OutputT = TypeVar("OutputT", default=str)
"""What :attr:`RunResult.output` holds: ``str`` for a plain run, the requested type for a
structured one (S18)."""

RunStatus: TypeAlias = Literal["complete", "interrupted", "suspended"]
"""``interrupted``: the run's signal aborted (or its stream consumer left) before it finished.
``suspended``: a tool saved a request for an outside response (S40); answer it with
:meth:`~robota.Agent.respond`, then :meth:`~robota.Agent.resume` the execution."""

StopReason: TypeAlias = Literal[
    "end_turn",
    "tool_only",
    "max_rounds",
    "empty_reply",
    "unavailable_tools",
    "context_limit",
    "interrupted",
]
"""Why the run stopped:

* ``end_turn`` — the model replied with text and no tool call;
* ``tool_only`` — tool-only completion was allowed and the turn ended on tool results;
* ``max_rounds`` — the round budget was used up; the output is the forced summary (S39);
* ``empty_reply`` — the model replied with nothing; the output is the forced summary;
* ``unavailable_tools`` — unavailable tools were called in consecutive rounds; the output is
  the forced final call (S37);
* ``context_limit`` — the next request would overflow the context window and was not sent; the
  output is the diagnostic (S39);
* ``interrupted`` — the run's signal aborted.
"""


@final
@dataclass(frozen=True, slots=True)
class AgentUsage:
    """What one agent of a run used (issue 29): its own model calls, never its sub-agents'.

    Attributes:
        usage: Usage summed over the agent's own provider calls (S29).
        cost: Their estimated USD cost; ``None`` when unknown (an unpriced model).
        runs: How many runs of this agent it covers (a sub-agent called twice: 2).
    """

    usage: Usage
    cost: float | None
    runs: int = 1


_NO_AGENTS: Mapping[str, AgentUsage] = MappingProxyType({})


@final
@dataclass(frozen=True, slots=True)
class RunResult(Generic[OutputT]):
    """What one run produced.

    Attributes:
        output: A plain run: the final assistant text (for an interrupted run, the text committed
            so far). A structured run (``output=`` given, S18): the validated object — ``None``
            when the run was interrupted or blocked by the context guard, so check ``status``.
        text: The final assistant text, whatever was requested.
        status: ``"complete"``, ``"interrupted"`` or ``"suspended"`` (S40: neither completion
            nor failure — see ``pending_requests``).
        usage: Usage summed over every provider call of the run (the forced summary included).
        cost: Estimated USD cost from the pricing table, priced per answering model; ``None``
            when any call's model has no registered price, or a call that reached the provider
            reported no usage or only partial usage (never a guess).
        messages: The messages this run added to history, in order (its user input first).
        run_id: The run's execution id (on every event it emitted); the same as
            ``execution_id``.
        model: The model that answered last, when known.
        provider: The provider of that reply (S30): after a fallback, the one the run moved to.
        rounds: Model rounds made (the forced summary included); a round's retried or
            fallen-back attempts (issue 28) count as one round.
        tool_calls_executed: Tool bodies that ran (skips and refusals are not counted, S37).
        plugin_errors: Plugin hooks that raised during the run (recorded and swallowed, S20).
        stop_reason: See :data:`StopReason`.
        attempts: Structured-output attempts made (the first one included); 1 for a plain run.
        effort: The reasoning-effort outcome of the run's last provider round (S24): the
            selection, the adapter's resolution, whether a native control was sent and whether
            the round was dispatched at all. ``None`` only for results built by hand.
        execution_id: The execution's id: the one passed as ``execution_id=`` or a minted one.
            With a journal, :meth:`~robota.Agent.resume` continues it.
        pending_requests: For a suspended run, the saved requests waiting for an outside
            response (each with ``id``, ``kind``, ``payload``); ``()`` otherwise.
        guardrails: Every guardrail call of the run, in order (issue 29): name, phase, outcome,
            duration and a guardrail agent's usage and cost — reported here, not in ``usage``.
        context_window: The context window the run's pre-send guard planned against and where
            it came from (S13, S39): ``context_window.source == "unknown"`` (``tokens`` is
            ``None``) says no window was known, so no request was checked for size. ``None``
            only for results built by hand.
        agent: The name of the agent that finished the run (issue 29); ``None`` only for
            results built by hand.
        usage_by_agent: Agent path → :class:`AgentUsage` (issue 29, a property): this agent's
            own entry under its name, and each sub-agent it called (``Agent.as_tool``) under
            ``name/child`` (``name/child/grandchild`` …). ``usage`` and ``cost`` include the
            sub-agents'; a sub-agent stopped by a usage limit counts what it used.
        sub_usage: What ``usage_by_agent`` returns once a sub-agent ran (empty otherwise); set
            by the run, not meant to be passed by hand.

    A resumed execution's result covers the whole execution: ``messages`` from its input on,
    ``rounds``, ``tool_calls_executed`` and ``usage`` over every settled call.
    """

    output: OutputT
    status: RunStatus
    usage: Usage
    messages: tuple[Message, ...]
    run_id: str
    model: str | None = None
    cost: float | None = None
    rounds: int = 0
    tool_calls_executed: int = 0
    plugin_errors: tuple[PluginFailure, ...] = ()
    stop_reason: StopReason = "end_turn"
    text: str = ""
    attempts: int = 1
    effort: EffortOutcome | None = None
    execution_id: str = ""
    pending_requests: tuple[OutsideRequest, ...] = ()
    context_window: ContextWindow | None = None
    provider: str | None = None
    guardrails: tuple[GuardrailRecord, ...] = ()
    agent: str | None = None
    # What usage_by_agent reads once a sub-agent ran; a plain run keeps the shared empty one
    # (issue 27: a kept result stays small) and the property builds its one entry on access.
    sub_usage: Mapping[str, AgentUsage] = field(default_factory=lambda: _NO_AGENTS, repr=False)

    def __post_init__(self) -> None:
        if not self.execution_id:
            object.__setattr__(self, "execution_id", self.run_id)

    @property
    def usage_by_agent(self) -> Mapping[str, AgentUsage]:
        """Agent path → :class:`AgentUsage` (issue 29); see the class docstring."""
        if self.sub_usage:
            return self.sub_usage
        return {self.agent or "agent": AgentUsage(self.usage, self.cost)}
