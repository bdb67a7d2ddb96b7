"""S16 validate_against_json_schema: the one traversal."""

from __future__ import annotations

import math
from typing import Any

import pytest

from robota import (
    MAX_VALIDATION_DEPTH,
    MAX_VALIDATION_NODES,
)
from robota import (
    validate_against_json_schema as validate,
)


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
    assert validate({"enum": [1, "a"]}, 1.0) == []
    assert validate({"enum": [1]}, True) != []
    assert validate({"const": {"a": [1]}}, {"a": [1.0]}) == []
    assert validate({"const": 1}, 2) == ["$: must be 1"]


def test_string_pattern_and_an_invalid_pattern_is_reported() -> None:
    assert validate({"type": "string", "pattern": "^a+$"}, "aaa") == []
    assert validate({"type": "string", "pattern": "^a+$"}, "b") == [
        "$: must match the pattern '^a+$'"
    ]
    assert "not a valid expression" in validate({"type": "string", "pattern": "("}, "x")[0]


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
