"""The provider conformance kit: run the provider contract's observable checks against any adapter.

An adapter author writes one factory that builds the provider under test for a scenario —
typically pointed at a local replay server whose scripted answers the factory picks by scenario —
and awaits :func:`run_provider_conformance`. The report says, per scenario, whether it passed,
failed (with a message naming the call and what the contract wanted) or was not run because the
caller did not ask for it. A scenario is never passed by default: one the target cannot support
is left out of ``scenarios=`` and reported as not run.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias, final

from robota.core import ConfigurationError
from robota.testing._conformance_checks import CHECKS
from robota.testing._conformance_io import (
    Limits,
    ScenarioFailed,
    bounded,
    describe,
    raise_for_failures,
)
from robota.testing._conformance_target import (
    CONFORMANCE_SCENARIOS,
    ConformanceScenario,
    ConformanceTarget,
)

__all__ = [
    "ConformanceReport",
    "ProviderFactory",
    "ScenarioResult",
    "ScenarioStatus",
    "run_provider_conformance",
]

ProviderFactory: TypeAlias = Callable[
    [ConformanceScenario], ConformanceTarget | Awaitable[ConformanceTarget]
]
"""Builds the target for one scenario, synchronously or as an awaitable.

Called once per requested scenario, just before it runs; return a fresh provider each time (the
kit closes it when the scenario ends).
"""

ScenarioStatus: TypeAlias = Literal["passed", "failed", "not_run"]
"""``not_run``: the caller did not request the scenario."""


@final
@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """How one scenario went.

    Attributes:
        scenario: The scenario.
        status: See :data:`ScenarioStatus`.
        message: Why it failed (the call, what it did, what the contract wants); for a
            scenario not run, why not; empty when it passed.
        duration: Seconds it took (0 when not run).
    """

    scenario: ConformanceScenario
    status: ScenarioStatus
    message: str = ""
    duration: float = 0.0

    def __str__(self) -> str:
        line = f"{self.scenario}: {self.status}"
        return f"{line} — {self.message}" if self.message else line


@final
@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Every scenario's result, in the kit's order (:data:`CONFORMANCE_SCENARIOS`).

    Attributes:
        results: One :class:`ScenarioResult` per scenario, requested or not.
        provider: The name of the provider under test (from the first target built), when
            one was built.
    """

    results: tuple[ScenarioResult, ...]
    provider: str | None = None

    @property
    def passed(self) -> bool:
        """Whether every requested scenario passed (those not run are not counted as passes)."""
        return not self.failures and any(r.status == "passed" for r in self.results)

    @property
    def failures(self) -> tuple[ScenarioResult, ...]:
        """The scenarios that failed."""
        return tuple(r for r in self.results if r.status == "failed")

    @property
    def not_run(self) -> tuple[ConformanceScenario, ...]:
        """The scenarios the caller did not request."""
        return tuple(r.scenario for r in self.results if r.status == "not_run")

    def result(self, scenario: ConformanceScenario) -> ScenarioResult:
        """The result of ``scenario``.

        Raises:
            KeyError: ``scenario`` is not a conformance scenario.
        """
        for item in self.results:
            if item.scenario == scenario:
                return item
        raise KeyError(scenario)

    def raise_for_failures(self) -> None:
        """Raise ``AssertionError`` naming every failed scenario and why; do nothing otherwise.

        Scenarios not run are listed in the message too, so a green test never hides them.
        """
        raise_for_failures(
            f"provider conformance failed for {self.provider or 'the provider'}",
            self.failures,
            self.not_run,
        )

    def __str__(self) -> str:
        return "\n".join(
            [f"conformance of {self.provider or 'provider'}:"] + [f"  {r}" for r in self.results]
        )


