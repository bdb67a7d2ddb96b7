"""Hook configuration and the runner over caller-passed executors (S22, S02).

The configuration has the shape users know::

    {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 10}]}
        ]
    }

A ``matcher`` is a tool name, a regular expression over names (``"Edit|Write"``, ``"mcp__.*"``),
or ``"*"``/empty for every tool. Core has no host default (S02): hooks run only through the
executors the caller passes, by hook type; a hook whose type has no executor yields an ``error``
outcome — which, for an enforcing event, blocks.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Protocol, final

from robota.core._abort import AbortSignal
from robota.core._errors import ConfigurationError
from robota.core._logging import get_logger
from robota.core.hooks._events import HOOK_EVENTS, event_enforces
from robota.core.hooks._outcome import HookOutcome

__all__ = [
    "DEFAULT_STOP_CONTINUATIONS",
    "HookConfig",
    "HookExecutor",
    "HookMatcher",
    "HookResult",
    "HookRunner",
    "HookSpec",
    "hook_fields",
]

_log = get_logger("robota.hooks")

_NO_FIELDS: Final[Mapping[str, Any]] = MappingProxyType({})
_FIELDS: ContextVar[Mapping[str, Any]] = ContextVar("robota_hook_fields", default=_NO_FIELDS)


@contextmanager
def hook_fields(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to the payload of every hook run in this context (S22).

    For a layer above core that knows what a hook input carries and the run does not — the
    sessions layer sets ``session_id`` around each turn, as Claude Code's hook inputs carry it
    on every event. Nested contexts add to the outer one; a field the fire site sets itself
    (``hook_event_name``, ``tool_name`` …) wins. Values must be JSON values.
    """
    token = _FIELDS.set(MappingProxyType({**_FIELDS.get(), **fields}))
    try:
        yield
    finally:
        with suppress(ValueError):  # closed by the collector in another context (S40)
            _FIELDS.reset(token)


DEFAULT_STOP_CONTINUATIONS: Final = 3
"""How many times ``Stop`` hooks may continue one run, unless the runner says otherwise."""


@final
@dataclass(frozen=True, slots=True)
class HookSpec:
    """One configured hook.

    Attributes:
        type: The executor type (``"command"``, ``"http"``, or one a higher layer adds).
        command: The shell command, for command hooks.
        url: The endpoint, for HTTP hooks.
        timeout: Seconds before the hook counts as failed (``None``: the executor's default).
        options: The whole entry, for executors that read more keys (``headers`` …).
    """

    type: str
    command: str | None = None
    url: str | None = None
    timeout: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@final
@dataclass(frozen=True, slots=True)
class HookMatcher:
    """Hooks that apply to the tools a matcher names."""

    matcher: str
    hooks: tuple[HookSpec, ...]
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    def matches(self, tool_name: str | None) -> bool:
        """Whether these hooks apply to ``tool_name`` (events without a tool match everything)."""
        if self.matcher in ("", "*") or tool_name is None:
            return True
        if self._pattern is None:
            return tool_name == self.matcher
        return self._pattern.fullmatch(tool_name) is not None


def _parse_hook(entry: object, where: str) -> HookSpec:
    if not isinstance(entry, Mapping):
        raise ConfigurationError(f"{where}: a hook is an object with a 'type', got {entry!r}")
    kind = entry.get("type")
    if not isinstance(kind, str) or not kind:
        raise ConfigurationError(f"{where}: a hook needs a 'type' (e.g. 'command' or 'http')")
    timeout = entry.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        raise ConfigurationError(f"{where}: 'timeout' must be a positive number of seconds")
    command = entry.get("command")
    url = entry.get("url")
    if kind == "command" and (not isinstance(command, str) or not command.strip()):
        raise ConfigurationError(f"{where}: a command hook needs a non-empty 'command'")
    if kind == "http" and (not isinstance(url, str) or not url.strip()):
        raise ConfigurationError(f"{where}: an http hook needs a 'url'")
    return HookSpec(
        kind,
        command if isinstance(command, str) else None,
        url if isinstance(url, str) else None,
        float(timeout) if timeout is not None else None,
        dict(entry),
    )


