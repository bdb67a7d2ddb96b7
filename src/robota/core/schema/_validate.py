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

**Schema errors are not value errors** (S16). Before judging a value, the schema itself is checked
against the parameter-schema subset's rules — exactly one of ``type``/``anyOf`` on every node (both,
or neither, is refused everywhere: at the root, in ``properties``, ``items``, ``anyOf`` branches and
a schema-valued ``additionalProperties``), well-formed ``type``/``anyOf``/``properties``/``items``/
``required``/``enum`` — by :func:`~robota.check_parameter_schema` itself (one rule, not two
copies), plus the one fact only the validator needs: every ``pattern`` compiles. A schema that
fails raises :class:`~robota.ConfigurationError` with ``code="schema_definition"``; it never
becomes an issue in the returned list, because that list is what a model is asked to fix. Two
subset rules are about the wire and are not applied here: keywords outside the subset (validation
ignores them — a third-party tool's ``$schema`` is harmless — and each provider's projection
decides what to do with them, S17), and cycles (a recursive schema is judged lazily, bounded by
:data:`MAX_VALIDATION_DEPTH`). An empty schema ``{}`` declares neither ``type`` nor
``anyOf`` and is refused like any such node: for "any value" omit ``items``, write
``"additionalProperties": true``, or list the types.

The verdict on a schema is remembered by identity (the schema object is held while remembered),
so a tool's schema is checked once, not on every call: treat a schema as frozen once used. A node
mutated afterwards into both-or-neither is still refused when a value reaches it.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final, TypeAlias

from robota.core._errors import ConfigurationError
from robota.core.schema._subset import SUBSET_KEYWORDS, check_parameter_schema

__all__ = [
    "MAX_VALIDATION_DEPTH",
    "MAX_VALIDATION_NODES",
    "SCHEMA_ERROR_CODE",
    "validate_against_json_schema",
]

MAX_VALIDATION_DEPTH: Final = 64
"""Deepest value nesting validated; deeper values are refused with one issue."""

MAX_VALIDATION_NODES: Final = 100_000
"""Most value nodes visited in one validation; a larger value is refused with one issue."""

SCHEMA_ERROR_CODE: Final = "schema_definition"
"""The ``code`` of the :class:`~robota.ConfigurationError` raised for a schema that breaks S16."""

_SOUND_SCHEMAS_KEPT: Final = 512
_sound_schemas: dict[int, object] = {}
"""Schemas found sound, by ``id`` → the schema itself (held, so its id cannot be reused)."""
_sound_schemas_lock: Final = threading.Lock()