def _requested(scenarios: Iterable[ConformanceScenario]) -> frozenset[ConformanceScenario]:
    if isinstance(scenarios, str):
        raise ConfigurationError(
            f"scenarios must be a collection of scenario names, not the string {scenarios!r}; "
            f"write scenarios=[{scenarios!r}]"
        )
    chosen = frozenset(scenarios)
    unknown = sorted(str(s) for s in chosen if s not in CONFORMANCE_SCENARIOS)
    if unknown:
        raise ConfigurationError(
            f"unknown conformance scenarios {unknown}; choose among {list(CONFORMANCE_SCENARIOS)}"
        )
    if not chosen:
        raise ConfigurationError(
            "no conformance scenario requested; an empty run would prove nothing"
        )
    return chosen


async def _build(factory: ProviderFactory, scenario: ConformanceScenario) -> ConformanceTarget:
    try:
        built = factory(scenario)
        target = await built if inspect.isawaitable(built) else built
    except Exception as exc:
        raise ScenarioFailed(f"the factory raised {describe(exc)}") from exc
    if not isinstance(target, ConformanceTarget):
        raise ScenarioFailed(f"the factory returned {target!r}, not a ConformanceTarget")
    return target


async def _verify(target: ConformanceTarget) -> None:
    if target.verify is None:
        return
    try:
        outcome = target.verify()
        if inspect.isawaitable(outcome):
            await outcome
    except Exception as exc:
        raise ScenarioFailed(f"the target's verify() failed: {describe(exc)}") from exc


async def _run_one(
    factory: ProviderFactory, scenario: ConformanceScenario, limits: Limits, names: list[str]
) -> ScenarioResult:
    started = time.monotonic()
    problems: list[str] = []
    try:
        target = await _build(factory, scenario)
    except ScenarioFailed as failure:
        return ScenarioResult(scenario, "failed", str(failure), time.monotonic() - started)
    names.append(target.provider.name)
    try:
        await CHECKS[scenario](target, limits)
        await _verify(target)
    except ScenarioFailed as failure:
        problems.append(str(failure))
    except Exception as exc:  # noqa: BLE001 - reported as the scenario's failure, not raised
        problems.append(f"unexpected {describe(exc)}")
    finally:
        try:
            await bounded("provider.aclose()", target.provider.aclose, limits.call_timeout)
        except ScenarioFailed as failure:
            problems.append(str(failure))
    duration = time.monotonic() - started
    if problems:
        return ScenarioResult(scenario, "failed", "; ".join(problems), duration)
    return ScenarioResult(scenario, "passed", "", duration)


