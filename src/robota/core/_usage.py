"""Token usage: the prompt/completion/total triple, owned once (S29).

:class:`UsageTriple` is the persisted and wired shape — exactly three counts — and every other
package refers to it rather than declaring a lookalike. :class:`Usage` is the in-memory value the
runtime passes around: the triple, extended (not joined) by the prompt-cache read and a
``partial`` mark.

* The cache read is a *part of* ``prompt_tokens``, never an addition to it; likewise the
  reasoning tokens a vendor reports are a part of ``completion_tokens``.
* Counts an adapter cannot attest as a consistent total are kept and marked ``partial``, never
  dropped or "fixed" (S31).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, final

__all__ = ["Usage", "UsageTriple"]


class UsageTriple(TypedDict):
    """The wire and persisted usage shape: exactly these three counts (S29)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@final
@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one provider response, or a sum of several.

    Build it from what an adapter read with :meth:`from_counts`, which applies the one
    normalisation rule; the constructor takes the fields as they are.

    Attributes:
        prompt_tokens: Input tokens, cache reads included.
        completion_tokens: Output tokens (reasoning included, where the vendor counts it there).
        total_tokens: The vendor's total, or prompt + completion when it gave none.
        cache_read_tokens: The part of ``prompt_tokens`` served from the vendor's prompt cache;
            ``None`` when the vendor did not report it (unknown, not zero).
        partial: ``True`` when the counts are not a consistent total (a count was missing or
            they do not add up); they are kept as reported.
        reasoning_tokens: The part of ``completion_tokens`` the model spent reasoning; ``None``
            when the vendor did not report it (unknown, not zero).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int | None = None
    partial: bool = False
    reasoning_tokens: int | None = None

    @classmethod
    def from_counts(
        cls,
        *,
        prompt: int | None,
        completion: int | None,
        total: int | None = None,
        cache_read: int | None = None,
        reasoning: int | None = None,
    ) -> Usage:
        """Normalise counts as an adapter read them from its vendor (S29, S31).

        ``None`` means "not reported". A missing prompt or completion count, a negative count, a
        total that differs from prompt + completion, a cache read larger than the prompt, or
        reasoning larger than the completion makes the result ``partial``; reported numbers are
        kept (negatives are clamped to 0).
        """
        partial = prompt is None or completion is None
        p = _count(prompt)
        c = _count(completion)
        partial = partial or (prompt is not None and prompt < 0)
        partial = partial or (completion is not None and completion < 0)
        if total is None:
            t = p + c
        else:
            t = _count(total)
            partial = partial or total != p + c
        r: int | None = None
        if cache_read is not None:
            r = _count(cache_read)
            partial = partial or cache_read < 0 or r > p
        thinking: int | None = None
        if reasoning is not None:
            thinking = _count(reasoning)
            partial = partial or reasoning < 0 or thinking > c
        return cls(p, c, t, r, partial, thinking)

    def to_triple(self) -> UsageTriple:
        """The three counts in the wire shape."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }

    @property
    def uncached_prompt_tokens(self) -> int:
        """Prompt tokens not served from the cache (all of them when no cache read is known)."""
        return self.prompt_tokens - (self.cache_read_tokens or 0)

    def __add__(self, other: Usage) -> Usage:
        """Sum two usages (e.g. the rounds of one run).

        The sum is partial if either part is. A cache read (or reasoning count) reported by only
        one part counts as that part's number; it stays ``None`` only when neither reported one.
        """
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            _sum_known(self.cache_read_tokens, other.cache_read_tokens),
            self.partial or other.partial,
            _sum_known(self.reasoning_tokens, other.reasoning_tokens),
        )


def _count(value: int | None) -> int:
    if value is None or value < 0:
        return 0
    return int(value)


def _sum_known(a: int | None, b: int | None) -> int | None:
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)
