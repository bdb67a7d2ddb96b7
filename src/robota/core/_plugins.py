"""Plugins and modules (S03, S20): extensions with a lifecycle.

A :class:`Plugin` observes runs through awaited hooks (before/after a run, before/after each
provider call, on error). A plugin's failure never takes down a run or the process (S20): a
raising hook is recorded — in the run's :attr:`~robota.RunResult.plugin_errors` and through the
diagnostic sink — and swallowed. Background work a plugin schedules goes through
:meth:`Plugin.spawn`, which attaches its own failure handling and is cancelled at disposal, so no
unhandled task outlives the agent.

A :class:`Module` is a named capability an agent initialises once (lazily, before its first run)
and disposes at close. A failed initialisation is not cached: the next run tries again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

from robota.core._errors import ConfigurationError
from robota.core._logging import get_logger

if TYPE_CHECKING:
    from robota.core._messages import AssistantMessage
    from robota.core.execution._result import RunResult
    from robota.core.providers._contract import ChatRequest

__all__ = ["Module", "ModuleRegistry", "Plugin", "PluginFailure", "RunInfo"]

_log = get_logger("robota.plugins")


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


@final
@dataclass(frozen=True, slots=True)
class PluginFailure:
    """A plugin hook that raised; recorded and swallowed (S20).

    Attributes:
        plugin: The plugin's name.
        hook: The hook's name (``"before_run"`` …).
        error: What it raised.
    """

    plugin: str
    hook: str
    error: Exception


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

    async def before_run(self, run: RunInfo, input: str) -> None:
        """A run is starting (its slot is held, its input not yet in history)."""

    async def after_run(self, run: RunInfo, result: RunResult) -> None:
        """A run ended with ``result`` (complete or interrupted)."""

    async def before_provider_call(self, run: RunInfo, request: ChatRequest) -> None:
        """A provider call is about to be made with ``request``."""

    async def after_provider_call(self, run: RunInfo, message: AssistantMessage) -> None:
        """A provider call's response was committed to history as ``message``."""

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
                plugin=self.name,
                error=repr(task.exception()),
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


async def call_plugin_hook(
    plugin: Plugin,
    hook: str,
    work: Awaitable[None],
    failures: list[PluginFailure],
) -> None:
    """Await one hook; record and swallow an ``Exception`` (S20). Cancellation propagates."""
    try:
        await work
    except Exception as exc:  # noqa: BLE001 - S20: a plugin's failure never takes down a run
        failures.append(PluginFailure(plugin.name, hook, exc))
        _log.error("plugin hook raised", plugin=plugin.name, hook=hook, error=repr(exc))