async def run_provider_conformance(
    factory: ProviderFactory,
    *,
    scenarios: Iterable[ConformanceScenario] = CONFORMANCE_SCENARIOS,
    call_timeout: float = 30.0,
    abort_timeout: float = 5.0,
    settle_delay: float = 0.2,
) -> ConformanceReport:
    """Run the requested conformance scenarios, one after another, each on a fresh target.

    For each scenario the kit calls ``factory(scenario)``, makes the calls listed below in that
    order, runs the target's ``verify`` and finally ``await provider.aclose()``. Every call is
    bounded by ``call_timeout``. Prompts are fixed English questions about the target's tools
    (by default ``get_capital``, answered with ``tool_result``), so a live model can pass too.

    * ``text`` (S28) — ``chat()`` of a question: non-empty text, no tool calls, exactly
      ``expected_text`` when given.
    * ``stream`` (S28) — ``chat_stream()`` of the same question: text deltas, then exactly one
      ``ResponseDone``, last (the kit reads once more: the stream must end), no tool calls,
      non-empty text (``== expected_text``); then a second ``chat_stream()`` read for one event
      and closed with ``aclose()``, which must not raise.
    * ``tool_round_trip`` (S36) — ``chat_stream()`` offering ``tools`` (with ``tool_choice``):
      one or more ``ToolCallReady``, each naming an offered tool, with JSON-object arguments and
      a non-empty string id (``== expected_tool_call_ids`` when given); then ``chat_stream()``
      of the conversation with that reply and one ``ToolMessage`` per call, linked by the id
      exactly as given: text. Then an :class:`~robota.Agent` run with a real tool body per
      offered tool (two model calls): complete, ended on text, a tool body ran and saw the
      provider's call id.
    * ``parallel_tool_calls`` (S36) — as the first two calls above, asking for two calls at
      once: at least two ``ToolCallReady`` in one response, ids as given, every result sent
      back in call order, then text.
    * ``structured_output`` (S18) — ``chat()`` with ``ResponseFormat("json_schema",
      output_schema)``: the reply text is JSON valid against the schema
      (:func:`~robota.validate_against_json_schema`); then ``Agent.run(output=schema,
      output_retries=0)``: complete, and ``result.output`` is valid.
    * ``abort_mid_stream`` (S23, S15) — needs a reply streamed in several chunks with pauses.
      (1) ``chat_stream()`` whose signal aborts after the first text delta: within
      ``abort_timeout`` it raises an abort (:class:`~robota.AbortError`, ``CancelledError``, or
      anything :func:`~robota.is_abort` recognises) or ends; events already received may still
      arrive first; any other error fails (an abort is not a provider failure).
      (2) ``chat_stream()`` whose reading task is cancelled after the first delta: the read
      ends with ``CancelledError`` within ``abort_timeout`` — never swallowed, returned past or
      turned into another error. (3) ``Agent.run_stream()`` aborted after its first delta:
      status ``interrupted`` within ``abort_timeout``, the committed reply is ``interrupted``
      and keeps the text streamed before the abort, and history is unchanged ``settle_delay``
      seconds later (no late writes). (4) ``chat_stream()`` and ``chat()`` with an
      already-aborted signal: no event and no response — an abort error within
      ``abort_timeout``. These last two may never reach the transport.
    * ``error_mapping`` (S42) — ``chat()`` then ``chat_stream()``, both answered by a failure:
      each raises :class:`~robota.ProviderError` (never an SDK or transport exception) with a
      non-empty message, ``provider`` equal to the provider's name, and ``status`` /
      ``switchable`` equal to ``expected_error_status`` / ``expected_error_switchable`` when
      given.
    * ``usage_and_model`` (S29–S31) — ``chat_stream()`` then ``chat()``: usage is a robota
      :class:`~robota.Usage` whose counts are non-negative and, unless ``partial``, consistent
      (``total == prompt + completion``, the cache read within the prompt, neither side zero);
      the answering model is a non-empty string (``== expected_model``). Then ``Agent.run()``:
      one complete round whose ``RunResult.usage`` and ``model`` match the committed reply's.

    Args:
        factory: See :data:`ProviderFactory`.
        scenarios: The scenarios to run; the rest are reported as not run. Leave out what the
            target cannot do (a model without parallel tool calls, say) rather than letting it
            fail.
        call_timeout: Seconds each provider call (and each agent run, per round) may take.
        abort_timeout: Seconds a provider has to stop after an abort or a cancellation.
        settle_delay: Seconds to wait after an interrupted run before checking that history
            did not change.

    Returns:
        The report; call :meth:`ConformanceReport.raise_for_failures` in a test.

    Raises:
        ConfigurationError: no scenario, an unknown one, or a non-positive time bound.

    Example:
        >>> async def test_my_adapter() -> None:  # doctest: +SKIP
        ...     def factory(scenario: ConformanceScenario) -> ConformanceTarget:
        ...         return ConformanceTarget(MyProvider(base_url=replay.url(scenario)), "m")
        ...
        ...     report = await run_provider_conformance(factory)
        ...     report.raise_for_failures()
    """
    chosen = _requested(scenarios)
    bounds: tuple[tuple[str, object], ...] = (
        ("call_timeout", call_timeout),
        ("abort_timeout", abort_timeout),
        ("settle_delay", settle_delay),
    )
    for name, value in bounds:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigurationError(f"{name} must be a positive number of seconds, got {value!r}")
    limits = Limits(float(call_timeout), float(abort_timeout), float(settle_delay))
    names: list[str] = []
    results: list[ScenarioResult] = []
    for scenario in CONFORMANCE_SCENARIOS:
        if scenario not in chosen:
            results.append(ScenarioResult(scenario, "not_run", "not requested"))
            continue
        results.append(await _run_one(factory, scenario, limits, names))
    return ConformanceReport(tuple(results), names[0] if names else None)
