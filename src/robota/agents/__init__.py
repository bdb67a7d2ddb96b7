"""Orchestration over core's neutral contracts (S32, S44): pipelines, fan-outs, map-reduce.

``robota.agents`` is the higher layer that runs what :mod:`robota.core.orchestration` only
names: it builds on core's public surface and never the reverse. Three builders, each returning
a :class:`Flow` you run (``await flow.run(input)``) or nest as a step of another flow:

* :func:`sequential` — a pipeline: each step gets the previous step's output;
* :func:`parallel` — a fan-out of one input to several branches at once, then a join;
* :func:`map_reduce` — one mapper on many items at once, then a reducer;
* :func:`from_spec` — a flow from core's neutral ``SequentialSpec`` / ``ParallelSpec``.

A step is an :class:`~robota.Agent`, a nested flow, or a plain function ``str -> str``. Every
run of a flow has one abort signal (cancel stops every branch; partial text is recorded), one
:class:`~robota.UsageLimits` for all its agents (each run gets what the earlier ones left; with
limits, agent runs take turns), one usage roll-up by agent (``FlowResult.usage_by_agent``, in
``RunResult.usage_by_agent``'s shape) and one event stream under the flow's owner path, with the
``orchestration.*`` lifecycle events core defines.

A supervisor — one agent deciding which worker to ask — needs no flow: give it the workers as
tools (``Agent(tools=[worker.as_tool(...)])``, core). See ``docs/agents.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from robota.agents._context import StepFunction
from robota.agents._flows import ErrorPolicy, Flow, Join, Parallel, Sequential, StepLike
from robota.agents._map import MapReduce, split_lines
from robota.agents._results import (
    BranchResult,
    BranchStatus,
    FlowResult,
    FlowStatus,
    OrchestrationError,
)
from robota.agents._spec import from_spec
from robota.core import Agent

__all__ = [
    "BranchResult",
    "BranchStatus",
    "ErrorPolicy",
    "Flow",
    "FlowResult",
    "FlowStatus",
    "Join",
    "MapReduce",
    "OrchestrationError",
    "Parallel",
    "Sequential",
    "StepFunction",
    "StepLike",
    "from_spec",
    "map_reduce",
    "parallel",
    "sequential",
    "split_lines",
]

for _public in (
    BranchResult,
    Flow,
    FlowResult,
    MapReduce,
    OrchestrationError,
    Parallel,
    Sequential,
):
    _public.__module__ = __name__  # documented and shown as robota.agents.X, not a private path
del _public


def sequential(*steps: StepLike) -> Sequential:
    """A pipeline: the steps one after another, each given the previous step's output.

    The first step gets the flow's input; the flow's output is the last step's. A step that
    fails stops the pipeline (:class:`OrchestrationError`); an interrupted one stops it too,
    and the result is ``"interrupted"`` with that step's partial text.

    Raises:
        ConfigurationError: no step, or one that is not an agent, a flow or a function.
    """
    return Sequential(steps)


def parallel(
    *branches: StepLike,
    join: Join = None,
    max_concurrency: int | None = None,
    on_error: ErrorPolicy = "fail_fast",
) -> Parallel:
    """A fan-out: every branch on the same input at once, then ``join`` on their outputs.

    Args:
        *branches: The branches (agents, flows, functions). One agent given twice runs twice,
            one run after the other (S38: an agent runs one turn at a time).
        join: What makes the flow's output of the branches' outputs (in branch order):
            ``None`` — the outputs separated by a blank line; a function ``list[str] -> str``
            (sync or async); or a step (an agent, a flow) given one text with each output under
            its branch's id (``[id]`` on a line of its own).
        max_concurrency: Most branches running at once; ``None``: all of them.
        on_error: ``"fail_fast"`` (default) or ``"collect"``; see :data:`ErrorPolicy`.

    Raises:
        ConfigurationError: no branch, a bad bound or policy.
    """
    return Parallel(branches, join=join, max_concurrency=max_concurrency, on_error=on_error)


def map_reduce(
    mapper: StepLike | Sequence[Agent],
    reducer: Join = None,
    *,
    split: Callable[[str], Sequence[str]] = split_lines,
    max_concurrency: int | None = None,
    on_error: ErrorPolicy = "fail_fast",
) -> MapReduce:
    """Map-reduce: ``mapper`` on each item at once, then ``reducer`` on the outputs.

    ``flow.run(items)`` takes the items (a sequence of strings), or one text that ``split``
    cuts into items (by default: its non-blank lines) — so a map-reduce nests in a pipeline
    after a step that lists the items.

    Args:
        mapper: An agent, a flow or a function run once per item (branch ids ``name[0]``,
            ``name[1]`` …). One agent runs one item at a time (S38); a sequence of agents is a
            pool of interchangeable workers, up to one item per worker at once.
        reducer: As :func:`parallel`'s ``join``.
        split: Cuts a text input into items.
        max_concurrency: Most items in flight at once; ``None``: all of them.
        on_error: ``"fail_fast"`` (default) or ``"collect"``; see :data:`ErrorPolicy`.

    Raises:
        ConfigurationError: a mapper that is none of those, a bad bound or policy.
    """
    return MapReduce(
        mapper, reducer, split=split, max_concurrency=max_concurrency, on_error=on_error
    )
