"""S16 every keyword's value is checked against JSON Schema 2020-12 before any value is judged.

The subset checker (``check_parameter_schema``) states the value a keyword must have — counts are
non-negative integers, bounds finite numbers, ``multipleOf`` positive, ``required`` unique names,
``enum`` a non-empty list of JSON values … — and the validator reuses it, so a malformed keyword
is a schema error (``ConfigurationError``, ``code="schema_definition"``) and never a ``TypeError``
in the middle of judging a model's value, nor a keyword silently ignored.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robota
from robota import SUBSET_KEYWORDS, ConfigurationError, check_parameter_schema
from robota import validate_against_json_schema as validate
from robota.core.schema._validate import SCHEMA_ERROR_CODE
from robota.testing import ScriptedProvider

COUNTS = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]
BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
HUGE = 10**400

cyclic: list[Any] = []
cyclic.append(cyclic)
too_deep: Any = 1
for _ in range(100):
    too_deep = [too_deep]


def faults(node: dict[str, Any]) -> list[str]:
    return check_parameter_schema(node, object_root=False)


def schema_error(schema: Any, value: object) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as caught:
        validate(schema, value)
    assert caught.value.code == SCHEMA_ERROR_CODE
    return caught.value


@pytest.mark.parametrize("keyword", COUNTS)
@pytest.mark.parametrize("bad", ["3", [3], {"n": 3}, -1, 1.5, True, None, math.inf, math.nan])
def test_s16_count_keywords_take_a_non_negative_integer(keyword: str, bad: object) -> None:
    (issue,) = faults({"type": ["string", "array", "object"], keyword: bad})
    assert issue.startswith(f"$: {keyword} must be a non-negative integer, got ")
    for value in ("ab", [1], {"a": 1}):
        schema_error({"type": ["string", "array", "object"], keyword: bad}, value)


@pytest.mark.parametrize("keyword", COUNTS)
@pytest.mark.parametrize("good", [0, 3, 2.0, HUGE])
def test_s16_count_keywords_accept_any_non_negative_integer(keyword: str, good: object) -> None:
    assert faults({"type": "string", keyword: good}) == []


@pytest.mark.parametrize("keyword", BOUNDS)
@pytest.mark.parametrize("bad", ["3", [3], {"n": 3}, True, False, None, math.inf, math.nan])
def test_s16_bounds_take_a_finite_number(keyword: str, bad: object) -> None:
    (issue,) = faults({"type": "number", keyword: bad})
    assert f"{keyword} must be a finite number" in issue
    schema_error({"type": "number", keyword: bad}, 2)


@pytest.mark.parametrize("bad", [0, -1, -0.5, math.nan, math.inf, True, "2", None, [2]])
def test_s16_multiple_of_is_a_number_greater_than_zero(bad: object) -> None:
    (issue,) = faults({"type": "number", "multipleOf": bad})
    assert "multipleOf must be a finite number greater than 0" in issue
    schema_error({"type": "number", "multipleOf": bad}, 4)


def test_s16_bounds_accept_every_finite_number() -> None:
    for good in (0, -3, 2.5, HUGE, -HUGE, 1e308):
        assert faults({"type": "number", "minimum": good, "multipleOf": abs(good) or 1}) == []


@pytest.mark.parametrize("bad", ["yes", 1, 0, None, []])
def test_s16_unique_items_is_a_boolean(bad: object) -> None:
    assert faults({"type": "array", "uniqueItems": bad}) == [
        f"$: uniqueItems must be true or false, got {bad!r}"
    ]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (None, "required must be a list of property names"),
        ("a", "required must be a list of property names"),
        ([1], "required must be a list of property names"),
        ({"a": 1}, "required must be a list of property names"),
        (["a", "a"], "required names 'a' more than once"),
    ],
)
def test_s16_required_is_a_list_of_unique_names(bad: object, message: str) -> None:
    schema = {"type": "object", "required": bad}
    assert faults(schema) == [f"$: {message}"]
    schema_error(schema, {"a": 1})


@pytest.mark.parametrize(
    "bad",
    [None, [], "ab", {"a": 1}, [math.nan], [math.inf], [object()], [cyclic], [too_deep], [{1: 2}]],
)
def test_s16_enum_is_a_non_empty_list_of_json_values(bad: object) -> None:
    (issue,) = faults({"type": "string", "enum": bad})
    assert issue.startswith("$: enum ")
    schema_error({"type": "string", "enum": bad}, "a")


@pytest.mark.parametrize("bad", [math.nan, object(), cyclic, too_deep, {"a": {1: 2}}])
def test_s16_const_is_a_json_value(bad: object) -> None:
    (issue,) = faults({"type": "string", "const": bad})
    assert issue.startswith("$: const ")
    schema_error({"type": "string", "const": bad}, "a")


def test_s16_const_null_and_enum_with_null_are_fine() -> None:
    assert faults({"type": "null", "const": None}) == []
    assert faults({"type": ["null", "array"], "enum": [None, [1, {"a": 2.5}]]}) == []
    assert validate({"type": "null", "const": None}, None) == []


@pytest.mark.parametrize(
    ("keyword", "bad", "message"),
    [
        ("properties", None, "properties must map names to schemas"),
        ("properties", [], "properties must map names to schemas"),
        ("properties", {1: {"type": "string"}}, "property names must be strings, got 1"),
        ("items", None, "a schema node must be an object, got NoneType"),
        ("items", True, "a schema node must be an object, got bool"),
        ("items", [], "a schema node must be an object, got list"),
        ("additionalProperties", None, "additionalProperties must be true, false or a schema"),
        ("additionalProperties", "no", "additionalProperties must be true, false or a schema"),
        ("additionalProperties", 0, "additionalProperties must be true, false or a schema"),
        ("pattern", 1, "pattern must be a string"),
        ("pattern", None, "pattern must be a string"),
    ],
)
def test_s16_schema_valued_keywords_take_schemas(keyword: str, bad: object, message: str) -> None:
    schema = {"type": ["object", "array", "string"], keyword: bad}
    (issue,) = faults(schema)
    assert message in issue, issue
    for value in ({"a": 1}, [1], "a"):
        schema_error(schema, value)


@pytest.mark.parametrize(
    "bad", ["obj", [], ["string", "string"], [{}], [["string"]], None, 1, {"string": 1}]
)
def test_s16_type_is_a_json_type_name_or_a_list_of_unique_ones(bad: object) -> None:
    (issue,) = faults({"type": bad})
    assert issue.startswith("$: type ")
    schema_error({"type": bad}, "a")


@pytest.mark.parametrize("bad", [[], None, {}, "x", [1], [None], [{"type": "string"}, True]])
def test_s16_any_of_is_a_non_empty_list_of_schemas(bad: object) -> None:
    assert faults({"anyOf": bad}) != []
    schema_error({"anyOf": bad}, "a")


def test_s16_malformed_keyword_regressions() -> None:
    # The review's reproductions: a TypeError mid-validation, or a keyword silently ignored.
    schema_error({"type": "string", "minLength": "3"}, "ab")
    schema_error({"type": "object", "required": None}, {})
    schema_error({"type": "number", "multipleOf": 0}, 3)
    schema_error({"type": "array", "uniqueItems": "yes"}, [1, 1])
    schema_error({"type": "object", "properties": None}, {"a": 1})
    schema_error({"type": "object", "additionalProperties": None}, {"a": 1})
    schema_error({"type": "number", "minimum": True}, 0)


# --------------------------------------------------------------------------- generated

_json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([0, -1, 1, 2, HUGE, -HUGE, 0.5, -0.5, 2.0]),
        st.floats(),  # NaN and infinities included
        st.text(max_size=4),
        st.sampled_from(["string", "object", "array", "number", "integer", "null", "^a$", "("]),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["type", "a", "items", "anyOf"]), children, max_size=3),
    ),
    max_leaves=6,
)
_keywords = st.sampled_from(sorted(SUBSET_KEYWORDS))
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(),
    st.floats(),
    st.text(alphabet="ab", max_size=3),
    st.lists(st.integers(-2, 2), max_size=3),
    st.dictionaries(st.text(alphabet="ab", max_size=2), st.integers(), max_size=2),
)


@st.composite
def _schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    node: dict[str, Any] = {}
    if draw(st.integers(0, 9)) > 0:
        node["type"] = draw(
            st.sampled_from(["string", "number", "integer", "array", "object", ["string", "null"]])
        )
    for keyword in draw(st.lists(_keywords, max_size=4, unique=True)):
        if depth < 2 and keyword in ("items", "additionalProperties") and draw(st.booleans()):
            node[keyword] = draw(_schemas(depth + 1))
        elif depth < 2 and keyword == "anyOf" and draw(st.booleans()):
            node[keyword] = draw(st.lists(_schemas(depth + 1), max_size=2))
        elif depth < 2 and keyword == "properties" and draw(st.booleans()):
            node[keyword] = draw(
                st.dictionaries(st.sampled_from("ab"), _schemas(depth + 1), max_size=2)
            )
        else:
            node[keyword] = draw(st.one_of(_json_values, _values))
    return node


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schemas(), value=_json_values)
def test_s16_any_keyword_value_is_judged_or_refused_as_a_schema_error(
    schema: dict[str, Any], value: object
) -> None:
    expected = [
        f"schema error at {issue}" for issue in check_parameter_schema(schema, object_root=False)
    ]
    try:
        issues = validate(schema, value)
    except ConfigurationError as exc:
        error = exc
    else:
        assert [i for i in expected if _shared(i)] == []
        assert all(isinstance(issue, str) for issue in issues)
        return
    assert error.code == SCHEMA_ERROR_CODE
    found = list(error.context["issues"])
    # The subset's faults but the two wire rules (keywords outside the subset, cycles), plus
    # only what the validator alone checks: that patterns compile.
    assert [i for i in found if _shared(i)] == [i for i in expected if _shared(i)]
    assert found


def _shared(issue: str) -> bool:
    return " pattern " not in issue and "outside the parameter-schema subset" not in issue


# --------------------------------------------------------------------------- end to end


class Search(robota.Tool):
    name = "search"
    description = "Search."

    def __init__(self, parameters: dict[str, Any]) -> None:
        super().__init__(parameters=parameters)
        self.ran = 0

    async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
        self.ran += 1
        return "found"


async def test_s16_a_malformed_keyword_in_a_tool_schema_is_a_tool_definition_refusal() -> None:
    tool = Search({"type": "object", "properties": {"q": {"type": "string", "minLength": "3"}}})
    with pytest.raises(ConfigurationError, match="minLength must be a non-negative integer"):
        tool.validate_arguments({"q": "ab"})
    provider = ScriptedProvider([[("search", {"q": "ab"})], "answered"])
    result = await robota.Agent(provider=provider, model="m", tools=[tool]).run("go")
    assert result.output == "answered"
    assert tool.ran == 0
    answer = next(m for m in result.messages if isinstance(m, robota.ToolMessage))
    assert "error in the tool's definition, not in your arguments" in answer.content