@final
class HookConfig:
    """Validated hook configuration, by event."""

    __slots__ = ("_events",)

    def __init__(self, events: Mapping[str, Sequence[HookMatcher]]) -> None:
        self._events = {name: tuple(matchers) for name, matchers in events.items()}

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> HookConfig:
        """Parse the settings shape shown in the module docstring.

        Raises:
            ConfigurationError: for an unknown event or a malformed entry, naming where.
        """
        if not isinstance(config, Mapping):
            raise ConfigurationError(f"hook configuration must be an object, got {config!r}")
        events: dict[str, list[HookMatcher]] = {}
        for event, groups in config.items():
            if event not in HOOK_EVENTS:
                raise ConfigurationError(
                    f"unknown hook event {event!r}; known: {', '.join(HOOK_EVENTS)}"
                )
            if not isinstance(groups, Sequence) or isinstance(groups, str):
                raise ConfigurationError(f"{event}: expected a list of matcher groups")
            for index, group in enumerate(groups):
                where = f"{event}[{index}]"
                if not isinstance(group, Mapping):
                    raise ConfigurationError(f"{where}: expected an object with 'hooks'")
                matcher = group.get("matcher", "")
                if not isinstance(matcher, str):
                    raise ConfigurationError(f"{where}: 'matcher' must be a string")
                hooks = group.get("hooks")
                if not isinstance(hooks, Sequence) or isinstance(hooks, str):
                    raise ConfigurationError(f"{where}: 'hooks' must be a list")
                pattern = None
                if matcher not in ("", "*") and not re.fullmatch(r"[A-Za-z0-9_\-]+", matcher):
                    try:
                        pattern = re.compile(matcher)
                    except re.error as exc:
                        raise ConfigurationError(
                            f"{where}: matcher {matcher!r} is not a valid pattern: {exc}"
                        ) from exc
                specs = tuple(_parse_hook(h, f"{where}.hooks[{i}]") for i, h in enumerate(hooks))
                events.setdefault(event, []).append(HookMatcher(matcher, specs, pattern))
        return cls(events)

    def hooks_for(self, event: str, tool_name: str | None = None) -> tuple[HookSpec, ...]:
        """The hooks of ``event`` whose matcher covers ``tool_name``, in configuration order."""
        found: list[HookSpec] = []
        for group in self._events.get(event, ()):
            if group.matches(tool_name):
                found.extend(group.hooks)
        return tuple(found)


class HookExecutor(Protocol):
    """Runs one hook of its type and decodes the result into a :class:`HookOutcome` (S22).

    Implementations live with the host (``robota.host.CommandHookExecutor``,
    ``robota.host.HttpHookExecutor``) or in a higher layer; an executor must not raise for the
    hook's own failure — that is an ``error`` outcome with a named reason.

    A ``command`` executor may also accept a keyword ``traceparent: str | None`` (S27): the
    runner passes it — the run's span, when the host granted hooks — to an executor whose
    ``execute`` names it (or takes ``**kwargs``), and calls any other with the three arguments
    above. An executor that starts processes gives them the ``TRACEPARENT`` it is handed and
    otherwise none: whatever ``TRACEPARENT``/``TRACESTATE`` its own environment holds is ambient
    and belongs to another parent, in an untraced run as much as in a traced one.
    """

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: AbortSignal | None = None
    ) -> HookOutcome:
        """Run ``hook`` with ``payload`` (the event's JSON input)."""
        ...


@final
@dataclass(frozen=True, slots=True)
class HookResult:
    """The combined answer of an event's hooks.

    Attributes:
        blocked: The operation must not proceed (a deny, or an error where the event enforces);
            a fire site that cannot stop anything (``PostToolUse``) ignores it.
        reason: Why, when blocked.
        ask: A command hook asked for a person (``ask`` outranks ``allow`` and ``defer``).
        context: The additional context of every hook that allowed, in configuration order.
        allow: A command hook pre-approved the call (``permissionDecision: "allow"``) and none
            asked; it answers an ordinary permission ask, never a deny or an always-ask case.
        updated_input: A command hook's replacement input (the last one given).
        outcomes: Every hook's outcome, in configuration order.
        summary: The summary a hook that allowed supplied (``hookSpecificOutput.summary``; the
            last non-empty one in configuration order), for ``PreCompact``; else ``""``.
    """

    blocked: bool = False
    reason: str = ""
    ask: bool = False
    updated_input: Mapping[str, Any] | None = None
    outcomes: tuple[HookOutcome, ...] = ()
    allow: bool = False
    context: tuple[str, ...] = ()
    summary: str = ""


