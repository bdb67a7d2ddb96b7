"""Map-reduce: one mapper over many items at once, then a reducer (a parallel fan-out, S32)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import final

from robota.agents._context import Scope
from robota.agents._flows import ErrorPolicy, Join, Parallel, check_join
from robota.agents._steps import Pool, Step, as_step, step_name
from robota.core import Agent, ConfigurationError

__all__ = ["MapReduce", "split_lines"]


def split_lines(text: str) -> list[str]:
    """The default split: each non-blank line of the input is one item."""
    return [line.strip() for line in text.splitlines() if line.strip()]


@final
class MapReduce(Parallel):
    """The mapper on each item at once, then the reducer; build with :func:`map_reduce`."""

    label = "map_reduce"

    def __init__(
        self,
        mapper: Step | Sequence[Agent],
        reducer: Join = None,
        *,
        split: Callable[[str], Sequence[str]] = split_lines,
        max_concurrency: int | None = None,
        on_error: ErrorPolicy = "fail_fast",
    ) -> None:
        step: Step
        if isinstance(mapper, Sequence):
            step = Pool(mapper)
        else:
            step = as_step(mapper, "map_reduce() mapper")
        check_join(reducer, "map_reduce() reducer")
        super().__init__([step], join=reducer, max_concurrency=max_concurrency, on_error=on_error)
        self.mapper = step
        self.split = split

    def _work(
        self, input: str | Sequence[str], scope: Scope
    ) -> list[tuple[str, Step, str | Sequence[str]]]:
        given: object = self.split(input) if isinstance(input, str) else input
        items = list(given) if isinstance(given, Sequence) else None
        if not items or not all(isinstance(item, str) for item in items):
            raise ConfigurationError(
                "a map-reduce takes a text or a sequence of items, at least one item, each a "
                f"string; got {given!r:.200}"
            )
        name = step_name(self.mapper)
        return [(f"{scope.prefix}{name}[{i}]", self.mapper, item) for i, item in enumerate(items)]
