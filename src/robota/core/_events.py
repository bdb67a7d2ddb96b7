"""Events (S33): ``ownerType.localName`` names, an owner path on every event, a null service.

An :class:`AgentEvent` says *what* happened (``name``, e.g. ``"tool.completed"``) and *where* in
the execution hierarchy (``owner_path``: agent → execution → round → tool), so a consumer can
reconstruct nesting without a correlation mechanism of its own.

Event services are ports: implement :class:`EventService` (``emit`` and ``enabled``). The default
is :class:`NullEventService`, whose ``enabled`` is ``False`` so the runtime does not even build
events nobody will read. A failing service never changes execution: the runtime reports the
failure to the diagnostic sink and goes on.

Names emitted by the runtime (see :class:`EventNames`):

* ``agent.*`` — run lifecycle: ``run_started``, ``run_completed``, ``run_failed``.
* ``execution.*`` — replay-grade records of one execution: ``provider_request``,
  ``provider_response``, ``provider_native`` (a provider's own payload, S25), ``round_completed``
  (the content-free per-round observation, S39), ``assistant_committed``, ``context_blocked``
  (the pre-send guard did not send a request, S39), ``setting_unsupported`` (a set
  :class:`~robota.ModelSettings` field the model does not honour was not sent; ``setting``,
  ``model`` and ``provider`` name it, once per run, S28/S30).
* ``history.*`` — every history mutation: ``appended`` and ``system_prompt_set`` carrying the
  message itself, and ``trimmed`` (a host-configured cap dropped ``count`` messages), so
  :func:`rebuild_history` reproduces the real history from them.
* ``tool.*`` — ``requested`` (a call reached the executor), ``started`` / ``completed`` /
  ``failed`` (the awaited body of a permitted call — the tool span), ``refused`` (validation or
  admission stopped it before any body ran; never a tool span), ``skipped`` (S37 unavailable
  tool, or a forced call's tool call), ``result_omitted`` (the context budget replaced a result
  with a notice; the event keeps the full content, S39).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol, final, runtime_checkable

from robota.core._logging import get_logger
from robota.core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    now,
)

__all__ = [
    "AgentEvent",
    "CallbackEventService",
    "EventNames",
    "EventService",
    "NullEventService",
    "OwnerRef",
    "RecordingEventService",
    "rebuild_history",
]

_log = get_logger("robota.events")


@final
@dataclass(frozen=True, slots=True)
class OwnerRef:
    """One level of an owner path.

    Attributes:
        type: The owner type (``agent``, ``execution``, ``round``, ``tool``).
        id: That owner's id.
    """

    type: str
    id: str


@final
@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One event.

    Attributes:
        name: ``ownerType.localName``, e.g. ``"tool.completed"``.
        owner_path: From the outermost owner (the agent) to the one that emitted it.
        data: The event's facts. Replay-grade events carry messages and requests here.
        timestamp: Wall-clock time (``time.time()``) at emission.
    """

    name: str
    owner_path: tuple[OwnerRef, ...]
    data: Mapping[str, object] = field(default_factory=dict)
    timestamp: float = field(default_factory=now)

    @property
    def owner_type(self) -> str:
        """The ``ownerType`` half of the name."""
        return self.name.partition(".")[0]

    def owner_id(self, owner_type: str) -> str | None:
        """The id of the nearest owner of ``owner_type`` on the path, or ``None``."""
        for ref in reversed(self.owner_path):
            if ref.type == owner_type:
                return ref.id
        return None


@runtime_checkable
class EventService(Protocol):
    """Receives events. ``enabled`` lets the runtime skip building events nobody reads."""

    @property
    def enabled(self) -> bool:
        """Whether this service wants events at all."""
        ...

    def emit(self, event: AgentEvent) -> None:
        """Receive one event. Keep it quick; exceptions are reported and ignored."""
        ...


@final
class NullEventService:
    """The default event service: wants nothing, receives nothing (S03 Null Object)."""

    __slots__ = ()

    @property
    def enabled(self) -> bool:
        """Always ``False``."""
        return False

    def emit(self, event: AgentEvent) -> None:
        """Discard ``event``."""


