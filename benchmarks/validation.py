"""Validation benchmark (issue 5): a 50-field nested payload validated 100,000 times.

Side by side, in one run: Robota's ``validate_against_json_schema`` (the one traversal, S16),
``jsonschema``'s Draft 2020-12 validator (built once, "precompiled") and ``fastjsonschema``
(compiled to Python code once). Ratios are Robota's time over each peer's.
"""

from __future__ import annotations

import time
from typing import Any

import fastjsonschema
import jsonschema

from robota import validate_against_json_schema

ITERATIONS = 100_000


def schema_and_payload() -> tuple[dict[str, Any], dict[str, Any]]:
    """Five groups of ten fields each (50 leaves), nested one level, with common constraints."""
    group_props: dict[str, Any] = {}
    group_value: dict[str, Any] = {}
    for i in range(10):
        kind = i % 5
        name = f"f{i}"
        if kind == 0:
            group_props[name] = {"type": "string", "minLength": 1, "maxLength": 40}
            group_value[name] = f"value {i}"
        elif kind == 1:
            group_props[name] = {"type": "integer", "minimum": 0, "maximum": 1_000}
            group_value[name] = i * 7
        elif kind == 2:
            group_props[name] = {"type": "string", "enum": ["red", "green", "blue"]}
            group_value[name] = "green"
        elif kind == 3:
            group_props[name] = {"type": "array", "items": {"type": "number"}, "maxItems": 5}
            group_value[name] = [1.5, 2, 3]
        else:
            group_props[name] = {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
            group_value[name] = None
    group = {
        "type": "object",
        "properties": group_props,
        "required": sorted(group_props),
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {f"group{g}": group for g in range(5)},
        "required": [f"group{g}" for g in range(5)],
        "additionalProperties": False,
    }
    payload = {f"group{g}": dict(group_value) for g in range(5)}
    return schema, payload


def _time(label: str, check: Any, iterations: int) -> float:
    started = time.perf_counter()
    for _ in range(iterations):
        check()
    elapsed = time.perf_counter() - started
    print(f"{label:<52} {elapsed:7.2f} s   {elapsed / iterations * 1e6:8.2f} µs per validation")
    return elapsed


def main(iterations: int = ITERATIONS) -> None:
    schema, payload = schema_and_payload()
    assert validate_against_json_schema(schema, payload) == []
    draft = jsonschema.Draft202012Validator(schema)
    assert draft.is_valid(payload)
    compiled = fastjsonschema.compile(schema)
    compiled(payload)
    print(f"\nValidation: 50-field nested payload, {iterations:,} validations each")
    ours = _time(
        "robota.validate_against_json_schema",
        lambda: validate_against_json_schema(schema, payload),
        iterations,
    )
    peer = _time(
        "jsonschema Draft202012Validator (built once)", lambda: draft.is_valid(payload), iterations
    )
    fast = _time("fastjsonschema (compiled once)", lambda: compiled(payload), iterations)
    print(f"ratio robota / jsonschema:     {ours / peer:.2f}")
    print(f"ratio robota / fastjsonschema: {ours / fast:.2f}")


if __name__ == "__main__":
    main()
