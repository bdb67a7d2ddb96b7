"""Guardrails: checks a run's input, its final output and its tool calls (issue 29).

A guardrail wraps one *check*: a plain function (sync or async) or an :class:`~robota.Agent`
(a *guardrail agent*). The three kinds differ in what they check and what a trip does:

==================  ==========================================  ==================================
kind                checked                                     a trip
==================  ==========================================  ==================================
InputGuardrail      the user's input, before the first model    the run raises GuardrailTripped;
                    call (``run_in_parallel=True``: beside it)  no model call is made (blocking)
OutputGuardrail     the final result, before it is returned     the run raises GuardrailTripped;
                    or checkpointed                             nothing is returned
ToolGuardrail       a tool call before its body (``before``)    the call is refused: the model
                    and its result after it (``after``)         sees the reason (like a deny, S21);
                                                                ``after`` may replace the result
==================  ==========================================  ==================================

The verdict. A function check returns ``None`` (pass) or a :class:`GuardrailResult`; anything
else is a :class:`~robota.ConfigurationError` naming the fix. A guardrail agent is run with the
checked text as its input and ``output=`` a small verdict type (``{"tripped": bool, "reason":
str}``): its validated reply is the verdict, so its system prompt should say when to trip. A check
that raises fails the run with that error (a guardrail fails closed; nothing is guessed).

Metering and tracing. Every guardrail call is recorded in ``RunResult.guardrails`` (a
:class:`GuardrailRecord`: name, phase, outcome, duration and — for a guardrail agent — that run's
usage and cost, which are reported there and *not* added to ``RunResult.usage``/``cost``, so the
run's own model spend and its limits stay what they were) and emitted as ``execution.guardrail``.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, final

from typing_extensions import TypedDict

from robota.core._agent_base import AgentBase
from robota.core._errors import ConfigurationError, RobotaError
from robota.core._events import EventNames
from robota.core._messages import new_id, now

if TYPE_CHECKING:
    from robota.core._abort import AbortSignal
    from robota.core._emit import EventEmitter
    from robota.core._usage import Usage

__all__ = [
    "GuardrailCheck",
    "GuardrailPhase",
    "GuardrailRecord",
    "GuardrailResult",
    "GuardrailTripped",
    "InputGuardrail",
    "OutputGuardrail",
    "ToolCallCheck",
    "ToolGuardrail",
]

GuardrailPhase: TypeAlias = Literal["input", "output", "tool_before", "tool_after"]
"""Where a guardrail ran: the run's input, its final output, or a tool call before/after."""


@final
@dataclass(frozen=True, slots=True)
class GuardrailResult:
    """A guardrail's verdict; a check returns one (or ``None``, which passes).

    Attributes:
        tripped: Whether the guardrail objects: an input/output guardrail fails the run, a tool
            guardrail's ``before`` refuses the call, its ``after`` withholds the result.
        reason: Why; the error's ``reason``, and the text the model sees for a refused call.
        replacement: Only for a tool guardrail's ``after`` check: the text the model sees instead
            of the body's result (with or without a trip). Ignored elsewhere.
    """

    tripped: bool = False
    reason: str = ""
    replacement: str | None = None


@final
@dataclass(frozen=True, slots=True)
class ToolCallCheck:
    """What a tool guardrail checks: the call, and after its body, the result.

    Attributes:
        tool_name: The tool's registered name.
        arguments: The validated arguments the body runs (or ran) with.
        result: ``None`` before the body; after it, the text the model would see.
        is_error: After the body: whether the result is an error.
    """

    tool_name: str
    arguments: Mapping[str, Any]
    result: str | None = None
    is_error: bool = False


_Verdicts: TypeAlias = "GuardrailResult | Awaitable[GuardrailResult | None] | None"
GuardrailCheck: TypeAlias = "Callable[[Any], _Verdicts] | AgentBase"
"""A plain function (sync or async) taking the checked value, or a guardrail agent.

``AgentBase`` is :class:`robota.Agent` as this module, below the facade, names it.
"""


class GuardrailTripped(RobotaError):
    """A guardrail objected to a run's input or output (issue 29).

    Not recoverable: the same input meets the same guardrail. For an input guardrail that runs
    before the model (the default), nothing was sent and the input is not in history; for one run
    in parallel, the input and anything the model answered are in history (S34: append-only),
    but no tool body ran. For an output guardrail, the reply stays in the agent's history (S34)
    and the run raises instead of returning it; a session saves the turn as failed, not as an
    answer.

    Attributes:
        guardrail: The guardrail's name.
        reason: Its stated reason.
        phase: ``"input"`` or ``"output"``.
    """

    default_code = "guardrail_tripped"
    default_category = "user"
    default_recoverable = False

    def __init__(self, guardrail: str, reason: str, phase: GuardrailPhase) -> None:
        super().__init__(
            f"the {phase} guardrail {guardrail!r} tripped: {reason or 'no reason given'}",
            context={"guardrail": guardrail, "phase": phase},
        )
        self.guardrail = guardrail
        self.reason = reason
        self.phase: GuardrailPhase = phase


