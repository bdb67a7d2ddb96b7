"""S18 structured output (and the S16 rule that tool input and output validation agree)."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota.core.providers import ModelCapabilities, ProviderCapabilities
from robota.testing import ScriptedProvider


class City(pydantic.BaseModel):
    name: str
    population: int = pydantic.Field(ge=0)


def _provider(turns: list[Any], transport: Any = "unset", **kwargs: Any) -> ScriptedProvider:
    table = None
    if transport != "unset":
        table = ProviderCapabilities(default_model=ModelCapabilities(structured_output=transport))
    return ScriptedProvider(turns, capabilities=table, **kwargs)


async def test_s18_returns_a_validated_typed_object() -> None:
    agent = robota.Agent(
        provider=_provider(['{"name": "Oslo", "population": 700000}'], "json_schema"), model="m"
    )
    result = await agent.run("Largest city in Norway?", output=City)
    assert result.output == City(name="Oslo", population=700_000)
    assert result.text == '{"name": "Oslo", "population": 700000}'
    assert result.attempts == 1


async def test_s18_native_schema_parameter_is_used_when_the_table_says_so() -> None:
    provider = _provider(['{"name": "A", "population": 1}'], "json_schema")
    await robota.Agent(provider=provider, model="m").run("x", output=City)
    request = provider.requests[0]
    assert request.response_format is not None
    assert request.response_format.type == "json_schema"
    assert request.response_format.schema == robota.schema_from_type(City)
    assert "JSON Schema" not in request.messages[0].content  # no instruction needed


async def test_s18_json_mode_adds_the_schema_as_an_instruction_on_the_first_attempt_only() -> None:
    provider = _provider(["not json", '{"name": "A", "population": 1}'], "json_mode")
    agent = robota.Agent(provider=provider, model="m", system_prompt="You are helpful.")
    result = await agent.run("x", output=City)
    first, retry = provider.requests
    assert first.response_format == robota.ResponseFormat("json_object")
    assert first.messages[0].content.startswith("You are helpful.\n\nReply with only a JSON value")
    assert '"population"' in first.messages[0].content
    assert retry.messages[0].content == "You are helpful."  # the retry carries the schema itself
    assert agent.history[0].content == "You are helpful."  # the instruction never enters history
    assert result.attempts == 2


async def test_s18_no_transport_states_the_schema_as_an_instruction() -> None:
    provider = _provider(['{"name": "A", "population": 1}'], "none")
    await robota.Agent(provider=provider, model="m").run("x", output=City)
    request = provider.requests[0]
    assert request.response_format is None
    assert isinstance(request.messages[0], robota.SystemMessage)
    assert "Reply with only a JSON value" in request.messages[0].content


async def test_s18_a_provider_without_a_capability_table_is_sent_the_request_unchanged() -> None:
    provider = _provider(['{"name": "A", "population": 1}'])
    await robota.Agent(provider=provider, model="m", system_prompt="sys").run("x", output=City)
    request = provider.requests[0]
    assert request.response_format is None
    assert [m.content for m in request.messages] == ["sys", "x"]


async def test_s18_custom_endpoint_does_not_rely_on_vendor_default_claims() -> None:
    class Gateway(ScriptedProvider):
        def endpoint_provenance(self) -> Any:
            return "custom"

    table = ProviderCapabilities(
        default_model=ModelCapabilities(structured_output="json_schema"),
        models={"verified": ModelCapabilities(structured_output="json_schema")},
    )
    gateway = Gateway(['{"name": "A", "population": 1}'] * 2, capabilities=table)
    agent = robota.Agent(provider=gateway, model="other")
    await agent.run("x", output=City)
    assert gateway.requests[0].response_format is None  # the default claim is not relied on
    agent.set_model("verified")
    await agent.run("y", output=City)
    assert gateway.requests[1].response_format is not None  # the model's own claim is


async def test_s18_every_attempt_is_committed_and_the_retry_carries_issues_and_schema() -> None:
    provider = _provider(
        ['{"name": "A"}', '{"name": "A", "population": -5}', '{"name": "A", "population": 5}'],
        "none",
    )
    agent = robota.Agent(provider=provider, model="m")
    result = await agent.run("x", output=City)
    assert result.output == City(name="A", population=5)
    assert result.attempts == 3
    kinds = [m.kind for m in agent.history]
    assert kinds == ["user", "assistant", "user", "assistant", "user", "assistant"]
    feedback = agent.history[2].content
    assert "$.population: required property is missing" in feedback
    assert '"population"' in feedback  # the schema
    assert "$.population: must be >= 0, got -5" in agent.history[4].content


async def test_s18_exhausted_retries_raise_with_issues_and_attempts() -> None:
    provider = _provider(["nope", "still nope", "never"], "none")
    agent = robota.Agent(provider=provider, model="m")
    with pytest.raises(robota.StructuredOutputError) as info:
        await agent.run("x", output=City, output_retries=1)
    assert info.value.attempts == 2
    assert info.value.issues[0].startswith("$: the reply is not valid JSON")
    assert len(provider.requests) == 2


async def test_s18_tools_may_run_within_a_structured_turn() -> None:
    @robota.tool
    def census(city: str) -> int:
        """Population of a city."""
        return 700_000

    provider = _provider(
        [[("census", {"city": "Oslo"})], '{"name": "Oslo", "population": 700000}'], "json_schema"
    )
    agent = robota.Agent(provider=provider, model="m", tools=[census])
    result = await agent.run("x", output=City)
    assert result.output == City(name="Oslo", population=700_000)
    assert result.tool_calls_executed == 1


async def test_s18_streamed_run_delivers_the_object_as_the_result_not_a_delta() -> None:
    provider = _provider(['{"name": "B", "population": 2}'], "json_schema", chunk_delay=0.001)
    agent = robota.Agent(provider=provider, model="m")
    stream = agent.run_stream("x", output=City)
    events = [event async for event in stream]
    deltas = [e.text for e in events if isinstance(e, robota.TextDelta)]
    assert "".join(deltas) == '{"name": "B", "population": 2}'  # deltas are text, as streamed
    assert not any(isinstance(getattr(e, "message", None), City) for e in events)
    result = await stream.result()
    assert result.output == City(name="B", population=2)


async def test_s18_a_json_schema_dict_gives_the_validated_value() -> None:
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    }
    provider = _provider(['Sure! ```json\n{"ok": true}\n```'], "none")
    result = await robota.Agent(provider=provider, model="m").run("x", output=schema)
    assert result.output == {"ok": True}


async def test_s18_an_output_schema_outside_the_subset_is_refused() -> None:
    agent = robota.Agent(provider=_provider([]), model="m")
    with pytest.raises(robota.ConfigurationError, match="subset"):
        await agent.run("x", output={"type": "object", "properties": {"a": {}}})
    with pytest.raises(robota.SchemaConversionError):
        await agent.run("x", output=tuple[int, str])


async def test_s18_interrupted_structured_run_has_no_object() -> None:
    provider = _provider(['{"name": "A", "population": 1}'], "none", chunk_delay=0.05)
    agent = robota.Agent(provider=provider, model="m")
    controller = robota.AbortController()
    stream = agent.run_stream("x", output=City, signal=controller.signal)
    async for event in stream:
        if isinstance(event, robota.TextDelta):
            controller.abort()
    result = await stream.result()
    assert result.status == "interrupted"
    assert result.output is None


async def test_s18_output_cannot_be_combined_with_tool_only_completion() -> None:
    agent = robota.Agent(provider=_provider([]), model="m", allow_tool_only_completion=True)
    with pytest.raises(robota.ConfigurationError, match="tool-only"):
        await agent.run("x", output=City)


async def test_unknown_run_options_are_a_type_error() -> None:
    agent = robota.Agent(provider=_provider([]), model="m")
    with pytest.raises(TypeError, match="max_round"):
        await agent.run("x", max_round=3)  # type: ignore[call-overload]


_object_schema = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 5},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "level": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
    },
    "required": ["name"],
    "additionalProperties": False,
}
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(alphabet="ab", max_size=7)),
    lambda c: st.one_of(
        st.lists(c, max_size=3),
        st.dictionaries(st.sampled_from(["name", "tags", "level", "x"]), c, max_size=4),
    ),
    max_leaves=8,
)


class _SchemaTool(robota.Tool):
    name = "shaped"
    description = "A tool with the shared schema."
    parameters = _object_schema

    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        return "ok"


@settings(max_examples=300, deadline=None)
@given(_values)
def test_s16_tool_input_and_output_validation_never_disagree(value: Any) -> None:
    tool = _SchemaTool()
    try:
        tool.validate_arguments(value)
        tool_ok = True
    except robota.SchemaValidationError:
        tool_ok = False
    spec = robota.core.execution._structured.OutputSpec(_object_schema)
    _, issues = spec.parse(json.dumps(value))
    assert tool_ok == (issues == [])
