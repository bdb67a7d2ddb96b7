"""The conversation store (S34, S35).

History principles (S34), kept by construction rather than by convention:

* **Append-only.** Messages are added, never edited or deleted (a host-configured cap is the
  one exception, and it is off by default).
* **Read-only for consumers.** Readers get a live read-only view of frozen messages.
* **Always committed.** An assistant message is produced only through
  :meth:`ConversationStore.begin_assistant` → :meth:`PendingAssistant.commit`: one commit path
  whether the response completed or was aborted, so an abort with no text still appends an
  (empty, ``"interrupted"``) assistant message.
* **One system head** (S35). The system prompt is live configuration, not conversation: the store
  holds at most one system message, always first, and setting it replaces the old one in place.

When history is read for a provider call (:meth:`ConversationStore.provider_messages`), an
interrupted assistant message's text carries a neutral annotation so the model knows its previous
response was cut short. The annotated view is kept incrementally beside the history, so reading it
costs nothing per round however long the conversation is.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, TypeAlias, final, overload

from robota.core._context import ContextLedger
from robota.core._errors import ConfigurationError, HistoryError
from robota.core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    carried_parts,
)
from robota.core._texts import DEFAULT_INTERRUPTED_ANNOTATION
from robota.core._usage import Usage

__all__ = [
    "ConversationStore",
    "HistoryMutation",
    "HistoryObserver",
    "HistorySnapshot",
    "HistoryView",
    "PendingAssistant",
]


def has_media(message: Message) -> bool:
    """Whether ``message`` carries a media part (an image, document or audio; S30)."""
    return any(part.kind != "text" for part in carried_parts(message))


@final
@dataclass(frozen=True, slots=True)
class HistoryMutation:
    """One change to a conversation store, as its observer sees it.

    Attributes:
        kind: ``"append"`` — ``message`` was added at the end; ``"system_prompt"`` — the system
            head was set to ``message``, or removed when ``message`` is ``None``; ``"trim"`` —
            the host-configured cap dropped ``count`` messages after the head.
        message: The message appended, or the new head.
        count: For ``"trim"``, how many messages were dropped.
    """

    kind: Literal["append", "system_prompt", "trim"]
    message: Message | None = None
    count: int = 0


HistoryObserver: TypeAlias = Callable[[HistoryMutation], None]
"""Called after every change to a store, in order. It must not write to the store."""


@final
class HistoryView(Sequence[Message]):
    """A live, read-only view of a store's history: it never copies, always current."""

    __slots__ = ("_provider", "_store")

    def __init__(self, store: ConversationStore, *, provider: bool = False) -> None:
        self._store = store
        self._provider = provider

    def _items(self) -> list[Message]:
        return self._store._provider if self._provider else self._store._messages

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(self._items()[index])
        return self._items()[index]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[Message]:
        return iter(self._items())

    def __repr__(self) -> str:
        return f"HistoryView({len(self)} messages)"


