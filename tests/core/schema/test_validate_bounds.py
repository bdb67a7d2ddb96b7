"""S16 the one traversal never raises on a value, and owns every depth and size bound.

Whatever a model sends — a 401-digit integer, NaN, a 5,000-deep array, a cyclic list — the
validator answers with issues about the value; whatever a schema's author writes — 600 levels of
nesting, an ``anyOf`` that contains itself, ``None`` — it answers with a schema error
(``ConfigurationError``, ``code="schema_definition"``). Nothing else escapes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import robota
from robota import MAX_VALIDATION_DEPTH, MAX_VALIDATION_NODES, ConfigurationError
from robota import validate_against_json_schema as validate
from robota.core.schema._subset import MAX_SCHEMA_DEPTH
from robota.core.schema._validate import SCHEMA_ERROR_CODE
from robota.testing import ScriptedProvider


def schema_error(schema: Any, value: object) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as caught:
        validate(schema, value)
    assert caught.value.code == SCHEMA_ERROR_CODE
    return caught.value


# --------------------------------------------------------------------------- numbers (finding 2)

HUGE = 10**400


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer", "multipleOf": 0.5}, HUGE),
        ({"type": "integer", "multipleOf": HUGE}, 1.0),
        ({"type": "number", "multipleOf": 0.1}, HUGE + 1),
        ({"type": "number", "multipleOf": 3}, 1e308),
        ({"type": "number", "minimum": 0.5, "maximum": 1e308}, HUGE),
        ({"type": "number", "exclusiveMinimum": HUGE}, 1e308),
        ({"anyOf": [{"type": "number"}], "multipleOf": 0.5}, math.inf),
        ({"anyOf": [{"type": "number"}], "multipleOf": 0.5}, math.nan),
        ({"anyOf": [{"type": "number"}], "minimum": 0}, -math.inf),
        ({"anyOf": [{"type": "boolean"}], "multipleOf": 2, "minimum": 5}, True),
    ],
)
def test_s16_model_supplied_numbers_never_raise(schema: dict[str, Any], value: object) -> None:
    assert isinstance(validate(schema, value), list)


def test_s16_multiple_of_is_exact_for_any_finite_number() -> None:
    assert validate({"type": "integer", "multipleOf": 0.5}, HUGE) == []  # every integer is
    assert validate({"type": "integer", "multipleOf": 0.75}, 3 * HUGE) == []
    assert validate({"type": "integer", "multipleOf": 0.75}, HUGE) == [
        "$: must be a multiple of 0.75, got a 401-digit integer"
    ]
    assert validate({"type": "integer", "multipleOf": HUGE}, 1.0) == [
        "$: must be a multiple of a 401-digit integer, got 1.0"
    ]
    assert validate({"type": "number", "multipleOf": 2}, 1e308) == []  # 1e308 is even
    assert validate({"type": "number", "multipleOf": 0.1}, 0.3) != []  # binary 0.3 is not 3 x 0.1
    assert validate({"type": "number", "multipleOf": 0.5}, -2.5) == []
    assert validate({"type": "number", "multipleOf": 1}, 5e-324) != []


def test_s16_non_finite_numbers_are_a_value_issue() -> None:
    # Before: "expected number, got number", and the parent's number keywords then raised.
    assert validate({"type": "number"}, math.inf) == [
        "$: expected number, got inf (not a finite number)"
    ]
    assert validate({"type": "integer"}, math.nan) == [
        "$: expected integer, got nan (not a finite number)"
    ]
    schema = {"anyOf": [{"type": "number"}], "multipleOf": 0.5, "maximum": 1}
    assert validate(schema, math.inf) == ["$: expected number, got inf (not a finite number)"]


def test_s16_number_keywords_apply_to_numbers_only() -> None:
    schema = {"anyOf": [{"type": "boolean"}, {"type": "string"}], "minimum": 5, "multipleOf": 2}
    assert validate(schema, True) == []
    assert validate(schema, "x") == []


def test_s16_large_numbers_in_messages_are_bounded() -> None:
    issues = validate({"type": "number", "maximum": 1}, HUGE)
    assert issues == ["$: must be <= 1, got a 401-digit integer"]
    # An integer past Python's int-to-str limit (4,300 digits) cannot even be printed.
    issues = validate({"type": "integer", "minimum": 0}, -(10**5000))
    assert issues == ["$: must be >= 0, got a negative 5001-digit integer"]


class Counter(robota.Tool):
    name = "count"
    description = "Count."

    def __init__(self, parameters: dict[str, Any]) -> None:
        super().__init__(parameters=parameters)
        self.ran = 0

    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        self.ran += 1
        return "counted"


async def test_s16_a_401_digit_integer_from_the_model_is_a_value_issue_end_to_end() -> None:
    tool = Counter(
        {
            "type": "object",
            "properties": {"n": {"type": "integer", "multipleOf": 0.75}},
            "required": ["n"],
        }
    )
    raw = '{"n": 1' + "0" * 400 + "}"  # 10**400: not a multiple of 3/4
    provider = ScriptedProvider([[("count", raw)], "answered"])
    result = await robota.Agent(provider=provider, model="m", tools=[tool]).run("go")
    assert result.output == "answered"
    assert tool.ran == 0
    answer = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert "must be a multiple of 0.75, got a 401-digit integer" in answer.content
    assert "Fix the arguments and call the tool again" in answer.content


# --------------------------------------------------------------------- uniqueItems (finding 3)


def test_s16_unique_items_is_bounded_by_the_traversal_depth() -> None:
    # The review's reproduction: one item has nothing to be a duplicate of, so it is not compared.
    single = json.loads("[" + "[" * 600 + "]" * 600 + "]")
    assert validate({"type": "array", "uniqueItems": True}, single) == []
    deep = json.loads("[" + "[" * 600 + "]" * 600 + ", 1]")
    issues = validate({"type": "array", "uniqueItems": True}, deep)
    assert len(issues) == 1
    assert "nested too deeply" in issues[0]
    shallow = [[[1]], [[1]]]
    assert validate({"type": "array", "uniqueItems": True}, shallow) == [
        "$[1]: duplicates an earlier item"
    ]


def test_s16_unique_items_on_a_cyclic_value_is_a_value_issue() -> None:
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    issues = validate({"type": "array", "uniqueItems": True}, [cyclic, 2])
    assert len(issues) == 1
    assert "nested too deeply" in issues[0]


def test_s16_unique_items_counts_toward_the_size_bound() -> None:
    value = [[i] for i in range(MAX_VALIDATION_NODES)]
    issues = validate({"type": "array", "uniqueItems": True}, value)
    assert len(issues) == 1
    assert "too large" in issues[0]


def test_s16_values_rendered_into_messages_are_bounded() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    issues = validate({"type": "array", "enum": [[1]]}, deep)
    assert len(issues) == 1
    assert len(issues[0]) < 300
    big = {"k" * 10_000: "v" * 10_000}
    (issue,) = validate({"type": "object", "enum": [{}]}, big)
    assert len(issue) < 300
    (issue,) = validate({"type": "object", "properties": {}}, big)
    assert len(issue) < 300
    options = [f"option {i}" for i in range(1000)]
    (issue,) = validate({"type": "string", "enum": options}, "x" * 100_000)
    assert len(issue) < 600


# ------------------------------------------------------------------ deep schemas (finding 5)


def wrapped(times: int, how: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(times):
        if how == "items":
            schema = {"type": "array", "items": schema}
        elif how == "anyOf":
            schema = {"anyOf": [schema]}
        elif how == "properties":
            schema = {"type": "object", "properties": {"a": schema}}
        else:
            schema = {"type": "object", "additionalProperties": schema}
    return schema


@pytest.mark.parametrize("how", ["items", "anyOf", "properties", "additionalProperties"])
@pytest.mark.parametrize("times", [496, 5000])
def test_s16_a_schema_nested_past_the_depth_bound_is_a_schema_error(how: str, times: int) -> None:
    schema = wrapped(times, how)
    error = schema_error(schema, [])
    assert any(f"more than {MAX_SCHEMA_DEPTH} levels" in issue for issue in error.context["issues"])
    (issue,) = robota.check_parameter_schema(schema, object_root=False)
    assert f"more than {MAX_SCHEMA_DEPTH} levels" in issue


@pytest.mark.parametrize("how", ["items", "anyOf", "properties", "additionalProperties"])
def test_s16_a_schema_at_the_depth_bound_is_usable(how: str) -> None:
    schema = wrapped(MAX_SCHEMA_DEPTH, how)
    assert robota.check_parameter_schema(schema, object_root=False) == []
    assert isinstance(validate(schema, []), list)
    schema_error(wrapped(MAX_SCHEMA_DEPTH + 1, how), [])


def test_s16_a_shared_node_counts_its_depth_on_every_path() -> None:
    # The same node object reached at two depths: the deeper path decides.
    chain = wrapped(40, "items")  # 40 levels below its top node
    schema = {"type": "object", "properties": {"near": chain, "far": {"anyOf": [chain]}}}
    assert robota.check_parameter_schema(schema) == []  # reached at depth 1 and 2: fine
    deeper: dict[str, Any] = chain
    for _ in range(30):
        deeper = {"type": "array", "items": deeper}
    error = schema_error({"type": "object", "properties": {"a": chain, "b": deeper}}, {})
    assert any(f"more than {MAX_SCHEMA_DEPTH} levels" in i for i in error.context["issues"])


def test_s16_a_schema_with_shared_nodes_is_checked_in_linear_time() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(40):  # 2**40 paths, 41 nodes
        node = {"anyOf": [node, node]}
    assert robota.check_parameter_schema(node, object_root=False) == []
    assert validate(node, "x") == []
    # A value no branch accepts would be tried along every path: the size bound stops it.
    (issue,) = validate(node, 1)
    assert "too large" in issue


def test_s16_the_schema_depth_bound_is_within_the_validation_depth_bound() -> None:
    # So a sound schema that does not recurse never meets the value bound at all.
    assert MAX_SCHEMA_DEPTH <= MAX_VALIDATION_DEPTH


def test_s16_a_keyword_changed_to_a_wrong_value_after_use_is_still_a_schema_error() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "string", "minLength": 1}},
    }
    assert validate(schema, {"a": "x"}) == []  # judged sound, remembered by identity
    schema["properties"]["a"]["minLength"] = "3"
    error = schema_error(schema, {"a": "x"})
    assert "minLength must be a non-negative integer" in error.message
    patterned: dict[str, Any] = {"type": "string", "pattern": "^x$"}
    assert validate(patterned, "x") == []
    patterned["pattern"] = "\\p{L}"
    assert "Unicode property escape" in schema_error(patterned, "x").message


async def test_s16_a_600_deep_tool_schema_is_a_tool_definition_refusal() -> None:
    tool = Counter({"type": "object", "properties": {"q": wrapped(600, "items")}})
    provider = ScriptedProvider([[("count", {"q": []})], "answered"])
    result = await robota.Agent(provider=provider, model="m", tools=[tool]).run("go")
    assert result.output == "answered"
    assert tool.ran == 0
    answer = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert "error in the tool's definition, not in your arguments" in answer.content


async def test_s16_a_600_deep_output_schema_is_refused_before_the_model_is_asked() -> None:
    provider = ScriptedProvider(['{"q": []}'])
    agent = robota.Agent(provider=provider, model="m")
    schema = {"type": "object", "properties": {"q": wrapped(600, "items")}}
    with pytest.raises(ConfigurationError, match=f"more than {MAX_SCHEMA_DEPTH} levels"):
        await agent.run("go", output=schema)
    assert provider.requests == []


# ------------------------------------------------------------- recursive schemas (finding 6)


def test_s16_an_any_of_cycle_is_a_schema_error() -> None:
    s: dict[str, Any] = {"anyOf": []}
    s["anyOf"].append(s)
    error = schema_error(s, 1)
    assert any("anyOf" in i and "cycle" in i for i in error.context["issues"])
    two: dict[str, Any] = {"anyOf": [{"type": "null"}]}
    two["anyOf"].append({"anyOf": [two]})
    schema_error(two, 1)


@pytest.mark.parametrize("through", ["items", "properties", "additionalProperties", "mixed"])
def test_s16_every_recursion_consumes_depth(through: str) -> None:
    node: dict[str, Any]
    if through == "items":
        node = {"type": "array"}
        node["items"] = node
    elif through == "properties":
        node = {"type": "object", "properties": {}}
        node["properties"]["a"] = node
    elif through == "additionalProperties":
        node = {"type": "object"}
        node["additionalProperties"] = node
    else:  # the value descends through items, the schema also through an anyOf each level
        node = {"type": "array"}
        node["items"] = {"anyOf": [{"type": "null"}, node]}
    value: Any = None
    for _ in range(5000):
        value = [value] if through in ("items", "mixed") else {"a": value}
    issues = validate(node, value)
    assert len(issues) == 1
    assert "nested too deeply" in issues[0]


def test_s16_recursive_schemas_are_judged_within_the_depth_bound() -> None:
    tree: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}}
    tree["properties"]["kids"] = {"type": "array", "items": {"anyOf": [{"type": "null"}, tree]}}
    value: Any = {"name": "leaf"}
    for _ in range(MAX_VALIDATION_DEPTH // 4 - 1):
        value = {"name": "n", "kids": [value, None]}
    assert validate(tree, value) == []


def test_s16_a_bound_reached_inside_an_any_of_branch_is_still_reported() -> None:
    # Before: the branch that exhausted the budget was set aside, the next branch returned
    # at once with no issues, and an oversized value was accepted.
    schema = {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}]}
    issues = validate(schema, list(range(MAX_VALIDATION_NODES + 10)))
    assert len(issues) == 1
    assert "too large" in issues[0]
    nested: dict[str, Any] = {"type": "array"}
    nested["items"] = {"anyOf": [nested, {"type": "string"}]}
    value: Any = 1
    for _ in range(200):
        value = [value]
    issues = validate(nested, value)
    assert len(issues) == 1
    assert "nested too deeply" in issues[0]


# ---------------------------------------------------------------- not a schema (finding 7)


@pytest.mark.parametrize("schema", [None, 1, "string", ["type"], True])
def test_s16_a_schema_that_is_not_a_mapping_is_a_schema_error(schema: object) -> None:
    error = schema_error(schema, 1)
    assert error.context["issues"] == (
        f"schema error at $: a schema node must be an object, got {type(schema).__name__}",
    )
