"""S35 override seam: robota.ModelTexts holds every text core places in front of a model."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest

import robota
from robota.core.hooks import HookRunner, HookSpec
from robota.core.providers import ChatRequest, ModelCapabilities, ProviderCapabilities
from robota.testing import ScriptedProvider


@robota.tool
def probe(n: int = 0) -> str:
    """A cheap tool."""
    return f"probed {n}"


class City(pydantic.BaseModel):
    name: str


def _tool_results(request: ChatRequest) -> list[str]:
    return [m.content for m in request.messages if isinstance(m, robota.ToolMessage)]


@pytest.fixture
def small_model(model_name: str) -> Iterator[str]:
    robota.register_model_metadata(model_name, context_window=1_000, provider="scripted")
    yield model_name
    robota.unregister_model_metadata(model_name, provider="scripted")


# --------------------------------------------------------------------------- defaults


def test_s35_defaults_are_the_texts_core_wrote_before_the_seam() -> None:
    # Byte-identical to the literals core used before ModelTexts existed (issue 26).
    texts = robota.ModelTexts()
    assert (
        texts.summary_instruction
        == robota.DEFAULT_SUMMARY_INSTRUCTION
        == (
            "The tool-call budget for this turn is used up. Do not call any tools. Reply with what "
            "has been done and found so far, and what remains unfinished."
        )
    )
    assert (
        texts.summary_fallback
        == robota.DEFAULT_SUMMARY_FALLBACK
        == ("The tool-call budget for this turn was used up before a final answer was produced.")
    )
    assert texts.unavailable_tools_instruction == robota.DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION
    assert texts.context_limit_message is robota.default_context_limit_message
    assert texts.output_instruction == robota.DEFAULT_OUTPUT_INSTRUCTION
    assert texts.output_feedback == robota.DEFAULT_OUTPUT_FEEDBACK
    assert (
        texts.interrupted_annotation
        == robota.DEFAULT_INTERRUPTED_ANNOTATION
        == ("[This response was interrupted before it was completed.]")
    )
    assert texts.interrupted_before_start == (
        "Interrupted by user before this tool started; it did not run."
    )
    assert texts.interrupted_while_running == "Interrupted by user while this tool was running."
    assert texts.abandoned_while_running == (
        "Interrupted by user while this tool was running: the run stopped waiting for it, so what "
        "it did before it was stopped is unknown."
    )


async def test_s37_default_unavailable_tool_result_is_unchanged() -> None:
    provider = ScriptedProvider([[("nope", {})], "done"])
    await robota.Agent(provider=provider, model="m", tools=[probe]).run("go")
    assert _tool_results(provider.requests[1]) == [
        "Tool 'nope' is not available, so this call was not executed. Available tools: probe."
    ]


async def test_s39_default_omitted_notices_are_unchanged(small_model: str) -> None:
    @robota.tool(source="pkg")
    def big() -> str:
        """Big output."""
        return "x" * 4_000

    @robota.tool
    def broken() -> str:
        """Fails."""
        raise RuntimeError("boom")

    provider = ScriptedProvider([[("big", {}), ("broken", {}), ("missing", {})], "ok"])
    await robota.Agent(provider=provider, model=small_model, tools=[big, broken]).run("go")
    head = "[Result omitted: no room left in the context window. The call to "
    assert _tool_results(provider.requests[1]) == [
        head + "'big' (source: pkg) completed and its effects happened; do not repeat it. Ask "
        "for a smaller part of the result if you need it.]",
        head + "'broken' failed while running; its effects may be partial or uncertain. Check "
        "the current state before trying again.]",
        head + "'missing' was not executed (unavailable).]",
    ]


async def test_s39_default_not_dispatched_result_is_unchanged() -> None:
    same = ("probe", {"n": 1})
    provider = ScriptedProvider([[same], [same], "never"])
    agent = robota.Agent(provider=provider, model="m", tools=[probe], max_same_tool_inputs=1)
    with pytest.raises(robota.SameToolInputLoopError):
        await agent.run("go")
    assert agent.history[-1].content == (
        "This tool call was not dispatched: 'probe' was called with identical input more than 1 "
        "times"
    )


# --------------------------------------------------------------------------- each text reaches the model


async def test_s35_summary_instruction_and_fallback_reach_the_model_and_the_result() -> None:
    texts = robota.ModelTexts(summary_instruction="SUM NOW", summary_fallback="NOTHING SAID")
    provider = ScriptedProvider([[("probe", {})], ""])
    agent = robota.Agent(provider=provider, model="m", tools=[probe], max_rounds=1, texts=texts)
    result = await agent.run("go")
    assert provider.requests[-1].messages[-1].content == "SUM NOW"
    assert result.output == "NOTHING SAID"


async def test_s35_unavailable_tools_instruction_reaches_the_model() -> None:
    texts = robota.ModelTexts(unavailable_tools_instruction="Never ran: {calls}!")
    provider = ScriptedProvider([[("x", {})], [("x", {})], "ok"])
    await robota.Agent(provider=provider, model="m", tools=[probe], texts=texts).run("go")
    assert provider.requests[2].messages[-1].content == "Never ran: 'x'!"


async def test_s35_context_limit_message_is_the_committed_diagnostic(
    small_model: str,
) -> None:
    texts = robota.ModelTexts(context_limit_message=lambda usage: f"TOO BIG {usage.tokens > 0}")
    provider = ScriptedProvider(["fine"])
    agent = robota.Agent(provider=provider, model=small_model, texts=texts)
    result = await agent.run("word " * 2_000)
    assert result.output == "TOO BIG True"
    assert agent.history[-1].content == "TOO BIG True"


async def test_s35_output_instruction_and_feedback_reach_the_model() -> None:
    table = ProviderCapabilities(default_model=ModelCapabilities(structured_output="none"))
    provider = ScriptedProvider(['{"nope": 1}', '{"name": "Oslo"}'], capabilities=table)
    texts = robota.ModelTexts(
        output_instruction="SCHEMA FOLLOWS {schema}", output_feedback="WRONG: {issues}"
    )
    agent = robota.Agent(provider=provider, model="m", texts=texts)
    result = await agent.run("city?", output=City)
    assert result.output == City(name="Oslo")
    first, retry = provider.requests
    assert first.messages[0].content.startswith("SCHEMA FOLLOWS {")
    assert retry.messages[-1].content.startswith("WRONG: ")
    assert "name" in retry.messages[-1].content


async def test_s35_interrupted_annotation_reaches_the_model() -> None:
    provider = ScriptedProvider(["ok"])
    history = [robota.UserMessage("hi"), robota.AssistantMessage("Hal", state="interrupted")]
    texts = robota.ModelTexts(interrupted_annotation="(cut off)")
    await robota.Agent(provider=provider, model="m", history=history, texts=texts).run("go")
    assert provider.requests[0].messages[1].content == "Hal\n\n(cut off)"


async def test_s35_unavailable_tool_result_reaches_the_model() -> None:
    texts = robota.ModelTexts(unavailable_tool_result="No {tool}; try {available}")
    provider = ScriptedProvider([[("nope", {})], "done"])
    await robota.Agent(provider=provider, model="m", tools=[probe], texts=texts).run("go")
    assert _tool_results(provider.requests[1]) == ["No 'nope'; try probe"]


async def test_s35_deferred_tools_hint_reaches_the_model() -> None:
    deferred = [robota.tool(probe.function, name=f"t{i}", defer=True) for i in range(3)]
    texts = robota.ModelTexts(
        unavailable_tool_result="No {tool} in {available}.",
        deferred_tools_hint="Search {count} more.",
    )
    provider = ScriptedProvider([[("nope", {})], "done"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[probe, *deferred],
        tool_deferral="on",
        texts=texts,
    )
    await agent.run("go")
    assert _tool_results(provider.requests[1]) == [
        "No 'nope' in probe, tool_search. Search 3 more."
    ]


async def test_s35_omitted_result_notices_reach_the_model(small_model: str) -> None:
    @robota.tool(source="pkg")
    def big() -> str:
        """Big output."""
        return "x" * 4_000

    @robota.tool
    def broken() -> str:
        """Fails."""
        raise RuntimeError("boom")

    texts = robota.ModelTexts(
        omitted_completed_notice="DONE {tool}{source}",
        omitted_failed_notice="FAILED {tool}",
        omitted_unexecuted_notice="SKIPPED {tool} {status}",
    )
    provider = ScriptedProvider([[("big", {}), ("broken", {}), ("missing", {})], "ok"])
    agent = robota.Agent(provider=provider, model=small_model, tools=[big, broken], texts=texts)
    await agent.run("go")
    assert _tool_results(provider.requests[1]) == [
        "DONE 'big' (source: pkg)",
        "FAILED 'broken'",
        "SKIPPED 'missing' unavailable",
    ]


async def test_s35_not_dispatched_result_reaches_the_model() -> None:
    same = ("probe", {"n": 1})
    provider = ScriptedProvider([[same], [same], "after"])
    texts = robota.ModelTexts(not_dispatched_result="HELD BACK ({reason})")
    agent = robota.Agent(
        provider=provider, model="m", tools=[probe], max_same_tool_inputs=1, texts=texts
    )
    with pytest.raises(robota.SameToolInputLoopError):
        await agent.run("go")
    await agent.run("again")
    assert _tool_results(provider.requests[-1])[-1].startswith("HELD BACK ('probe' was called")


async def test_s35_interrupted_results_reach_the_model() -> None:
    controller = robota.AbortController()

    @robota.tool
    async def step(label: str, ctx: robota.ToolContext) -> str:
        """Aborts the run when it starts, then stops on the signal."""
        controller.abort("enough")
        raise robota.AbortError("stopped")

    texts = robota.ModelTexts(
        interrupted_before_start="NOT STARTED", interrupted_while_running="CUT"
    )
    calls = [("step", {"label": name}) for name in ("a", "b")]
    provider = ScriptedProvider([calls, "after"])
    agent = robota.Agent(
        provider=provider, model="m", tools=[step], tool_concurrency=1, texts=texts
    )
    result = await agent.run("go", signal=controller.signal)
    assert result.status == "interrupted"
    await agent.run("again")
    assert _tool_results(provider.requests[-1]) == ["CUT", "NOT STARTED"]


async def test_s35_abandoned_result_reaches_the_model() -> None:
    controller = robota.AbortController()
    started = asyncio.Event()

    @robota.tool
    async def stubborn() -> str:
        """Ignores the signal."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    texts = robota.ModelTexts(abandoned_while_running="GAVE UP WAITING")
    provider = ScriptedProvider([[("stubborn", {})], "after"])
    agent = robota.Agent(provider=provider, model="m", tools=[stubborn], texts=texts)
    task = asyncio.create_task(agent.run("go", signal=controller.signal))
    await asyncio.wait_for(started.wait(), 5)
    controller.abandon()
    assert (await asyncio.wait_for(task, 5)).status == "interrupted"
    await agent.run("again")
    assert _tool_results(provider.requests[-1]) == ["GAVE UP WAITING"]


