"""The runtime's event emitter: owner paths and fan-out to the services of one run (S33).

Internal. An :class:`EventEmitter` holds the enabled services of a run (the agent's, the run's
own, a callback) and an owner path; :meth:`EventEmitter.child` extends the path for a nested
owner. When no service is enabled, ``enabled`` is ``False`` and callers skip building events
(events are built lazily when nobody listens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import final

from robota.core._events import AgentEvent, EventService, OwnerRef, emit_safely

__all__ = ["EventEmitter"]


@final
class EventEmitter:
    """Emits events with one owner path to a fixed set of services."""

    __slots__ = ("_services", "enabled", "owner_path")

    def __init__(
        self, services: Sequence[EventService], owner_path: tuple[OwnerRef, ...] = ()
    ) -> None:
        live: list[EventService] = []
        for service in services:
            if service.enabled and all(service is not s for s in live):
                live.append(service)
        self._services: tuple[EventService, ...] = tuple(live)
        self.enabled = bool(live)
        self.owner_path = owner_path

    def child(self, owner_type: str, owner_id: str) -> EventEmitter:
        """An emitter for a nested owner, sending to the same services."""
        emitter = EventEmitter.__new__(EventEmitter)
        emitter._services = self._services
        emitter.enabled = self.enabled
        emitter.owner_path = (*self.owner_path, OwnerRef(owner_type, owner_id))
        return emitter

    def emit(self, name: str, data: Mapping[str, object]) -> None:
        """Send one event to every service (failures are reported, never raised)."""
        if not self.enabled:
            return
        event = AgentEvent(name, self.owner_path, data)
        for service in self._services:
            emit_safely(service, event)

    @property
    def services(self) -> tuple[EventService, ...]:
        """The enabled services."""
        return self._services
