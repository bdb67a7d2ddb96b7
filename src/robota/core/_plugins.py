"""Plugins and modules (S03, S20): extensions with a lifecycle.

A :class:`Plugin` observes runs through awaited hooks (before/after a run, before/after each
provider call, on error). A plugin's failure never takes down a run or the process (S20): a
raising hook is recorded — in the run's :attr:`~robota.RunResult.plugin_errors` and through the
diagnostic sink — and swallowed. Background work a plugin schedules goes through
:meth:`Plugin.spawn`, which attaches its own failure handling and is cancelled at disposal, so no
unhandled task outlives the agent.

A :class:`Module` is a named capability an agent initialises once (lazily, before its first run)
and disposes at close. A failed initialisation is not cached: the next run tries again.

Every call into extension code goes through :func:`invoke_extension`, which makes the call itself
— not only the ``await`` of its result — inside the caller's guard. So a plain ``def`` override
that raises when called behaves exactly like an ``async def`` one that raises when awaited, and a
result that cannot be awaited is reported instead of crashing the caller. A plain ``def`` override
that returns ``None`` is accepted: it did its work when called. Anything else that is not
awaitable (``42``, a list …) is a :class:`~robota.ConfigurationError` naming the extension and the
hook — recorded like any other hook failure, or raised where a failure fails the run (``setup``,
``initialize``). ``asyncio.CancelledError`` and every other ``BaseException`` that is not an
``Exception`` propagate — except that a cleanup step (:func:`run_cleanup_step`) records a
``CancelledError`` as its own failure when nobody cancelled the task running it (S20).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core._logging import get_logger
from robota.core._plugin_failure import PluginFailure

if TYPE_CHECKING:
    from robota.core._messages import AssistantMessage
    from robota.core._parts import MessagePart
    from robota.core.execution._result import RunResult
    from robota.core.providers._contract import ChatRequest

__all__ = ["Module", "ModuleRegistry", "Plugin", "PluginFailure", "RunInfo"]

_log = get_logger("robota.plugins")

ExtensionHook: TypeAlias = Literal[
    "setup",
    "before_run",
    "after_run",
    "before_provider_call",
    "after_provider_call",
    "on_error",
    "initialize",
    "dispose",
    "aclose",
]
"""The extension methods core calls (plugin hooks, module lifecycle, a provider's close)."""


@final
@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a plugin hook is told about the run it observes.

    Attributes:
        run_id: The run's (execution's) id.
        agent_name: The agent's name.
        provider: The provider's opaque name.
        model: The model requested.
        round: The current model round (1-based) for per-call hooks, else ``None``.
    """

    run_id: str
    agent_name: str
    provider: str
    model: str
    round: int | None = None


class Plugin:
    """Base class of plugins. Override the hooks you need; every default does nothing.

    Hooks are awaited in registration order. Keep them quick: they run inside the agent's run.

    Attributes:
        name: Identifies the plugin in failure records; defaults to the class name.
    """

    name: str = ""

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__
        self._background: set[asyncio.Task[Any]] = set()

    async def setup(self, agent: object) -> None:
        """Called once before the agent's first run. Raising fails that run; the next retries."""

    async def before_run(self, run: RunInfo, input: str | tuple[MessagePart, ...]) -> None:
        """A run is starting (its slot is held, its input not yet in history).

        ``input`` is the user message's content: the string, or the tuple of parts.
        """

    async def after_run(self, run: RunInfo, result: RunResult) -> None:
        """A run ended with ``result`` (complete or interrupted)."""

    async def before_provider_call(self, run: RunInfo, request: ChatRequest) -> None:
        """A provider call is about to be made with ``request``."""

    async def after_provider_call(self, run: RunInfo, message: AssistantMessage) -> None:
        """A provider call's response was committed to history as ``message``.

        A failed attempt that is tried again (a retry or a fallback model, issue 28) commits
        nothing, so it has no ``after_provider_call``; its ``before_provider_call`` was called.
        """

    async def on_error(self, run: RunInfo, error: BaseException) -> None:
        """A run failed with ``error`` (which the caller also receives)."""

    def spawn(self, work: Coroutine[Any, Any, object]) -> asyncio.Task[Any]:
        """Run ``work`` in the background with its own failure handling (S20).

        A failure is reported to the diagnostic sink, never left as an unhandled task error;
        unfinished work is cancelled by :meth:`dispose`.
        """
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background_done)
        return task

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error(
                "plugin background work failed",
                plugin=extension_name(self),
                error=_describe(task.exception()),
            )

    async def dispose(self) -> None:
        """Release what the plugin holds. The base cancels and awaits :meth:`spawn` work.

        Override to release timers, sockets or storage handles, and call ``super().dispose()``.
        """
        pending = list(self._background)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


