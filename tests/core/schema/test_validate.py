"""S16 validate_against_json_schema: the one traversal."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import (
    MAX_VALIDATION_DEPTH,
    MAX_VALIDATION_NODES,
    ConfigurationError,
    check_parameter_schema,
)
from robota import (
    validate_against_json_schema as validate,
)
from robota.core.schema import _validate
from robota.core.schema._validate import SCHEMA_ERROR_CODE
from robota.testing import ScriptedProvider


@pytest.mark.parametrize(
    ("type_name", "good", "bad"),
    [
        ("string", "x", 1),
        ("integer", 3, 3.5),
        ("integer", 3.0, "3"),
        ("number", 2.5, "2.5"),
        ("boolean", True, 1),
        ("null", None, 0),
        ("object", {}, []),
        ("array", [], {}),
    ],
)
def test_types(type_name: str, good: object, bad: object) -> None:
    assert validate({"type": type_name}, good) == []
    assert validate({"type": type_name}, bad) != []


def test_booleans_are_never_numbers_and_non_finite_floats_are_refused() -> None:
    assert validate({"type": "integer"}, True) == ["$: expected integer, got boolean"]
    assert validate({"type": "number"}, False) != []
    assert validate({"type": "number"}, math.inf) != []
    assert validate({"type": "number"}, math.nan) != []


def test_type_lists() -> None:
    schema = {"type": ["string", "null"]}
    assert validate(schema, None) == []
    assert validate(schema, 1) == ["$: expected string or null, got integer"]


def test_s16_closure_rule_declared_properties_close_the_object() -> None:
    assert validate({"type": "object", "properties": {}}, {"x": 1}) == [
        "$.x: property is not allowed"
    ]
    assert validate({"type": "object"}, {"x": 1}) == []
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": True,
    }
    assert validate(schema, {"a": "1", "b": 2}) == []
    typed_extra = {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}
    assert validate(typed_extra, {"n": "x"}) == ["$.n: expected integer, got string"]


def test_required_and_nested_paths_are_readable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "odd key": {"type": "string"}},
                    "required": ["id"],
                },
            }
        },
        "required": ["items"],
    }
    assert validate(schema, {}) == ["$.items: required property is missing"]
    issues = validate(schema, {"items": [{"id": 1}, {"odd key": 5}]})
    assert issues == [
        "$.items[1].id: required property is missing",
        "$.items[1]['odd key']: expected string, got integer",
    ]


def test_s16_string_length_counts_characters_not_utf16_units() -> None:
    emoji = "😀😀"  # two code points, four UTF-16 units
    assert validate({"type": "string", "maxLength": 2}, emoji) == []
    assert validate({"type": "string", "minLength": 3}, emoji) == [
        "$: must have at least 3 characters, got 2"
    ]


def test_s16_size_bounds_answer_to_the_value_on_union_nodes_too() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "null"}], "maxLength": 3}
    assert validate(schema, "abcd") == ["$: must have at most 3 characters, got 4"]
    assert validate(schema, None) == []
    arrays = {"anyOf": [{"type": "array"}, {"type": "string"}], "maxItems": 1}
    assert validate(arrays, [1, 2]) == ["$: must have at most 1 items, got 2"]


def test_numeric_bounds() -> None:
    schema = {"type": "number", "minimum": 0, "maximum": 10, "multipleOf": 0.5}
    assert validate(schema, 4.5) == []
    assert validate(schema, -1) == ["$: must be >= 0, got -1"]
    assert validate(schema, 11) == ["$: must be <= 10, got 11"]
    assert validate(schema, 0.3) == ["$: must be a multiple of 0.5, got 0.3"]
    exclusive = {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}
    assert validate(exclusive, 0) != []
    assert validate(exclusive, 3) != []
    assert validate(exclusive, 2) == []


def test_enum_and_const_use_json_equality() -> None:
    # S16: every node declares a type (an enum or const alone is refused, see below).
    assert validate({"type": ["integer", "string"], "enum": [1, "a"]}, 1.0) == []
    assert validate({"type": ["integer", "boolean"], "enum": [1]}, True) != []
    assert validate({"type": "object", "const": {"a": [1]}}, {"a": [1.0]}) == []
    assert validate({"type": "integer", "const": 1}, 2) == ["$: must be 1"]


def test_string_pattern_and_an_invalid_pattern_is_reported() -> None:
    assert validate({"type": "string", "pattern": "^a+$"}, "aaa") == []
    assert validate({"type": "string", "pattern": "^a+$"}, "b") == [
        "$: must match the pattern '^a+$'"
    ]
    # A pattern that does not compile is the schema's fault, not the value's (S16).
    with pytest.raises(ConfigurationError, match="not a valid expression") as caught:
        validate({"type": "string", "pattern": "("}, "x")
    assert caught.value.code == SCHEMA_ERROR_CODE


def test_arrays_bounds_and_unique_items() -> None:
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True}
    assert validate(schema, []) == ["$: must have at least 1 items, got 0"]
    assert validate(schema, [1, 1.0]) == ["$[1]: duplicates an earlier item"]
    assert validate(schema, [1, True]) == ["$[1]: expected integer, got boolean"]
    assert validate({"type": "array", "uniqueItems": True}, [{"a": 1}, {"a": 2}, [1], [1]]) == [
        "$[3]: duplicates an earlier item"
    ]


def test_object_property_counts() -> None:
    schema = {"type": "object", "minProperties": 1, "maxProperties": 1}
    assert validate(schema, {}) != []
    assert validate(schema, {"a": 1, "b": 2}) != []


def test_any_of_reports_the_closest_branch() -> None:
    schema = {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 5}]}
    assert validate(schema, "abc") == [
        "$: matches none of 2 alternatives; closest: $: must have at least 5 characters, got 3"
    ]
    assert validate({"anyOf": [{"type": "integer"}]}, "x") == ["$: expected integer, got string"]


def test_non_string_keys_are_refused() -> None:
    assert validate({"type": "object"}, {1: "x"}) == [
        "$: property names must be strings, got integer"
    ]


def test_depth_bound_is_owned_here() -> None:
    value: Any = 1
    for _ in range(MAX_VALIDATION_DEPTH + 5):
        value = [value]
    issues = validate({"type": "array"}, value)
    assert issues == []  # no items schema: nothing to descend into
    deep: dict[str, Any] = {"type": "array"}
    deep["items"] = deep  # self-referential schema, e.g. a recursive node
    issues = validate(deep, value)
    assert len(issues) == 1
    assert "nested too deeply" in issues[0]


def test_size_bound_is_owned_here() -> None:
    issues = validate(
        {"type": "array", "items": {"type": "integer"}}, list(range(MAX_VALIDATION_NODES + 10))
    )
    assert len(issues) == 1
    assert "too large" in issues[0]


def test_unknown_value_types_are_described() -> None:
    assert validate({"type": "string"}, object()) == ["$: expected string, got object"]


def test_multiple_of_has_no_tolerance_regression() -> None:
    # Found by the jsonschema oracle: a tiny float passed as a "multiple of 1" under a tolerance.
    assert validate({"type": "number", "multipleOf": 1}, 1.4143481438618118e-160) != []
    assert validate({"type": "number", "multipleOf": 1}, 3.0) == []
    assert validate({"type": "number", "multipleOf": 0.5}, 1e308) == []  # exact on overflow


# --------------------------------------------------------------------------- S16: schema errors
# A node with both `type` and `anyOf`, or with neither, is refused everywhere — at the root and in
# every nested position — as a fault of the *schema* (a ConfigurationError), never as an issue
# about the value that a model would be asked to fix.

BOTH: dict[str, Any] = {"type": "string", "anyOf": [{"type": "string"}]}
NEITHER_NODES: list[dict[str, Any]] = [
    {},
    {"enum": ["x"]},
    {"const": 1},
    {"description": "anything"},
    {"properties": {}},
]


def placed(node: dict[str, Any], where: str) -> tuple[dict[str, Any], str]:
    """A schema holding ``node`` at ``where``, and the subset's path of that node."""
    if where == "root":
        return node, "$"
    if where == "property":
        return {"type": "object", "properties": {"a": node}}, "$.properties['a']"
    if where == "items":
        return (
            {"type": "object", "properties": {"a": {"type": "array", "items": node}}},
            "$.properties['a'].items",
        )
    if where == "anyOf branch":
        return (
            {"type": "object", "properties": {"a": {"anyOf": [{"type": "null"}, node]}}},
            "$.properties['a'].anyOf[1]",
        )
    if where == "additionalProperties":
        return {"type": "object", "additionalProperties": node}, "$.additionalProperties"
    assert where == "deep"
    deep = {"type": "array", "items": {"anyOf": [{"type": "object", "properties": {"b": node}}]}}
    return (
        {"type": "object", "properties": {"a": deep}},
        "$.properties['a'].items.anyOf[0].properties['b']",
    )


