"""The tool contract (S41): what a model can call, and what a tool body receives.

A :class:`Tool` has a name, a description and a JSON parameter schema (what the model is shown),
optionally a risk class and the argument its permission patterns are scoped to (S12, declared by
the tool's own package — core keeps no table of tool names), and an ``async execute(args, ctx)``.

Every body receives a :class:`ToolContext` whose ``signal`` is the run's cancellation signal
(S23): a long-running tool must observe it and stop — finishing silently after an abort is a
contract violation. Each body also gets its own minted ``call_id`` (S36), never the provider's
call id, which is only an opaque transcript token.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, final

from robota.core._abort import AbortSignal
from robota.core._emit import EventEmitter
from robota.core._errors import ConfigurationError, ExecutionControlError, SchemaValidationError
from robota.core._events import EventService
from robota.core._parts import MediaPart, tool_parts
from robota.core._tracing import RunTrace, child_environment
from robota.core.providers._contract import ToolSpec
from robota.core.schema._validate import validate_against_json_schema
from robota.core.tools._screen import PathScreen

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "ArgumentKind",
    "PermissionArgument",
    "RiskClass",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolResidency",
    "ToolResult",
    "to_tool_result",
]

RiskClass: TypeAlias = Literal["inspect", "modify", "execute"]
"""What a tool can do (S21): look (``inspect``), change state (``modify``), run code
(``execute``). A tool that declares none is treated at least as cautiously as a risky one."""

ToolResidency: TypeAlias = Literal["resident", "deferred"]
"""Whether a tool's schema is always offered (``resident``, the default) or withheld until the
built-in ``tool_search`` loads it (``deferred``), once the agent's deferral is engaged (S19)."""

ArgumentKind: TypeAlias = Literal["path", "url", "command", "text"]
"""How a permission pattern for a tool's scoped argument is matched (S12)."""

_MAX_NAME = 128


@final
@dataclass(frozen=True, slots=True)
class PermissionArgument:
    """The argument a tool's permission patterns are scoped to, with its kind (S12).

    Declared by the tool's own package, as one object, e.g.
    ``PermissionArgument("path", "path")`` for a file reader.

    Attributes:
        key: The argument's name in the tool's parameters.
        kind: How patterns are matched against it (:data:`ArgumentKind`).
        also_judged_as: Names of other tools whose deny and ask rules judge this tool's calls
            too, read against this argument in its kind — e.g. ``("Read",)`` for a search or a
            listing, so ``Read(secrets/**)`` denied keeps ``Grep`` and ``Glob`` out of
            ``secrets/`` as Claude Code does. Only the stop direction (deny, ask) answers to
            these names: an allow rule or a ceiling for ``Read`` never grants this tool.
    """

    key: str
    kind: ArgumentKind
    also_judged_as: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names: object = self.also_judged_as  # untyped callers can pass anything
        if isinstance(names, str) or not all(
            isinstance(name, str) and name
            for name in names  # type: ignore[attr-defined]
        ):
            raise ConfigurationError(
                "also_judged_as must be a tuple of tool names, e.g. ('Read',); got "
                + repr(self.also_judged_as)
            )
        object.__setattr__(self, "also_judged_as", tuple(self.also_judged_as))
        if self.kind not in ("path", "url", "command", "text"):
            raise ConfigurationError(
                f"permission argument kind must be path, url, command or text; got {self.kind!r}"
            )
        if not self.key:
            raise ConfigurationError("permission argument key must be a non-empty string")


@final
@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool body produced.

    Attributes:
        content: What the model is shown.
        is_error: Whether the result reports a failure the model should see as one.
        view: Display data for a user interface (S39). It never enters model context or history.
        parts: Images, documents or audio shown to the model with ``content`` (issue 26), e.g.
            a screenshot; each adapter sends them in its vendor's form for a tool result.
    """

    content: str
    is_error: bool = False
    view: object = None
    parts: tuple[MediaPart, ...] = ()

    def __post_init__(self) -> None:
        if self.parts != ():
            object.__setattr__(self, "parts", tool_parts(self.parts, "ToolResult(parts=...)"))


ToolOutput: TypeAlias = ToolResult | str | object
"""What ``execute`` may return: a :class:`ToolResult`, a string, or any JSON-serialisable value
(pydantic models included), which becomes the result's content."""


