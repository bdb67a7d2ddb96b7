"""Usage limits: what one run (or one session) may spend, and the error that stops it (S29, S31).

:class:`UsageLimits` caps model calls, tokens (S29's triple), tool calls and estimated cost.
The loop checks a limit *before* each model call against what that call may cost — the pre-send
input estimate (S39's context estimate) and the request's output cap, clamped to what remains —
and again after each response against what the provider reported, so a call the check could have
foreseen never passes a limit. :class:`UsageLimitExceeded` is the stop: named, not recoverable,
carrying the usage so far. The enforcement lives in :mod:`robota.core.execution._limits`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError, RobotaError
from robota.core._usage import Usage

__all__ = ["LimitName", "UsageLimitExceeded", "UsageLimits", "check_limits"]

LimitName: TypeAlias = Literal[
    "requests", "input_tokens", "output_tokens", "total_tokens", "tool_calls", "cost_usd"
]
"""The name of one :class:`UsageLimits` field (``UsageLimitExceeded.limit``)."""


@final
@dataclass(frozen=True, slots=True)
class UsageLimits:
    """Caps on what a run may use; every field ``None`` (the default) means "no limit".

    A run stops with :class:`UsageLimitExceeded` rather than pass a limit. Each limit is the
    most that may be used: usage exactly at a limit is allowed. Set them on the agent
    (``Agent(limits=...)``) and per run (``agent.run(..., limits=...)``: a run's set fields
    override the agent's, field by field, as :class:`~robota.ModelSettings` do), or per session
    (``robota.sessions.Session.open(..., limits=...)``: each turn gets what the session has
    left).

    Before each model call the run checks what the call may cost — the estimated input tokens
    (the estimate the pre-send context guard uses, S39) plus the request's output cap — and,
    when an output, total or cost limit is set, lowers the request's
    :attr:`~robota.ModelSettings.max_output_tokens` to what remains (never raising a cap you
    set); a call that could not produce even one output token within the limits is not sent. A
    model whose capability table states it does not take that cap is refused such limits when the
    run starts (:class:`~robota.ConfigurationError`), since its replies could not be bounded.
    After each response the reported usage is checked again, since an estimate can be low.

    Tokens and cost count every response the run committed, as ``RunResult.usage`` and
    ``RunResult.cost`` do (a response served from the response cache included); ``requests``
    counts the calls dispatched to a provider (a cache hit is not one; a call is still refused
    once the limit is reached, since whether the cache holds its answer is known only later). A
    completed response whose provider reported no usage (or only part of it) counts at least
    its estimate — the input estimate it was sent with and its reply's size — marked partial
    (S31); a failed or interrupted call without usage adds none (its output was bounded by the
    lowered cap).

    Attributes:
        requests: Model calls (ordinary rounds, the forced summary and structured-output
            retries alike).
        input_tokens: Prompt tokens, summed over the run's responses (S29: cache reads are a
            part of them).
        output_tokens: Completion tokens, summed (reasoning included where the vendor counts
            it there).
        total_tokens: Prompt plus completion tokens, summed.
        tool_calls: Tool calls dispatched. A batch that would pass the limit is not dispatched
            at all: each of its calls is answered as not dispatched (a journaled run leaves them
            to its durable recovery instead, S39/S40: a resume stops the same way), and the run
            stops.
        cost_usd: Estimated cost in USD (:func:`~robota.estimate_cost`). A run whose model has
            no registered price (:func:`~robota.register_model_pricing`) is refused when it
            starts, before any call: a cost limit is never silently unenforced.

    Raises:
        ConfigurationError: a field that is not a non-negative number (an integer, for every
            field but ``cost_usd``); ``True``/``False`` are refused.
    """

    requests: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    tool_calls: int | None = None
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        for name in _INTEGER_FIELDS:
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ConfigurationError(
                    f"UsageLimits.{name} must be a non-negative integer or None (no limit), "
                    f"got {value!r}"
                )
        cost: object = self.cost_usd
        if cost is not None:
            if (
                isinstance(cost, bool)
                or not isinstance(cost, (int, float))
                or not math.isfinite(cost)
                or cost < 0
            ):
                raise ConfigurationError(
                    "UsageLimits.cost_usd must be a finite, non-negative number of dollars or "
                    f"None (no limit), got {cost!r}"
                )
            object.__setattr__(self, "cost_usd", float(cost))

    def merged(self, over: UsageLimits | None) -> UsageLimits:
        """These limits with ``over``'s set fields laid on top, field by field."""
        if over is None:
            return self
        if not isinstance(over, UsageLimits):
            raise ConfigurationError(
                f"limits must be a robota.UsageLimits, got {type(over).__name__}"
            )
        values = {name: getattr(over, name) for name in LIMIT_NAMES}
        return UsageLimits(
            **{name: getattr(self, name) if v is None else v for name, v in values.items()}
        )

    def remaining(
        self,
        *,
        usage: Usage,
        requests: int = 0,
        tool_calls: int = 0,
        cost_usd: float | None = 0.0,
    ) -> UsageLimits:
        """What is left of these limits after ``usage``, ``requests``, ``tool_calls``, cost.

        For a host that spreads one budget over several runs (a session): each run is given
        what the earlier ones left. A limit already used up is ``0`` (never negative), so the
        next run stops before its first model call. ``cost_usd=None`` (an unknown cost so far)
        with a cost limit raises, since the remainder cannot be stated.

        Raises:
            ConfigurationError: a cost limit is set and ``cost_usd`` is ``None``.
        """
        if self.cost_usd is not None and cost_usd is None:
            raise ConfigurationError(
                "a cost_usd limit cannot be spread over runs whose cost so far is unknown (a "
                "model without a registered price answered); register its price with "
                "robota.register_model_pricing"
            )
        used: dict[str, float] = {
            "requests": requests,
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "tool_calls": tool_calls,
            "cost_usd": cost_usd or 0.0,
        }
        values: dict[str, Any] = {}
        for name in LIMIT_NAMES:
            limit = getattr(self, name)
            if limit is None:
                values[name] = None
            elif name == "cost_usd":
                values[name] = max(limit - used[name], 0.0)
            else:
                values[name] = max(int(limit - used[name]), 0)
        return UsageLimits(**values)

    def set_fields(self) -> tuple[LimitName, ...]:
        """The names of the limits that are set, in declaration order."""
        return tuple(name for name in LIMIT_NAMES if getattr(self, name) is not None)

    def to_data(self) -> dict[str, int | float]:
        """The set limits as plain JSON data (what a journal keeps, S40)."""
        return {name: getattr(self, name) for name in self.set_fields()}

    @classmethod
    def from_data(cls, data: object) -> UsageLimits | None:
        """Limits from :meth:`to_data`'s shape; ``None`` for no data (a run without limits).

        Raises:
            ConfigurationError: the data is not an object of known limit names.
        """
        if data is None:
            return None
        if not isinstance(data, dict) or not set(data) <= set(LIMIT_NAMES):
            raise ConfigurationError(f"not usage limits data: {data!r}")
        return cls(**data)