@final
@dataclass(frozen=True, slots=True)
class GuardrailRecord:
    """One guardrail call of a run (``RunResult.guardrails``).

    Attributes:
        guardrail: The guardrail's name.
        phase: Where it ran.
        outcome: ``"passed"``, ``"tripped"`` or ``"replaced"`` (a tool result was replaced).
        reason: The verdict's reason.
        duration: Seconds the check took.
        usage: A guardrail agent's usage (``None`` for a function), not in ``RunResult.usage``.
        cost: A guardrail agent's cost in USD, ``None`` when unknown or for a function.
    """

    guardrail: str
    phase: GuardrailPhase
    outcome: Literal["passed", "tripped", "replaced"]
    reason: str = ""
    duration: float = 0.0
    usage: Usage | None = None
    cost: float | None = None


class _Verdict(TypedDict):
    tripped: bool
    reason: str


def _check_name(check: object, name: str | None, kind: str) -> str:
    if name is not None:
        given: object = name  # untyped callers can pass anything
        if not isinstance(given, str) or not given:
            raise ConfigurationError(f"{kind} name must be a non-empty string, got {name!r}")
        return name
    agent_name = _agent_name(check)
    if agent_name is not None:
        return agent_name
    return str(getattr(check, "__name__", type(check).__name__))


def _agent_name(check: object) -> str | None:
    return check.name if isinstance(check, AgentBase) else None  # AgentBase: a robota.Agent


def _checked(check: object, kind: str, what: str) -> Any:
    if callable(check):
        return check
    if _agent_name(check) is not None:
        return check
    raise ConfigurationError(
        f"{kind}{what} must be a function (sync or async) returning GuardrailResult | None, or "
        f"an Agent whose reply is the verdict; got {check!r}"
    )


class _Guardrail:
    __slots__ = ("name",)

    name: str

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@final
class InputGuardrail(_Guardrail):
    """Checks a run's input (its text) before the model sees it.

    Args:
        check: ``fn(text) -> GuardrailResult | None`` (sync or async), or a guardrail agent.
        name: Defaults to the function's (or agent's) name.
        run_in_parallel: Run beside the first model call instead of before it (saves latency).
            No tool body starts before the guardrail passed, and a trip stops the run (the model
            call in flight is cancelled); the input is then already in history.
    """

    __slots__ = ("check", "run_in_parallel")

    def __init__(
        self, check: GuardrailCheck, *, name: str | None = None, run_in_parallel: bool = False
    ) -> None:
        self.check = _checked(check, "InputGuardrail", " check")
        self.name = _check_name(check, name, "InputGuardrail")
        if not isinstance(run_in_parallel, bool):
            raise ConfigurationError(f"run_in_parallel must be True or False: {run_in_parallel!r}")
        self.run_in_parallel = run_in_parallel


@final
class OutputGuardrail(_Guardrail):
    """Checks a completed run's final output before it is returned (or checkpointed, S40).

    Args:
        check: ``fn(output) -> GuardrailResult | None`` (sync or async) — ``output`` is the
            final text, or the validated object of a structured run (S18) — or a guardrail agent
            (it gets the final text).
        name: Defaults to the function's (or agent's) name.
    """

    __slots__ = ("check",)

    def __init__(self, check: GuardrailCheck, *, name: str | None = None) -> None:
        self.check = _checked(check, "OutputGuardrail", " check")
        self.name = _check_name(check, name, "OutputGuardrail")


@final
class ToolGuardrail(_Guardrail):
    """Checks tool calls before their body and/or their results after it.

    Args:
        before: ``fn(ToolCallCheck) -> GuardrailResult | None``; a trip refuses the call, and the
            model sees the reason as the call's result (the permission gate's refusal path, S21).
            Runs after the permission gate admitted the call.
        after: ``fn(ToolCallCheck) -> GuardrailResult | None`` with ``result`` set; a
            ``replacement`` becomes what the model sees, and a trip without one withholds the
            result behind the reason. Applied before a journal records the settlement (S40), so
            a resumed run shows the model the same text and does not check again.
        name: Defaults to the first function's (or agent's) name.
        tools: Only these tool names (default: every tool).

    A guardrail agent gets the call as JSON (``{"tool": …, "arguments": …, "result": …}``).
    """

    __slots__ = ("after", "before", "tools")

    def __init__(
        self,
        before: GuardrailCheck | None = None,
        *,
        after: GuardrailCheck | None = None,
        name: str | None = None,
        tools: tuple[str, ...] | list[str] | None = None,
    ) -> None:
        if before is None and after is None:
            raise ConfigurationError("ToolGuardrail needs before=, after= or both")
        self.before = None if before is None else _checked(before, "ToolGuardrail", " before")
        self.after = None if after is None else _checked(after, "ToolGuardrail", " after")
        self.name = _check_name(before if before is not None else after, name, "ToolGuardrail")
        self.tools = None if tools is None else frozenset(tools)

    def applies(self, tool_name: str) -> bool:
        """Whether this guardrail checks calls of ``tool_name``."""
        return self.tools is None or tool_name in self.tools