class Search(robota.Tool):
    name = "search"
    description = "Search."

    def __init__(self, parameters: dict[str, Any]) -> None:
        super().__init__(parameters=parameters)

    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        raise KeyError("gone")


SOUND = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
BROKEN = {"type": "object", "properties": {"q": {}}}


async def test_s16_default_argument_and_failure_results_are_unchanged() -> None:
    turns = [[("search", "[1]"), ("search", {"q": 1}), ("search", {"q": "x"})], "done"]
    provider = ScriptedProvider(turns)
    await robota.Agent(provider=provider, model="m", tools=[Search(SOUND)]).run("go")
    invalid, rejected, failed = _tool_results(provider.requests[1])
    assert invalid == (
        "Invalid arguments for tool 'search': the arguments must be a JSON object, got list."
    )
    assert rejected.endswith(". Fix the arguments and call the tool again.")
    assert failed == "Tool 'search' failed: KeyError: 'gone'"
    broken = ScriptedProvider([[("search", {"q": "x"})], "done"])
    await robota.Agent(provider=broken, model="m", tools=[Search(BROKEN)]).run("go")
    assert _tool_results(broken.requests[1]) == [
        "Tool 'search' cannot be called: its parameter schema is invalid. This is an error in "
        "the tool's definition, not in your arguments; do not call it again."
    ]