LIMIT_NAMES: Final[tuple[LimitName, ...]] = (
    "requests",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "tool_calls",
    "cost_usd",
)
assert tuple(f.name for f in fields(UsageLimits)) == LIMIT_NAMES
_INTEGER_FIELDS: Final = LIMIT_NAMES[:-1]


def check_limits(value: object, where: str) -> UsageLimits | None:
    """``value`` as limits (``None``: no limits), else a ConfigurationError naming ``where``."""
    if value is None or isinstance(value, UsageLimits):
        return value
    raise ConfigurationError(
        f"{where} must be a robota.UsageLimits (e.g. UsageLimits(cost_usd=0.50)) or None, got "
        f"{type(value).__name__}"
    )


class UsageLimitExceeded(RobotaError):
    """A run stopped because going on would pass one of its :class:`UsageLimits`.

    Raised before the model call or tool batch that could pass the limit (nothing of it is
    sent or dispatched), or right after a response whose reported usage passed it (a provider's
    count can exceed the estimate). Not recoverable: the same run with the same limits stops
    the same way. The run's history is kept as for any failure: without a journal a refused
    batch's calls are answered as not dispatched (S34), so the conversation stays usable; a
    journaled run keeps its recovery authority instead (S39, S40).

    Attributes:
        limit: The name of the limit (``"cost_usd"``, ``"requests"`` …).
        limits: The run's whole :class:`UsageLimits`.
        usage: The run's usage so far (S29).
        requests: Model calls dispatched so far.
        tool_calls: Tool calls dispatched so far.
        cost_usd: Estimated cost so far, ``None`` when unknown.
    """

    default_code = "usage_limit_exceeded"
    default_category = "user"
    default_recoverable = False

    def __init__(
        self,
        message: str,
        *,
        limit: LimitName,
        limits: UsageLimits,
        usage: Usage,
        requests: int,
        tool_calls: int,
        cost_usd: float | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.limit: LimitName = limit
        self.limits = limits
        self.usage = usage
        self.requests = requests
        self.tool_calls = tool_calls
        self.cost_usd = cost_usd
