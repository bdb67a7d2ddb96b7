"""S41 tools: @tool, Tool, the registry and the execution service (S36, S37)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import pydantic
import pytest

import robota
from robota import Tool, ToolContext, ToolResult, tool
from robota.testing import ScriptedProvider


def test_tool_schema_comes_from_type_hints_and_docstring() -> None:
    @tool
    def search(query: str, limit: int = 5, ctx: ToolContext | None = None) -> str:
        """Search the catalogue.

        Longer text that is not part of the summary.

        Args:
            query: What to look for.
            limit: How many results
                to return at most.
        """
        return query

    assert search.name == "search"
    assert search.description == "Search the catalogue."
    assert search.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "default": 5,
                "description": "How many results to return at most.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_tool_context_parameter_is_injected_not_exposed() -> None:
    @tool
    async def whoami(ctx: ToolContext) -> str:
        """Report the call id."""
        return ctx.call_id

    assert whoami.parameters["properties"] == {}


def test_tool_options_name_description_risk_and_argument() -> None:
    @tool(
        name="read",
        description="Read a file.",
        risk="inspect",
        argument=robota.PermissionArgument("path", "path"),
    )
    def read_file(path: str) -> str:
        return path

    assert (read_file.name, read_file.description, read_file.risk) == (
        "read",
        "Read a file.",
        "inspect",
    )
    assert read_file.permission_argument == robota.PermissionArgument("path", "path")
    assert read_file("x") == "x"  # still callable directly


def test_sphinx_style_parameter_docs() -> None:
    @tool
    def f(a: int) -> int:
        """Do f.

        :param a: The a value.
        """
        return a

    assert f.parameters["properties"]["a"]["description"] == "The a value."


def test_nested_models_literals_and_optionals_are_inlined() -> None:
    class Address(pydantic.BaseModel):
        city: str

    @tool
    def ship(to: Address, speed: Literal["slow", "fast"], note: str | None = None) -> str:
        """Ship a parcel."""
        return to.city

    props = ship.parameters["properties"]
    assert props["to"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": True,  # pydantic's default extra="ignore" accepts extra keys
    }
    assert props["speed"] == {"type": "string", "enum": ["slow", "fast"]}
    assert props["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert "$defs" not in json.dumps(ship.parameters)


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ("def f(x): return x", "no type annotation"),
        ("def f(*args: int): return 0", "args"),
        ("def f(x: int, /): return x", "positional-only"),
        ("def f(x: tuple[int, str]): return x", "tuple"),
    ],
)
def test_tool_definitions_that_cannot_be_described_are_refused(
    definition: str, message: str
) -> None:
    namespace: dict[str, Any] = {}
    exec(definition, namespace)  # noqa: S102 - building test functions from source
    with pytest.raises(robota.ConfigurationError, match=message):
        tool(namespace["f"])


def test_recursive_types_are_refused() -> None:
    class Node(pydantic.BaseModel):
        children: list[Node]

    Node.model_rebuild()

    def walk(root: Node) -> int:
        return 0

    with pytest.raises(robota.ConfigurationError, match="refers to itself"):
        tool(walk)


def test_function_tool_validates_with_the_one_validator_then_converts() -> None:
    class Point(pydantic.BaseModel):
        x: int

    @tool
    def move(point: Point) -> int:
        """Move."""
        return point.x

    converted = move.validate_arguments({"point": {"x": 3}})
    assert isinstance(converted["point"], Point)
    with pytest.raises(robota.SchemaValidationError) as info:
        move.validate_arguments({"point": {"x": "3"}})
    assert info.value.issues == ("$.point.x: expected integer, got string",)
    with pytest.raises(robota.SchemaValidationError, match="not allowed"):
        move.validate_arguments({"point": {"x": 1}, "extra": 1})


class Upper(Tool):
    name = "upper"
    description = "Upper-case a text."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        return str(args["text"]).upper()


def test_tool_subclass_with_class_attributes() -> None:
    upper = Upper()
    assert upper.spec().name == "upper"
    with pytest.raises(robota.SchemaValidationError, match="required"):
        upper.validate_arguments({})


@pytest.mark.parametrize("name", ["", "has space", "x" * 200, "tab\tname"])
def test_bad_tool_names_are_refused(name: str) -> None:
    with pytest.raises(robota.ConfigurationError, match="tool name"):
        Upper(name=name)


def test_non_object_root_schema_is_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="object"):
        Upper(parameters={"type": "string"})


def test_bad_risk_and_permission_kind_are_refused() -> None:
    with pytest.raises(robota.ConfigurationError, match="risk"):
        Upper(risk="destroy")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="kind"):
        robota.PermissionArgument("path", "file")  # type: ignore[arg-type]


def test_registry_refuses_duplicate_names_and_lists_specs() -> None:
    registry = robota.ToolRegistry([Upper()])
    with pytest.raises(robota.ConfigurationError, match="already registered"):
        registry.register(Upper())
    assert registry.names() == ("upper",)
    assert [s.name for s in registry.specs()] == ["upper"]
    assert "upper" in registry
    assert registry.unregister("upper") is not None
    assert registry.specs() == ()


def test_to_tool_result_normalises_outputs() -> None:
    class M(pydantic.BaseModel):
        a: int

    assert robota.ToolResult("x") == robota.core.tools.to_tool_result("x")
    assert robota.core.tools.to_tool_result(None).content == ""
    assert robota.core.tools.to_tool_result({"a": [1, "é"]}).content == '{"a": [1, "é"]}'
    assert robota.core.tools.to_tool_result(M(a=1)).content == '{"a":1}'
    assert robota.core.tools.to_tool_result({1, 2}).content in ("{1, 2}", "[1, 2]", '"{1, 2}"')


async def test_sync_tools_run_in_a_worker_thread_by_default() -> None:
    seen: list[str] = []

    @tool
    def where() -> str:
        """Where am I."""
        seen.append(threading.current_thread().name)
        return "ok"

    @tool(thread=False)
    def inline() -> str:
        """Inline."""
        seen.append(threading.current_thread().name)
        return "ok"

    provider = ScriptedProvider([[("where", {}), ("inline", {})], "done"])
    await robota.Agent(provider=provider, model="m", tools=[where, inline]).run("go")
    assert seen[1] == threading.current_thread().name
    assert seen[0] != threading.current_thread().name


async def test_s36_each_tool_body_gets_its_own_minted_id_not_the_providers() -> None:
    ids: list[tuple[str, str | None]] = []

    @tool
    async def probe(ctx: ToolContext) -> str:
        """Probe."""
        ids.append((ctx.call_id, ctx.provider_call_id))
        return "ok"

    # The scripted provider reuses "call_0" in every turn, as some vendors do.
    provider = ScriptedProvider([[("probe", {})], [("probe", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[probe])
    await agent.run("go")
    assert [p for _, p in ids] == ["call_0", "call_0"]
    minted = [c for c, _ in ids]
    assert len(set(minted)) == 2
    assert all(c.startswith("tool_") for c in minted)


async def test_tool_calls_in_one_response_run_concurrently_up_to_the_limit() -> None:
    running = 0
    peak = 0
    gate = asyncio.Event()

    @tool
    async def slow(n: int) -> int:
        """Slow."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running >= 2:
            gate.set()
        await asyncio.wait_for(gate.wait(), 5)
        running -= 1
        return n

    calls = [("slow", {"n": i}) for i in range(5)]
    provider = ScriptedProvider([calls, "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[slow], tool_concurrency=2)
    result = await agent.run("go")
    assert peak == 2
    assert result.tool_calls_executed == 5


async def test_results_are_appended_in_call_order_whatever_order_they_finish() -> None:
    @tool
    async def wait(delay: float, label: str) -> str:
        """Wait then answer."""
        await asyncio.sleep(delay)
        return label

    provider = ScriptedProvider(
        [
            [
                ("wait", {"delay": 0.05, "label": "first"}),
                ("wait", {"delay": 0, "label": "second"}),
            ],
            "done",
        ]
    )
    agent = robota.Agent(provider=provider, model="m", tools=[wait])
    await agent.run("go")
    results = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert results == ["first", "second"]


async def test_tool_failure_becomes_a_readable_error_result() -> None:
    @tool
    def broken() -> str:
        """Always fails."""
        raise ValueError("disk is on fire")

    provider = ScriptedProvider([[("broken", {})], "sorry"])
    agent = robota.Agent(provider=provider, model="m", tools=[broken])
    result = await agent.run("go")
    message = next(m for m in agent.history if isinstance(m, robota.ToolMessage))
    assert message.is_error
    assert "ValueError: disk is on fire" in message.content
    assert result.tool_calls_executed == 1


async def test_invalid_json_and_invalid_arguments_are_refused_before_the_body() -> None:
    ran: list[int] = []

    @tool
    def count(n: int) -> int:
        """Count."""
        ran.append(n)
        return n

    provider = ScriptedProvider([[("count", "{not json"), ("count", {"n": "x"})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[count])
    result = await agent.run("go")
    contents = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert "not valid JSON" in contents[0]
    assert "$.n: expected integer, got string" in contents[1]
    assert ran == []
    assert result.tool_calls_executed == 0
    # The model saw the problems in the next request.
    assert "expected integer" in provider.requests[1].messages[-1].content


async def test_s37_unregistered_tool_is_a_labelled_skip_naming_what_is_available() -> None:
    provider = ScriptedProvider([[("serach", {"q": "x"})], "ok"])
    recorder = robota.RecordingEventService()
    agent = robota.Agent(provider=provider, model="m", tools=[Upper()], event_service=recorder)
    result = await agent.run("go")
    message = next(m for m in agent.history if isinstance(m, robota.ToolMessage))
    assert message.is_error
    assert "'serach' is not available" in message.content
    assert "Available tools: upper" in message.content
    assert result.tool_calls_executed == 0
    skipped = [e for e in recorder.events if e.name == "tool.skipped"]
    assert skipped[0].data["requested_tool"] == "serach"
    assert skipped[0].data["available_tools"] == ["upper"]
    assert not any(e.name == "tool.started" for e in recorder.events)


async def test_tool_result_view_never_enters_history_or_model_context() -> None:
    @tool
    def chart() -> ToolResult:
        """Make a chart."""
        return ToolResult("3 bars", view={"svg": "<svg>secret display</svg>"})

    provider = ScriptedProvider([[("chart", {})], "done"])
    agent = robota.Agent(provider=provider, model="m", tools=[chart])
    views = [
        event.view
        async for event in agent.run_stream("go")
        if isinstance(event, robota.ToolCallFinished)
    ]
    assert views == [{"svg": "<svg>secret display</svg>"}]
    assert "secret display" not in repr(list(agent.history))
    assert "secret display" not in repr(provider.requests[1].messages)


class _Gate:
    def __init__(self, answer: robota.Admission) -> None:
        self.answer = answer
        self.admitted: list[robota.ToolInvocation] = []
        self.results: list[tuple[str, str]] = []

    async def admit(self, invocation: robota.ToolInvocation) -> robota.Admission:
        self.admitted.append(invocation)
        return self.answer

    async def settled(self, invocation: robota.ToolInvocation, result: ToolResult) -> None:
        self.results.append((invocation.tool.name, result.content))


async def test_admission_seam_refusal_stops_the_body_and_is_not_a_tool_span() -> None:
    ran: list[str] = []

    @tool
    def act(x: str) -> str:
        """Act."""
        ran.append(x)
        return x

    gate = _Gate(robota.Admission(False, "Denied by policy: act is not allowed here."))
    recorder = robota.RecordingEventService()
    provider = ScriptedProvider([[("act", {"x": "1"})], "ok"])
    agent = robota.Agent(
        provider=provider, model="m", tools=[act], tool_gate=gate, event_service=recorder
    )
    result = await agent.run("go")
    assert ran == []
    assert result.tool_calls_executed == 0
    message = next(m for m in agent.history if isinstance(m, robota.ToolMessage))
    assert message.content == "Denied by policy: act is not allowed here."
    assert "tool.refused" in recorder.names()
    assert "tool.started" not in recorder.names()
    assert gate.admitted[0].arguments == {"x": "1"}
    assert gate.admitted[0].call is not None


async def test_admission_seam_replacement_arguments_are_validated_again() -> None:
    @tool
    def act(x: str) -> str:
        """Act."""
        return f"ran with {x}"

    good = _Gate(robota.Admission(True, arguments={"x": "rewritten"}))
    provider = ScriptedProvider([[("act", {"x": "1"})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[act], tool_gate=good)
    await agent.run("go")
    assert good.results == [("act", "ran with rewritten")]

    bad = _Gate(robota.Admission(True, arguments={"x": 5}))
    provider = ScriptedProvider([[("act", {"x": "1"})], "ok"])
    agent = robota.Agent(provider=provider, model="m", tools=[act], tool_gate=bad)
    result = await agent.run("go")
    assert result.tool_calls_executed == 0
    message = next(m for m in agent.history if isinstance(m, robota.ToolMessage))
    assert "expected string" in message.content


def test_a_plain_signature_converts_exactly_as_pydantic_would() -> None:
    # Issue 16: plain str/int/float/bool parameters skip the pydantic copy; the values the body
    # gets must be the ones the pydantic path gives.
    def plain(n: int, f: float, flag: bool, s: str = "d", m: int = 7) -> str:
        return ""

    def typed(
        n: int, f: float, flag: bool, s: str = "d", m: int = 7, extra: list[int] | None = None
    ) -> str:
        return ""

    fast, slow = robota.tool(plain), robota.tool(typed)
    for arguments in (
        {"n": 3.0, "f": 2, "flag": True},
        {"n": 1, "f": 0.5, "flag": False, "s": "x", "m": 2},
    ):
        got = dict(fast.validate_arguments(arguments))
        want = {k: v for k, v in slow.validate_arguments(arguments).items() if k != "extra"}
        assert got == want
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    with pytest.raises(robota.SchemaValidationError):
        fast.validate_arguments({"n": True, "f": 1.0, "flag": True})  # a bool is no integer
    with pytest.raises(robota.SchemaValidationError):
        fast.validate_arguments({"n": 1, "f": 1.0})  # flag is required


@pytest.mark.parametrize(
    "arguments",
    [
        {"n": 1, "f": 2, "flag": True},
        {"n": 1, "f": 2.5, "flag": False, "s": "x", "m": 9},
        {"n": 3.0, "f": 1, "flag": True},
        {"n": True, "f": 1.0, "flag": True},
        {"n": 1, "f": float("nan"), "flag": True},
        {"n": 1, "f": 1.0},
        {"n": 1, "f": 1.0, "flag": True, "other": 1},
        {"n": "1", "f": 1.0, "flag": True},
        {"n": 1, "f": "1.0", "flag": 1},
    ],
)
def test_the_plain_fast_path_agrees_with_the_full_path(arguments: dict[str, Any]) -> None:
    # Issue 16: the fast path accepts only what the full validator accepts, with the same values.
    def plain(n: int, f: float, flag: bool, s: str = "d", m: int = 7) -> str:
        return ""

    fast = robota.tool(plain)
    full = robota.tool(plain)
    full._plain = None
    try:
        want: object = dict(full.validate_arguments(arguments))
    except robota.SchemaValidationError as exc:
        want = exc.issues
    try:
        got: object = dict(fast.validate_arguments(arguments))
    except robota.SchemaValidationError as exc:
        got = exc.issues
    assert got == want
    if isinstance(want, dict):
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]  # type: ignore[union-attr]


def test_a_float_parameter_given_an_int_beyond_a_float_is_refused_not_crashed() -> None:
    # Regression (review of issue 16): float(10**400) raised OverflowError out of the run.
    def f(x: float) -> float:
        return x

    with pytest.raises(robota.SchemaValidationError):
        robota.tool(f).validate_arguments({"x": 10**400})


def test_plain_arguments_off_the_fast_path_get_pydantics_values() -> None:
    # Regression (review of issue 16): the slow path skipped pydantic for plain signatures.
    class Text(str):
        pass

    def f(s: str, n: int) -> str:
        return s

    values = robota.tool(f).validate_arguments({"s": Text("x"), "n": 1})
    assert type(values["s"]) is str  # normalised, as pydantic does
    with pytest.raises(robota.SchemaValidationError):
        robota.tool(f).validate_arguments({"s": "x", "n": 1e20})  # pydantic refuses it