async def test_s35_argument_and_failure_results_reach_the_model() -> None:
    texts = robota.ModelTexts(
        invalid_arguments_result="BAD JSON {tool}: {problem}",
        rejected_arguments_result="REJECTED {tool}: {problem}",
        tool_failure_result="FAILED {tool} ({error})",
        broken_schema_result="UNUSABLE {tool}",
    )
    turns = [[("search", "[1]"), ("search", {"q": 1}), ("search", {"q": "x"})], "done"]
    provider = ScriptedProvider(turns)
    await robota.Agent(provider=provider, model="m", tools=[Search(SOUND)], texts=texts).run("go")
    invalid, rejected, failed = _tool_results(provider.requests[1])
    assert invalid == "BAD JSON 'search': the arguments must be a JSON object, got list"
    assert rejected.startswith("REJECTED 'search': ")
    assert failed == "FAILED 'search' (KeyError: 'gone')"
    broken = ScriptedProvider([[("search", {"q": "x"})], "done"])
    await robota.Agent(provider=broken, model="m", tools=[Search(BROKEN)], texts=texts).run("go")
    assert _tool_results(broken.requests[1]) == ["UNUSABLE 'search'"]


async def test_s35_request_failed_notice_is_committed_and_sent_on_the_next_turn() -> None:
    class FailsOnce(ScriptedProvider):
        async def chat_stream(self, request, *, signal=None):  # type: ignore[no-untyped-def, override]
            if not self.requests:
                self.requests.append(request)
                raise robota.ProviderError("stream cut", status=502)
            async for event in super().chat_stream(request, signal=signal):
                yield event

    provider = FailsOnce(["fine"])
    texts = robota.ModelTexts(request_failed_notice="CALL FAILED ({error})")
    agent = robota.Agent(provider=provider, model="m", texts=texts)
    with pytest.raises(robota.ProviderError):
        await agent.run("go")
    await agent.run("again")
    sent = provider.requests[-1].messages[1].content
    assert sent == f"CALL FAILED (stream cut)\n\n{robota.DEFAULT_INTERRUPTED_ANNOTATION}"


