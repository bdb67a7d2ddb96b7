"""Conversation messages (S34, S36).

Messages are frozen, slotted values with a ``kind`` literal, so history can be shared without
copying and a ``match`` over :data:`Message` ends in ``assert_never``. Every message has its own
unique ``id`` (minted here) and a ``state``; only an assistant message can be ``"interrupted"``
(its response was cut short), every other kind is always ``"complete"``.

A tool call's ``id`` belongs to the provider (S36): an opaque transcript token linking the call to
its result message. Robota never mints, rewrites or relies on its uniqueness — some vendors reuse
the same value in later turns. Anything needing a unique identity mints its own.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, cast, final

from robota.core._parts import MediaPart, MessagePart, tool_parts, user_content
from robota.core._usage import Usage

__all__ = [
    "AssistantMessage",
    "Message",
    "MessageState",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "new_id",
]

MessageState: TypeAlias = Literal["complete", "interrupted"]
"""``"interrupted"``: the assistant's response was aborted before it completed (assistant only)."""


@dataclass(frozen=True, slots=True)
class _Determinism:
    token: Callable[[], str]  # 24 hex digits, unique within the replayed execution
    clock: Callable[[], float]  # wall-clock seconds, the same on every replay


_DETERMINISM: ContextVar[_Determinism | None] = ContextVar("robota_determinism", default=None)


# S40: a finalizer the garbage collector runs belongs to no replayed execution, whatever context
# it happens to run in. A Temporal worker that stops leaves its cached workflows' coroutines to
# the collector, which closes them (their ``finally`` blocks mint ids) in any thread and context,
# often another workflow's activation; drawing from that workflow's source there would shift
# every id it mints next, so its replay would no longer match its history. Code run by a
# collection gets ids from the operating system and the wall clock instead. The check is inlined
# in new_id, now and _mint_message_id: an id is minted for every message.
class _Collecting(threading.local):
    """Whether this thread is inside a garbage collection (its finalizers are running)."""

    active = False


_COLLECTING = _Collecting()


def _note_collection(phase: str, info: object) -> None:
    _COLLECTING.active = phase == "start"


def _watch_collections() -> None:
    # First in the list: CPython walks gc.callbacks by index over the live list, so a callback
    # ahead of ours that removes itself would make it miss a "stop" and leave the flag set
    # (every id of this thread's workflows from the OS until its next collection). Only
    # processes that replay pay for the callback.
    callbacks = gc.callbacks
    if not callbacks or callbacks[0] is not _note_collection:
        with suppress(ValueError):
            callbacks.remove(_note_collection)
        callbacks.insert(0, _note_collection)


@contextmanager
def deterministic(token: Callable[[], str], clock: Callable[[], float]) -> Iterator[None]:
    """Internal; public as :func:`robota.lowlevel.deterministic`: replayable ids and clock here.

    Workflow code is replayed after a worker dies, and what it mints must come out the same:
    inside this context :func:`new_id` takes its 24 hex digits from ``token`` and
    :func:`now` reads ``clock``. Tasks created inside inherit the context. Code the garbage
    collector runs here (a finalizer, an abandoned coroutine's cleanup) draws from neither.
    """
    _watch_collections()
    reset = _DETERMINISM.set(_Determinism(token, clock))
    try:
        yield
    finally:
        # Closed from another context (an engine evicting the workflow's coroutine): the
        # context this value was set in is being discarded with it.
        with suppress(ValueError):
            _DETERMINISM.reset(reset)


def new_id(prefix: str) -> str:
    """A fresh unique identifier ``<prefix>_<24 hex digits>`` (96 random bits).

    From the operating system every time: a generator seeded once would repeat its ids in
    processes that copy its memory without Python's fork hooks (a pre-forking server's workers,
    a restored snapshot) — and execution and call ids must stay unique across every process
    sharing a journal (S40). Inside :func:`deterministic` (workflow code), from its source.
    """
    source = _DETERMINISM.get()
    if source is not None and not _COLLECTING.active:
        return f"{prefix}_{source.token()}"
    return f"{prefix}_{os.urandom(12).hex()}"


def now() -> float:
    """Wall-clock seconds (``time.time()``); inside :func:`deterministic`, its replayable clock."""
    source = _DETERMINISM.get()
    if source is not None and not _COLLECTING.active:
        return source.clock()
    return time.time()


def _mint_message_id() -> int | str:
    # 96 bits from the OS now (the same source and timing as new_id, so ids stay unique across
    # processes and replay inside deterministic()); spelled as text only when first read.
    source = _DETERMINISM.get()
    if source is not None and not _COLLECTING.active:
        return f"msg_{source.token()}"
    return int.from_bytes(os.urandom(12), "big")


# A message's ``id`` slot holds the int until _LazyMessageId spells it (typed as what readers see).
_message_id = cast("Callable[[], str]", _mint_message_id)


