"""Issue 28: retries (S39, S42) and model fallback (S30) of a run's model calls.

Delays are kept to milliseconds (``jitter=0``) and read back from the ``execution.model_retry``
event, so no test waits long; the abort test proves the backoff ends at the signal (S23).
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

import robota
from journal_hooks import Crash, HookedJournal, crash_at, records_of
from robota import EventNames
from robota.core.execution._retry import ModelCalls, ModelCandidate, Retry
from robota.core.providers import ModelCapabilities, ProviderCapabilities
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn

FAST = robota.RetryPolicy(attempts=3, initial_delay=0.001, multiplier=2.0, jitter=0.0)


def _unavailable() -> robota.ProviderError:
    return robota.ProviderError("the service is unavailable", status=503)


def _events(recorder: robota.RecordingEventService, name: str) -> list[robota.AgentEvent]:
    return [e for e in recorder.events if e.name == name]


def _assistants(agent: robota.Agent) -> list[str]:
    return [m.content for m in agent.history if isinstance(m, robota.AssistantMessage)]


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("attempts", 0),
        ("attempts", True),
        ("attempts", 1.5),
        ("initial_delay", -1),
        ("initial_delay", True),
        ("multiplier", 0.5),
        ("max_delay", float("inf")),
        ("jitter", 1.5),
        ("max_retry_after", -0.1),
        ("max_retry_after", "5"),
    ],
)
def test_S42_retry_policy_refuses_wrong_values_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(robota.ConfigurationError, match=f"RetryPolicy.{field}"):
        robota.RetryPolicy(**{field: value})


def test_S42_backoff_is_exponential_capped_and_jittered_within_its_fraction() -> None:
    policy = robota.RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter=0.0)
    error = _unavailable()
    assert [policy.delay(n, error) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    jittered = robota.RetryPolicy(initial_delay=1.0, jitter=0.2, max_delay=30.0)
    rng = random.Random(7)  # noqa: S311 - reproducible jitter, not crypto
    delays = [jittered.delay(1, error, rng) for _ in range(200)]
    assert all(0.8 <= d <= 1.2 for d in delays)
    assert len(set(delays)) > 1
    capped = robota.RetryPolicy(initial_delay=10.0, jitter=1.0, max_delay=10.0)
    assert all(capped.delay(1, error, rng) <= 10.0 for _ in range(50))


def test_S42_backoff_of_a_late_retry_is_max_delay_never_an_overflow() -> None:
    # A valid policy (any finite multiplier >= 1, any number of attempts) must give a delay for
    # every retry; the growth past max_delay was computed as a float power and overflowed.
    error = _unavailable()
    steep = robota.RetryPolicy(multiplier=1e300, max_delay=5.0, jitter=0.0)
    assert [steep.delay(n, error) for n in (1, 2, 3, 50)] == [0.5, 5.0, 5.0, 5.0]
    many = robota.RetryPolicy(attempts=5000, max_delay=30.0, jitter=0.0)
    assert many.delay(1100, error) == 30.0
    assert robota.RetryPolicy(initial_delay=0.0, jitter=0.0).delay(2000, error) == 0.0


def test_S42_retry_after_is_honoured_and_capped() -> None:
    policy = robota.RetryPolicy(max_retry_after=2.0, jitter=0.0)
    assert policy.delay(1, robota.RateLimitError("slow down", retry_after=1.5)) == 1.5
    assert policy.delay(1, robota.RateLimitError("slow down", retry_after=90)) == 2.0
    assert policy.delay(1, robota.RateLimitError("slow down")) == policy.initial_delay


def test_S42_only_recoverable_provider_errors_are_retried() -> None:
    policy = robota.RetryPolicy()
    assert policy.retries(_unavailable())
    assert policy.retries(robota.RateLimitError("429"))
    assert policy.retries(robota.NetworkError("reset"))
    for status in (400, 401, 403, 404, 413, 422):
        assert not policy.retries(robota.ProviderError("input", status=status))
    assert not policy.retries(robota.AuthenticationError("no"))
    assert not policy.retries(robota.AbortError("cancelled"))
    assert not policy.retries(robota.StorageError("disk"))


async def test_S42_the_attempt_plan_backs_off_through_an_injected_sleeper() -> None:
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    policy = robota.RetryPolicy(attempts=3, initial_delay=2.0, jitter=0.0)
    calls = ModelCalls(policy, [ModelCandidate(ScriptedProvider([]), "m")], sleep=sleep)
    first = calls.after_failure(_unavailable(), lambda _: None)
    assert first == Retry(2.0, 2)
    await calls.wait(first.delay)
    assert calls.after_failure(_unavailable(), lambda _: None) == Retry(4.0, 3)
    assert calls.after_failure(_unavailable(), lambda _: None) is None  # spent; no fallback
    assert slept == [2.0]


def test_S42_agent_and_run_refuse_a_retry_that_is_not_a_policy() -> None:
    with pytest.raises(robota.ConfigurationError, match=r"retry must be a robota\.RetryPolicy"):
        robota.Agent(provider=ScriptedProvider([]), model="m", retry=3)  # type: ignore[arg-type]
    agent = robota.Agent(provider=ScriptedProvider(["x"]), model="m")
    with pytest.raises(robota.ConfigurationError, match=r"retry must be a robota\.RetryPolicy"):
        agent.run_sync("hi", retry={"attempts": 2})  # type: ignore[typeddict-item]


# --------------------------------------------------------------------------- retries


async def test_S42_recoverable_failure_is_retried_each_attempt_its_own_observation() -> None:
    provider = ScriptedProvider([_unavailable(), "fine"])
    recorder = robota.RecordingEventService()
    agent = robota.Agent(provider=provider, model="m", retry=FAST, event_service=recorder)
    result = await agent.run("hi")
    assert result.output == "fine"
    assert len(provider.requests) == 2
    (retry,) = _events(recorder, EventNames.MODEL_RETRY)
    assert retry.data["attempt"] == 2
    assert retry.data["delay"] == pytest.approx(0.001)
    assert retry.data["code"] == "provider_error"
    assert retry.data["status"] == 503
    assert retry.data["model"] == "m"
    rounds = _events(recorder, EventNames.ROUND_COMPLETED)
    # S39: one observation per attempt, each with its own identity and call id.
    assert [r.data["outcome"] for r in rounds] == ["failure", "success"]
    assert [r.data["round"] for r in rounds] == [1, 1]
    assert [r.data["attempt"] for r in rounds] == [1, 2]
    assert rounds[0].data["observation_id"] != rounds[1].data["observation_id"]
    assert rounds[0].data["call_id"]
    assert rounds[1].data["call_id"]
    assert rounds[0].data["call_id"] != rounds[1].data["call_id"]
    assert result.rounds == 1
    # S34: the failed attempt left nothing in history; the reply is the retried one.
    assert _assistants(agent) == ["fine"]


async def test_S42_run_policy_wins_over_the_agents() -> None:
    provider = ScriptedProvider([_unavailable(), "fine"])
    agent = robota.Agent(provider=provider, model="m", retry=FAST)
    with pytest.raises(robota.ProviderError):
        await agent.run("hi", retry=None)  # this run: no retry
    assert len(provider.requests) == 1
    provider = ScriptedProvider([_unavailable(), "fine"])
    agent = robota.Agent(provider=provider, model="m")
    assert (await agent.run("hi", retry=FAST)).output == "fine"


async def test_S42_rate_limit_waits_its_retry_after_capped() -> None:
    provider = ScriptedProvider(
        [
            robota.RateLimitError("slow down", retry_after=0.002),
            robota.RateLimitError("slow down", retry_after=120),
            "fine",
        ]
    )
    recorder = robota.RecordingEventService()
    policy = robota.RetryPolicy(attempts=3, initial_delay=5.0, jitter=0.0, max_retry_after=0.003)
    agent = robota.Agent(provider=provider, model="m", retry=policy, event_service=recorder)
    started = time.monotonic()
    assert (await agent.run("hi")).output == "fine"
    assert time.monotonic() - started < 2.0
    delays = [e.data["delay"] for e in _events(recorder, EventNames.MODEL_RETRY)]
    assert delays == [pytest.approx(0.002), pytest.approx(0.003)]
    assert [e.data["code"] for e in _events(recorder, EventNames.MODEL_RETRY)] == [
        "rate_limited",
        "rate_limited",
    ]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
async def test_S42_a_4xx_input_error_is_never_retried(status: int) -> None:
    provider = ScriptedProvider([robota.ProviderError("bad request", status=status), "never"])
    recorder = robota.RecordingEventService()
    agent = robota.Agent(provider=provider, model="m", retry=FAST, event_service=recorder)
    with pytest.raises(robota.ProviderError) as raised:
        await agent.run("hi")
    assert raised.value.status == status
    assert len(provider.requests) == 1
    assert _events(recorder, EventNames.MODEL_RETRY) == []


async def test_S42_attempts_exhausted_the_run_fails_with_the_last_error_in_history() -> None:
    provider = ScriptedProvider([_unavailable(), _unavailable(), _unavailable(), "never"])
    agent = robota.Agent(provider=provider, model="m", retry=FAST)
    with pytest.raises(robota.ProviderError, match="unavailable"):
        await agent.run("hi")
    assert len(provider.requests) == 3
    # S39: the last failure is the one readable assistant message; the retried ones are not.
    (notice,) = _assistants(agent)
    assert "unavailable" in notice


async def test_S23_abort_during_backoff_ends_the_run_interrupted_promptly() -> None:
    provider = ScriptedProvider([robota.RateLimitError("slow down", retry_after=30), "never"])
    policy = robota.RetryPolicy(max_retry_after=30.0)
    agent = robota.Agent(provider=provider, model="m", retry=policy)
    controller = robota.AbortController()
    asyncio.get_running_loop().call_later(0.05, controller.abort)
    started = time.monotonic()
    result = await agent.run("hi", signal=controller.signal)
    assert time.monotonic() - started < 2.0
    assert result.status == "interrupted"
    assert len(provider.requests) == 1
    last = agent.history[-1]
    assert isinstance(last, robota.AssistantMessage)
    assert last.state == "interrupted"


async def test_S34_a_task_cancelled_in_its_backoff_still_commits_the_rounds_reply() -> None:
    # S34: an assistant message is always appended, even on abort; S23: cancelling the run's
    # task mid-backoff ends it like cancelling it mid-call (interrupted reply, then re-raise).
    provider = ScriptedProvider([robota.RateLimitError("slow down", retry_after=30), "never"])
    agent = robota.Agent(
        provider=provider, model="m", retry=robota.RetryPolicy(max_retry_after=30.0)
    )
    task = asyncio.create_task(agent.run("hi"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(provider.requests) == 1
    assert [(m.kind, m.state) for m in agent.history] == [
        ("user", "complete"),
        ("assistant", "interrupted"),
    ]


async def test_S34_a_stream_that_failed_after_text_is_replaced_not_kept() -> None:
    provider = ScriptedProvider(
        [
            ScriptedTurn(text="half an ans", error=_unavailable(), error_after_text=True),
            "the whole answer",
        ]
    )
    agent = robota.Agent(provider=provider, model="m", retry=FAST)
    stream = agent.run_stream("hi")
    seen: list[robota.RunEvent] = [event async for event in stream]
    result = await stream.result()
    kinds = [e.kind for e in seen if e.kind != "message_committed"]
    assert kinds == ["round_started", "text_delta", "retry_started", "round_started", "text_delta"]
    (told,) = [e for e in seen if isinstance(e, robota.RetryStarted)]
    assert told.discarded == "half an ans"
    assert told.attempt == 2
    assert told.round == 1
    assert not told.fallback
    assert isinstance(told.error, robota.ProviderError)
    # S34: one reply in history, the retried one, through the single commit path.
    assert _assistants(agent) == ["the whole answer"]
    assert result.text == "the whole answer"
    assert [m.content for m in result.messages] == ["hi", "the whole answer"]
    # S29: the failed attempt reported no usage, so the run's usage is partial and its cost
    # unknown — never a guess.
    assert result.usage.partial
    assert result.cost is None


async def test_S29_a_request_refused_with_an_error_status_keeps_the_run_cost_known() -> None:
    # A 503 answered before anything was generated carries no charge: the retried run's cost
    # is the answer's, not unknown. A failure after text was streamed stays unknown (above).
    robota.register_model_pricing(
        "priced-retry-model", input_per_million=1.0, output_per_million=2.0, replace=True
    )
    usage = robota.Usage.from_counts(prompt=1_000, completion=500)
    provider = ScriptedProvider([_unavailable(), ScriptedTurn(text="fine", usage=usage)])
    agent = robota.Agent(provider=provider, model="priced-retry-model", retry=FAST)
    result = await agent.run("hi")
    assert len(provider.requests) == 2
    assert not result.usage.partial
    assert result.cost == pytest.approx(0.002)


async def test_S29_a_discarded_attempt_that_reported_usage_is_still_counted() -> None:
    class ReportsThenFails(ScriptedProvider):
        async def chat_stream(self, request: Any, *, signal: Any = None) -> Any:  # type: ignore[override]
            first = not self.requests
            async for event in super().chat_stream(request, signal=signal):
                yield event
            if first:
                raise _unavailable()

    usage = robota.Usage.from_counts(prompt=10, completion=5)
    provider = ReportsThenFails([ScriptedTurn(text="draft", usage=usage), "final"])
    agent = robota.Agent(provider=provider, model="m", retry=FAST)
    result = await agent.run("hi")
    assert _assistants(agent) == ["final"]
    assert result.usage.prompt_tokens > 10  # the discarded attempt's 10 and the final's


# --------------------------------------------------------------------------- fallback


def _tools_table(tools: bool) -> ProviderCapabilities:
    return ProviderCapabilities(default_model=ModelCapabilities(tools=tools))


async def test_S30_switchable_failure_moves_to_the_next_model_and_stays_there() -> None:
    calls: list[int] = []

    @robota.tool
    def probe(n: int) -> str:
        """Probe."""
        calls.append(n)
        return f"probed {n}"

    primary = ScriptedProvider([robota.ProviderError("overloaded", status=529)], name="a")
    backup = ScriptedProvider([[("probe", {"n": 1})], "done"], name="b")
    recorder = robota.RecordingEventService()
    agent = robota.Agent(
        provider=primary,
        model="big",
        fallback=[(backup, "small")],
        tools=[probe],
        event_service=recorder,
    )
    result = await agent.run("go")
    assert result.output == "done"
    assert calls == [1]  # the tool body ran once
    assert len(primary.requests) == 1  # S30: later rounds stayed on the model that answered
    assert [r.model for r in backup.requests] == ["small", "small"]
    (switch,) = _events(recorder, EventNames.MODEL_FALLBACK)
    assert switch.data["model"] == "big"
    assert switch.data["provider"] == "a"
    assert switch.data["to_model"] == "small"
    assert switch.data["to_provider"] == "b"
    assert switch.data["status"] == 529
    assert result.model == "small"
    assert result.provider == "b"
    rounds = _events(recorder, EventNames.ROUND_COMPLETED)
    assert [(r.data["provider"], r.data["model"]) for r in rounds] == [
        ("a", "big"),
        ("b", "small"),
        ("b", "small"),
    ]
    assert all(
        m.model == "small" for m in result.messages if isinstance(m, robota.AssistantMessage)
    )


async def test_S30_no_policy_switches_on_the_first_switchable_failure() -> None:
    primary = ScriptedProvider([robota.RateLimitError("429"), "never"], name="a")
    backup = ScriptedProvider(["from b"], name="b")
    agent = robota.Agent(provider=primary, model="m", fallback=[backup])
    result = await agent.run("hi")
    assert result.output == "from b"
    assert len(primary.requests) == 1
    assert backup.requests[0].model == "m"  # a bare provider entry: the same model name


async def test_S30_retries_are_spent_on_each_model_before_switching() -> None:
    primary = ScriptedProvider([_unavailable(), _unavailable(), "never"], name="a")
    backup = ScriptedProvider(["from b"], name="b")
    policy = robota.RetryPolicy(attempts=2, initial_delay=0.001, jitter=0.0)
    agent = robota.Agent(provider=primary, model="m", fallback=[backup], retry=policy)
    assert (await agent.run("hi")).output == "from b"
    assert len(primary.requests) == 2


async def test_S42_a_non_switchable_failure_fails_the_run_without_fallback() -> None:
    primary = ScriptedProvider([robota.ProviderError("bad input", status=400)], name="a")
    backup = ScriptedProvider(["never"], name="b")
    agent = robota.Agent(provider=primary, model="m", fallback=[backup], retry=FAST)
    with pytest.raises(robota.ProviderError, match="bad input"):
        await agent.run("hi")
    assert backup.requests == []
    unknown = ScriptedProvider([robota.ProviderError("no status")], name="a")
    agent = robota.Agent(provider=unknown, model="m", fallback=[backup])
    with pytest.raises(robota.ProviderError, match="no status"):
        await agent.run("hi")  # S42: an unknown cause is not worth switching for
    assert backup.requests == []


async def test_S30_a_candidate_lacking_tools_the_run_offers_is_skipped_with_the_reason() -> None:
    @robota.tool
    def probe(n: int) -> str:
        """Probe."""
        return str(n)

    primary = ScriptedProvider([_unavailable()], name="a")
    no_tools = ScriptedProvider(["never"], name="b", capabilities=_tools_table(False))
    with_tools = ScriptedProvider(["from c"], name="c", capabilities=_tools_table(True))
    recorder = robota.RecordingEventService()
    agent = robota.Agent(
        provider=primary,
        model="m",
        fallback=[no_tools, with_tools],
        tools=[probe],
        event_service=recorder,
    )
    result = await agent.run("hi")
    assert result.output == "from c"
    assert no_tools.requests == []
    (refused,) = _events(recorder, EventNames.MODEL_FALLBACK_REFUSED)
    assert refused.data["provider"] == "b"
    assert "takes no tools" in refused.data["reason"]
    assert _events(recorder, EventNames.MODEL_FALLBACK)[0].data["to_provider"] == "c"

    # None left: the run fails with the original error, and says why nothing was tried.
    primary = ScriptedProvider([_unavailable()], name="a")
    agent = robota.Agent(provider=primary, model="m", fallback=[no_tools], tools=[probe])
    with pytest.raises(robota.ProviderError) as raised:
        await agent.run("hi")
    notes = "\n".join(getattr(raised.value, "__notes__", []))
    assert "takes no tools" in notes
    assert "no fallback model was left" in notes


async def test_S18_fallback_re_projects_structured_output_for_the_new_model() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    native = ProviderCapabilities(default_model=ModelCapabilities(structured_output="json_schema"))
    plain = ProviderCapabilities(default_model=ModelCapabilities(structured_output=None))
    primary = ScriptedProvider([_unavailable()], name="a", capabilities=native)
    backup = ScriptedProvider(['{"city": "Oslo"}'], name="b", capabilities=plain)
    agent = robota.Agent(provider=primary, model="m", fallback=[backup])
    result = await agent.run("where?", output=schema)
    assert result.output == {"city": "Oslo"}
    assert primary.requests[0].response_format is not None  # a native schema parameter
    sent = backup.requests[0]
    assert sent.response_format is None  # the new model has none: the schema is instructed
    head = sent.messages[0]
    assert isinstance(head, robota.SystemMessage)
    assert "city" in head.content


def test_S30_fallback_entries_are_checked_when_the_agent_is_built() -> None:
    with pytest.raises(robota.ConfigurationError, match="fallback must be a list"):
        robota.Agent(provider=ScriptedProvider([]), model="m", fallback="x:y")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="each fallback entry"):
        robota.Agent(provider=ScriptedProvider([]), model="m", fallback=[3])  # type: ignore[list-item]
    a, b = ScriptedProvider([], name="a"), ScriptedProvider([], name="b")
    agent = robota.Agent(providers=[a, b], model="a:m1", fallback=["b:m2"])
    assert agent.get_model() == robota.ModelSelection("a", "m1")


# --------------------------------------------------------------------------- journal (S40)


def _agent_ab(
    journal: robota.ExecutionJournal,
    a_turns: list[Any],
    b_turns: list[Any],
    calls: list[int],
) -> tuple[robota.Agent, ScriptedProvider, ScriptedProvider]:
    @robota.tool
    def probe(n: int) -> str:
        """Probe."""
        calls.append(n)
        return f"probed {n}"

    a = ScriptedProvider(a_turns, name="a")
    b = ScriptedProvider(b_turns, name="b")
    agent = robota.Agent(
        provider=a, model="m", fallback=[b], tools=[probe], journal=journal, retry=FAST
    )
    return agent, a, b


async def test_S40_a_resumed_run_continues_on_the_model_its_last_settled_call_used() -> None:
    inner = InMemoryJournal()
    calls: list[int] = []
    # Dies right before the second model call is recorded: the tool already settled.
    journal = HookedJournal(inner, before=crash_at("model_call_started", nth=5))
    agent, a, b = _agent_ab(
        journal,
        [robota.RateLimitError("429"), robota.RateLimitError("429"), robota.RateLimitError("429")],
        [[("probe", {"n": 1})]],
        calls,
    )
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e")
    assert len(a.requests) == 3
    assert len(b.requests) == 1
    settled = records_of(await inner.read("e"), robota.ModelCallSettled)
    assert [(r.provider, r.fallback, r.retried, r.outcome) for r in settled] == [
        ("a", 0, True, "failure"),
        ("a", 0, True, "failure"),
        ("a", 0, True, "failure"),
        ("b", 1, False, "success"),
    ]
    fresh, a2, b2 = _agent_ab(inner, [], ["done"], calls)
    result = await fresh.resume("e")
    assert result.output == "done"
    assert a2.requests == []  # never the agent's first model again: b answered last
    assert len(b2.requests) == 1
    assert calls == [1]  # S40: the tool body ran exactly once
    assert result.provider == "b"
    # The discarded attempts are not in the restored history.
    assert [m.content for m in fresh.history if isinstance(m, robota.AssistantMessage)] == [
        "",
        "done",
    ]


async def test_S40_a_resume_without_the_model_the_run_moved_to_is_refused_not_guessed() -> None:
    inner = InMemoryJournal()
    journal = HookedJournal(inner, before=crash_at("model_call_started", nth=5))
    agent, _, _ = _agent_ab(
        journal,
        [robota.RateLimitError("429"), robota.RateLimitError("429"), robota.RateLimitError("429")],
        [[("probe", {"n": 1})]],
        [],
    )
    with pytest.raises(Crash):
        await agent.run("go", execution_id="e")

    @robota.tool
    def probe(n: int) -> str:
        """Probe."""
        return f"probed {n}"

    primary = ScriptedProvider(["never"], name="a")
    without = robota.Agent(provider=primary, model="m", tools=[probe], journal=inner)
    with pytest.raises(robota.ExecutionStateError) as refused:
        await without.resume("e")
    assert refused.value.code == "fallback_changed"
    assert primary.requests == []


async def test_S23_S40_a_journaled_run_aborted_in_its_backoff_resumes_with_a_new_call() -> None:
    inner = InMemoryJournal()
    policy = robota.RetryPolicy(max_retry_after=30.0)
    first = ScriptedProvider([robota.RateLimitError("slow down", retry_after=30)])
    agent = robota.Agent(provider=first, model="m", journal=inner, retry=policy)
    controller = robota.AbortController()
    asyncio.get_running_loop().call_later(0.05, controller.abort)
    result = await agent.run("hi", execution_id="e", signal=controller.signal)
    assert result.status == "interrupted"
    settled = records_of(await inner.read("e"), robota.ModelCallSettled)
    assert [(r.outcome, r.retried) for r in settled] == [("failure", True)]
    again = ScriptedProvider(["fine"])
    fresh = robota.Agent(provider=again, model="m", journal=inner, retry=policy)
    resumed = await fresh.resume("e")
    assert resumed.output == "fine"
    assert len(again.requests) == 1
    shape = [(m.kind, m.content) for m in fresh.history]
    assert shape == [("user", "hi"), ("assistant", ""), ("assistant", "fine")]


async def test_S30_an_error_after_a_switch_names_the_provider_that_answered() -> None:
    # S30: every record of the call names the model that answered; the tool_choice="none"
    # violation raised after a fallback named the agent's first provider instead.
    primary = ScriptedProvider([_unavailable()], name="a")
    backup = ScriptedProvider([[("probe", {})]], name="b")
    agent = robota.Agent(provider=primary, model="m", fallback=[(backup, "small")])
    with pytest.raises(robota.ProviderError) as raised:
        await agent.run("hi", tool_choice="none")
    assert raised.value.code == "tool_choice_violated"
    assert (raised.value.provider, raised.value.model) == ("b", "small")


async def test_S42_a_callers_own_provider_keeps_no_policy_after_a_run_policy() -> None:
    # A provider the caller built keeps its SDK retries, so no policy is added on top of them.
    agent = robota.Agent(provider=ScriptedProvider([_unavailable(), "fine"]), model="m")
    result = await agent.run("hi", retry=FAST)
    assert result.output == "fine"
    assert agent.retry is None
