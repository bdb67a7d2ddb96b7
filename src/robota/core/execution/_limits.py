"""Enforcing a run's :class:`~robota.UsageLimits` (S29, S31, S39, S40).

One :class:`Budget` per run counts what the run used — the usage and cost of every committed
response, the model calls dispatched, the tool calls dispatched — and answers the loop's three
questions:

* before a model call (:meth:`Budget.admit_call`): may it be sent, and with what output cap? The
  call may cost its pre-send input estimate (the S39 context guard's) plus its output cap; when
  an output, total or cost limit is set, the cap is lowered to what remains, so the reply cannot
  pass the limit whatever it says. A call that cannot get one output token is not sent;
* after a response (:meth:`Budget.settled`): did the reported usage pass a limit anyway (a
  provider's count can exceed the estimate)?
* before a tool batch (:meth:`Budget.admit_tools`): would dispatching all of it pass the limit?

A resumed execution (S40) starts from what its journal proves it used (:meth:`Budget.restore`),
under the limits it started with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Final, final

from robota.core._context import estimate_text_tokens
from robota.core._errors import ConfigurationError
from robota.core._limits import LimitName, UsageLimitExceeded, UsageLimits, check_limits
from robota.core._messages import AssistantMessage, Message
from robota.core._pricing import ModelPricing, estimate_cost, get_model_pricing
from robota.core._usage import Usage
from robota.core.providers._capabilities import model_capabilities
from robota.core.providers._contract import ChatRequest, Provider

__all__ = ["Budget", "check_capped", "check_priced", "run_limits"]

_PER: Final = 1_000_000.0
_COST_SLACK: Final = 1e-12  # USD: float sums of exact prices must not trip a limit met exactly


def check_priced(limits: UsageLimits | None, model: str, provider: str) -> None:
    """Refuse a cost limit on a model without a price, before the run starts (S13).

    Raises:
        ConfigurationError: ``limits.cost_usd`` is set and ``model`` has no registered price.
    """
    if limits is None or limits.cost_usd is None:
        return
    if get_model_pricing(model, provider=provider) is None:
        raise ConfigurationError(
            f"this run has a cost_usd limit, but model {model!r} (provider {provider!r}) has no "
            "registered price, so its cost cannot be counted; register one with "
            "robota.register_model_pricing(...), or drop the cost_usd limit"
        )


def check_capped(limits: UsageLimits | None, provider: Provider, model: str) -> None:
    """Refuse a limit kept by the output cap on a model stated not to take one (S30, S31).

    An output, total or cost limit lowers each request's ``max_output_tokens`` so the reply
    cannot pass it; a model whose capability table states the settings it honours without
    that one never receives the cap (the adapter leaves it off the wire), so the limit could
    be passed by a call the check foresaw. Silence about settings is not a denial (S30).

    Raises:
        ConfigurationError: such a limit is set and ``model``'s table leaves the cap out.
    """
    if limits is None or (
        limits.output_tokens is None and limits.total_tokens is None and limits.cost_usd is None
    ):
        return
    table = model_capabilities(provider, model)
    honoured = table.settings if table is not None else None
    if honoured is not None and "max_output_tokens" not in honoured:
        raise ConfigurationError(
            f"this run has an output_tokens, total_tokens or cost_usd limit, which is kept by "
            f"lowering each request's max_output_tokens, but model {model!r} (provider "
            f"{provider.name!r}) does not take max_output_tokens, so its replies cannot be "
            "bounded; drop those limits for it, or use requests / input_tokens limits"
        )


def run_limits(
    agent: UsageLimits | None,
    given: object,
    provider: Provider,
    model: str,
    fallback: Iterable[tuple[Provider, str]] = (),
) -> UsageLimits | None:
    """A run's limits: the agent's with the run's (``given``) laid over them, field by field.

    ``fallback``: the models a failed call may move to (issue 28), as (provider, model); a cost
    limit needs a price for each of them too, since any of them may answer.

    Raises:
        ConfigurationError: ``given`` is not limits, or a cost limit is set on a model without
            a price (:func:`check_priced`).
    """
    run = check_limits(given, "run option limits")
    limits = run if agent is None else agent.merged(run)
    check_priced(limits, model, provider.name)
    check_capped(limits, provider, model)
    for other, name in fallback:
        check_priced(limits, name, other.name)
        check_capped(limits, other, name)
    return limits


@final
class Budget:
    """What one run may still use, and what it used (the loop's view of its limits)."""

    __slots__ = (
        "_admitted",
        "_model",
        "_provider",
        "cost",
        "limits",
        "requests",
        "tool_calls",
        "usage",
    )

    def __init__(self, limits: UsageLimits, *, provider: str, model: str) -> None:
        self.limits = limits
        self._provider = provider
        self._model = model
        self.usage = Usage()
        self.requests = 0
        self.tool_calls = 0
        self.cost: float | None = 0.0  # None once a response's price is unknown
        self._admitted = 0  # the input estimate of the call last admitted

    # ------------------------------------------------------------------ counting

    def restore(
        self,
        own: Iterable[Message],
        *,
        requests: int,
        resumed: AssistantMessage | None,
        discarded: Iterable[tuple[AssistantMessage, str | None]] = (),
        answered: Mapping[str, str] | None = None,
    ) -> None:
        """Count what a resumed execution already used (S40).

        ``own``: the execution's own messages as its journal proves them; ``requests``: the
        model calls it dispatched. The tool calls of every completed response count, except
        ``resumed``'s: the continuation checks that batch again, as it was checked the first
        time. ``discarded``: the failed attempts a retry or fallback replaced (issue 28), with
        the provider each went to — their usage counts too; ``answered``: reply id → the
        provider that answered it, so each is priced where it ran (S30).

        Raises:
            UsageLimitExceeded: what the execution used is already past a limit.
        """
        by = answered or {}
        for message in own:
            if not isinstance(message, AssistantMessage):
                continue
            unpriced = self._charge(message, by.get(message.id), self._recorded(message))
            if unpriced is not None:
                raise unpriced
            if message.state == "complete" and message is not resumed:
                self.tool_calls += len(message.tool_calls)
        for message, provider in discarded:
            unpriced = self._charge(message, provider, self._recorded(message))
            if unpriced is not None:
                raise unpriced
        self.requests = requests
        exceeded = self.exceeded()
        if exceeded is not None:
            raise exceeded  # S40: it stopped the execution before; it stops it again

    def _recorded(self, message: AssistantMessage) -> Usage | None:
        # A recorded reply is counted as live (:meth:`_attested`); its input estimate is not
        # recorded, so only what the reply shows is added to what it reported.
        if not _unattested(message):
            return message.usage
        self._admitted = 0
        return self._attested(message.usage, message)

    def _charge(
        self, message: AssistantMessage, provider: str | None, usage: Usage | None = None
    ) -> UsageLimitExceeded | None:
        if usage is None:
            usage = message.usage
        if usage is None:
            return None  # never dispatched (a diagnostic): nothing was used
        self.usage = self.usage + usage
        cost = estimate_cost(
            usage, message.model or self._model, provider=provider or self._provider
        )
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        if self.cost is None and self.limits.cost_usd is not None:
            # S30: another model answered, and it has no price; the limit cannot be kept.
            return self._error(
                "cost_usd",
                f"model {message.model!r} answered, and it has no registered price, so this "
                f"run's cost_usd limit (${self.limits.cost_usd}) cannot be enforced; register "
                "its price with robota.register_model_pricing(...)",
            )
        return None

    # ------------------------------------------------------------------ the checks

    def admit_call(
        self, request: ChatRequest, input_tokens: int, *, provider: str | None = None
    ) -> ChatRequest:
        """The request to send, its output cap lowered to what remains; raise if none can be.

        ``input_tokens``: the pre-send estimate of the request's input (S39's); ``provider``:
        the provider the call goes to, when a fallback moved the run (priced there, S30).

        Raises:
            UsageLimitExceeded: the call could pass a limit; it must not be sent.
        """
        limits = self.limits
        self._admitted = input_tokens  # what the call's input counts if it goes unreported
        if limits.requests is not None and self.requests >= limits.requests:
            raise self._error(
                "requests",
                f"{self.requests} model call(s) were made, the run's requests limit; the next "
                "call was not sent",
            )
        if limits.input_tokens is not None:
            needed = self.usage.prompt_tokens + input_tokens
            if needed > limits.input_tokens:
                raise self._before(
                    "input_tokens",
                    f"{self.usage.prompt_tokens} input tokens used and the next request is "
                    f"estimated at {input_tokens}",
                )
        room: int | None = None
        if limits.output_tokens is not None:
            room = limits.output_tokens - self.usage.completion_tokens
            if room < 1:
                raise self._before(
                    "output_tokens", f"{self.usage.completion_tokens} output tokens used"
                )
        if limits.total_tokens is not None:
            left = limits.total_tokens - self.usage.total_tokens - input_tokens
            if left < 1:
                raise self._before(
                    "total_tokens",
                    f"{self.usage.total_tokens} tokens used and the next request is estimated "
                    f"at {input_tokens} input tokens",
                )
            room = left if room is None else min(room, left)
        if limits.cost_usd is not None:
            if self.cost is None:
                # A response from a model without a price (a discarded attempt's too, issue 28)
                # made the cost so far unknown: no call can be shown to fit, so none is sent.
                raise self._error(
                    "cost_usd",
                    "an earlier response came from a model with no registered price, so the "
                    f"run's cost so far is unknown and its cost_usd limit (${limits.cost_usd}) "
                    "cannot be enforced; register its price with robota.register_model_pricing",
                )
            pricing = self._pricing(request.model, provider or self._provider)
            spent = self.cost
            left_usd = limits.cost_usd - spent - input_tokens * pricing.input_per_million / _PER
            if pricing.output_per_million > 0:
                # A hair of slack: an exact budget of n tokens is n, not n - 1, after float math.
                tokens = math.floor(left_usd * _PER / pricing.output_per_million + 1e-9)
                room = tokens if room is None else min(room, tokens)
            if left_usd < -_COST_SLACK or (room is not None and room < 1):
                raise self._before(
                    "cost_usd",
                    f"${spent:.6f} used and the next request's input is estimated at "
                    f"{input_tokens} tokens",
                )
        if room is None:
            return request
        cap = request.settings.max_output_tokens
        if cap is not None and cap <= room:
            return request  # the caller's cap already fits: never raised, never touched
        # ChatRequest keeps the cap in two places that must agree.
        settings = replace(request.settings, max_output_tokens=room)
        return replace(request, max_output_tokens=room, settings=settings)

    def settled(
        self, message: AssistantMessage, dispatched: bool, *, provider: str | None = None
    ) -> UsageLimitExceeded | None:
        """Count a settled response; the error when its reported usage passed a limit.

        A failed attempt a retry or fallback discards (issue 28) is counted here too: it was a
        model call, and what it reported was used. ``provider``: where the call went (S30).
        """
        usage = message.usage
        if dispatched:
            self.requests += 1
            if _unattested(message):
                usage = self._attested(usage, message)
        return self._charge(message, provider, usage) or self.exceeded()

    def _attested(self, usage: Usage | None, message: AssistantMessage) -> Usage:
        """S31: the usage of a completed reply its provider did not (fully) report, estimated.

        Counts the adapter could not attest are recorded, not dropped: each count is at least
        the estimate — the input the call was admitted with, the reply's visible size — and the
        result is partial. Charging nothing would give every later call the whole limit again.
        A failed or interrupted call without usage adds none (whether it was charged is not
        known; its output was bounded by the lowered cap).
        """
        completion = estimate_text_tokens(message.content) + sum(
            estimate_text_tokens(call.name) + estimate_text_tokens(call.arguments)
            for call in message.tool_calls
        )
        prompt = self._admitted
        cache_read: int | None = None
        if usage is not None:
            prompt = max(prompt, usage.prompt_tokens)
            completion = max(completion, usage.completion_tokens)
            cache_read = usage.cache_read_tokens
        counted = Usage.from_counts(prompt=prompt, completion=completion, cache_read=cache_read)
        return replace(counted, partial=True)

    def delegated(self, usage: Usage, cost: float | None, requests: int, tool_calls: int) -> None:
        """Count what a sub-agent used (issue 29): it spent from this run's limits."""
        self.usage = self.usage + usage
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        self.requests += requests
        self.tool_calls += tool_calls

    def left(self) -> UsageLimits:
        """What remains of the limits (a sub-agent's ceiling, issue 29)."""
        return self.limits.remaining(
            usage=self.usage,
            requests=self.requests,
            tool_calls=self.tool_calls,
            cost_usd=self.cost if self.cost is not None else 0.0,
        )

    def exceeded(self) -> UsageLimitExceeded | None:
        """The error when the usage counted so far is past a limit, else ``None``."""
        limits, usage = self.limits, self.usage
        for name, used, limit in (
            ("input_tokens", usage.prompt_tokens, limits.input_tokens),
            ("output_tokens", usage.completion_tokens, limits.output_tokens),
            ("total_tokens", usage.total_tokens, limits.total_tokens),
        ):
            if limit is not None and used > limit:
                return self._error(
                    name,  # type: ignore[arg-type]
                    f"a response brought the run's {name} to {used}, past its limit of "
                    f"{limit} (the provider reported more than the request's estimate)",
                )
        cost, most = self.cost, limits.cost_usd
        if most is not None and cost is not None and cost > most + _COST_SLACK:
            return self._error(
                "cost_usd",
                f"a response brought the run's estimated cost to ${cost:.6f}, past its "
                f"limit of ${limits.cost_usd:.6f}",
            )
        return None

    def admit_tools(self, count: int) -> UsageLimitExceeded | None:
        """Count a batch of ``count`` tool calls; the error when it would pass the limit."""
        limit = self.limits.tool_calls
        if limit is not None and self.tool_calls + count > limit:
            return self._error(
                "tool_calls",
                f"the model asked for {count} tool call(s) after {self.tool_calls}, past the "
                f"run's tool_calls limit of {limit}; none of them was dispatched",
            )
        self.tool_calls += count
        return None

    # ------------------------------------------------------------------ helpers

    def _pricing(self, model: str, provider: str) -> ModelPricing:
        pricing = get_model_pricing(model, provider=provider)
        if pricing is None:
            raise self._error(
                "cost_usd",
                f"model {model!r} has no registered price, so this run's cost_usd limit cannot "
                "be enforced; register its price with robota.register_model_pricing(...)",
            )
        return pricing

    def _before(self, name: LimitName, used: str) -> UsageLimitExceeded:
        return self._error(
            name,
            f"the next model call could pass the run's {name} limit "
            f"({getattr(self.limits, name)}): {used}, leaving no room for its input and one "
            "output token; it was not sent",
        )

    def _error(self, name: LimitName, detail: str) -> UsageLimitExceeded:
        return UsageLimitExceeded(
            f"usage limit {name!r} reached: {detail}",
            limit=name,
            limits=self.limits,
            usage=self.usage,
            requests=self.requests,
            tool_calls=self.tool_calls,
            cost_usd=self.cost,
        )


def _unattested(message: AssistantMessage) -> bool:
    # A reply the provider completed without stating all of its usage (S31).
    usage = message.usage
    return message.state == "complete" and (usage is None or usage.partial)