@final
class RecordingEventService:
    """Keeps every event in :attr:`events` (tests, debugging, building a replay).

    Attributes:
        events: Every event received, in order.
    """

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    @property
    def enabled(self) -> bool:
        """Always ``True``."""
        return True

    def emit(self, event: AgentEvent) -> None:
        """Keep ``event``."""
        self.events.append(event)

    def names(self) -> list[str]:
        """The names of the recorded events, in order."""
        return [event.name for event in self.events]


@final
class CallbackEventService:
    """Adapts a plain callable ``fn(event)`` to :class:`EventService`."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[AgentEvent], None]) -> None:
        self._fn = fn

    @property
    def enabled(self) -> bool:
        """Always ``True``."""
        return True

    def emit(self, event: AgentEvent) -> None:
        """Call the callback with ``event``."""
        self._fn(event)


def emit_safely(service: EventService, event: AgentEvent) -> None:
    """Deliver ``event``; a raising service is reported to the diagnostic sink, never raised."""
    try:
        service.emit(event)
    except Exception as exc:  # noqa: BLE001 - observers never change execution (S33, S39)
        _log.error("event service raised", event_name=event.name, error=repr(exc))


class EventNames:
    """The event names the runtime emits (``ownerType.localName``)."""

    RUN_STARTED: Final = "agent.run_started"
    RUN_COMPLETED: Final = "agent.run_completed"
    RUN_FAILED: Final = "agent.run_failed"
    RUN_RESUMED: Final = "agent.run_resumed"
    RUN_SUSPENDED: Final = "agent.run_suspended"
    PROVIDER_REQUEST: Final = "execution.provider_request"
    PROVIDER_RESPONSE: Final = "execution.provider_response"
    PROVIDER_NATIVE: Final = "execution.provider_native"
    ROUND_COMPLETED: Final = "execution.round_completed"
    CONTEXT_BLOCKED: Final = "execution.context_blocked"
    CONTEXT_WINDOW_UNKNOWN: Final = "execution.context_window_unknown"
    ASSISTANT_COMMITTED: Final = "execution.assistant_committed"
    TRACE_NOT_PROPAGATED: Final = "execution.trace_not_propagated"
    SETTING_UNSUPPORTED: Final = "execution.setting_unsupported"
    MEDIA_OMITTED: Final = "execution.media_omitted"
    MODEL_RETRY: Final = "execution.model_retry"
    GUARDRAIL: Final = "execution.guardrail"
    MODEL_FALLBACK: Final = "execution.model_fallback"
    MODEL_FALLBACK_REFUSED: Final = "execution.model_fallback_refused"
    HANDOFF: Final = "execution.handoff"
    HISTORY_APPENDED: Final = "history.appended"
    HISTORY_SYSTEM_PROMPT_SET: Final = "history.system_prompt_set"
    HISTORY_TRIMMED: Final = "history.trimmed"
    TOOL_REQUESTED: Final = "tool.requested"
    TOOL_QUEUE_OBSERVED: Final = "tool.queue_observed"
    TOOL_STARTED: Final = "tool.started"
    TOOL_COMPLETED: Final = "tool.completed"
    TOOL_FAILED: Final = "tool.failed"
    TOOL_REFUSED: Final = "tool.refused"
    TOOL_SKIPPED: Final = "tool.skipped"
    TOOL_RESULT_OMITTED: Final = "tool.result_omitted"
    TOOL_SOURCE_REJECTED: Final = "tool.source_rejected"


def rebuild_history(events: Iterable[AgentEvent]) -> tuple[Message, ...]:
    """Rebuild a history from its ``history.*`` events (other events are ignored).

    Replaying an agent's history-mutation events in order gives exactly its history.
    """
    messages: list[Message] = []
    for event in events:
        if event.name == EventNames.HISTORY_APPENDED:
            message = event.data["message"]
            if not isinstance(message, (UserMessage, AssistantMessage, ToolMessage)):
                raise ValueError(f"{event.name} event without a message: {event!r}")
            messages.append(message)
        elif event.name == EventNames.HISTORY_SYSTEM_PROMPT_SET:
            head = event.data.get("message")
            has_head = bool(messages) and isinstance(messages[0], SystemMessage)
            if has_head:
                del messages[0]
            if isinstance(head, SystemMessage):
                messages.insert(0, head)
        elif event.name == EventNames.HISTORY_TRIMMED:
            start = 1 if messages and isinstance(messages[0], SystemMessage) else 0
            count = event.data["count"]
            assert isinstance(count, int)
            del messages[start : start + count]
    return tuple(messages)