WHERE = ["root", "property", "items", "anyOf branch", "additionalProperties", "deep"]


def schema_error(schema: Any, value: object) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as caught:
        validate(schema, value)
    assert caught.value.code == SCHEMA_ERROR_CODE
    assert "fix the schema" in caught.value.message
    return caught.value


@pytest.mark.parametrize("where", WHERE)
def test_s16_a_node_with_both_type_and_any_of_is_a_schema_error(where: str) -> None:
    schema, path = placed(dict(BOTH), where)
    # Whatever the value — one that reaches the node, one that does not, a wrong one.
    for value in ("x", {}, {"a": "x"}, {"a": [{"b": "x"}]}, 42):
        error = schema_error(schema, value)
        assert (
            f"schema error at {path}: declares both type and anyOf; use exactly one"
            in (error.context["issues"])
        )


@pytest.mark.parametrize("node", NEITHER_NODES, ids=repr)
@pytest.mark.parametrize("where", WHERE)
def test_s16_a_node_with_neither_type_nor_any_of_is_a_schema_error(
    where: str, node: dict[str, Any]
) -> None:
    # S16 "refused everywhere": an empty schema {} as items or additionalProperties too. For
    # "any value" omit items, write additionalProperties: true, or list the types.
    schema, path = placed(dict(node), where)
    for value in ("x", {}, {"a": ["x"]}, None):
        error = schema_error(schema, value)
        assert any(
            issue.startswith(f"schema error at {path}: declares neither type nor anyOf")
            for issue in error.context["issues"]
        ), error.context["issues"]