class Module:
    """Base class of modules: a named capability with an initialise/dispose lifecycle.

    Attributes:
        name: Unique within an agent; defaults to the class name.
    """

    name: str = ""

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__

    async def initialize(self, agent: object) -> None:
        """Prepare the module for ``agent``; called lazily before the first run.

        May be retried after a failure.
        """

    async def dispose(self) -> None:
        """Release what the module holds."""


@final
class ModuleRegistry:
    """Modules by unique name."""

    __slots__ = ("_modules",)

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        self._modules: dict[str, Module] = {}
        for module in modules:
            self.register(module)

    def register(self, module: Module) -> Module:
        """Add ``module``.

        Raises:
            ConfigurationError: for a non-module or a duplicate name.
        """
        if not isinstance(module, Module):
            raise ConfigurationError(f"not a Module: {module!r}")
        if module.name in self._modules:
            raise ConfigurationError(f"a module named {module.name!r} is already registered")
        self._modules[module.name] = module
        return module

    def get(self, name: str) -> Module | None:
        """The module named ``name``, or ``None``."""
        return self._modules.get(name)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __len__(self) -> int:
        return len(self._modules)


def extension_name(extension: object) -> str:
    """``extension.name`` when it is a non-empty string, else the class name; never raises."""
    try:
        name = getattr(extension, "name", "")
    except Exception:  # noqa: BLE001 - S20: a raising `name` property is extension code too
        name = ""
    return name if isinstance(name, str) and name else type(extension).__name__


def _describe(error: BaseException | None) -> str:
    try:
        return repr(error)
    except Exception:  # noqa: BLE001 - a raising __repr__ must not turn a record into a crash
        return f"<{type(error).__name__}; its repr() raised>"


async def invoke_extension(extension: object, hook: ExtensionHook, *args: object) -> None:
    """Call ``extension.<hook>(*args)`` and await its result, all inside the caller's guard.

    The attribute lookup and the call happen here, so whatever a plain ``def`` override raises
    when called is raised from this coroutine, like an ``async def`` override's failure (S03,
    S20). ``None`` from a plain ``def`` override is accepted (it did its work when called).

    Raises:
        ConfigurationError: the call returned something that is neither awaitable nor ``None``.
        Exception: whatever the extension raised, unchanged.
    """
    result = getattr(extension, hook)(*args)
    if result is None:
        return
    if not inspect.isawaitable(result):
        raise ConfigurationError(
            f"{extension_name(extension)}.{hook}() returned {type(result).__name__}, not an "
            "awaitable; define it with `async def` (or return None from a plain def)"
        )
    await result


async def call_plugin_hook(
    plugin: Plugin,
    hook: ExtensionHook,
    failures: list[PluginFailure],
    *args: object,
) -> None:
    """Call and await one plugin hook; record and swallow an ``Exception`` (S20).

    The call itself is inside the guard (see :func:`invoke_extension`). Cancellation and other
    ``BaseException`` subclasses propagate.
    """
    try:
        await invoke_extension(plugin, hook, *args)
    except Exception as exc:  # noqa: BLE001 - S20: a plugin's failure never takes down a run
        name = extension_name(plugin)
        failures.append(PluginFailure(name, hook, exc))
        _log.error("plugin hook raised", plugin=name, hook=hook, error=_describe(exc))


async def run_cleanup_step(
    extension: object, hook: ExtensionHook, errors: list[BaseException]
) -> None:
    """Call and await one cleanup step (``dispose``, ``aclose``); record a failure (S20).

    Disposal never raises for a cleanup failure: the ``Exception`` is appended to ``errors`` (and
    reported to the diagnostic sink) so the next step still runs and the caller gets them all.

    A ``CancelledError`` out of the step is recorded the same way — the step did not finish its
    cleanup. It is raised again only when the task running the step was itself asked to cancel
    during the step (its ``cancelling()`` count rose): that cancellation is aimed at the caller,
    who must see it. One the step raised with nobody cancelling the task is only that step's
    failure, and the next step still runs. Other ``BaseException`` subclasses
    (``KeyboardInterrupt``, ``SystemExit``) propagate unrecorded.
    """
    task = asyncio.current_task()
    baseline = task.cancelling() if task is not None else 0
    try:
        await invoke_extension(extension, hook)
    except Exception as exc:  # noqa: BLE001 - S20: cleanup failures are returned, never raised
        _record_cleanup_failure(extension, hook, exc, errors)
    except asyncio.CancelledError as exc:
        _record_cleanup_failure(extension, hook, exc, errors)
        if task is not None and task.cancelling() > baseline:
            raise  # the running task is being cancelled: never swallowed


def _record_cleanup_failure(
    extension: object, hook: ExtensionHook, error: BaseException, errors: list[BaseException]
) -> None:
    errors.append(error)
    _log.error(
        "cleanup step failed",
        extension=extension_name(extension),
        hook=hook,
        error=_describe(error),
    )
