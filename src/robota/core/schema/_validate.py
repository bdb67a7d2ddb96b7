"""``validate_against_json_schema``: the one traversal that judges a value against a schema (S16).

Tool input validation and structured-output validation both call this function, so they can
never disagree about the same schema and value. It owns the depth and size bounds.

Semantics are JSON Schema (draft 2020-12) over the parameter-schema subset, with one deliberate
difference, the **closure rule** (S16): a node that declares ``properties`` — even an empty one —
rejects properties it does not declare unless ``additionalProperties`` says otherwise, while a
node without ``properties`` accepts any. (Plain JSON Schema leaves both open.)

Other points a reader may check against the standard:

* A keyword answers to the *value*, not to the node's declared type: ``maxLength`` limits any
  string the node accepts, union nodes included.
* String length counts characters (code points), which is what Python's ``len`` counts.
* ``integer`` accepts a float with no fractional part (``1.0``), as draft 2020-12 does; booleans
  are never numbers.
* ``format`` is an annotation and is not checked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final, TypeAlias

__all__ = ["MAX_VALIDATION_DEPTH", "MAX_VALIDATION_NODES", "validate_against_json_schema"]

MAX_VALIDATION_DEPTH: Final = 64
"""Deepest value nesting validated; deeper values are refused with one issue."""

MAX_VALIDATION_NODES: Final = 100_000
"""Most value nodes visited in one validation; a larger value is refused with one issue."""


class _Budget:
    __slots__ = ("exhausted", "nodes")

    def __init__(self) -> None:
        self.nodes = 0
        self.exhausted = False


def pydantic_issues(error: Any) -> list[str]:
    """A pydantic ``ValidationError`` as issues in this module's path format (``$.a[2]: …``)."""
    return [
        "$"
        + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in item["loc"])
        + f": {item['msg']}"
        for item in error.errors()
    ]


def validate_against_json_schema(schema: Mapping[str, Any], value: object) -> list[str]:
    """Validate ``value`` against ``schema``; return readable issues (empty when valid).

    Each issue starts with the path of the offending value (``$`` is the root, ``$.a[2].b`` a
    nested one). The traversal stops descending past :data:`MAX_VALIDATION_DEPTH` levels or
    :data:`MAX_VALIDATION_NODES` nodes and reports that instead.
    """
    issues: list[str] = []
    _check(schema, value, None, 0, _Budget(), issues)
    return issues