def test_s16_schema_errors_never_appear_among_value_issues() -> None:
    # Before: these came back as issues about the value, i.e. the model's fault.
    assert validate({"type": "string"}, 1) == ["$: expected string, got integer"]
    for broken in ({"type": "obj"}, {"anyOf": []}, {"type": "object", "properties": {"a": 1}}):
        schema_error(broken, "x")
    schema_error({"type": "object", "properties": {}, "required": ["ghost"]}, {})


def test_s16_keywords_outside_the_subset_and_recursive_schemas_stay_usable() -> None:
    # Two subset rules are about the wire, not about judging a value (S17 projection owns them).
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"type": "string", "deprecated": True}},
    }
    assert validate(schema, {"a": "x"}) == []
    tree: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}}
    tree["properties"]["children"] = {"type": "array", "items": tree}
    assert validate(tree, {"name": "a", "children": [{"name": "b", "children": []}]}) == []
    assert validate(tree, {"name": "a", "children": [{"name": 1}]}) == [
        "$.children[0].name: expected string, got integer"
    ]


def test_s16_a_schema_is_judged_once_per_object_and_a_later_change_is_still_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []
    real = _validate.validation_schema_issues  # the subset checker, as the validator reads it

    def counting(schema: object) -> list[str]:
        calls.append(schema)
        return real(schema)

    monkeypatch.setattr(_validate, "validation_schema_issues", counting)
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    for _ in range(3):
        assert validate(schema, {"a": "x"}) == []
    assert len(calls) == 1  # remembered by identity: not re-checked on every tool call
    schema["properties"]["a"]["anyOf"] = [{"type": "string"}]  # changed after it was used
    error = schema_error(schema, {"a": "x"})
    assert "declares both type and anyOf" in error.message


_leaf = st.sampled_from(
    [{"type": "string"}, {"type": "integer", "minimum": 0}, {"type": ["string", "null"]}]
)


def _broken(node: dict[str, Any], how: str) -> dict[str, Any]:
    out = dict(node)
    if how == "both":
        out.setdefault("type", "string")
        out.setdefault("anyOf", [{"type": "string"}])
    elif how == "neither":
        out.pop("type", None)
        out.pop("anyOf", None)
    return out


