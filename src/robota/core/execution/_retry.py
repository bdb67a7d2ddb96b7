"""Retries and model fallback of one run's model calls (S23, S30, S39, S42; issue 28).

:class:`ModelCalls` owns a run's :class:`~robota.RetryPolicy` and its ordered fallback chain
(the agent's model first, then ``Agent(fallback=[...])``) and says, after a failed attempt,
what follows:

* :class:`Retry` — the same model again, after a backoff (``recoverable`` failures only, while
  the policy has attempts left for this model);
* :class:`Switch` — the next model of the chain that can serve the run (``switchable``
  failures only, once the policy gave up on the current model);
* ``None`` — nothing: the run fails with the attempt's own error.

Never retried or switched: an abort, an execution-control outcome (S39), a failure whose class
says neither applies (a 4xx input error is neither recoverable nor switchable, S42). Only the
model call is repeated; a tool body never is, because a failed call has no tool calls the run
dispatched.

S30: the loop never chooses a substitute model. It only follows the caller's ordered list, in
order, skipping (with the reason) a model that lacks what the run needs.

Once a run switched, its later rounds stay on the model that answered: the chain is not
restarted per round, so one run's history is written by as few models as possible and a
journaled run resumes on the model it was using (S40).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import final

from robota.core._errors import ExecutionControlError, ProviderError, RobotaError
from robota.core._retry import RetryPolicy
from robota.core.providers._contract import Provider

__all__ = [
    "ModelCalls",
    "ModelCandidate",
    "Retry",
    "Sleeper",
    "Switch",
]

Sleeper = Callable[[float], Awaitable[None]]
"""Waits the given seconds (``asyncio.sleep`` by default; tests inject their own)."""


@final
@dataclass(frozen=True, slots=True)
class ModelCandidate:
    """One model of a run's fallback chain: where a call can go.

    Attributes:
        provider: The provider that serves it.
        model: The model id sent to that provider.
        context_window: The window the caller stated for this model, if any (S13).
    """

    provider: Provider
    model: str
    context_window: int | None = None

    def __str__(self) -> str:
        return f"{self.provider.name}:{self.model}"


@final
@dataclass(frozen=True, slots=True)
class Retry:
    """Try the same model again after ``delay`` seconds (``attempt`` is the next try's number)."""

    delay: float
    attempt: int


@final
@dataclass(frozen=True, slots=True)
class Switch:
    """Move the call to chain entry ``index`` from entry ``origin``.

    ``skipped`` are the entries refused on the way, with the reason.
    """

    index: int
    origin: int = 0
    skipped: tuple[tuple[int, str], ...] = ()


def is_retryable(error: BaseException) -> bool:
    """Whether a failed attempt's ``error`` may be followed by another attempt at all."""
    return isinstance(error, ProviderError) and not isinstance(error, ExecutionControlError)


@final
class ModelCalls:
    """A run's retry policy and fallback chain, and where the current call stands.

    Args:
        policy: The run's policy, or ``None`` (no retry: a failure moves on at once).
        chain: The agent's model first, then its fallbacks, in the caller's order.
        index: The chain entry the run starts on (a resumed run: the one it was using, S40).
        sleep: Waits a backoff; must be cancellable (the run's signal ends it, S23).
    """

    __slots__ = ("_rng", "_sleep", "attempt", "chain", "index", "policy", "skipped")

    def __init__(
        self,
        policy: RetryPolicy | None,
        chain: Sequence[ModelCandidate],
        *,
        index: int = 0,
        sleep: Sleeper | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.policy = policy
        self.chain = tuple(chain)
        self.index = index
        self.attempt = 1  # of the current call on the current model
        self.skipped: tuple[tuple[int, str], ...] = ()  # refused by the last after_failure
        self._sleep = sleep or asyncio.sleep
        self._rng = rng

    @property
    def current(self) -> ModelCandidate:
        """The chain entry calls go to."""
        return self.chain[self.index]

    def new_call(self) -> None:
        """A new round's call begins: its first attempt on the current model."""
        self.attempt = 1

    def after_failure(
        self, error: RobotaError, refusal: Callable[[ModelCandidate], str | None]
    ) -> Retry | Switch | None:
        """What follows the failed attempt that raised ``error``.

        ``refusal`` says why a chain entry cannot serve the run (``None``: it can). When the
        failure is switchable but every later entry is refused, the reasons are added to
        ``error`` as notes, and ``None`` is returned: the run fails with the error.
        """
        self.skipped = ()
        if not is_retryable(error):
            return None
        assert isinstance(error, ProviderError)
        policy = self.policy
        if policy is not None and policy.retries(error) and self.attempt < policy.attempts:
            self.attempt += 1
            return Retry(policy.delay(self.attempt - 1, error, self._rng), self.attempt)
        if not error.switchable:
            return None
        skipped: list[tuple[int, str]] = []
        for index in range(self.index + 1, len(self.chain)):
            reason = refusal(self.chain[index])
            if reason is None:
                origin, self.index = self.index, index
                self.attempt = 1
                self.skipped = tuple(skipped)
                return Switch(index, origin, self.skipped)
            skipped.append((index, reason))
        self.skipped = tuple(skipped)
        for index, reason in skipped:
            error.add_note(f"fallback model {self.chain[index]} was not tried: {reason}")
        if skipped:
            error.add_note("no fallback model was left that can serve this run")
        return None

    async def wait(self, delay: float) -> None:
        """Sleep ``delay`` seconds (the caller wraps it in the run's abort guard, S23)."""
        if delay > 0:
            await self._sleep(delay)