@final
class HistorySnapshot(Sequence[Message]):
    """An immutable view of the history as it was at one moment, taken in O(1).

    History is append-only, so a snapshot is a fixed prefix of the store's list; the rare
    writes that are not appends (replacing the system head, a host-configured trim) copy the list
    first, so no snapshot ever changes.
    """

    __slots__ = ("_items", "_stop")

    def __init__(self, items: list[Message], stop: int) -> None:
        self._items = items
        self._stop = stop

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(self._items[: self._stop][index])
        if index < 0:
            index += self._stop
        if not 0 <= index < self._stop:
            raise IndexError("history snapshot index out of range")
        return self._items[index]

    def __len__(self) -> int:
        return self._stop

    def __iter__(self) -> Iterator[Message]:
        return itertools.islice(self._items, self._stop)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (HistorySnapshot, tuple, list)):
            return len(self) == len(other) and all(
                a is b or a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HistorySnapshot({self._stop} messages)"


@final
class PendingAssistant:
    """An assistant response being received; committed exactly once (S34).

    Obtain one from :meth:`ConversationStore.begin_assistant`. Accumulate text and tool calls
    while the provider streams, then :meth:`commit`. Used as a context manager it commits on exit
    if nothing did: ``"complete"`` after a normal exit, ``"interrupted"`` when an exception —
    an abort included — leaves the block. Either way the message is in history.

    Attributes:
        model: The model that actually answered (S30); set it when the provider says.
        usage: The normalised usage of this response.
        continuation: The provider's opaque continuation text (S26).
    """

    __slots__ = ("_calls", "_committed", "_parts", "_store", "continuation", "model", "usage")

    def __init__(self, store: ConversationStore, model: str | None) -> None:
        self._store = store
        self._parts: list[str] = []
        self._calls: list[ToolCall] = []
        self._committed: AssistantMessage | None = None
        self.model = model
        self.usage: Usage | None = None
        self.continuation: str | None = None

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls received so far."""
        return tuple(self._calls)

    @property
    def committed(self) -> AssistantMessage | None:
        """The committed message, or ``None`` while still pending."""
        return self._committed

    def append_text(self, delta: str) -> None:
        """Add a text fragment."""
        self._check_open()
        if delta:
            self._parts.append(delta)

    def add_tool_call(self, call: ToolCall) -> None:
        """Add a tool call the model asked for."""
        self._check_open()
        self._calls.append(call)

    def commit(self, *, interrupted: bool = False) -> AssistantMessage:
        """Append the message to history — the single commit path — and return it.

        ``interrupted=True`` marks a response aborted before completion; it is appended even
        with no text at all.
        """
        self._check_open()
        message = AssistantMessage(
            "".join(self._parts),
            tool_calls=tuple(self._calls),
            state="interrupted" if interrupted else "complete",
            model=self.model,
            usage=self.usage,
            continuation=self.continuation,
        )
        self._committed = message
        self._store._commit_assistant(self, message)
        return message

    def discard(self) -> AssistantMessage:
        """Drop this response without appending it; return what it held (issue 28, S34).

        For an attempt that failed and is tried again (a retry or a fallback model): its
        partial reply never enters history, so the retried response — committed through the
        single commit path — replaces it instead of standing next to it. The returned message
        (``state="interrupted"``) is for the record only (the journal, usage); it is not in
        history. A new response can begin afterwards.
        """
        self._check_open()
        message = AssistantMessage(
            "".join(self._parts),
            tool_calls=tuple(self._calls),
            state="interrupted",
            model=self.model,
            usage=self.usage,
            continuation=self.continuation,
        )
        self._committed = message
        self._store._drop_assistant(self)
        return message

    def _check_open(self) -> None:
        if self._committed is not None:
            raise HistoryError("this assistant message is already committed; begin a new one")

    def __enter__(self) -> PendingAssistant:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._committed is None:
            self.commit(interrupted=exc_type is not None)


@final
class ConversationStore:
    """One conversation's history (S34) with its single system head (S35).

    Args:
        system_prompt: The initial system prompt; ``None`` or ``""`` for none.
        messages: Earlier history to start from (e.g. a restored session). A system message in
            it is allowed only first; the ``system_prompt`` argument, when given, replaces it.
        max_messages: Keep at most this many non-system messages, dropping the oldest. ``None``
            (the default) keeps everything: history is never trimmed unless a host asks.
        interrupted_annotation: The text added to an interrupted assistant message when it is
            read for a provider call.

    One writer at a time: an agent serialises its runs (S38), and the store does not lock.

    Attributes:
        observer: Called with a :class:`HistoryMutation` after every change (the agent uses it
            for ``history.*`` events). ``None`` by default.
    """

    __slots__ = (
        "_annotation",
        "_ledger",
        "_max",
        "_media",
        "_messages",
        "_pending",
        "_provider",
        "_provider_view",
        "_view",
        "observer",
    )

    def __init__(
        self,
        *,
        system_prompt: str | None = None,
        messages: Iterable[Message] = (),
        max_messages: int | None = None,
        interrupted_annotation: str = DEFAULT_INTERRUPTED_ANNOTATION,
    ) -> None:
        cap: object = max_messages  # untyped callers (config files) can pass anything
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ConfigurationError(
                f"max_messages must be a positive integer or None (unbounded), got {max_messages!r}"
            )
        self._annotation = interrupted_annotation
        self._max = max_messages
        self._messages: list[Message] = []
        self._media: list[Message] | None = None  # the messages with media parts, once any is
        self._provider: list[Message] = self._messages  # until an interrupted message (_push)
        self._pending: PendingAssistant | None = None
        # The views are built on first read (issue 27: most stores are read through one).
        self._view: HistoryView | None = None
        self._provider_view: HistoryView | None = None
        self.observer: HistoryObserver | None = None
        self._ledger = ContextLedger()
        for index, message in enumerate(messages):
            if isinstance(message, SystemMessage):
                if index != 0:
                    raise HistoryError(
                        "a system message may only be the first message of a history (S35)"
                    )
            elif not isinstance(message, (UserMessage, AssistantMessage, ToolMessage)):
                raise TypeError(f"not a message: {message!r}")
            self._push(message)
        if system_prompt:
            self.set_system_prompt(system_prompt)
        self._trim()

    @property
    def messages(self) -> HistoryView:
        """A live, read-only view of the history, system head included."""
        view = self._view
        if view is None:
            view = self._view = HistoryView(self)
        return view

    def snapshot(self) -> tuple[Message, ...]:
        """An immutable copy of the history as it is now."""
        return tuple(self._messages)

    def provider_messages(self) -> HistoryView:
        """The history as a provider call sees it: interrupted assistant text annotated (S34).

        A live read-only view; it costs no copy per round.
        """
        view = self._provider_view
        if view is None:
            view = self._provider_view = HistoryView(self, provider=True)
        return view

    def provider_snapshot(self) -> HistorySnapshot:
        """:meth:`provider_messages` frozen as it is now, in O(1) (what a request carries)."""
        return HistorySnapshot(self._provider, len(self._provider))

    @property
    def context(self) -> ContextLedger:
        """The incremental context-window account of this history (S31)."""
        return self._ledger

    @property
    def system_prompt(self) -> str | None:
        """The current system prompt, or ``None``."""
        head = self._messages[0] if self._messages else None
        return head.content if isinstance(head, SystemMessage) else None

    @property
    def media_messages(self) -> tuple[Message, ...]:
        """The messages of the history that carry a media part, oldest first (as appended).

        A request's media checks (S30) read these instead of scanning the whole history, so a
        round costs the same at 10 messages as at 10,000. Empty for a text-only conversation.
        """
        return tuple(self._media) if self._media else ()

    @property
    def has_pending(self) -> bool:
        """Whether an assistant message has begun and is not committed yet."""
        return self._pending is not None

    def set_system_prompt(self, text: str | None) -> SystemMessage | None:
        """Replace the system head (S35); ``None`` or ``""`` removes it. Returns the new head.

        The very next :meth:`provider_messages` read carries the change.
        """
        old = self._messages[0] if self._messages else None
        has_head = isinstance(old, SystemMessage)
        head = SystemMessage(text) if text else None
        if head is not None or has_head:
            self._copy_on_write()
            self._ledger.head_set(head, old=old if has_head else None)
        for items in self._lists():
            if head is None:
                if has_head:
                    del items[0]
            elif has_head:
                items[0] = head
            else:
                items.insert(0, head)
        if self.observer is not None and (head is not None or has_head):
            self.observer(HistoryMutation("system_prompt", head))
        return head

    def append(self, message: UserMessage | ToolMessage) -> None:
        """Append a user or tool message.

        System messages go through :meth:`set_system_prompt`; assistant messages through
        :meth:`begin_assistant` (the single commit path).

        Raises:
            HistoryError: for a system or assistant message, or while an assistant response is
                pending (a write then would interleave with it).
        """
        candidate: object = message  # untyped callers can pass anything
        if isinstance(candidate, SystemMessage):
            raise HistoryError("use set_system_prompt() for the system message (S35)")
        if isinstance(candidate, AssistantMessage):
            raise HistoryError("assistant messages are committed through begin_assistant() (S34)")
        if not isinstance(candidate, (UserMessage, ToolMessage)):
            raise TypeError(f"not a message: {message!r}")
        if self._pending is not None:
            raise HistoryError("an assistant message is pending; commit it before appending")
        self._push(message)
        self._trim()

    def restore(self, messages: Iterable[Message]) -> None:
        """Append saved messages exactly as they were (a continuation, S40).

        Unlike :meth:`append`, any kind is accepted, with its own id and timestamp; a system
        message only as the first message of an empty store (S35).

        Raises:
            HistoryError: for a system message anywhere else, or while a response is pending.
        """
        if self._pending is not None:
            raise HistoryError("an assistant message is pending; commit it before restoring")
        for message in messages:
            if isinstance(message, SystemMessage) and self._messages:
                raise HistoryError("a system message may only be the first message (S35)")
            if not isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolMessage)):
                raise TypeError(f"not a message: {message!r}")
            self._push(message)
        self._trim()

    def begin_assistant(self, *, model: str | None = None) -> PendingAssistant:
        """Start receiving an assistant response; see :class:`PendingAssistant`.

        Raises:
            HistoryError: if another assistant response is still pending.
        """
        if self._pending is not None:
            raise HistoryError("an assistant message is already pending; commit it first")
        pending = PendingAssistant(self, model)
        self._pending = pending
        return pending

    def _commit_assistant(self, pending: PendingAssistant, message: AssistantMessage) -> None:
        if self._pending is not pending:
            raise HistoryError("this pending assistant message does not belong to the store")
        self._pending = None
        self._push(message)
        self._trim()

    def _drop_assistant(self, pending: PendingAssistant) -> None:
        if self._pending is not pending:
            raise HistoryError("this pending assistant message does not belong to the store")
        self._pending = None

    def _lists(self) -> tuple[list[Message], ...]:
        # The provider list is the history list itself until an interrupted message differs.
        if self._provider is self._messages:
            return (self._messages,)
        return (self._messages, self._provider)

    def _push(self, message: Message) -> None:
        self._messages.append(message)
        if has_media(message):
            if self._media is None:
                self._media = []
            self._media.append(message)
        if isinstance(message, AssistantMessage) and message.state == "interrupted":
            content = (
                f"{message.content}\n\n{self._annotation}" if message.content else self._annotation
            )
            sent: Message = dataclasses.replace(message, content=content)
            if self._provider is self._messages:
                # The first message the two views see differently: from now on, two lists.
                # Snapshots taken before keep the shared list, which only grows past them.
                self._provider = self._messages[:-1]
            self._provider.append(sent)
        else:
            sent = message
            if self._provider is not self._messages:
                self._provider.append(sent)
        self._ledger.appended(sent)
        if self.observer is not None:
            self.observer(HistoryMutation("append", message))

    def _copy_on_write(self) -> None:
        # Snapshots hold the old lists; rewrite fresh copies so none of them ever changes.
        shared = self._provider is self._messages
        self._messages = list(self._messages)
        self._provider = self._messages if shared else list(self._provider)

    def _trim(self) -> None:
        if self._max is None:
            return
        start = 1 if self._messages and isinstance(self._messages[0], SystemMessage) else 0
        excess = len(self._messages) - start - self._max
        if excess <= 0:
            return
        end = start + excess
        self._copy_on_write()
        # Never leave a tool result whose call was trimmed away at the front.
        while end < len(self._messages) and isinstance(self._messages[end], ToolMessage):
            end += 1
        self._ledger.dropped(self._provider[start:end])
        if self._media:
            gone = {id(message) for message in self._messages[start:end]}
            self._media = [message for message in self._media if id(message) not in gone]
        for items in self._lists():
            del items[start:end]
        if self.observer is not None:
            self.observer(HistoryMutation("trim", count=end - start))

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        return f"<ConversationStore {len(self._messages)} messages>"