Guardrail: TypeAlias = InputGuardrail | OutputGuardrail | ToolGuardrail


def check_guardrails(value: object, option: str) -> tuple[Guardrail, ...]:
    """The guardrails of ``guardrails=``, refused by type with the fix named."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ConfigurationError(
            f"{option} must be a list of InputGuardrail, OutputGuardrail or ToolGuardrail, "
            f"got {value!r}"
        )
    found = tuple(value)
    for entry in found:
        if not isinstance(entry, (InputGuardrail, OutputGuardrail, ToolGuardrail)):
            raise ConfigurationError(
                f"{option} takes InputGuardrail, OutputGuardrail or ToolGuardrail objects; wrap "
                f"a check function or agent in one (e.g. robota.InputGuardrail(fn)), got {entry!r}"
            )
    return found


@dataclass(slots=True)
class GuardrailCall:
    """Runs checks and records them (internal; the execution and the tool gate use it).

    A run sets its own as the current one (:data:`RUN_GUARDRAILS`), so a tool guardrail — which
    the agent holds — records to, and emits under, the run that made the call.
    """

    emitter: EventEmitter | None
    signal: AbortSignal | None = None
    records: list[GuardrailRecord] = field(default_factory=list)

    async def __call__(
        self, guardrail: Guardrail, phase: GuardrailPhase, check: object, value: object
    ) -> GuardrailResult:
        start = time.monotonic()
        started_at = now()
        usage: Usage | None = None
        cost: float | None = None
        if _agent_name(check) is not None:
            verdict, usage, cost = await self._ask_agent(check, value)
        else:
            assert callable(check)
            returned = check(value)
            if inspect.isawaitable(returned):
                returned = await returned
            if returned is not None and not isinstance(returned, GuardrailResult):
                raise ConfigurationError(
                    f"guardrail {guardrail.name!r} returned {returned!r}; a check returns "
                    "robota.GuardrailResult(tripped=..., reason=...) or None (pass)"
                )
            verdict = returned or GuardrailResult()
        replaced = verdict.replacement is not None and phase == "tool_after"
        outcome: Literal["passed", "tripped", "replaced"] = (
            "tripped" if verdict.tripped else ("replaced" if replaced else "passed")
        )
        record = GuardrailRecord(
            guardrail.name, phase, outcome, verdict.reason, time.monotonic() - start, usage, cost
        )
        self.records.append(record)
        if self.emitter is not None and self.emitter.enabled:
            self.emitter.emit(
                EventNames.GUARDRAIL,
                {
                    "guardrail": record.guardrail,
                    "phase": phase,
                    "outcome": outcome,
                    "reason": record.reason,
                    "duration": record.duration,
                    "started_at": started_at,
                    "ended_at": now(),
                    "span_key": new_id("guardrail"),  # S27: what an exporter's span derives from
                    "usage": usage,
                    "cost": cost,
                },
            )
        return verdict

    async def _ask_agent(
        self, agent: Any, value: object
    ) -> tuple[GuardrailResult, Usage | None, float | None]:
        text = value if isinstance(value, str) else _as_text(value)
        result = await agent.run(text, output=_Verdict, signal=self.signal)
        verdict = result.output
        if verdict is None:  # interrupted: no verdict is a trip, never a pass
            return GuardrailResult(True, "the guardrail agent gave no verdict"), result.usage, None
        tripped = bool(verdict["tripped"])
        return GuardrailResult(tripped, str(verdict.get("reason", ""))), result.usage, result.cost


def _as_text(value: object) -> str:
    if isinstance(value, ToolCallCheck):
        return json.dumps(
            {"tool": value.tool_name, "arguments": dict(value.arguments), "result": value.result},
            default=str,
        )
    return str(value)


RUN_GUARDRAILS: ContextVar[GuardrailCall | None] = ContextVar("robota_guardrails", default=None)
"""The current run's guardrail calls (STYLE: a contextvars value scoped to one run)."""