@final
class HookRunner:
    """Runs an event's matching hooks through the executors the caller passed (S02, S22).

    Args:
        config: The hook configuration (or the dict shape it parses).
        executors: Executors by hook type (``{"command": CommandHookExecutor(), ...}``).
        max_stop_continuations: How many times ``Stop`` hooks may continue one run by blocking
            its end (each continuation is a further model round); after that the run ends.

    Raises:
        ConfigurationError: for a malformed configuration or a negative bound.
    """

    __slots__ = ("config", "executors", "max_stop_continuations")

    def __init__(
        self,
        config: HookConfig | Mapping[str, Any],
        executors: Mapping[str, HookExecutor],
        *,
        max_stop_continuations: int = DEFAULT_STOP_CONTINUATIONS,
    ) -> None:
        self.config = config if isinstance(config, HookConfig) else HookConfig.from_dict(config)
        self.executors = dict(executors)
        bound: object = max_stop_continuations
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
            raise ConfigurationError(
                f"max_stop_continuations must be a non-negative integer, got {bound!r}"
            )
        self.max_stop_continuations = bound

    def configured(self, event: str) -> bool:
        """Whether any hook is configured for ``event`` (a fire site skips its payload if not)."""
        return bool(self.config.hooks_for(event))

    async def run(
        self,
        event: str,
        payload: Mapping[str, Any],
        *,
        tool_name: str | None = None,
        signal: AbortSignal | None = None,
        traceparent: str | None = None,
    ) -> HookResult:
        """Run the hooks of ``event`` for ``tool_name`` concurrently and combine their outcomes.

        ``traceparent`` (S27: the run's span, in a traced run whose host granted hooks) goes to
        ``command`` hooks only, as the executor's ``traceparent=`` argument — apart from the
        payload, so it is never in the stdin JSON, an HTTP hook's body or any other hook type.
        ``None`` means no grant, whether or not the run is traced: either way the hook process
        gets no trace context (see :class:`HookExecutor`).
        """
        hooks = self.config.hooks_for(event, tool_name)
        if not hooks:
            return HookResult()
        shared = _FIELDS.get()
        if shared:
            payload = {**shared, **payload}  # the fire site's own fields win
        outcomes = await asyncio.gather(
            *(self._one(hook, payload, signal, traceparent) for hook in hooks)
        )
        return _combine(event, hooks, outcomes)

    async def _one(
        self,
        hook: HookSpec,
        payload: Mapping[str, Any],
        signal: AbortSignal | None,
        traceparent: str | None = None,
    ) -> HookOutcome:
        executor = self.executors.get(hook.type)
        if executor is None:
            return HookOutcome.error(
                f"no executor was passed for hook type {hook.type!r}; core runs hooks only "
                "through the executors its caller passes (S02)"
            )
        try:
            if traceparent is not None and hook.type == "command" and _takes_traceparent(executor):
                run: Any = executor.execute
                outcome: HookOutcome = await run(
                    hook, payload, signal=signal, traceparent=traceparent
                )
            else:
                outcome = await executor.execute(hook, payload, signal=signal)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - an executor bug is the absence of a verdict
            return HookOutcome.error(f"the {hook.type} hook executor raised {exc!r}")
        checked: object = outcome  # a third-party executor can return anything
        if not isinstance(checked, HookOutcome):
            return HookOutcome.error(f"the {hook.type} hook executor returned {outcome!r}")
        if hook.type != "command" and (outcome.permission_decision or outcome.updated_input):
            # S22: only a command hook's body may steer a call short of refusing it.
            outcome = HookOutcome(outcome.kind, outcome.reason, outcome.output)
        return outcome


def _takes_traceparent(executor: HookExecutor) -> bool:
    """Whether a command executor accepts the run's traceparent (S27); if not, it gets none."""
    try:
        parameters = inspect.signature(executor.execute).parameters
    except (TypeError, ValueError):
        return False
    return "traceparent" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def _combine(event: str, hooks: Sequence[HookSpec], outcomes: Sequence[HookOutcome]) -> HookResult:
    enforcing = event_enforces(event)
    reasons: list[str] = []
    ask = allow = False
    updated: Mapping[str, Any] | None = None
    context: list[str] = []
    summary = ""
    for hook, outcome in zip(hooks, outcomes, strict=True):
        if outcome.kind == "deny":
            reasons.append(outcome.reason)
        elif outcome.kind == "error":
            if enforcing:
                reasons.append(
                    f"a {hook.type} hook failed, so the call is blocked: {outcome.reason}"
                )
            else:
                _log.warning(
                    "advisory hook failed",
                    hook_event=event,
                    hook_type=hook.type,
                    reason=outcome.reason,
                )
        else:
            if outcome.permission_decision == "ask":
                ask = (
                    True  # ask outranks defer: a hook deferring never cancels a demand for a person
                )
            elif outcome.permission_decision == "allow":
                allow = True
            if outcome.updated_input is not None:
                updated = outcome.updated_input
            if outcome.additional_context.strip():
                context.append(outcome.additional_context.strip())
            if outcome.summary.strip():
                summary = outcome.summary.strip()
    if reasons:
        # A deny is a verdict on any event (its fire site acts on it where it can); an error
        # joins the reasons only where the event enforces (S22).
        return HookResult(True, "; ".join(reasons), ask, updated, tuple(outcomes))
    return HookResult(
        False,
        "",
        ask,
        updated,
        tuple(outcomes),
        allow=allow and not ask,
        context=tuple(context),
        summary=summary,
    )