def _nodes(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    shaped = st.one_of(
        st.builds(
            lambda props: {"type": "object", "properties": props},
            st.dictionaries(st.sampled_from("abc"), children, max_size=3),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(lambda branches: {"anyOf": branches}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda extra: {"type": "object", "additionalProperties": extra}, children),
    )
    return st.builds(_broken, shaped, st.sampled_from(["ok", "ok", "ok", "both", "neither"]))


_maybe_broken = st.recursive(
    st.builds(_broken, _leaf, st.sampled_from(["ok", "ok", "ok", "both", "neither"])),
    _nodes,
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(schema=_maybe_broken, value=st.one_of(st.none(), st.text(max_size=2), st.just({"a": []})))
def test_s16_the_validator_and_the_subset_checker_apply_one_rule(
    schema: dict[str, Any], value: object
) -> None:
    expected = [
        f"schema error at {issue}" for issue in check_parameter_schema(schema, object_root=False)
    ]
    if not expected:
        assert isinstance(validate(schema, value), list)  # judged: the value's issues, if any
        return
    error = schema_error(schema, value)
    assert list(error.context["issues"]) == expected


# --------------------------------------------------------------------------- end to end (S16)


class Search(robota.Tool):
    name = "search"
    description = "Search."

    def __init__(self, parameters: dict[str, Any]) -> None:
        super().__init__(parameters=parameters)
        self.ran = 0

    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        self.ran += 1
        return "found"


BROKEN_TOOL_SCHEMAS = {
    "both at the root": {"type": "object", "anyOf": [{"type": "object"}]},
    "both nested": {"type": "object", "properties": {"q": dict(BOTH)}},
    "neither nested": {"type": "object", "properties": {"q": {}}},
    "neither in items": {
        "type": "object",
        "properties": {"q": {"type": "array", "items": {"enum": ["a"]}}},
    },
}


@pytest.mark.parametrize("schema", BROKEN_TOOL_SCHEMAS.values(), ids=BROKEN_TOOL_SCHEMAS.keys())
async def test_s16_a_tool_call_against_a_broken_schema_is_a_tool_definition_error(
    schema: dict[str, Any], memory_sink: robota.MemorySink
) -> None:
    tool = Search(schema)
    with pytest.raises(ConfigurationError, match="tool 'search' cannot be called") as caught:
        tool.validate_arguments({"q": "x"})
    assert caught.value.code == SCHEMA_ERROR_CODE
    provider = ScriptedProvider([[("search", {"q": "x"})], "answered"])
    agent = robota.Agent(provider=provider, model="m", tools=[tool])
    result = await agent.run("go")
    assert result.output == "answered"  # the run goes on, like for an unavailable tool (S37)
    assert tool.ran == 0
    answer = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert "error in the tool's definition, not in your arguments" in answer.content
    assert "Fix the arguments" not in answer.content  # the model is not asked to fix it
    assert any(
        e.message == "tool schema is broken" and e.fields.get("tool") == "search"
        for e in memory_sink.events
    )
    direct = await agent.invoke_tool("search", {"q": "x"})
    assert direct.status == "refused"
    assert tool.ran == 0


async def test_s16_invalid_arguments_against_a_sound_schema_are_still_the_model_s_to_fix() -> None:
    tool = Search({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    provider = ScriptedProvider([[("search", {"q": 1})], "answered"])
    result = await robota.Agent(provider=provider, model="m", tools=[tool]).run("go")
    answer = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert "Fix the arguments and call the tool again" in answer.content


BROKEN_OUTPUT_SCHEMAS = {
    "both at the root": {"type": "object", "anyOf": [{"type": "object"}], "properties": {}},
    "neither at the root": {"properties": {"a": {"type": "string"}}},
    "both nested": {"type": "object", "properties": {"a": dict(BOTH)}},
    "neither nested": {"type": "object", "properties": {"a": {}}},
    "neither in additionalProperties": {"type": "object", "additionalProperties": {}},
}


@pytest.mark.parametrize("schema", BROKEN_OUTPUT_SCHEMAS.values(), ids=BROKEN_OUTPUT_SCHEMAS.keys())
async def test_s16_a_broken_output_schema_fails_before_the_model_is_asked(
    schema: dict[str, Any],
) -> None:
    provider = ScriptedProvider(['{"a": "x"}'])
    agent = robota.Agent(provider=provider, model="m")
    with pytest.raises(ConfigurationError, match="parameter-schema subset"):
        await agent.run("go", output=schema)
    assert provider.requests == []


async def test_s16_a_schema_error_found_while_validating_output_is_not_retried_with_the_model() -> (
    None
):
    # In the subset (its checker does not compile patterns), but no value can be judged against
    # it: the validator refuses the schema, and the retry loop does not spend a turn on it.
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}
    provider = ScriptedProvider(['{"a": "x"}', '{"a": "y"}'])
    agent = robota.Agent(provider=provider, model="m")
    with pytest.raises(ConfigurationError, match="not a valid expression") as caught:
        await agent.run("go", output=schema, output_retries=2)
    assert caught.value.code == SCHEMA_ERROR_CODE
    assert len(provider.requests) == 1  # no feedback turn asked the model to fix it