def json_type_of(value: object) -> str:
    """The JSON type name of ``value`` (its Python type name when it is not a JSON value)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _is_type(value: object, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (
            isinstance(value, float) and math.isfinite(value) and value.is_integer()
        )
    if name == "number":
        return (
            not isinstance(value, bool)
            and isinstance(value, (int, float))
            and (not isinstance(value, float) or math.isfinite(value))
        )
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, Mapping)
    if name == "array":
        return isinstance(value, (list, tuple))
    if name == "null":
        return value is None
    return False


@lru_cache(maxsize=256)
def _pattern(source: str) -> re.Pattern[str] | None:
    try:
        return re.compile(source)
    except re.error:
        return None


def _json_equal(a: object, b: object) -> bool:
    # JSON equality: 1 == 1.0, but True is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _canonical(value: object) -> object:
    """A hashable key under which JSON-equal values (and only those) coincide."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value.is_integer():
            return ("number", int(value))
        return ("number", value)
    if isinstance(value, Mapping):
        return ("object", frozenset((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_canonical(v) for v in value))
    return ("other", repr(value))


_Path: TypeAlias = "tuple[_Path, str | int] | None"
"""Where a value sits, built as (parent, key) pairs and rendered only when an issue is reported."""


def _render(path: _Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, segment = path
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif segment.isidentifier():
            parts.append(f".{segment}")
        else:
            parts.append(f"[{segment!r}]")
    return "$" + "".join(reversed(parts))


def _check(
    schema: Mapping[str, Any],
    value: object,
    path: _Path,
    depth: int,
    budget: _Budget,
    issues: list[str],
) -> None:
    if budget.exhausted:
        return
    budget.nodes += 1
    if budget.nodes > MAX_VALIDATION_NODES:
        budget.exhausted = True
        issues.append(
            f"{_render(path)}: value is too large to validate (over {MAX_VALIDATION_NODES} nodes)"
        )
        return
    if depth > MAX_VALIDATION_DEPTH:
        budget.exhausted = True
        issues.append(
            f"{_render(path)}: value is nested too deeply (over {MAX_VALIDATION_DEPTH} levels)"
        )
        return

    any_of = schema.get("anyOf")
    if any_of is not None:
        _check_any_of(any_of, value, path, depth, budget, issues)

    declared = schema.get("type")
    if declared is not None and not (
        _is_type(value, declared)
        if isinstance(declared, str)
        else any(_is_type(value, name) for name in declared)
    ):
        names = [declared] if isinstance(declared, str) else list(declared)
        expected = " or ".join(str(n) for n in names)
        issues.append(f"{_render(path)}: expected {expected}, got {json_type_of(value)}")
        return

    if "const" in schema and not _json_equal(value, schema["const"]):
        issues.append(f"{_render(path)}: must be {schema['const']!r}")
    enum = schema.get("enum")
    if enum is not None and not any(_json_equal(value, option) for option in enum):
        allowed = ", ".join(repr(option) for option in enum)
        issues.append(f"{_render(path)}: must be one of {allowed}; got {value!r}")

    if isinstance(value, str):
        _check_string(schema, value, path, issues)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(schema, value, path, issues)
    elif isinstance(value, Mapping):
        _check_object(schema, value, path, depth, budget, issues)
    elif isinstance(value, (list, tuple)):
        _check_array(schema, value, path, depth, budget, issues)


def _check_any_of(
    branches: Sequence[Mapping[str, Any]],
    value: object,
    path: _Path,
    depth: int,
    budget: _Budget,
    issues: list[str],
) -> None:
    collected: list[list[str]] = []
    for branch in branches:
        branch_issues: list[str] = []
        _check(branch, value, path, depth, budget, branch_issues)
        if not branch_issues:
            return
        collected.append(branch_issues)
    if len(collected) == 1:
        issues.extend(collected[0])
        return
    # Report the branch that got furthest so the message stays readable: one whose type matched
    # the value, then the one with the fewest issues.
    mismatch = f"{_render(path)}: expected "
    best = min(collected, key=lambda found: (found[0].startswith(mismatch), len(found)))
    issues.append(
        f"{_render(path)}: matches none of {len(collected)} alternatives; closest: {best[0]}"
    )


def _check_count(
    schema: Mapping[str, Any],
    low: str,
    high: str,
    count: int,
    noun: str,
    path: _Path,
    issues: list[str],
) -> None:
    minimum = schema.get(low)
    if minimum is not None and count < minimum:
        issues.append(f"{_render(path)}: must have at least {minimum} {noun}, got {count}")
    maximum = schema.get(high)
    if maximum is not None and count > maximum:
        issues.append(f"{_render(path)}: must have at most {maximum} {noun}, got {count}")


def _check_string(schema: Mapping[str, Any], value: str, path: _Path, issues: list[str]) -> None:
    # Code points, not UTF-16 units (S16).
    _check_count(schema, "minLength", "maxLength", len(value), "characters", path, issues)
    pattern = schema.get("pattern")
    if pattern is not None:
        compiled = _pattern(pattern)
        if compiled is None:
            issues.append(
                f"{_render(path)}: the schema's pattern {pattern!r} is not a valid expression"
            )
        elif compiled.search(value) is None:
            issues.append(f"{_render(path)}: must match the pattern {pattern!r}")


def _check_number(schema: Mapping[str, Any], value: float, path: _Path, issues: list[str]) -> None:
    minimum = schema.get("minimum")
    if minimum is not None and value < minimum:
        issues.append(f"{_render(path)}: must be >= {minimum}, got {value}")
    maximum = schema.get("maximum")
    if maximum is not None and value > maximum:
        issues.append(f"{_render(path)}: must be <= {maximum}, got {value}")
    exclusive_min = schema.get("exclusiveMinimum")
    if exclusive_min is not None and value <= exclusive_min:
        issues.append(f"{_render(path)}: must be > {exclusive_min}, got {value}")
    exclusive_max = schema.get("exclusiveMaximum")
    if exclusive_max is not None and value >= exclusive_max:
        issues.append(f"{_render(path)}: must be < {exclusive_max}, got {value}")
    multiple = schema.get("multipleOf")
    if multiple is not None and multiple > 0 and not _is_multiple(value, multiple):
        issues.append(f"{_render(path)}: must be a multiple of {multiple}, got {value}")


def _is_multiple(value: float, multiple: float | int) -> bool:
    # No tolerance: a tiny float is not a multiple of 1. An integer step is checked by remainder
    # (exact for ints); a float step by an integral quotient, exactly via fractions on overflow.
    if not isinstance(multiple, float):
        return value % multiple == 0
    quotient = value / multiple
    if math.isfinite(quotient):
        return quotient == int(quotient)
    return (Fraction(value) / Fraction(multiple)).denominator == 1


def _check_object(
    schema: Mapping[str, Any],
    value: Mapping[Any, object],
    path: _Path,
    depth: int,
    budget: _Budget,
    issues: list[str],
) -> None:
    properties: Mapping[str, Any] | None = schema.get("properties")
    issues.extend(
        f"{_render((path, key))}: required property is missing"
        for key in schema.get("required", ())
        if key not in value
    )
    _check_count(schema, "minProperties", "maxProperties", len(value), "properties", path, issues)
    # S16 closure rule: `properties` present (even empty) ⇒ closed unless stated otherwise.
    additional = schema.get("additionalProperties", properties is None)
    for key, item in value.items():
        if not isinstance(key, str):
            issues.append(
                f"{_render(path)}: property names must be strings, got {json_type_of(key)}"
            )
            continue
        child: _Path = (path, key)
        if properties is not None and key in properties:
            _check(properties[key], item, child, depth + 1, budget, issues)
        elif additional is False:
            issues.append(f"{_render(child)}: property is not allowed")
        elif isinstance(additional, Mapping):
            _check(additional, item, child, depth + 1, budget, issues)


def _check_array(
    schema: Mapping[str, Any],
    value: Sequence[object],
    path: _Path,
    depth: int,
    budget: _Budget,
    issues: list[str],
) -> None:
    _check_count(schema, "minItems", "maxItems", len(value), "items", path, issues)
    if schema.get("uniqueItems") is True:
        seen: set[object] = set()
        for index, item in enumerate(value):
            key = _canonical(item)
            if key in seen:
                issues.append(f"{_render((path, index))}: duplicates an earlier item")
                break
            seen.add(key)
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _check(items, item, (path, index), depth + 1, budget, issues)
