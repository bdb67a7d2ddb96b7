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
from typing import Any, final

from robota.core._emit import EventEmitter
from robota.core._errors import ExecutionControlError, ProviderError, RobotaError
from robota.core._events import EventNames
from robota.core._logging import get_logger
from robota.core._retry import RetryPolicy
from robota.core._run_events import RetryStarted, RunEvent
from robota.core.execution._journal import ExecutionStateError
from robota.core.providers._contract import Provider

__all__ = [
    "ModelCalls",
    "ModelCandidate",
    "Retry",
    "Retrying",
    "Sleeper",
    "Switch",
    "announce",
    "resume_mismatch",
]

_log = get_logger("robota.execution")

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


@final
@dataclass(frozen=True, slots=True)
class Retrying:
    """A failed attempt another one follows: what the loop reports and waits for.

    Attributes:
        step: The retry or switch that follows.
        error: The attempt's failure.
        text: The text it streamed, now discarded (S34).
        round: The round whose call it was.
        failed_on: The provider it failed on.
    """

    step: Retry | Switch
    error: RobotaError
    text: str
    round: int
    failed_on: Provider


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
        # S30: never a substitute of the loop's choosing — only the caller's list, in order.
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

    def resume_at(self, index: int, provider: str | None, execution_id: str) -> ModelCandidate:
        """S40: the chain entry a resumed run continues on — the one its last call used.

        Raises:
            ExecutionStateError: this agent's chain has no such entry (or another provider
                there): the run never guesses another model.
        """
        chain = self.chain
        if index >= len(chain) or (provider is not None and chain[index].provider.name != provider):
            raise resume_mismatch(execution_id, index, provider)
        self.index = index
        return chain[index]

    async def wait(self, delay: float) -> None:
        """Sleep ``delay`` seconds (the caller wraps it in the run's abort guard, S23)."""
        if delay > 0:
            await self._sleep(delay)


def resume_mismatch(execution_id: str, index: int, provider: str | None) -> ExecutionStateError:
    """The error of a resume whose agent lacks the chain entry the execution was using (S40)."""
    return ExecutionStateError(
        f"execution {execution_id!r} was answered by entry {index} of its model chain "
        f"(provider {provider!r}); this agent's fallback list has no such entry — resume with "
        "the agent's fallback list as it was",
        code="fallback_changed",
    )


def announce(
    emitter: EventEmitter,
    notify: Callable[[RunEvent], None] | None,
    calls: ModelCalls,
    again: Retrying,
) -> None:
    """Tell every observer that a failed attempt is followed by another (issue 28).

    Events: each refused candidate (``execution.model_fallback_refused``), then
    ``execution.model_retry`` or ``execution.model_fallback`` naming both models and the cause;
    the run's stream gets :class:`~robota.RetryStarted` with the text it must drop.
    """
    step, error, text, round_no = again.step, again.error, again.text, again.round
    failed_model = calls.chain[step.origin].model if isinstance(step, Switch) else None
    model = failed_model if failed_model is not None else calls.current.model
    target = calls.current
    delay = step.delay if isinstance(step, Retry) else 0.0
    data: dict[str, Any] = {
        "round": round_no,
        "model": model,
        "provider": again.failed_on.name,
        "code": error.code,
        "status": getattr(error, "status", None),
        "error": error,
        "discarded_text": text,
    }
    if emitter.enabled:
        for index, why in calls.skipped:
            skipped = calls.chain[index]
            emitter.emit(
                EventNames.MODEL_FALLBACK_REFUSED,
                {"model": skipped.model, "provider": skipped.provider.name, "reason": why},
            )
        if isinstance(step, Retry):
            emitter.emit(EventNames.MODEL_RETRY, {**data, "attempt": step.attempt, "delay": delay})
        else:
            switch = {"to_model": target.model, "to_provider": target.provider.name}
            emitter.emit(EventNames.MODEL_FALLBACK, {**data, **switch, "fallback": step.index})
    _log.warning(
        "model call failed; retrying"
        if isinstance(step, Retry)
        else "model call failed; switching",
        model=model,
        to=str(target),
        code=error.code,
        delay=delay,
    )
    if notify is not None:
        notify(
            RetryStarted(
                round_no,
                calls.attempt,
                target.model,
                target.provider.name,
                delay,
                error,
                text,
                isinstance(step, Switch),
            )
        )