def to_tool_result(output: object) -> ToolResult:
    """Normalise a body's return value into a :class:`ToolResult`."""
    if isinstance(output, ToolResult):
        return output
    if isinstance(output, str):
        return ToolResult(output)
    if output is None:
        return ToolResult("")
    dump = getattr(output, "model_dump_json", None)
    if callable(dump):
        text = dump()
        if isinstance(text, str):
            return ToolResult(text)
    try:
        return ToolResult(json.dumps(output, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return ToolResult(str(output))


class OutsideResponder(Protocol):
    """Saves a tool's request for an outside response, or returns the saved response (S40)."""

    async def __call__(self, kind: str, payload: object) -> Any:
        """The saved response, or suspend the execution (raises a control outcome)."""
        ...


# --- approval (S21): defined here, beside the ToolContext that carries the approver and the Tool
# an ApprovalRequest names, so the permission gate and the executor share them without importing
# each other (issue 32); robota.core.permissions re-exports them. ---------------------------


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
class ToolContext:
    """What a tool body receives besides its arguments.

    Attributes:
        signal: The run's cancellation signal (S23). Observe it: check ``signal.aborted`` between
            steps, ``await signal.wait()`` in a race, or call ``signal.throw_if_aborted()``.
        call_id: This body's own minted id (S36), unique per execution.
        provider_call_id: The provider's opaque id of the call (``None`` for a direct invocation).
        tool_name: The tool's registered name.
        execution_id: The run (execution) that made the call, when there is one.
        round: The model round that asked for it, when there is one.
        traceparent: In a run with host-supplied trace context (S27), the W3C traceparent naming
            this body's span (derived from :attr:`call_id`); ``None`` otherwise. Forward it only
            where the host allows: use :meth:`trace_headers` and :meth:`child_env`.
        hook_traceparent: What command hooks of this call receive as ``TRACEPARENT`` (the run's
            span), when the host granted hooks; ``None`` otherwise.
        approver: The approver that answers this call's permission asks — the admission
            gate's for a model-driven call, the one its caller passed for a direct invocation
            (S43) — so a tool that must ask the person something (``robota.tools.ask_user``)
            asks through the same channel; ``None`` when no one is there to ask. A tool must
            not use it to approve its own calls: admission has already decided.
        idempotency_key: A stable key for this logical call, the same on every attempt of it —
            in one run, across a journaled resume (S40) and across Temporal activity retries —
            and distinct between calls. The executor derives it from the execution id and the
            journal's logical call key where a journal (or Temporal) exists, and from the run's
            id and :attr:`call_id` otherwise; a body run by hand gets its ``call_id``'s. Send it
            with an effect whose target can deduplicate (an ``Idempotency-Key`` header, a
            unique column): on PostgreSQL a worker cut off by a network partition may still
            finish an effect after its lease was lost, and only the target can then refuse the
            second attempt.

    The executor builds it; a caller running a body by hand (a test, a benchmark) may pass
    ``screen=``, ``(arguments) -> PathScreen``, to stand in for a gate's
    :meth:`~robota.PermissionGate.path_screen` (see :meth:`path_screen`).
    """

    __slots__ = (
        "_outside",
        "_run",
        "_screen",
        "_span",
        "_span_key",
        "_trace",
        "approver",
        "call_id",
        "execution_id",
        "hook_traceparent",
        "idempotency_key",
        "provider_call_id",
        "round",
        "signal",
        "tool_name",
        "traceparent",
    )

    def __init__(
        self,
        *,
        signal: AbortSignal,
        call_id: str,
        tool_name: str,
        provider_call_id: str | None = None,
        execution_id: str | None = None,
        round: int | None = None,
        outside: OutsideResponder | None = None,
        trace: RunTrace | None = None,
        span_key: str | None = None,
        run: object = None,
        span: EventEmitter | None = None,
        screen: Callable[[Mapping[str, Any]], PathScreen] | None = None,
        approver: Approver | None = None,
        idempotency_key: str | None = None,
    ) -> None:
        self.signal = signal
        if idempotency_key is None:
            idempotency_key = f"{execution_id}:{call_id}" if execution_id else call_id
        self.idempotency_key = idempotency_key
        self._screen = screen
        self.approver = approver
        # Issue 29: the calling execution and this call's event span, for a sub-agent's body
        # (robota.core._agent_tool); internal, never read by ordinary tools.
        self._run = run
        self._span = span
        self.call_id = call_id
        self.tool_name = tool_name
        self.provider_call_id = provider_call_id
        self.execution_id = execution_id
        self.round = round
        self._outside = outside
        self._trace = trace
        self._span_key = span_key if span_key is not None else call_id
        self.traceparent = trace.traceparent_for_key(self._span_key) if trace is not None else None
        self.hook_traceparent = trace.hook_traceparent if trace is not None else None

    def trace_headers(self, url: str) -> dict[str, str]:
        """The trace headers to send with a request to ``url`` (S27).

        ``{"traceparent": …}`` (and ``tracestate`` when the host gave one) only when the run has
        trace context and ``url``'s origin exactly equals one the host listed; else ``{}``.
        """
        trace = self._trace
        if trace is None:
            return {}
        return trace.handed(self._span_key).headers_for(url)

    def child_env(
        self, base: Mapping[str, str], *, configured: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """A fresh environment for a child process this body starts (S27).

        Pass the environment to start from (``os.environ``: core never reads it itself); it is
        copied, never changed. When the run has trace context and the host granted ``"tools"``,
        the copy has ``TRACEPARENT`` naming this body's span, and the ambient ``TRACESTATE`` is
        dropped (the host's own is set when it gave one); without that grant — or without trace
        context at all — the copy has neither: the ``TRACEPARENT`` in ``base`` is ambient, and
        this package never adopts ambient trace state (S27). What ``configured`` sets wins.
        Use it as ``env=ctx.child_env(os.environ)``.
        """
        trace = self._trace
        if trace is None or "tools" not in trace.context.children:
            # S27: an ungranted child gets no trace context, never the ambient one.
            return child_environment(base, None, configured=configured, strip=True)
        return child_environment(
            base, self.traceparent, trace.context.tracestate, configured=configured
        )

    def path_screen(self, arguments: Mapping[str, Any]) -> PathScreen:
        """The permission rules' answer for each path a walk of this call meets (S12, S21).

        The gate judged the call's own argument; a body that reads or lists paths the call did
        not name (a recursive search, a listing) asks the returned :class:`PathScreen` about
        each one, judged by the run's rules from the same workspace root and resolver as the
        gate. Pass the arguments the body received. Without a gate — or with a gate that keeps
        no such rules — the screen allows everything (check :attr:`PathScreen.active` to skip
        the per-path call in a hot loop).
        """
        if self._screen is None:
            return PathScreen()
        return self._screen(arguments)

    async def request_outside_response(self, kind: str, payload: object = None) -> Any:
        """Ask for a response from outside the run, before this tool's effect starts (S40).

        The first time, the request is saved durably in the run's execution journal and the
        execution suspends: ``agent.run()`` returns ``status="suspended"`` with the request in
        ``result.pending_requests`` (this call does not return). Once the host answered it with
        :meth:`~robota.Agent.respond` and called :meth:`~robota.Agent.resume`, the same logical
        call runs again — admission (permissions, hooks) decides again — and this call returns
        the saved response at once. Call it before any side effect: everything the body did
        before it runs again on resume. Let the suspension propagate: it wins even when the body
        catches it, and whatever the body did after catching it runs again on resume.

        Args:
            kind: What kind of response is wanted, in the tool's own words (``"approval"``).
            payload: What the responder needs to see (JSON-serialisable).

        Returns:
            The response the host supplied (as it was saved: JSON values).

        Raises:
            ExecutionControlError: the run has no execution journal (``Agent(journal=...)``),
                so nothing could be saved; the run fails rather than guess.
        """
        if self._outside is None:
            raise ExecutionControlError(
                f"tool {self.tool_name!r} asked for an outside response, which needs an "
                "execution journal to save it: pass Agent(journal=...)",
                code="journal_required",
            )
        given: object = kind  # untyped callers can pass anything
        if not isinstance(given, str) or not given:
            raise ConfigurationError(f"kind must be a non-empty string, got {kind!r}")
        return await self._outside(kind, payload)

    def __repr__(self) -> str:
        return f"<ToolContext {self.tool_name} call_id={self.call_id!r}>"


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name or len(name) > _MAX_NAME:
        raise ConfigurationError(f"a tool name must be 1-{_MAX_NAME} characters, got {name!r}")
    if any(ch.isspace() or not ch.isprintable() for ch in name):
        raise ConfigurationError(
            f"a tool name must not contain spaces or control characters: {name!r}"
        )
    return name


def _check_residency(name: str, residency: object) -> ToolResidency:
    if residency == "resident":
        return "resident"
    if residency == "deferred":
        return "deferred"
    raise ConfigurationError(
        f"tool {name!r}: residency must be 'resident' or 'deferred', got {residency!r}"
    )


def _check_parameters(name: str, parameters: object) -> Mapping[str, Any]:
    if not isinstance(parameters, Mapping) or parameters.get("type") != "object":
        raise ConfigurationError(
            f"tool {name!r}: the parameter schema's root must be an object schema "
            '({"type": "object", "properties": {...}}), got ' + repr(parameters)[:200]
        )
    return parameters


class Tool(ABC):
    """Base class of every tool (S41).

    Subclass it and implement :meth:`execute`; pass ``name``, ``description`` and
    ``parameters`` to ``__init__`` (or set them as class attributes and call
    ``super().__init__()``). For plain functions use :func:`robota.tool` instead.

    Attributes:
        name: Unique within an agent; what the model calls.
        description: What the model reads to decide when to call it.
        parameters: JSON schema of the arguments; the root is an object schema. Arguments are
            validated against it before the body runs, with the S16 closure rule (declared
            ``properties`` ⇒ no others).
        risk: The declared :data:`RiskClass`, or ``None`` (undeclared: prompts, S21).
        permission_argument: The argument permission patterns are scoped to, or ``None``.
        operator_only: The tool acts only for the operator (it sends something to them, say);
            a turn another agent's message started never gets it (S21).
        source: Who provided the tool (a package, an MCP server …), as the host declares it.
            Kept on every record of a call (S39 attribution); it grants no authority.
        residency: ``"resident"`` (default: always offered) or ``"deferred"`` (S19: withheld
            from requests until the built-in ``tool_search`` loads it, when the agent's
            ``tool_deferral`` engages). It decides only what is offered, never what is allowed.
        event_service: The service that receives this tool's spans when a call carries none
            (S33); an agent sets it when the tool is registered — the last agent wins.
        idempotent: Running the body twice for one call has the effect of running it once
            (a lookup, a write keyed by ``ctx.call_id``). Where an engine retries a body whose
            earlier attempt started but never settled (robota.temporal), an idempotent tool is
            run again; any other raises reconciliation instead (S40). Default ``False``.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    risk: RiskClass | None = None
    permission_argument: PermissionArgument | None = None
    source: str | None = None
    operator_only: bool = False
    residency: ToolResidency = "resident"
    idempotent: bool = False

    def __init__(
        self,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        *,
        risk: RiskClass | None = None,
        permission_argument: PermissionArgument | None = None,
        source: str | None = None,
        defer: bool | None = None,
        idempotent: bool | None = None,
    ) -> None:
        cls = type(self)
        self.name = _check_name(name if name is not None else getattr(cls, "name", None))
        if description is not None and not isinstance(description, str):
            raise ConfigurationError(
                f"tool {self.name!r}: description must be a string (what the model reads), got "
                f"{type(description).__name__}"
            )
        text = description if description is not None else getattr(cls, "description", "")
        self.description = text if isinstance(text, str) else ""
        schema = parameters if parameters is not None else getattr(cls, "parameters", None)
        self.parameters = _check_parameters(self.name, schema)
        self.risk = risk if risk is not None else cls.risk
        if self.risk is not None and self.risk not in ("inspect", "modify", "execute"):
            raise ConfigurationError(
                f"tool {self.name!r}: risk must be inspect, modify or execute (e.g. "
                f'@robota.tool(risk="inspect") for a tool that only reads); got {self.risk!r}'
            )
        self.permission_argument = (
            permission_argument if permission_argument is not None else cls.permission_argument
        )
        self.source = source if source is not None else cls.source
        chosen: object = defer  # untyped callers can pass anything
        if chosen is not None and not isinstance(chosen, bool):
            raise ConfigurationError(
                f"tool {self.name!r}: defer must be True or False, got {defer!r}"
            )
        self.residency = _check_residency(
            self.name, cls.residency if defer is None else ("deferred" if defer else "resident")
        )
        once: object = cls.idempotent if idempotent is None else idempotent
        if not isinstance(once, bool):
            raise ConfigurationError(
                f"tool {self.name!r}: idempotent must be True or False, got {once!r}"
            )
        self.idempotent = once
        self.event_service: EventService | None = None

    def spec(self) -> ToolSpec:
        """The tool as offered to a model."""
        return ToolSpec(self.name, self.description, self.parameters)

    def validate_arguments(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Check ``arguments`` against :attr:`parameters`; return what the body receives.

        The default validates with :func:`robota.core.schema.validate_against_json_schema` (the
        one traversal, S16) and returns the arguments unchanged. Override to convert them — but
        keep delegating the judgement to that function so tool input and structured output can
        never disagree.

        Raises:
            SchemaValidationError: with one readable issue per problem — the arguments' fault,
                which the model is asked to fix.
            ConfigurationError: the parameter schema itself breaks the subset (S16); a
                tool-definition error naming this tool, never reported as invalid arguments.
        """
        try:
            issues = validate_against_json_schema(self.parameters, arguments)
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"tool {self.name!r} cannot be called: its parameter schema is broken; "
                + exc.message,
                code=exc.code,
                context={**exc.context, "tool": self.name},
            ) from None
        if issues:
            raise SchemaValidationError(
                f"invalid arguments for tool {self.name!r}: " + "; ".join(issues), issues=issues
            )
        return arguments

    @abstractmethod
    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run the tool with validated ``args``.

        Return a :class:`ToolResult`, a string, or a JSON-serialisable value. Raise to report a
        failure (the model sees its message). Observe ``ctx.signal`` in long work (S23).
        """

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
