"""S16 the validator agrees with `jsonschema` (Draft 2020-12) over the subset.

Hypothesis generates schemas in the parameter-schema subset and values (mostly near-valid ones,
so both outcomes are exercised), and every answer of ``validate_against_json_schema`` is compared
with the ``jsonschema`` library's. One difference is deliberate and applied to the oracle's copy
of the schema before comparing: the S16 closure rule — a node that declares ``properties`` and
says nothing about ``additionalProperties`` is closed (plain JSON Schema leaves it open).
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from robota import validate_against_json_schema

EXAMPLES = 2_000

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-50, max_value=50),
    st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False),
    st.text(alphabet="ab😀 1", max_size=6),
)
_json = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "c", "x"]), children, max_size=4),
    ),
    max_leaves=10,
)

_string_node = st.fixed_dictionaries(
    {"type": st.just("string")},
    optional={
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 5),
        "pattern": st.sampled_from(["^a", "b$", "a+", "^[ab]*$"]),
        "enum": st.lists(st.text(alphabet="ab", max_size=3), min_size=1, max_size=3, unique=True),
    },
)
_number_node = st.fixed_dictionaries(
    {"type": st.sampled_from(["integer", "number"])},
    optional={
        "minimum": st.integers(-10, 10),
        "maximum": st.integers(-10, 10),
        "exclusiveMinimum": st.integers(-10, 10),
        "exclusiveMaximum": st.integers(-10, 10),
        "multipleOf": st.integers(1, 4),
    },
)
_other_leaf = st.sampled_from(
    [
        {"type": "boolean"},
        {"type": "null"},
        {"type": ["string", "null"]},
        {"type": ["integer", "boolean"]},
        {"type": "integer", "enum": [1, 2, 3]},
        {"type": "boolean", "const": True},
        {"type": "object"},
        {"type": "array"},
    ]
)
_leaf = st.one_of(_string_node, _number_node, _other_leaf)


def _object(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        _make_object,
        st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3),
        st.sampled_from(["absent", "true", "false", "schema"]),
        st.data(),
        children,
        st.integers(0, 3),
    )


def _make_object(
    properties: dict[str, Any], closure: str, data: Any, extra: dict[str, Any], required_count: int
) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "properties": properties}
    names = sorted(properties)
    node["required"] = names[:required_count]
    if closure == "true":
        node["additionalProperties"] = True
    elif closure == "false":
        node["additionalProperties"] = False
    elif closure == "schema":
        node["additionalProperties"] = extra
    return node


def _array(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("array"), "items": children},
        optional={
            "minItems": st.integers(0, 2),
            "maxItems": st.integers(0, 4),
            "uniqueItems": st.booleans(),
        },
    )


def _union(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"anyOf": st.lists(children, min_size=1, max_size=3)},
        optional={"maxLength": st.integers(0, 3), "minItems": st.integers(0, 2)},
    )


_nodes = st.recursive(
    _leaf,
    lambda children: st.one_of(_object(children), _array(children), _union(children)),
    max_leaves=6,
)
_roots = st.builds(
    _make_object,
    st.dictionaries(st.sampled_from(["a", "b", "c"]), _nodes, max_size=3),
    st.sampled_from(["absent", "true", "false", "schema"]),
    st.data(),
    _nodes,
    st.integers(0, 3),
)


@st.composite
def _value_for(draw: st.DrawFn, schema: dict[str, Any], depth: int = 0) -> Any:
    """A value shaped like ``schema`` most of the time, arbitrary JSON otherwise."""
    if depth > 4 or draw(st.integers(0, 9)) == 0:
        return draw(_json)
    if "anyOf" in schema:
        return draw(_value_for(draw(st.sampled_from(schema["anyOf"])), depth + 1))
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    if "const" in schema:
        return schema["const"]
    declared = schema.get("type")
    kind = draw(st.sampled_from(declared)) if isinstance(declared, list) else declared
    if kind == "object":
        properties = schema.get("properties", {})
        value = {
            name: draw(_value_for(child, depth + 1))
            for name, child in properties.items()
            if draw(st.booleans()) or name in schema.get("required", [])
        }
        if draw(st.integers(0, 4)) == 0:
            value["x"] = draw(_json)
        return value
    if kind == "array":
        items = schema.get("items")
        if items is None:
            return draw(st.lists(_json, max_size=3))
        values = draw(st.lists(_value_for(items, depth + 1), max_size=4))
        if values and draw(st.booleans()):
            values.append(copy.deepcopy(values[0]))  # exercise uniqueItems
        return values
    if kind == "string":
        return draw(st.text(alphabet="ab😀", max_size=6))
    if kind == "integer":
        return draw(st.one_of(st.integers(-12, 12), st.just(2.0)))
    if kind == "number":
        return draw(st.one_of(st.integers(-12, 12), st.floats(-12, 12, allow_nan=False)))
    if kind == "boolean":
        return draw(st.booleans())
    return None


def _closed_for_oracle(node: Any) -> Any:
    """The schema with the S16 closure rule written out for a plain JSON Schema validator."""
    if isinstance(node, list):
        return [_closed_for_oracle(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _closed_for_oracle(value) for key, value in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False  # deliberate S16 difference, see the module docstring
    return out


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), schema=_roots)
def test_s16_validator_agrees_with_the_jsonschema_oracle(
    data: st.DataObject, schema: dict[str, Any]
) -> None:
    value = data.draw(_value_for(schema))
    original = copy.deepcopy(schema)
    ours = validate_against_json_schema(schema, value)
    oracle = jsonschema.Draft202012Validator(_closed_for_oracle(schema))
    expected_valid = oracle.is_valid(value)
    event("valid" if expected_valid else "invalid")
    assert (ours == []) == expected_valid, (ours, list(oracle.iter_errors(value))[:3])
    assert schema == original  # validation never mutates the schema
