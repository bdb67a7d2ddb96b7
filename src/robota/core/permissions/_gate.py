"""``PermissionGate``: permissions and hooks at the tool execution seam (S21, S22, S43).

For every admitted call, in order: the permission evaluation (:func:`evaluate_permission`), whose
deny is final; the ``PreToolUse`` hooks, which may deny, demand a person (``ask``), pre-approve an
ordinary ask (a command hook's ``permissionDecision: "allow"``) or replace the input (evaluated and
validated again); then an ``ask`` resolved by the approver — a person — where one is attached and as
a denial where none is. Just before a person is waited for, ``Notification`` hooks start in the
background (never awaited, their outcome never read; see ``_notify``). After the body,
``PostToolUse`` hooks run as observers. A refusal at any step is a pre-execution refusal, never a
tool span (S33).

A direct invocation (``agent.invoke_tool``, S43) goes through the same gate, but core injects no
interactive approver for it: only an approver the direct caller passes answers its asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol, final

from robota.core._texts import render
from robota.core.hooks._runner import HookRunner
from robota.core.permissions._evaluate import (
    PermissionContext,
    PermissionDecision,
    PermissionPolicy,
    evaluate_permission,
)
from robota.core.permissions._notify import NOTIFICATION_EVENT, PERMISSION_PROMPT, Notifications
from robota.core.permissions._patterns import escape_glob
from robota.core.permissions._rules import parse_rule
from robota.core.permissions._screen import path_screen
from robota.core.tools._executor import Admission, ToolInvocation
from robota.core.tools._screen import PathScreen
from robota.core.tools._tool import OutsideResponder, Tool, ToolResult

__all__ = ["Approval", "ApprovalRequest", "Approver", "PermissionGate"]

# Hook inputs name the permission mode as Claude Code's settings format spells it (S22), so a
# hook written for it reads ours unchanged.
_CLAUDE_MODES: Final = {
    "default": "default",
    "plan": "plan",
    "accept_edits": "acceptEdits",
    "bypass": "bypassPermissions",
}


@final
@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What a person is asked to approve.

    Attributes:
        tool: The tool.
        arguments: The call's arguments.
        reason: Why approval is needed.
        always_ask: Remembering the answer will not apply to calls like this one.
        source: ``"permission"`` (the evaluation asked) or ``"hook"`` (a PreToolUse hook did).
        agent: The sub-agent whose call this is, as its path (``"parent/child"``), when the ask
            reached this approver from an agent called as a tool (issue 29); ``None`` for the
            agent's own calls.
        request_outside_response: Present when the run has an execution journal (S40), else
            ``None`` (also for a sub-agent's call: a child cannot suspend its caller yet, issue
            29, so its asks are answered in memory): for an approver that cannot keep the run
            waiting in memory — one answered over HTTP, from another process, or after a
            restart. ``await
            request.request_outside_response(kind, payload)`` saves the ask as an outside
            request of the execution and suspends it: the run returns ``status="suspended"``
            with the ask in ``RunResult.pending_requests`` (the call does not return). Once the
            host answered it (:meth:`~robota.Agent.respond`) and resumed the execution, the
            same logical call is judged again — the current rules and mode first, so a saved
            answer never admits a call by itself — and, when that judgement asks again, the
            call returns the saved response at once, for the approver to turn into its
            :class:`Approval`. Ask ids are apart from the ids of the tool body's own requests;
            a saved answer answers only the question it was given for — when the resumed ask
            differs (kind or payload, e.g. a hook's new replacement input), it is asked anew.
    """

    tool: Tool
    arguments: Mapping[str, Any]
    reason: str
    always_ask: bool = False
    source: str = "permission"
    agent: str | None = None
    request_outside_response: OutsideResponder | None = None


@final
@dataclass(frozen=True, slots=True)
class Approval:
    """A person's answer.

    Attributes:
        approved: Whether the call may proceed.
        remember: Allow calls like this one for the rest of the session (never for always-ask
            cases, and never to let a change proceed in plan mode).
        reason: Shown to the model when refused.
    """

    approved: bool
    remember: bool = False
    reason: str = ""


class Approver(Protocol):
    """Asks a person; return their :class:`Approval`."""

    async def __call__(self, request: ApprovalRequest) -> Approval:
        """Ask about ``request``."""
        ...


