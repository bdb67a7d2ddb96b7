"""An agent called as a tool (issue 29): what flows from the parent run down to the child.

:meth:`robota.Agent.as_tool` (or an :class:`~robota.Agent` passed in ``tools=``) wraps an agent
in an :class:`AgentTool`. The model calls it like any tool — schema check, permission gate,
hooks and events are the tool layer's (S41, S21, S22, S33) — and its body runs the child's own
loop, with its own system prompt, tools and model. What the child inherits from the run that
called it, always:

* the run's abort signal (S23): aborting the parent interrupts the child, whose partial text
  is recorded as the tool's result, marked as an error (the child did not finish);
* the run's limits (issue 28): the child runs under what the parent has left
  (:meth:`~robota.UsageLimits.remaining`), never more, field by field tighter than its own;
  and under the parent's remaining round budget (sub-agents a run with limits calls in one batch
  therefore run one at a time);
* the permission ceiling (S21): every call of the child passes the parent's gate as well as its
  own, so a child never gets a mode or rule more permissive than its parent's; an ask reaches
  the parent's approver (or the child's own, when it has one) with the child named
  (:attr:`~robota.ApprovalRequest.agent`);
* trace context (S27): the child's run is parented on this tool body's span;
* events (S33): the child's events go to the parent's services too, with the owner path
  ``agent/…/execution/…/tool/…/agent/…``; a streamed parent yields the child's stream events
  as :class:`~robota.SubagentEvent` values naming the child's path and this tool call;
* usage and cost roll up into the parent's result (``RunResult.usage_by_agent``), and the
  parent's budget is charged with them;
* ``SubagentStop`` hooks of the parent fire when the child's run ends (S22, advisory).

* the journal (S40): when the calling run is journaled, the child's run is journaled in the
  same journal, as the execution :func:`child_execution_id` derives from the caller's execution
  id and the call's stable id; a resumed caller that runs the call again continues that
  execution instead of starting a new one (:mod:`robota.core._agent_children`).

On Temporal (``robota.temporal``) the child runs inside the parent's workflow: this tool stays
in workflow code — everything above flows down unchanged — and the child's model calls and tool
bodies are activities of the parent's run, so a worker crash repeats no completed model call
and (with the workers' journal) no settled tool effect (S40).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Protocol, final

import pydantic_core

from robota.core._abort import AbortSignal
from robota.core._errors import ConfigurationError, ExecutionControlError
from robota.core._limits import LIMIT_NAMES, UsageLimitExceeded, UsageLimits
from robota.core._tracing import TraceContext
from robota.core.execution._durable import MAX_EXECUTION_ID
from robota.core.execution._loop import Execution
from robota.core.execution._result import RunResult
from robota.core.execution._structured import OutputSpec
from robota.core.execution._subagents import Delegation, Spend, charge, surfaced
from robota.core.permissions._gate import Approval, ApprovalRequest, Approver, PermissionGate
from robota.core.schema._convert import schema_from_type
from robota.core.tools._executor import ToolGate, ToolInvocation
from robota.core.tools._screen import PathScreen
from robota.core.tools._tool import RiskClass, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from robota.core.hooks._runner import HookRunner
    from robota.core.tools._executor import Admission, ToolExecutionService


class _Delegate(Protocol):
    """What the tool reads of the :class:`~robota.Agent` it wraps (no import of the facade)."""

    _max_rounds: int
    _limits: UsageLimits | None
    _executor: ToolExecutionService
    _current: Execution | None

    @property
    def name(self) -> str: ...

    async def _run_delegated(
        self,
        input: str,
        output: object,
        signal: AbortSignal,
        options: Any,
        parent: Delegation,
    ) -> RunResult[Any]: ...


__all__ = ["AgentTool", "CeilingGate", "child_execution_id"]

# The executions that are waiting on a sub-agent's run in this task's context, outermost first:
# a sub-agent whose current run is one of them would wait for its own run slot forever.
_CALLERS: ContextVar[tuple[Execution, ...]] = ContextVar("robota_subagent_callers", default=())

_DEFAULT_INPUT: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "input": {"type": "string", "description": "What to ask the agent, in full."},
    },
    "required": ["input"],
}


def _named(approver: Approver, path: str) -> Approver:
    async def ask(request: ApprovalRequest) -> Approval:
        # A deeper sub-agent already named itself; its path is the more precise one.
        return await approver(request if request.agent else replace(request, agent=path))

    return ask


def _with(gate: ToolGate, approver: Approver | None, path: str) -> ToolGate:
    if not isinstance(gate, PermissionGate):
        return gate  # a custom gate decides with its own approver
    return gate.with_approver(None if approver is None else _named(approver, path))


@final
class CeilingGate:
    """A child's gate under its parent's (S21): a call runs only when both admit it.

    The parent's gate is asked first — its deny rules, its mode and its hooks are the ceiling —
    then the child's own. An ask goes to the gate's approver with the child named; the child's
    own gate without an approver asks the parent's. A call both gates ask about is asked about
    twice (each gate answers for its own policy). When the child's hook replaces the input, the
    parent's gate decides the replacement again (its hooks run a second time).
    """

    __slots__ = ("_own", "_parent", "approver")

    def __init__(self, own: ToolGate | None, parent: ToolGate, path: str) -> None:
        parent_approver = parent.approver if isinstance(parent, PermissionGate) else None
        self._parent = _with(parent, parent_approver, path)
        self._own: ToolGate | None = None
        #: Who a child's tool asks directly (ToolContext.approver): the child's own approver,
        #: else the parent's — the same person its permission asks reach.
        self.approver: Approver | None = parent_approver
        if own is not None:
            own_approver = own.approver if isinstance(own, PermissionGate) else None
            self._own = _with(own, own_approver or parent_approver, path)
            self.approver = own_approver or parent_approver

    def offered(self, tool: Tool) -> bool:
        """Offered only when neither gate withholds the tool."""
        for gate in (self._parent, self._own):
            decide = getattr(gate, "offered", None)
            if decide is not None and not decide(tool):
                return False
        return True

    def path_screen(self, tool: Tool, arguments: Mapping[str, Any]) -> PathScreen:
        """Both gates' screens: a path either withholds is withheld (S12, S21)."""
        screens: list[PathScreen] = []
        for gate in (self._parent, self._own):
            screen = getattr(gate, "path_screen", None)
            if screen is not None:
                screens.append(screen(tool, arguments))
        return PathScreen.joined(screens)

    async def admit(self, invocation: ToolInvocation) -> Admission:
        """The parent's gate, then the child's own, on the arguments the first one left."""
        admission = await self._parent.admit(invocation)
        if not admission.allowed or self._own is None:
            return admission
        if admission.arguments is not None:
            invocation = replace(invocation, arguments=admission.arguments)
        own = await self._own.admit(invocation)
        if own.allowed and own.arguments is None and admission.arguments is not None:
            return admission  # the parent's hook replaced the input; the child's kept it
        if own.allowed and own.arguments is not None and own.arguments != invocation.arguments:
            # S21: the child's hook replaced the input the parent admitted; the ceiling decides
            # the replacement too, or a child's hook could launder a call past a parent's deny.
            again = await self._parent.admit(replace(invocation, arguments=own.arguments))
            if not again.allowed or again.arguments is not None:
                return again  # refused, or the parent's hook has the last word on the input
        return own

    async def settled(self, invocation: ToolInvocation, result: ToolResult) -> None:
        """Both gates observe the result (PostToolUse hooks)."""
        await self._parent.settled(invocation, result)
        if self._own is not None:
            await self._own.settled(invocation, result)


