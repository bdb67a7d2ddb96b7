"""The options of one run (``agent.run(input, **options)``) and their checks (S39, S24, S31).

:class:`RunOptions` is public as ``robota.RunOptions``; the checks here are shared by the agent's
constructor (:mod:`robota.core._agent`) and its run API (:mod:`robota.core._agent_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from robota.core._abort import AbortSignal
from robota.core._errors import ConfigurationError
from robota.core._events import AgentEvent, EventService
from robota.core._guardrails import InputGuardrail, OutputGuardrail
from robota.core._limits import UsageLimits
from robota.core._retry import RetryPolicy
from robota.core._tracing import TraceContext
from robota.core.providers._contract import ToolChoice
from robota.core.providers._effort import EffortSelection
from robota.core.providers._settings import ModelSettings

if TYPE_CHECKING:
    from robota.core.execution._subagents import Delegation

__all__ = [
    "RUN_OPTIONS",
    "RunOptions",
    "check_lifecycle_hooks",
    "check_limit",
    "check_non_negative",
    "check_rounds",
    "check_tool_choice",
    "fresh_conversation",
]

_TOOL_CHOICES: Final = ("auto", "none", "required")


def check_non_negative(value: object, where: str, hint: str = "") -> int:
    """``value`` as a non-negative integer, else a ConfigurationError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{where} must be a non-negative integer{hint}, got {value!r}")
    return value


def check_rounds(value: object, where: str) -> int:
    """A round budget (S39): a non-negative integer, ``0`` disabling the cap."""
    return check_non_negative(value, where, " (0 disables the cap)")


def check_limit(value: object, where: str) -> int | None:
    """A positive limit, or ``None`` for no limit."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(
            f"{where} must be a positive integer or None (no limit), got {value!r}"
        )
    return value


class RunOptions(TypedDict, total=False):
    """Options of one run (``agent.run(input, **options)``); each overrides the agent's setting.

    Attributes:
        signal: Cancels the run (S23). Aborting mid-run returns ``status="interrupted"`` with
            the text so far; a run still queued when it aborts raises
            :class:`~robota.AbortError` without touching the provider or history (S38).
        retry: The :class:`~robota.RetryPolicy` of this run's model calls; it replaces the
            agent's (``retry=None`` turns retries off for this run).
        max_rounds: The round budget for this run (S39; the run wins over the agent).
        max_same_tool_inputs: The identical-input limit for this run (S39).
        allow_tool_only_completion: Let the turn end on tool results with no summary (S39).
        tool_choice: ``"none"`` offers no tools in this run (S39); ``"required"`` asks for a
            tool call. Default: ``"auto"``.
        native_tools: Provider-hosted tools for this run, checked before transport (S30).
        context_floor: A lower bound on the context tokens the guard assumes (S31) — what the
            caller knows a gateway adds, say; a floor, never an extra charge.
        output_retries: Retry turns after an invalid structured reply (S18); default 2.
        effort: Reasoning effort for this run (S24): ``"none"`` … ``"max"``, or ``"auto"`` (the
            model's default; nothing is sent). The adapter resolves it per model and
            ``result.effort`` records what was actually sent.
        event_service: Receives this run's events besides the agent's service (S33).
        on_event: A callable receiving this run's events (replay-grade records included).
        execution_id: The execution's id, chosen by the host before the run starts (S40): a
            crashed worker never returns a result, so a host that will resume must know it up
            front. With a journal it must be new; without one a fresh id is minted. It is on
            the run's events, on ``ToolContext.execution_id`` and on ``RunResult``.
        trace: W3C trace context the host supplies (S27), from
            :meth:`robota.TraceContext.from_traceparent`. Without it the run carries none: no
            ambient context is ever adopted. With it, every provider call that declares
            propagation is handed a traceparent naming that call's span (sent only to a listed
            origin), each tool body gets ``ctx.traceparent`` naming its own span, and granted
            child processes get ``TRACEPARENT``.
        settings: :class:`~robota.ModelSettings` for this run's model calls; its set fields
            override the agent's ``settings`` field by field (S28).
        lifecycle_hooks: ``False`` runs none of the agent's run-level lifecycle hooks
            (``UserPromptSubmit``, ``Stop``; S22) in this run — for a host layer's own internal
            model call that is not a user's turn, such as a session's compaction summary
            (``robota.sessions``). Tool hooks still apply through the tool gate. Default:
            ``True``. :meth:`resume` takes the same option for the continuation.
        limits: :class:`~robota.UsageLimits` for this run; its set fields override the
            agent's ``limits`` field by field. Passing one stops the run with
            :class:`~robota.UsageLimitExceeded` rather than pass it (S31).
        guardrails: :class:`~robota.InputGuardrail` and :class:`~robota.OutputGuardrail`
            objects run after the agent's own (issue 29); tool guardrails belong to the agent.
        fresh_conversation: Run in a conversation of its own — the system prompt, then this
            input — as each ``Agent.as_tool`` call does: the agent's own history is neither
            sent nor changed (S34), and ``result.messages`` holds what the run added. For a
            layer above that runs an agent as one step of a larger task (``robota.agents``).
            The run still takes its turn (S38). Misuse: :meth:`resume` restores an execution
            into the agent's own conversation (S40), a fresh one's too — resume it on an agent
            whose history is a prefix of it (a new agent built alike). Default: ``False``.
    """

    signal: AbortSignal | None
    retry: RetryPolicy | None
    max_rounds: int | None
    max_same_tool_inputs: int | None
    allow_tool_only_completion: bool | None
    tool_choice: ToolChoice | None
    native_tools: Sequence[str]
    context_floor: int
    output_retries: int
    effort: EffortSelection | None
    event_service: EventService | None
    on_event: Callable[[AgentEvent], None] | None
    execution_id: str | None
    trace: TraceContext | None
    settings: ModelSettings | None
    lifecycle_hooks: bool
    limits: UsageLimits | None
    guardrails: Sequence[InputGuardrail | OutputGuardrail]
    fresh_conversation: bool


RUN_OPTIONS: Final = frozenset(RunOptions.__annotations__)
"""The names :class:`RunOptions` takes; any other is refused before the run queues."""


def check_lifecycle_hooks(value: object) -> bool:
    """The ``lifecycle_hooks`` run option (S22); ``None`` means the default ``True``."""
    if value is None:
        return True
    if not isinstance(value, bool):
        raise ConfigurationError(f"lifecycle_hooks must be True or False, got {value!r}")
    return value


def fresh_conversation(options: RunOptions, parent: Delegation | None) -> bool:
    """Whether a run gets a conversation of its own (S34): an option, or a fresh delegation."""
    value = options.get("fresh_conversation", False)
    if not isinstance(value, bool):
        raise ConfigurationError(f"fresh_conversation must be True or False, got {value!r}")
    return value or (parent is not None and parent.fresh)


def check_tool_choice(value: object) -> ToolChoice:
    """The ``tool_choice`` run option (S39)."""
    if value not in _TOOL_CHOICES:
        raise ConfigurationError(f"tool_choice must be one of {_TOOL_CHOICES}, got {value!r}")
    return value