def _deferred_agent(provider: ScriptedProvider, **options: Any) -> robota.Agent:
    deferred = [robota.tool(probe.function, name=f"t{i}", defer=True) for i in range(3)]
    return robota.Agent(
        provider=provider, model="m", tools=[probe, *deferred], tool_deferral="on", **options
    )


async def test_s19_default_tool_search_texts_are_unchanged() -> None:
    provider = ScriptedProvider([[("tool_search", {"query": "zzz"})], "done"])
    await _deferred_agent(provider).run("go")
    search = next(spec for spec in provider.requests[0].tools if spec.name == "tool_search")
    assert search.description == (
        "Find more tools. Some tools are not listed yet; search their names and descriptions with "
        "keywords, or pick exact names with 'select:name1,name2'. Tools found become callable "
        "from your next step."
    )
    assert (
        '"note": "No tool matched; try other keywords."' in _tool_results(provider.requests[1])[0]
    )


async def test_s35_tool_search_texts_reach_the_model() -> None:
    texts = robota.ModelTexts(
        tool_search_description="FIND TOOLS",
        tool_search_loaded_note="LOADED",
        tool_search_no_match_note="NONE FOUND",
    )
    turns = [
        [("tool_search", {"query": "zzz"})],
        [("tool_search", {"query": "select:t1"})],
        "done",
    ]
    provider = ScriptedProvider(turns)
    await _deferred_agent(provider, texts=texts).run("go")
    search = next(spec for spec in provider.requests[0].tools if spec.name == "tool_search")
    assert search.description == "FIND TOOLS"
    results = _tool_results(provider.requests[2])
    assert '"note": "NONE FOUND"' in results[0]
    assert '"note": "LOADED"' in results[1]


@robota.tool(risk="execute", argument=robota.PermissionArgument("command", "command"))
def shell(command: str) -> str:
    """Run a command (pretend)."""
    return f"ran {command}"


class _Decline:
    async def __call__(self, request: robota.ApprovalRequest) -> robota.Approval:
        return robota.Approval(False, reason="not now")


class _Blocker:
    async def execute(
        self, hook: HookSpec, payload: Any, *, signal: Any = None
    ) -> robota.HookOutcome:
        return robota.HookOutcome.deny("policy says no")


def _gates() -> list[robota.PermissionGate]:
    blocker = HookRunner(
        {"PreToolUse": [{"matcher": "shell", "hooks": [{"type": "command", "command": "x"}]}]},
        {"command": _Blocker()},
    )
    return [
        robota.PermissionGate(robota.PermissionPolicy(mode="bypass", deny=["shell(rm *)"])),
        robota.PermissionGate(robota.PermissionPolicy()),
        robota.PermissionGate(robota.PermissionPolicy(), approver=_Decline()),
        robota.PermissionGate(robota.PermissionPolicy(mode="bypass"), hooks=blocker),
    ]


async def _gate_results(texts: robota.ModelTexts | None) -> list[str]:
    results = []
    for gate in _gates():
        provider = ScriptedProvider([[("shell", {"command": "rm x"})], "done"])
        agent = robota.Agent(
            provider=provider, model="m", tools=[shell], tool_gate=gate, texts=texts
        )
        await agent.run("go")
        results.extend(_tool_results(provider.requests[1]))
    return results