def _tightest(own: UsageLimits | None, left: UsageLimits) -> UsageLimits:
    """Field by field the smaller of the child's own limits and what the parent has left."""
    if own is None:
        return left
    values: dict[str, Any] = {}
    for name in LIMIT_NAMES:
        a, b = getattr(own, name), getattr(left, name)
        values[name] = b if a is None else a if b is None else min(a, b)
    return UsageLimits(**values)


def _input_schema(input: object) -> Mapping[str, Any]:
    if input is None:
        return _DEFAULT_INPUT
    if isinstance(input, Mapping):
        return input
    if isinstance(input, type):
        return schema_from_type(input)
    raise ConfigurationError(
        f"input= must be None (one string argument), an object JSON schema or a type (a pydantic "
        f"model, a dataclass, a TypedDict), got {input!r}"
    )


@final
class AgentTool(Tool):
    """An :class:`~robota.Agent` callable by a model as a tool; build it with ``Agent.as_tool``.

    Each call runs the agent once and answers with its final text, or — with ``output=`` — its
    validated result as JSON (the object itself is the result's ``view``). The child inherits
    from the calling run its abort signal (S23), what is left of its limits and round budget, its
    permission gate as a ceiling (S21), its trace span (S27) and event services (S33); its usage
    rolls up into the caller's ``RunResult.usage_by_agent`` and the caller's ``SubagentStop``
    hooks fire (S22). An agent already running in the call chain is refused, not waited for.

    Args:
        agent: The agent to run.
        name: The tool's name; default: the agent's name.
        description: What the model is told the tool does.
        input: The arguments' schema: ``None`` (one string ``input``, sent as the user message),
            an object JSON schema or a type (pydantic model, dataclass, TypedDict) — the
            arguments are then sent as JSON.
        output: Ask the child for a structured result (S18), as ``run(output=...)``.
        keep_history: Continue the agent's own conversation (``agent.history``) from call to
            call; by default each call runs in a fresh conversation of its own (the system
            prompt only), and the agent's own history is left untouched (S34).
        risk: The tool's risk class for the caller's gate (S21); default ``"inspect"``, since
            delegating acts on nothing — each call the child makes passes the caller's gate.

    Journaled (S40): when the calling run has a journal, the child's run is journaled in it — the
    caller's journal, even when the child has one of its own — as the execution
    ``<caller's execution id>/<ToolContext.call_id>``. A crash anywhere in either resumes with
    the caller's :meth:`~robota.Agent.resume`, repeating no model call and no tool effect of
    either: a call the caller settled is reused (and what its child used is charged to the
    caller again, once); a call it started without a recorded result is not refused for
    reconciliation but run again — admitted again by the caller's gate and hooks — and
    continues the child's execution, whose recorded model calls and settled effects are reused (a
    finished child answers with its recorded result, no model call). What the child's journal
    cannot prove raises :class:`~robota.ReconciliationRequired` naming the child's execution;
    settle it with the caller's :meth:`~robota.Agent.reconcile`, then resume the caller's
    execution (``resume`` of the child's own id is refused, code ``subagent_execution``). A
    child execution that cannot be continued as things are (its live history conflicts, its
    model chain changed) fails the caller's run (code ``subagent_not_resumable``) rather than
    settling the call as a failure.

    A journaled child whose tool waits for an outside response does not suspend its caller yet:
    the caller's run fails with an :class:`~robota.ExecutionControlError` (code
    ``subagent_suspended``) naming the child's execution and requests; answer them with the
    caller's :meth:`~robota.Agent.respond` (the child's execution id) and resume the caller.

    On Temporal the child runs inside the parent's workflow, its model calls and tool bodies
    activities of the parent's run (exactly once, like the parent's).

    Misuse: without a journaled caller, a child with a journal of its own journals
    each call as a new execution the caller cannot resume.
    """

    def __init__(
        self,
        agent: _Delegate,
        *,
        name: str | None = None,
        description: str | None = None,
        input: object = None,
        output: object = None,
        keep_history: bool = False,
        risk: RiskClass | None = "inspect",
    ) -> None:
        self.agent = agent
        if output is not None:
            OutputSpec(output)  # S18: a bad output= fails here, not as a tool failure later
        self._plain_input = input is None
        self._output = output
        self._keep_history = bool(keep_history)
        super().__init__(
            name=name or agent.name,
            description=description or f"Ask the agent {agent.name!r} to do a task.",
            parameters=_input_schema(input),
            # The delegation itself acts on nothing; each call the child makes is gated (S21).
            risk=risk,
        )

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the child once under what the calling run passes down."""
        run = ctx._run if isinstance(ctx._run, Execution) else None
        if run is None or run._budget is None:
            return await self._delegate(args, ctx, run)
        # Issue 28: sub-agents a run with limits calls side by side take turns, so each starts
        # from what the ones before it left; two at once would each get the whole remainder.
        if run.siblings is None:
            run.siblings = asyncio.Lock()
        async with run.siblings:
            return await self._delegate(args, ctx, run)

    async def _delegate(
        self, args: Mapping[str, Any], ctx: ToolContext, run: Execution | None
    ) -> ToolResult:
        # Internal seams of one package: the calling execution's counters and gate, the child's
        # configuration (read, never changed here).
        child = self.agent
        text = str(args["input"]) if self._plain_input else json.dumps(dict(args))
        options: dict[str, Any] = {}
        gate: ToolGate | None = None
        path = child.name
        hooks: HookRunner | None = None
        if run is not None:
            settings = run.settings
            path = f"{settings.agent_name}/{child.name}"
            hooks = settings.hooks
            left = settings.max_rounds - run._rounds
            if left < 1:
                return ToolResult(
                    f"The agent {child.name!r} was not run: the round budget is used up.",
                    is_error=True,
                )
            options["max_rounds"] = min(child._max_rounds, left)
            if run._budget is not None:  # issue 28: never more than the parent has left
                options["limits"] = _tightest(child._limits, run._budget.left())
            above = run.ceiling if run.ceiling is not None else run._tools.gate
            if above is not None:
                gate = CeilingGate(child._executor.gate, above, path)
        trace = ctx._trace
        if trace is not None and ctx.traceparent is not None:
            # S27: the child's run span is a child of this body's span.
            options["trace"] = TraceContext.from_traceparent(
                ctx.traceparent,
                origins=trace.context.origins,
                tracestate=trace.context.tracestate,
                children=trace.context.children,
            )
        spent: list[Spend] = []
        notify = (
            None
            if run is None
            else surfaced(run._notify, run.settings.agent_name, child.name, ctx.call_id)
        )
        frame = Delegation(ctx._span, not self._keep_history, gate, spent.append, notify)
        if run is not None and run._journal is not None and run._journal.store is not None:
            # S40: journaled in the caller's journal, under an id a resumed caller derives again.
            child_id = child_execution_id(run.run_id, ctx.call_id)
            frame = replace(frame, journal=run._journal.store, execution_id=child_id)
        callers = _CALLERS.get() if run is None else (*_CALLERS.get(), run)
        if child._current is not None and child._current in callers:
            return ToolResult(
                f"The agent {child.name!r} is already running in this call chain (it called "
                "itself, directly or through another agent); it was not run again.",
                is_error=True,
            )
        token = _CALLERS.set(callers)
        try:
            result = await child._run_delegated(text, self._output, ctx.signal, options, frame)
        except UsageLimitExceeded as exc:
            # The child stopped at what the parent had left: what it used is still spent.
            await _subagent_stop(hooks, ctx, path, "failed", str(exc))
            return ToolResult(f"The agent {child.name!r} stopped: {exc}", is_error=True)
        except Exception as exc:
            # S22: the child's run ended (failed); the error still reaches the tool layer. A
            # child that never started (its turn came after an abort, S38) did not stop.
            if spent:
                await _subagent_stop(hooks, ctx, path, "failed", str(exc))
            raise
        finally:
            with suppress(ValueError):  # closed by the collector in another context (S40)
                _CALLERS.reset(token)
            for spend in spent:  # S29 / issue 28: however the child ended, its spending counts
                _charge(run, spend)
        await _subagent_stop(hooks, ctx, path, result.status, result.text)
        if result.status == "suspended":
            raise _suspended(child.name, result, frame.journal is not None)
        if result.status == "interrupted":
            # S23: the partial text is recorded — as a call that did not finish, so a model
            # reading it (after a resume, S40: it is the call's final outcome) never takes it
            # for the child's answer.
            return ToolResult(result.text, is_error=True)
        if self._output is not None and result.output is not None:
            return ToolResult(pydantic_core.to_json(result.output).decode(), view=result.output)
        return ToolResult(result.text)


def child_execution_id(parent: str, call_id: str) -> str:
    """The execution id of the child run a journaled execution's tool call started.

    ``<parent>/<call id>`` when that fits an execution id (S40: at most 200 characters), else
    ``sub_`` and a SHA-256 of both.
    """
    candidate = f"{parent}/{call_id}"
    if len(candidate) <= MAX_EXECUTION_ID:
        return candidate
    digest = hashlib.sha256(f"{parent}\x1f{call_id}".encode("utf-8", "surrogatepass"))
    return f"sub_{digest.hexdigest()[:48]}"


def _suspended(name: str, result: RunResult[Any], journaled: bool) -> ExecutionControlError:
    """S40: a journaled child waits for an outside response; its caller cannot answer as it.

    ``journaled``: the calling run is journaled (the child's execution is in its journal); else
    the child journaled the call in a journal of its own, and the caller cannot be resumed.
    """
    requests = ", ".join(r.id for r in result.pending_requests)
    execution = result.execution_id
    if journaled:
        how = (
            f"answer it with respond({execution!r}, <request id>, ...) on the calling agent, "
            "then resume the calling execution"
        )
    else:
        how = (
            "and the calling run is not journaled, so it cannot be resumed: run the caller with "
            "a journal (the child is then journaled in it), or answer and resume the child's "
            "execution on the child agent itself, outside this run"
        )
    return ExecutionControlError(
        f"the agent {name!r} (execution {execution!r}) waits for an outside response "
        f"({requests}), which a sub-agent cannot pass to its caller as a suspension yet; {how}",
        code="subagent_suspended",
        context={"execution_id": execution, "requests": requests},
    )


def _charge(run: Execution | None, spend: Spend) -> None:
    if run is not None:
        charge(run, spend)


async def _subagent_stop(
    hooks: HookRunner | None, ctx: ToolContext, path: str, status: str, text: str
) -> None:
    """S22: ``SubagentStop`` is advisory — awaited, its outcome not acted on."""
    if hooks is None or not hooks.configured("SubagentStop"):
        return
    await hooks.run(
        "SubagentStop",
        {
            "hook_event_name": "SubagentStop",
            "agent_name": path,
            "status": status,
            "last_assistant_message": text,
        },
        signal=ctx.signal,
        traceparent=ctx.hook_traceparent,
    )
