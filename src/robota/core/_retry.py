"""``RetryPolicy``: how a failed model call is tried again (S39, S42; issue 28).

A model call whose :class:`~robota.ProviderError` says another attempt can succeed
(``recoverable``) is tried again after an exponential backoff with jitter, capped by
``max_delay``; a vendor's ``Retry-After`` (:attr:`~robota.ProviderError.retry_after`, on a 429,
a 503 or a 529) is honoured up to ``max_retry_after``. Nothing else is retried: not a
non-recoverable failure (a 4xx input error, refused credentials), not an abort, not an
execution-control outcome (S39). Only the model call is repeated, never a tool body.

One place owns retries: when a run has a policy, the runtime retries and the providers an agent
built from model strings have their SDK's own retries turned off
(:meth:`~robota.Provider.disable_sdk_retries`). A provider instance the caller built keeps the
SDK retries its builder chose; build it with ``max_retries=0`` to leave retries to the policy.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import final

from robota.core._errors import ConfigurationError, ProviderError

__all__ = ["RetryPolicy"]


def _number(value: object, field: str, *, low: float = 0.0, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ConfigurationError(f"RetryPolicy.{field} must be a number, got {value!r}")
    if value < low or (high is not None and value > high) or math.isinf(value):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ConfigurationError(f"RetryPolicy.{field} must be {bound} and finite, got {value!r}")
    return float(value)


@final
@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a failed model call is tried again.

    Pass it as ``Agent(retry=...)`` or per run as ``agent.run(..., retry=...)`` (the run's wins).

    Attributes:
        attempts: Total tries per model, the first included (``1`` = no retry). Default 3.
        initial_delay: Seconds before the first retry. Default 0.5.
        multiplier: Each further retry waits this many times longer. Default 2.0.
        max_delay: No computed backoff waits longer than this (seconds). Default 30.0.
        jitter: A random fraction (0..1) of the delay added or taken off, so many clients that
            failed together do not retry together. Default 0.2.
        max_retry_after: A vendor's ``Retry-After`` is honoured up to this many seconds; a longer
            one is capped to it. Default 60.0.

    Raises:
        ConfigurationError: for a value of the wrong type or out of range (the message names the
            field). ``bool`` is refused where a number is expected.
    """

    attempts: int = 3
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 30.0
    jitter: float = 0.2
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        attempts: object = self.attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ConfigurationError(
                f"RetryPolicy.attempts must be a positive integer (1 = no retry), got {attempts!r}"
            )
        _number(self.initial_delay, "initial_delay")
        _number(self.multiplier, "multiplier", low=1.0)
        _number(self.max_delay, "max_delay")
        _number(self.jitter, "jitter", high=1.0)
        _number(self.max_retry_after, "max_retry_after")

    def retries(self, error: BaseException) -> bool:
        """Whether ``error`` is a failure another attempt of the same call can survive (S42).

        Only a :class:`~robota.ProviderError` that says so (``recoverable``); never a 4xx input
        error, an abort or an execution-control outcome.
        """
        return isinstance(error, ProviderError) and error.recoverable

    def delay(self, retry: int, error: BaseException, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 = the first retry) after ``error``.

        A ``Retry-After`` the vendor sent wins over the computed backoff, capped by
        ``max_retry_after``; otherwise ``initial_delay * multiplier**(retry-1)`` capped by
        ``max_delay``, with ``jitter`` applied and the result never above ``max_delay``.
        """
        wait = error.retry_after if isinstance(error, ProviderError) else None
        if wait is not None:
            return min(wait, self.max_retry_after)
        base = min(self._growth(max(retry - 1, 0)), self.max_delay)
        if self.jitter:
            spread = (rng or random).uniform(-self.jitter, self.jitter)
            base *= 1.0 + spread
        return max(0.0, min(base, self.max_delay))

    def _growth(self, steps: int) -> float:
        # initial_delay * multiplier**steps, without the float power overflowing: each step
        # multiplies until the delay reaches max_delay, where every later retry stays.
        delay = self.initial_delay
        for _ in range(steps):
            if delay >= self.max_delay or delay == 0.0:
                break
            delay *= self.multiplier
        return delay