@final
class PermissionGate:
    """The admission seam with permissions (S21) and hooks (S22); pass it as ``tool_gate=``.

    Args:
        policy: Rules and mode.
        context: Where calls run (workspace, path resolver, read-only classifier …).
        approver: Asks a person for the agent's model-driven calls; ``None`` turns every ask
            into a denial.
        hooks: Runs ``PreToolUse``/``PostToolUse`` hooks, through caller-passed executors, and
            ``Notification`` hooks when an ask waits for a person.

    ``Notification`` hooks run as background tasks the gate tracks: each ends by itself (its
    timeout, or the run's abort), and :meth:`aclose` ends those still running. An
    :class:`~robota.Agent` calls :meth:`aclose` at its own ``aclose()`` for its ``tool_gate``.
    """

    __slots__ = ("_approver", "_context", "_hooks", "_notifications", "_policy", "remembered")

    def __init__(
        self,
        policy: PermissionPolicy,
        context: PermissionContext | None = None,
        *,
        approver: Approver | None = None,
        hooks: HookRunner | None = None,
    ) -> None:
        self._policy = policy
        self._context = context or PermissionContext()
        self._approver = approver
        self._hooks = hooks
        self._notifications = Notifications()
        self.remembered: list[str] = list(self._context.remembered)

    @property
    def policy(self) -> PermissionPolicy:
        """The policy in force."""
        return self._policy

    @property
    def hooks(self) -> HookRunner | None:
        """The hook runner (an :class:`~robota.Agent` without its own ``hooks=`` uses it, S22)."""
        return self._hooks

    @property
    def notifications_running(self) -> int:
        """How many ``Notification`` hook tasks of this gate have not ended yet."""
        return self._notifications.running

    def with_approver(self, approver: Approver | None) -> PermissionGate:
        """This gate with another approver: same policy, context and hooks, shared consent.

        Consent remembered through either gate is remembered by both (one list).
        """
        gate = PermissionGate(self._policy, self._context, approver=approver, hooks=self._hooks)
        gate.remembered = self.remembered
        return gate

    @property
    def approver(self) -> Approver | None:
        """The approver asked about the agent's model-driven calls, if any."""
        return self._approver

    async def aclose(self) -> None:
        """End the ``Notification`` hooks still running: cancel each and wait until it unwound.

        A command hook's process group is killed. The gate stays usable — a later ask starts
        new notifications — so an agent that borrowed the gate may call this at its own close;
        a notification of another agent sharing the gate is then cut short too (notifications
        are advisory). Idempotent.
        """
        await self._notifications.aclose()

    def evaluate(self, tool: Tool, arguments: Mapping[str, Any]) -> PermissionDecision:
        """The permission decision for a call, with this session's remembered consent."""
        context = replace(self._context, remembered=tuple(self.remembered))
        return evaluate_permission(tool, arguments, self._policy, context)

    def path_screen(self, tool: Tool, arguments: Mapping[str, Any]) -> PathScreen:
        """What each path a walk of this call meets is, by this gate's rules (S12, S21).

        A tool body reaches it through :meth:`robota.ToolContext.path_screen`. Each path is
        judged as a call of ``tool`` naming it would be — ``tool``'s deny and ask rules and
        those of the names its argument answers to (``also_judged_as``), from this gate's
        workspace root with its resolver: a deny rule withholds the path, an ask rule (or a
        rule that cannot be judged for it) withholds it for the tool to report, since a walk
        cannot ask about each file. What the call itself raised — an ask rule covering its own
        argument, a rule unevaluable for it — was answered at admission and is not applied
        again. The rules are compiled once per call.
        """
        return path_screen(tool, arguments, self._policy, self._context)

    def offered(self, tool: Tool) -> bool:
        """Whether ``tool`` is offered to the model at all (S12: one denied outright is not)."""
        if self._context.origin == "peer" and tool.operator_only:
            return False
        for rule in self._policy.rules("deny"):
            if (rule.everything or rule.pattern is None) and rule.applies(
                tool, {}, workspace=self._context.workspace, home=None, resolve=None
            ) == "match":
                return False
        return True

    async def admit(self, invocation: ToolInvocation) -> Admission:
        """Evaluate, run PreToolUse hooks, resolve asks.

        S22: the ``PreToolUse`` hooks run before a person is asked, so a command hook's
        ``permissionDecision: "allow"`` can pre-approve a call the policy would ask about. It
        never lifts a deny (the policy's, or the policy's reading of a hook's replacement input),
        and never an always-ask case (an explicit ask rule, a catastrophic removal, a write that
        widens trust, a command the analysis cannot read): a person answers those every time.
        A hook's ``ask`` reaches a person even in bypass mode; ``ask`` outranks ``allow``.
        """
        tool, arguments = invocation.tool, invocation.arguments
        # S43: a direct invocation is answered only by an approver its caller passed.
        approver = self._approver if invocation.call is not None else invocation.approver
        decision = self.evaluate(tool, arguments)
        texts = invocation.texts
        if decision.behavior == "deny":
            return Admission(False, render(texts.permission_denied_result, reason=decision.reason))
        updated: Mapping[str, Any] | None = None
        hook_ask = hook_allow = False
        if self._hooks is not None:
            result = await self._hooks.run(
                "PreToolUse",
                {
                    "hook_event_name": "PreToolUse",
                    "permission_mode": _CLAUDE_MODES.get(self._policy.mode, self._policy.mode),
                    "tool_name": tool.name,
                    "tool_input": dict(arguments),
                },
                tool_name=tool.name,
                signal=invocation.context.signal,
                traceparent=invocation.context.hook_traceparent,
            )
            if result.blocked:
                return Admission(False, render(texts.hook_blocked_result, reason=result.reason))
            hook_ask, hook_allow, updated = result.ask, result.allow, result.updated_input
            if updated is not None:
                # The policy reads the input that will run: a replacement it denies is refused,
                # and one it asks about is asked about (a hook cannot launder a call).
                decision = self.evaluate(tool, updated)
                if decision.behavior == "deny":
                    return Admission(
                        False, render(texts.permission_denied_result, reason=decision.reason)
                    )
                arguments = updated
        if hook_ask:
            refusal = await self._ask(
                approver,
                invocation,
                ApprovalRequest(
                    tool,
                    arguments,
                    "a hook asked for a person",
                    True,
                    "hook",
                    request_outside_response=invocation.outside_ask,
                ),
                remember_as=None,
            )
            if refusal is not None:
                return refusal
        elif decision.behavior == "ask" and not (hook_allow and not decision.always_ask):
            refusal = await self._ask(
                approver,
                invocation,
                ApprovalRequest(
                    tool,
                    arguments,
                    decision.reason,
                    decision.always_ask,
                    request_outside_response=invocation.outside_ask,
                ),
                remember_as=None if decision.always_ask else self._remember_rule(tool, arguments),
            )
            if refusal is not None:
                return refusal
        return Admission(True, arguments=updated)

    async def settled(self, invocation: ToolInvocation, result: ToolResult) -> None:
        """Run PostToolUse hooks (advisory: their failures never change the call)."""
        if self._hooks is None:
            return
        await self._hooks.run(
            "PostToolUse",
            {
                "hook_event_name": "PostToolUse",
                "permission_mode": _CLAUDE_MODES.get(self._policy.mode, self._policy.mode),
                "tool_name": invocation.tool.name,
                "tool_input": dict(invocation.arguments),
                "tool_response": {"content": result.content, "is_error": result.is_error},
            },
            tool_name=invocation.tool.name,
            signal=invocation.context.signal,
            traceparent=invocation.context.hook_traceparent,
        )

    async def _ask(
        self,
        approver: Approver | None,
        invocation: ToolInvocation,
        request: ApprovalRequest,
        *,
        remember_as: str | None,
    ) -> Admission | None:
        texts = invocation.texts
        if approver is None:
            # Nobody is asked, so nobody waits: no Notification.
            return Admission(False, render(texts.no_approver_result, reason=request.reason))
        if self._hooks is not None:
            # S22: started, not awaited — a slow notifier never delays the person's answer.
            self._notifications.fire(
                self._hooks,
                {
                    "hook_event_name": NOTIFICATION_EVENT,
                    "permission_mode": _CLAUDE_MODES.get(self._policy.mode, self._policy.mode),
                    "message": f"permission is needed to use {request.tool.name}",
                    "notification_type": PERMISSION_PROMPT,
                    "tool_name": request.tool.name,
                    "reason": request.reason,
                    "source": request.source,
                },
                signal=invocation.context.signal,
                traceparent=invocation.context.hook_traceparent,
            )
        answer = await approver(request)
        if not answer.approved:
            detail = f": {answer.reason}" if answer.reason else ""
            return Admission(False, render(texts.declined_result, reason=detail))
        if answer.remember and remember_as is not None:
            self.remembered.append(remember_as)
        return None

    def _remember_rule(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """The allow rule that remembers consent to this call, or ``None`` when none can.

        S21: the rule names this call exactly (its argument with every glob character made
        literal), and it is kept only when it reads back as a rule that covers this very call:
        a value the rule grammar or the argument's reading cannot hold (text the command
        analysis refuses, a substitution, a parenthesis the rule syntax would cut) is never
        stored, so no remembered rule can fail on a later call.
        """
        argument = tool.permission_argument
        if argument is None:
            rule = tool.name
        else:
            value = arguments.get(argument.key)
            if not isinstance(value, str) or not value:
                return None
            rule = f"{tool.name}({escape_glob(value)})"
        try:
            parsed = parse_rule(rule, "allow")
        except ValueError:
            return None
        context = self._context
        covers = parsed.applies(
            tool,
            arguments,
            workspace=context.workspace,
            home=context.home,
            resolve=context.resolve_path,
        )
        return rule if covers == "match" else None