class _BrokenNode(Exception):
    """A node the traversal reached is broken: the schema changed after it was checked."""


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
    :data:`MAX_VALIDATION_NODES` nodes and reports that instead. Every issue is about the
    *value*; a fault of the schema is raised instead (see the module docstring).

    Raises:
        ConfigurationError: ``schema`` breaks the parameter-schema subset (S16) — a node with
            both ``type`` and ``anyOf`` or with neither, a malformed keyword, a pattern that
            does not compile. ``code`` is :data:`SCHEMA_ERROR_CODE`;
            ``context["issues"]`` lists each fault as ``"schema error at <schema path>: …"``.
            The schema's author must fix it; no value can.
    """
    if _sound_schemas.get(id(schema)) is not schema:
        _check_schema(schema)
    issues: list[str] = []
    try:
        _check(schema, value, None, 0, _Budget(), issues)
    except _BrokenNode:
        # The schema changed since its verdict was remembered: judge it again (this raises).
        with _sound_schemas_lock:
            _sound_schemas.pop(id(schema), None)
        _check_schema(schema)
        raise ConfigurationError(  # pragma: no cover - _check_schema raised for that node
            "the schema changed while a value was being validated against it",
            code=SCHEMA_ERROR_CODE,
        ) from None
    return issues


def schema_issues(schema: object) -> list[str]:
    """What makes ``schema`` unusable for validation (S16), ``"schema error at …"`` each.

    The parameter-schema subset's rules (:func:`~robota.check_parameter_schema`) except two that
    are about the wire, not about judging a value — the keyword list and the refusal of cycles —
    plus: every ``pattern`` compiles. Empty when the schema is sound.
    """
    issues = [
        f"schema error at {issue}"
        for issue in check_parameter_schema(_subset_view(schema, {}, set()), object_root=False)
    ]
    issues.extend(_pattern_issues(schema, "$", set()))
    return issues


def _check_schema(schema: object) -> None:
    issues = schema_issues(schema)
    if issues:
        raise ConfigurationError(
            "the schema is not in the parameter-schema subset (S16), so no value can be judged "
            "against it; fix the schema: " + "; ".join(issues),
            code=SCHEMA_ERROR_CODE,
            context={"issues": tuple(issues)},
        )
    with _sound_schemas_lock:
        if len(_sound_schemas) >= _SOUND_SCHEMAS_KEPT:
            _sound_schemas.pop(next(iter(_sound_schemas)))
        _sound_schemas[id(schema)] = schema


def _children(node: Mapping[str, Any]) -> list[tuple[str, object]]:
    """The schema-valued members of ``node``, with their path suffixes (the subset's shape)."""
    found: list[tuple[str, object]] = []
    branches = node.get("anyOf")
    if isinstance(branches, list):
        found.extend((f".anyOf[{i}]", branch) for i, branch in enumerate(branches))
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        found.extend((f".properties[{name!r}]", child) for name, child in properties.items())
    additional = node.get("additionalProperties")
    if additional is not None and not isinstance(additional, bool):
        found.append((".additionalProperties", additional))
    if "items" in node:
        found.append((".items", node["items"]))
    return found


def _subset_view(node: object, done: dict[int, object], active: set[int]) -> object:
    """``node`` as the subset checker should judge it for validation, at every level.

    Keywords outside the subset are left out (S17: projection's business; validation ignores
    them). A node met again inside itself — a recursive schema — is cut off with a sound stub:
    the wire cannot carry a cycle, but validation can, its depth bound owns it (S16).
    """
    if not isinstance(node, Mapping):
        return node
    if id(node) in active:
        return {"type": "null"}  # a cycle: that node is judged where it was first met
    if id(node) in done:
        return done[id(node)]
    active.add(id(node))
    view: dict[str, Any] = {}
    for key, member in node.items():
        if key not in SUBSET_KEYWORDS:
            continue
        if key == "anyOf" and isinstance(member, list):
            view[key] = [_subset_view(branch, done, active) for branch in member]
        elif key == "properties" and isinstance(member, Mapping):
            view[key] = {name: _subset_view(child, done, active) for name, child in member.items()}
        elif key in ("items", "additionalProperties"):
            view[key] = _subset_view(member, done, active)
        else:
            view[key] = member
    active.discard(id(node))
    done[id(node)] = view
    return view


def _pattern_issues(node: object, path: str, seen: set[int]) -> list[str]:
    if not isinstance(node, Mapping) or id(node) in seen:
        return []  # not a node (the subset checker reports it), or judged where first met
    seen.add(id(node))
    found: list[str] = []
    pattern = node.get("pattern")
    if pattern is not None and (not isinstance(pattern, str) or _pattern(pattern) is None):
        found.append(f"schema error at {path}: pattern {pattern!r} is not a valid expression")
    for suffix, child in _children(node):
        found.extend(_pattern_issues(child, path + suffix, seen))
    return found


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

    # S16: exactly one of type/anyOf. The schema was checked before the traversal; this catches
    # a node changed since (the verdict is remembered by identity).
    any_of = schema.get("anyOf")
    declared = schema.get("type")
    if (any_of is None) == (declared is None):
        raise _BrokenNode
    if any_of is not None:
        _check_any_of(any_of, value, path, depth, budget, issues)

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
            raise _BrokenNode  # S16: a schema fault, never an issue the model is asked to fix
        if compiled.search(value) is None:
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