async def test_s21_default_gate_refusals_are_unchanged() -> None:
    denied, unattended, declined, blocked = await _gate_results(None)
    assert denied.startswith("Permission denied: denied by rule 'shell(rm *)'")
    assert denied.endswith(".")
    assert unattended.startswith("Permission denied: ")
    assert unattended.endswith("; approval is required and no one is attached to give it.")
    assert declined == "The user declined this call: not now."
    assert blocked.startswith("Blocked by a hook: ")
    assert "policy says no" in blocked


async def test_s35_gate_refusals_reach_the_model_in_the_agents_words() -> None:
    texts = robota.ModelTexts(
        permission_denied_result="DENIED",
        no_approver_result="NOBODY ({reason})",
        declined_result="DECLINED{reason}",
        hook_blocked_result="HOOK: {reason}",
    )
    denied, unattended, declined, blocked = await _gate_results(texts)
    assert denied == "DENIED"
    assert unattended.startswith("NOBODY (")
    assert declined == "DECLINED: not now"
    assert blocked.startswith("HOOK: ")
    assert "policy says no" in blocked


# --------------------------------------------------------------------------- the object


def test_s35_model_texts_is_immutable_and_replace_keeps_the_rest() -> None:
    texts = robota.ModelTexts(summary_fallback="A")
    with pytest.raises(dataclasses.FrozenInstanceError):
        texts.summary_fallback = "B"  # type: ignore[misc]
    changed = dataclasses.replace(texts, summary_instruction="I")
    assert (changed.summary_fallback, changed.summary_instruction) == ("A", "I")
    assert changed.interrupted_annotation == robota.DEFAULT_INTERRUPTED_ANNOTATION


@pytest.mark.parametrize(
    ("field", "value", "fix"),
    [
        ("summary_fallback", "Hi {name}", "unknown placeholder {name}"),
        ("unavailable_tool_result", "No {tool} in {tools}", "unknown placeholder {tools}"),
        ("unavailable_tools_instruction", "Do not call tools.", "placeholder {calls}"),
        ("output_instruction", "Reply in JSON.", "placeholder {schema}"),
        ("output_feedback", "Wrong: {schema}", "placeholder {issues}"),
        ("unavailable_tool_result", "Not available.", "placeholder {available}"),
        ("unavailable_tool_result", "{available} only", "placeholder {tool}"),
        ("interrupted_before_start", None, "must be a string"),
        ("summary_instruction", "bad \udcff", "not valid Unicode"),
        ("context_limit_message", "too long", "a function of the ContextUsage"),
    ],
)
def test_s35_a_bad_text_is_refused_when_built_naming_field_and_placeholder(
    field: str, value: Any, fix: str
) -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.ModelTexts(**{field: value})
    assert f"ModelTexts.{field}" in caught.value.message
    assert fix in caught.value.message


def test_s35_braces_that_are_not_placeholders_are_text() -> None:
    texts = robota.ModelTexts(output_instruction='Like {"a": 1}, matching {schema}')
    assert texts.output_instruction.startswith('Like {"a": 1}')


# --------------------------------------------------------------------------- deprecated keywords

LEGACY = [
    ("summary_instruction", "S"),
    ("summary_fallback", "F"),
    ("unavailable_tools_instruction", "U {calls}"),
    ("context_limit_message", lambda usage: "C"),
    ("interrupted_annotation", "I"),
    ("output_instruction", "O {schema}"),
    ("output_feedback", "B {issues}"),
]


@pytest.mark.parametrize(("keyword", "value"), LEGACY, ids=[k for k, _ in LEGACY])
def test_s35_each_old_keyword_still_works_with_a_deprecation_warning(
    keyword: str, value: object
) -> None:
    with pytest.warns(DeprecationWarning, match=rf"Agent\({keyword}=\.\.\.\).*ModelTexts") as seen:
        agent = robota.Agent(provider=ScriptedProvider([]), model="m", **{keyword: value})
    assert seen[0].filename == __file__  # points at the caller's line
    assert getattr(agent._texts, keyword) == value
    assert agent._texts == robota.ModelTexts(**{keyword: value})


async def test_s35_an_old_keyword_still_reaches_the_model() -> None:
    provider = ScriptedProvider([[("probe", {})], ""])
    with pytest.warns(DeprecationWarning, match="summary_instruction"):
        agent = robota.Agent(
            provider=provider, model="m", tools=[probe], max_rounds=1, summary_instruction="OLD"
        )
    await agent.run("go")
    assert provider.requests[-1].messages[-1].content == "OLD"


