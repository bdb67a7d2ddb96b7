"""The optional response cache (S30): a cached answer is never served for another model.

A cache entry is stored under the fingerprint of the request *as addressed to the model that
actually answered*. When a provider answers on a different model than requested, the entry is
therefore keyed by that other model: a later request for the requested model misses, and a request
addressed to the answering model may hit. A hit is a round with no dispatch, and its observation
says so.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol, final

from robota.core._errors import ConfigurationError
from robota.core.providers._contract import StreamEvent

__all__ = ["CachedResponse", "InMemoryResponseCache", "ResponseCache"]


@final
@dataclass(frozen=True, slots=True)
class CachedResponse:
    """A complete response as stream events, and the model that produced it."""

    model: str
    events: tuple[StreamEvent, ...]


class ResponseCache(Protocol):
    """Where complete responses are kept; implement for a shared store (Redis, a database …)."""

    async def get(self, key: str) -> CachedResponse | None:
        """The response stored under ``key``, or ``None``."""
        ...

    async def put(self, key: str, response: CachedResponse) -> None:
        """Store ``response`` under ``key``."""
        ...


@final
class InMemoryResponseCache:
    """A least-recently-used cache in this process.

    Args:
        max_entries: Entries kept before the least recently used is dropped.
    """

    __slots__ = ("_entries", "_max", "hits", "misses")

    def __init__(self, max_entries: int = 1024) -> None:
        limit: object = max_entries  # untyped callers can pass anything
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigurationError(f"max_entries must be a positive integer, got {max_entries!r}")
        self._max = max_entries
        self._entries: OrderedDict[str, CachedResponse] = OrderedDict()
        self.hits = 0
        self.misses = 0

    async def get(self, key: str) -> CachedResponse | None:
        """The entry under ``key`` (refreshing its recency), or ``None``."""
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return entry

    async def put(self, key: str, response: CachedResponse) -> None:
        """Store ``response``; drop the least recently used entry past the limit."""
        self._entries[key] = response
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
