"""S16 the parameter-schema subset."""

from __future__ import annotations

from typing import Any

from robota import check_parameter_schema


def test_s16_a_node_with_both_type_and_any_of_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "anyOf": [{"type": "null"}]}},
    }
    assert check_parameter_schema(schema) == [
        "$.properties['x']: declares both type and anyOf; use exactly one"
    ]


def test_s16_a_node_with_neither_is_refused() -> None:
    schema = {"type": "object", "properties": {"x": {"description": "anything"}}}
    assert check_parameter_schema(schema) == [
        "$.properties['x']: declares neither type nor anyOf; every node needs exactly one"
    ]


def test_s16_the_root_must_be_an_object() -> None:
    assert check_parameter_schema({"type": "string"})[0].startswith("$: the root must be an object")
    assert check_parameter_schema({"type": "string"}, object_root=False) == []
    assert check_parameter_schema([1]) == ["$: a schema node must be an object, got list"]


def test_s16_keywords_outside_the_subset_are_refused() -> None:
    issues = check_parameter_schema(
        {"type": "object", "properties": {}, "$ref": "#/x", "allOf": []}
    )
    assert issues == [
        "$: keyword '$ref' is outside the parameter-schema subset",
        "$: keyword 'allOf' is outside the parameter-schema subset",
    ]


def test_s16_nested_nodes_use_the_same_shape() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "list": {"type": "array", "items": {"type": "object", "properties": {"y": {}}}},
            "map": {"type": "object", "additionalProperties": {"anyOf": [{"type": "integer"}, 3]}},
        },
    }
    assert check_parameter_schema(schema) == [
        "$.properties['list'].items.properties['y']: declares neither type nor anyOf; every node "
        "needs exactly one",
        "$.properties['map'].additionalProperties.anyOf[1]: a schema node must be an object, "
        "got int",
    ]


def test_s16_required_names_a_closed_object_cannot_contain() -> None:
    issues = check_parameter_schema({"type": "object", "properties": {}, "required": ["ghost"]})
    assert "never contain" in issues[0]
    assert (
        check_parameter_schema(
            {
                "type": "object",
                "properties": {},
                "required": ["ghost"],
                "additionalProperties": True,
            }
        )
        == []
    )


def test_cycles_and_bad_values_are_reported() -> None:
    node: dict[str, Any] = {"type": "object"}
    node["properties"] = {"self": node}
    assert any("cycle" in issue for issue in check_parameter_schema(node))
    assert check_parameter_schema({"type": "object", "enum": []})[0].endswith("non-empty list")
    assert check_parameter_schema({"type": "obj"})[-1].endswith("list of them")
    assert check_parameter_schema({"anyOf": []}, object_root=False)[0].endswith("list of schemas")
    assert check_parameter_schema({"type": "object", "properties": []})[0].endswith("to schemas")
    assert check_parameter_schema({"type": "object", "required": "x"})[0].endswith("property names")