@final
class _LazyMessageId:
    """The ``id`` attribute of a message class: ``msg_<24 hex digits>``, spelled on first read.

    An id is minted with its message (96 random bits, an int of 40 bytes) but most ids are never
    read in a run that keeps no journal, and the text form costs 77 bytes; so the slot keeps the
    int until the first read, which stores the text in its place. Equality, hashing, ``repr``,
    ``dataclasses.replace`` and pickling all read through here, so they see the text.
    """

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot  # the dataclass's member descriptor for the ``id`` slot

    def __get__(self, message: object, owner: type | None = None) -> Any:
        if message is None:
            return self
        value = self._slot.__get__(message, owner)
        if type(value) is int:
            value = f"msg_{value:024x}"
            self._slot.__set__(message, value)  # frozen to callers; this slot is ours
        return value

    def __set__(self, message: object, value: object) -> None:
        self._slot.__set__(message, value)


@final
@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for.

    Attributes:
        id: The provider's opaque call id (S36); it links the call to its :class:`ToolMessage`
            and may repeat across turns.
        name: The tool name as the model wrote it (it may name no registered tool, S37).
        arguments: The arguments exactly as the model produced them, as JSON text. Kept as text
            so "byte-identical input" (S39) has one meaning and nothing is lost in re-encoding.
    """

    id: str
    name: str
    arguments: str = "{}"


@final
@dataclass(frozen=True, slots=True)
class SystemMessage:
    """The agent's system prompt; a store holds at most one, at its head (S35)."""

    kind: ClassVar[Literal["system"]] = "system"
    state: ClassVar[Literal["complete"]] = "complete"

    content: str
    _: KW_ONLY
    id: str = field(default_factory=_message_id)
    created_at: float = field(default_factory=now)


@final
@dataclass(frozen=True, slots=True)
class UserMessage:
    """Input from the caller.

    Attributes:
        content: A string (the common case, stored as is), or a tuple of parts
            (:class:`~robota.TextPart`, :class:`~robota.ImagePart`,
            :class:`~robota.DocumentPart`, :class:`~robota.AudioPart`); any sequence of parts
            passed is stored as a tuple.
    """

    kind: ClassVar[Literal["user"]] = "user"
    state: ClassVar[Literal["complete"]] = "complete"

    content: str | tuple[MessagePart, ...]
    _: KW_ONLY
    id: str = field(default_factory=_message_id)
    created_at: float = field(default_factory=now)

    def __post_init__(self) -> None:
        if type(self.content) is not str:  # a string costs this one check, nothing more
            object.__setattr__(self, "content", user_content(self.content, "UserMessage"))


@final
@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A model response as committed to history.

    Attributes:
        content: The text the model produced (possibly empty, e.g. a tool-call-only response or
            an abort before any text).
        tool_calls: The tool calls the model asked for, in its order.
        state: ``"interrupted"`` when the response was aborted before it completed.
        model: The model that actually answered (S30), when known.
        usage: The normalised usage the provider reported for this response, when it did.
        continuation: Opaque text the provider needs back on a later request to continue this
            reply (S26, e.g. a signed reasoning block). Robota stores it and never reads it.
    """

    kind: ClassVar[Literal["assistant"]] = "assistant"

    content: str
    _: KW_ONLY
    tool_calls: tuple[ToolCall, ...] = ()
    state: MessageState = "complete"
    model: str | None = None
    usage: Usage | None = None
    continuation: str | None = None
    id: str = field(default_factory=_message_id)
    created_at: float = field(default_factory=now)

    def __post_init__(self) -> None:
        if self.state not in ("complete", "interrupted"):
            raise ValueError(
                f"assistant message state must be 'complete' or 'interrupted', got {self.state!r}"
            )


@final
@dataclass(frozen=True, slots=True)
class ToolMessage:
    """The result of one tool call, linked to it by the provider's call id.

    Attributes:
        content: What the model is shown as the result.
        tool_call_id: The provider's id of the :class:`ToolCall` this answers (S36).
        tool_name: The tool name as the call named it.
        is_error: Whether the result reports a failure (the body raised, the call was refused,
            skipped or not dispatched).
        parts: Images, documents or audio the result carries besides its text (an MCP image
            result, a tool returning ``ToolResult(..., parts=...)``); ``()`` for most results.
    """

    kind: ClassVar[Literal["tool"]] = "tool"
    state: ClassVar[Literal["complete"]] = "complete"

    content: str
    _: KW_ONLY
    tool_call_id: str
    tool_name: str
    is_error: bool = False
    parts: tuple[MediaPart, ...] = ()
    id: str = field(default_factory=_message_id)
    created_at: float = field(default_factory=now)

    def __post_init__(self) -> None:
        if self.parts != ():
            object.__setattr__(self, "parts", tool_parts(self.parts, "ToolMessage(parts=...)"))


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage
"""Any conversation message; discriminate with ``match`` or on ``.kind``."""

for _kind in (SystemMessage, UserMessage, AssistantMessage, ToolMessage):
    setattr(_kind, "id", _LazyMessageId(_kind.__dict__["id"]))  # noqa: B010 (not for mypy's eyes)
del _kind


def carried_parts(message: Message) -> tuple[MessagePart, ...]:
    """The parts a message carries besides plain text content (S30).

    A tool result's media (:attr:`ToolMessage.parts`), a user message's content parts (text parts
    included); ``()`` for every other message and for string content.
    """
    if isinstance(message, ToolMessage):
        return message.parts
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        return message.content
    return ()
