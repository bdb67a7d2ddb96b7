"""The agent's lifetime (S20): initialisation before the first run, and disposal.

A mixin of :class:`~robota.Agent`. Modules and plugins are initialised once (a failure is not
cached); :meth:`~robota.Agent.aclose` runs the one disposal as a task the agent owns, so a
cancelled caller cannot cut it short.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING

from robota.core._agent_state import AgentState
from robota.core._plugins import (
    ExtensionHook,
    invoke_extension,
    run_cleanup_step,
)
from robota.core._sync import refuse_inside_event_loop
from robota.core.execution._guardrails import GuardrailGate
from robota.core.permissions._gate import PermissionGate

if TYPE_CHECKING:
    from robota.core.execution._retry import ModelCandidate  # noqa: F401 - a RareField type


__all__ = ["AgentLifetimeMixin"]


class AgentLifetimeMixin(AgentState):
    """Initialisation and disposal of :class:`~robota.Agent` (S20)."""

    if not TYPE_CHECKING:
        __slots__ = ()

    def _parts(self) -> set[int]:
        """The modules and plugins initialised so far, by id (S20)."""
        if self._initialized_parts is None:
            self._initialized_parts = set()
        return self._initialized_parts

    async def _ensure_initialized(self) -> None:
        # S20: a failed initialisation is not cached; the next run retries what did not succeed.
        if not self._initialized:
            # S03/S20: the call into the extension is made inside invoke_extension, so a plain
            # `def` override that raises fails this run exactly like an async one (and is
            # retried).
            for module in self._modules:
                if id(module) not in self._parts():
                    await invoke_extension(module, "initialize", self)
                    self._parts().add(id(module))
            for plugin in self._plugins:
                if id(plugin) not in self._parts():
                    await invoke_extension(plugin, "setup", self)
                    self._parts().add(id(plugin))
            self._initialized = True
        if self._sources:
            await self._start_sources()

    async def aclose(self) -> list[BaseException]:
        """Close the agent (S20) and return the cleanup failures; never raises for them.

        Waits for in-flight and queued runs to settle, disposes plugins and modules, closes the
        providers it owns, and leaves no task behind. From the first call on the agent is
        terminal: new runs are refused with :class:`~robota.DisposedAgentError`. Every call
        returns (a fresh list of) the same failures, those of the one disposal.

        The disposal runs as one task the agent owns, and this call only waits for it. Cancelling
        the caller (``asyncio.wait_for(agent.aclose(), ...)``, a cancelled ``async with`` body's
        exit) propagates to the caller as usual, but the disposal goes on to the end; a later
        ``aclose()`` waits for that same disposal and returns its failures.

        A ``CancelledError`` that a cleanup step raises while nobody is cancelling the disposal is
        that step's failure: it is returned with the others and the next step runs. Cancelling the
        disposal task itself — the event loop does so to every task at shutdown — cuts short only
        the step it lands in (recorded as that step's failure, a ``CancelledError``); the rest of
        the disposal still runs, and then the task ends cancelled, so whoever cancelled it sees the
        cancellation honoured. A task cancelled before it could begin (shutdown right after this
        call) disposed nothing; the agent stays ``closing`` and the next ``aclose()`` starts it
        again.
        """
        if self._state == "open":
            self._state = "closing"  # S20: terminal from the moment disposal is initiated
        while self._state == "closing":
            disposal = self._disposal
            if disposal is None or disposal.done():
                # Done while still "closing" only if cancelled before its first step (its
                # `finally` never ran): start it again.
                disposal = asyncio.get_running_loop().create_task(
                    self._dispose(), name=f"robota-dispose-{self._id}"
                )
                self._disposal = disposal
            # asyncio.wait never cancels what it waits on: cancelling this caller leaves the
            # disposal running, and the disposal's own end (even a cancelled one) is not raised.
            await asyncio.wait((disposal,))
        return list(self._close_errors or ())

    def close(self) -> list[BaseException]:
        """:meth:`aclose` for synchronous code: close the agent, return the cleanup failures.

        Runs the disposal on the event loop :meth:`run_sync` used (so a provider the agent owns
        closes its connections on their own loop), then closes that loop.

        Raises:
            RobotaError: when called from a running event loop (``await agent.aclose()`` there).
        """
        refuse_inside_event_loop("close()", "await agent.aclose()")
        driver = self._sync_driver()
        try:
            return driver.run(self.aclose())
        finally:
            driver.close()

    async def _dispose(self) -> None:
        """The one disposal (S20): settle the run queue, run every cleanup step, reset state.

        Runs as a task of its own (see :meth:`aclose`). A cancellation of this task interrupts
        one await only; it is remembered and raised once every step has had its turn.
        """
        # Filled in place, so a later aclose() sees what was recorded.
        errors = self._close_errors if self._close_errors is not None else []
        self._close_errors = errors
        cancelled: asyncio.CancelledError | None = None
        try:
            while True:
                try:
                    await self._acquire()  # the queue's tail: every earlier run settles first
                    break
                except asyncio.CancelledError as exc:
                    # Keep waiting: disposing under a live run would pull its resources away.
                    cancelled = exc
            try:
                for extension, hook in self._cleanup_steps():
                    try:
                        # S20: each step is called inside its guard, so a synchronous raise is
                        # collected; a CancelledError reaching here was aimed at this task.
                        await run_cleanup_step(extension, hook, errors)
                    except asyncio.CancelledError as exc:
                        cancelled = exc  # recorded as that step's failure; the rest still run
                while self._stream_tasks:
                    try:
                        await asyncio.wait(list(self._stream_tasks or ()))
                    except asyncio.CancelledError as exc:
                        cancelled = exc
            finally:
                self._release()
        finally:
            self._state = "closed"
            self._store.observer = None
        if cancelled is not None:
            raise cancelled  # deferred, never swallowed

    def _cleanup_steps(self) -> Iterator[tuple[object, ExtensionHook]]:
        """The S20 cleanup steps in order: plugins, modules, tool sources, gate, providers.

        The gate step ends a :class:`PermissionGate`'s still-running ``Notification`` hooks
        (S22; the gate itself stays usable); only the providers the agent owns are closed.
        """
        for plugin in self._plugins:
            yield plugin, "dispose"
        for module in self._modules:
            yield module, "dispose"
        for source in self._sources:
            yield source, "aclose"
        gate = self._executor.gate
        if isinstance(gate, GuardrailGate):
            gate = gate.inner
        if isinstance(gate, PermissionGate):
            yield gate, "aclose"
        if self._owns_providers:
            for provider in self._providers:
                yield provider, "aclose"
        for provider in self._fallback_owned:
            yield provider, "aclose"
