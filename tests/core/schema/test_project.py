"""S17 tool schema projection."""

from __future__ import annotations

import copy
import json
from typing import Any

import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import (
    ProjectionPolicy,
    project_tool_schema,
    project_tool_spec,
    schema_from_type,
    validate_against_json_schema,
)
from robota.providers.anthropic import ANTHROPIC_POLICY
from robota.providers.gemini import GEMINI_POLICY
from robota.providers.openai import OPENAI_POLICY, OPENAI_STRICT_POLICY

CLEAN = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "query"}},
    "required": ["q"],
    "additionalProperties": False,
}


def test_s17_adopted_returns_the_very_same_object() -> None:
    result = project_tool_schema(CLEAN, ANTHROPIC_POLICY)
    assert result.outcome == "adopted"
    assert result.schema is CLEAN
    assert result.changes == ()


def test_s17_implied_closure_is_stated_for_a_json_schema_vendor() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    result = project_tool_schema(schema, ANTHROPIC_POLICY)
    assert result.outcome == "adapted"
    assert result.schema == {**schema, "additionalProperties": False}
    assert "additionalProperties" not in schema  # input untouched


def test_s17_openai_strict_makes_optional_fields_nullable_and_required() -> None:
    class Search(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        query: str
        limit: int | None = None
        page: int = 1

    original = schema_from_type(Search)
    result = project_tool_schema(original, OPENAI_STRICT_POLICY)
    assert result.outcome == "adapted"
    assert result.schema is not None
    wire = result.schema
    assert sorted(wire["required"]) == ["limit", "page", "query"]
    assert wire["properties"]["page"]["type"] == ["integer", "null"]
    assert "default" not in wire["properties"]["page"]
    assert wire["additionalProperties"] is False
    # The call is still validated against the original: a missing optional field passes.
    assert validate_against_json_schema(original, {"query": "x"}) == []
    # Strict mode's null for an omitted field maps back before that validation.
    arguments = result.unwire({"query": "x", "limit": None, "page": None})
    assert arguments == {"query": "x", "limit": None}
    assert validate_against_json_schema(original, arguments) == []
    # ... and the relaxation never widens what a call may contain.
    assert validate_against_json_schema(original, {"query": "x", "page": "two"}) != []


def test_s17_openai_strict_closes_objects_and_refuses_open_records() -> None:
    nested = {
        "type": "object",
        "properties": {
            "inner": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": True,
            }
        },
        "required": ["inner"],
        "additionalProperties": False,
    }
    result = project_tool_schema(nested, OPENAI_STRICT_POLICY)
    assert result.schema is not None
    assert result.schema["properties"]["inner"]["additionalProperties"] is False
    record = {
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}},
    }
    rejected = project_tool_schema(record, OPENAI_STRICT_POLICY)
    assert rejected.outcome == "rejected"
    assert "additionalProperties" in (rejected.reason or "")


def test_s17_openai_strict_drops_length_bounds_and_notes_them() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 10}},
        "required": ["name"],
        "additionalProperties": False,
    }
    spec = robota.ToolSpec("greet", "Greet someone.", schema)
    projected, result = project_tool_spec(spec, OPENAI_STRICT_POLICY)
    assert projected is not None
    assert "maxLength" not in projected.parameters["properties"]["name"]
    assert result.dropped_constraints == ("maxLength ($.name)",)
    assert projected.description.startswith("Greet someone.")
    assert projected.description.count("maxLength ($.name)") == 1


def test_s17_openai_declares_items_and_properties_it_requires() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array"}, "meta": {"type": "object"}},
        "additionalProperties": False,
    }
    result = project_tool_schema(schema, OPENAI_POLICY)
    assert result.schema is not None
    assert result.schema["properties"]["tags"]["items"] == {}
    assert result.schema["properties"]["meta"]["properties"] == {}
    assert result.dropped_constraints == ()


def test_s17_gemini_projection_that_drops_additional_properties_false_adds_the_note() -> None:
    spec = robota.ToolSpec("lookup", "Look a key up.", CLEAN)
    projected, result = project_tool_spec(spec, GEMINI_POLICY)
    assert projected is not None
    assert "additionalProperties" not in projected.parameters
    assert result.dropped_constraints == ("additionalProperties ($)",)
    assert projected.description.endswith(
        "(Constraints not shown in this schema but still enforced: additionalProperties ($).)"
    )


def test_s17_gemini_uses_one_type_with_nullable_and_refuses_untyped_arrays() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "c": {"const": "x", "type": "string"},
        },
        "additionalProperties": True,
    }
    result = project_tool_schema(schema, GEMINI_POLICY)
    assert result.schema is not None
    props = result.schema["properties"]
    assert props["a"] == {"type": "string", "nullable": True}
    assert props["b"] == {"type": "integer", "nullable": True}
    assert props["c"] == {"type": "string", "enum": ["x"]}
    untyped = {"type": "object", "properties": {"xs": {"type": "array"}}}
    assert project_tool_schema(untyped, GEMINI_POLICY).outcome == "rejected"