def test_s35_an_old_keyword_keeps_what_it_accepted_during_its_deprecation() -> None:
    # A deprecated keyword is deprecated, not changed: texts it took before ModelTexts existed
    # (no placeholder, literal braces) still work for the one release it stays.
    with pytest.warns(DeprecationWarning, match="output_instruction"):
        agent = robota.Agent(provider=ScriptedProvider([]), model="m", output_instruction="JSON")
    assert agent._texts.output_instruction == "JSON"
    with pytest.warns(DeprecationWarning, match="summary_fallback"):
        agent = robota.Agent(provider=ScriptedProvider([]), model="m", summary_fallback="{x}")
    assert agent._texts.summary_fallback == "{x}"
    with (
        pytest.warns(DeprecationWarning, match="summary_fallback"),
        pytest.raises(robota.ConfigurationError) as caught,
    ):
        robota.Agent(provider=ScriptedProvider([]), model="m", summary_fallback=5)
    assert caught.value.message.startswith("summary_fallback must be a string")
    # The new object itself checks its templates.
    with pytest.raises(robota.ConfigurationError, match="must contain the placeholder"):
        robota.ModelTexts(output_instruction="JSON")


def test_s35_texts_and_an_old_keyword_together_are_refused() -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent(
            provider=ScriptedProvider([]),
            model="m",
            texts=robota.ModelTexts(),
            summary_fallback="F",
        )
    assert "either as texts= or as summary_fallback=, not both" in caught.value.message


def test_s35_no_warning_without_old_keywords() -> None:
    # filterwarnings = error: any warning here would fail the test.
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", texts=robota.ModelTexts())
    assert agent._texts == robota.ModelTexts()


async def test_s35_a_journaled_run_carries_the_texts() -> None:
    texts = robota.ModelTexts(
        unavailable_tool_result="{tool}/{available}", summary_instruction="WRAP UP"
    )
    provider = ScriptedProvider([[("nope", {})], "summary"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[probe],
        max_rounds=1,
        journal=robota.testing.InMemoryJournal(),
        texts=texts,
    )
    await agent.run("go")
    last = provider.requests[-1]
    assert _tool_results(last) == ["'nope'/probe"]
    assert last.messages[-1].content == "WRAP UP"


async def test_s35_tool_search_parameter_descriptions_reach_the_model() -> None:
    default = ScriptedProvider(["done"])
    await _deferred_agent(default).run("go")
    search = next(spec for spec in default.requests[0].tools if spec.name == "tool_search")
    properties = search.parameters["properties"]
    # Defaults: the texts tool_search had before the seam.
    assert properties["query"]["description"] == (
        "Keywords describing the tool needed, or select:<names>."
    )
    assert properties["max_results"]["description"] == "How many tools to load (default 5)."
    texts = robota.ModelTexts(
        tool_search_query_description="WORDS",
        tool_search_max_results_description="AT MOST ({default} if unsaid)",
    )
    provider = ScriptedProvider(["done"])
    await _deferred_agent(provider, texts=texts).run("go")
    search = next(spec for spec in provider.requests[0].tools if spec.name == "tool_search")
    properties = search.parameters["properties"]
    assert properties["query"]["description"] == "WORDS"
    assert properties["max_results"]["description"] == "AT MOST (5 if unsaid)"


def test_s35_host_texts_default_to_what_robota_temporal_wrote_before_the_seam() -> None:
    texts = robota.ModelTexts()
    assert texts.render("oversized_result", tool="'t'", size="9", limit="4") == (
        "Tool 't' returned 9 bytes, more than the 4 a Temporal payload carries inline, and no "
        "execution journal is configured to hold it; the result was not kept. Ask for less (a "
        "range, a summary)."
    )
    assert texts.render("setup_failed_error", error="boom") == "the tool activity failed: boom"
    assert texts.settled_failed_result == "The call's effect was settled as failed."
    with pytest.raises(ValueError, match="no template field 'context_limit_message'"):
        texts.render("context_limit_message")
    with pytest.raises(robota.ConfigurationError, match=r"\{nope\}"):
        robota.ModelTexts(oversized_result="{nope}")


def test_agent_texts_is_what_it_was_given() -> None:
    texts = robota.ModelTexts(summary_fallback="x")
    agent = robota.Agent(provider=ScriptedProvider([]), model="m", texts=texts)
    assert agent.texts is texts
    assert robota.Agent(provider=ScriptedProvider([]), model="m").texts == robota.ModelTexts()