def test_s17_only_real_constraints_are_noted() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "examples": [1], "exclusiveMinimum": 0}},
        "additionalProperties": True,
    }
    result = project_tool_schema(schema, GEMINI_POLICY)
    assert result.dropped_constraints == ("exclusiveMinimum ($.n)",)
    assert "$.n: dropped examples" in result.changes


def test_s17_refusals() -> None:
    cases: list[tuple[Any, str]] = [
        ({"type": "string"}, "root"),
        ({"type": "object", "properties": {"__proto__": {"type": "string"}}}, "__proto__"),
        ({"type": "object", "properties": {"constructor": {"type": "string"}}}, "constructor"),
        (
            {"type": "object", "properties": {"x": {"type": "string", "anyOf": []}}},
            "both type and anyOf",
        ),
    ]
    for schema, fragment in cases:
        result = project_tool_schema(schema, ANTHROPIC_POLICY)
        assert result.outcome == "rejected", schema
        assert fragment in (result.reason or "")
        assert result.schema is None


def test_s17_cycles_depth_and_node_count_are_refused() -> None:
    cyclic: dict[str, Any] = {"type": "object"}
    cyclic["properties"] = {"loop": cyclic}
    assert "cycle" in (project_tool_schema(cyclic, ANTHROPIC_POLICY).reason or "")
    deep: dict[str, Any] = {"type": "object", "properties": {}}
    node = deep
    for _ in range(40):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"]["x"] = child
        node = child
    assert "deeper" in (project_tool_schema(deep, ANTHROPIC_POLICY).reason or "")
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50)}}
    small = ProjectionPolicy(name="tiny", max_nodes=10)
    assert "nodes" in (project_tool_schema(wide, small).reason or "")


def test_s17_unknown_keywords_follow_the_policy() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "x-vendor": 1}},
        "additionalProperties": False,
    }
    assert (
        project_tool_schema(
            schema, ProjectionPolicy(name="strict", unknown_keywords="reject")
        ).outcome
        == "rejected"
    )
    stripped = project_tool_schema(schema, ProjectionPolicy(name="lenient"))
    assert stripped.schema is not None
    assert "x-vendor" not in stripped.schema["properties"]["x"]
    kept = project_tool_schema(schema, ANTHROPIC_POLICY)
    assert kept.outcome == "adopted"


def test_s17_type_and_any_of_may_be_kept_by_a_policy() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "anyOf": [{"type": "string"}]}},
        "additionalProperties": False,
    }
    assert (
        project_tool_schema(schema, ProjectionPolicy(name="p", type_and_any_of="keep")).outcome
        == "adopted"
    )


def test_s17_the_projector_never_throws() -> None:
    for junk in (
        None,
        3,
        "x",
        [],
        {"type": "object", "properties": 5},
        {"type": "object", "required": [1]},
    ):
        result = project_tool_schema(junk, OPENAI_STRICT_POLICY)  # type: ignore[arg-type]
        assert result.outcome == "rejected"


_leaf = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": ["string", "null"]},
        {"type": "string", "maxLength": 3, "pattern": "^a"},
        {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        {"type": "array", "items": {"type": "number"}},
        {"type": "array"},
        {"const": "k", "type": "string"},
    ]
)
_schemas = st.recursive(
    _leaf,
    lambda children: st.builds(
        lambda props, closed: {
            "type": "object",
            "properties": props,
            **({"additionalProperties": closed} if closed is not None else {}),
            "required": sorted(props)[:1],
        },
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), children, max_size=3),
        st.sampled_from([None, True, False]),
    ),
    max_leaves=8,
)
_roots = st.builds(
    lambda props: {"type": "object", "properties": props},
    st.dictionaries(st.sampled_from(["x", "y", "z"]), _schemas, max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(
    _roots, st.sampled_from([ANTHROPIC_POLICY, OPENAI_POLICY, OPENAI_STRICT_POLICY, GEMINI_POLICY])
)
def test_s17_projection_never_mutates_its_input_and_is_deterministic(
    schema: dict[str, Any], policy: ProjectionPolicy
) -> None:
    before = copy.deepcopy(schema)
    first = project_tool_schema(schema, policy)
    second = project_tool_schema(schema, policy)
    assert schema == before
    assert first == second
    if first.outcome == "adopted":
        assert first.schema is schema
    if first.outcome == "adapted":
        assert first.schema is not schema
        json.dumps(first.schema)  # plain data, ready for the wire
