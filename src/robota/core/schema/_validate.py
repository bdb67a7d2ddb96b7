"""``validate_against_json_schema``: the one traversal that judges a value against a schema (S16).

Tool input validation and structured-output validation both call this function, so they can
never disagree about the same schema and value. It owns the depth and size bounds.

Semantics are JSON Schema (draft 2020-12) over the parameter-schema subset, with one deliberate
difference, the **closure rule** (S16): a node that declares ``properties`` — even an empty one —
rejects properties it does not declare unless ``additionalProperties`` says otherwise, while a
node without ``properties`` accepts any. (Plain JSON Schema leaves both open.)

Other points a reader may check against the standard:

* A keyword answers to the *value*, not to the node's declared type: ``maxLength`` limits any
  string the node accepts, union nodes included; the number keywords apply to numbers only
  (never to booleans).
* String length counts characters (code points), which is what Python's ``len`` counts.
* ``integer`` accepts a float with no fractional part (``1.0``), as draft 2020-12 does; booleans
  are never numbers, and NaN and the infinities are no numbers at all ("not a finite number").
* Numbers are compared exactly, however large: ``multipleOf`` has no tolerance (a tiny float is
  not a multiple of 1) and goes through fractions where floats cannot hold the operands.
* ``pattern`` is ECMA-262, read with the ``u`` flag as JSON Schema asks — not Python's ``re``
  dialect; :func:`~robota.core.schema._pattern.compile_ecma_pattern` documents the translation.
* ``format`` is an annotation and is not checked.

**Bounds.** The traversal stops past :data:`MAX_VALIDATION_DEPTH` levels or
:data:`MAX_VALIDATION_NODES` nodes and reports that, as an issue about the value. A level is one
step into the schema along the value: a property, an item, an ``additionalProperties`` value, and
also an ``anyOf`` branch — so a recursive schema is bounded whichever way it recurses.
``uniqueItems`` compares items under the same bounds, and every value a message shows is cut
short, so neither a 5,000-deep nor a cyclic value, nor a megabyte string, can make validation
raise or its answer huge.

**Schema errors are not value errors** (S16). Before judging a value, the schema itself is checked
against the parameter-schema subset's rules — exactly one of ``type``/``anyOf`` on every node (both,
or neither, is refused everywhere: at the root, in ``properties``, ``items``, ``anyOf`` branches and
a schema-valued ``additionalProperties``), every keyword's value of the kind JSON Schema requires,
no node deeper than :data:`~robota.core.schema._subset.MAX_SCHEMA_DEPTH` — by the subset checker
itself (:func:`~robota.core.schema._subset.validation_schema_issues`, one rule, not two copies),
plus the facts only the validator needs: every ``pattern`` compiles, and no ``anyOf`` leads back
to its own node without descending into the value. A schema that is not a mapping at all is
refused the same way. A schema that fails raises :class:`~robota.ConfigurationError` with
``code="schema_definition"``; it never becomes an issue in the returned list, because that list is
what a model is asked to fix. Two subset rules are about the wire and are not applied here:
keywords outside the subset (validation ignores them — a third-party tool's ``$schema`` is
harmless — and each provider's projection decides what to do with them, S17), and cycles through
``items``, ``properties`` or ``additionalProperties`` (a recursive schema is judged lazily, bounded
by :data:`MAX_VALIDATION_DEPTH`). An empty schema ``{}`` declares neither ``type`` nor ``anyOf``
and is refused like any such node: for "any value" omit ``items``, write
``"additionalProperties": true``, or list the types.

The verdict on a schema is remembered by identity (the schema object is held while remembered),
so a tool's schema is checked once, not on every call: treat a schema as frozen once used. A
schema changed afterwards so that it breaks the rules is still refused when a value reaches the
changed node.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final, TypeAlias

from robota.core._errors import ConfigurationError
from robota.core.schema._excerpt import excerpt
from robota.core.schema._pattern import compile_ecma_pattern
from robota.core.schema._subset import validation_schema_issues

__all__ = [
    "MAX_VALIDATION_DEPTH",
    "MAX_VALIDATION_NODES",
    "SCHEMA_ERROR_CODE",
    "validate_against_json_schema",
]

MAX_VALIDATION_DEPTH: Final = 64
"""Deepest level validated (a property, item or ``anyOf`` branch is a level); deeper: one issue.

Not below the subset's ``MAX_SCHEMA_DEPTH``, so a sound schema that does not recurse never
reaches it: only a deep value under a recursive schema does.
"""

MAX_VALIDATION_NODES: Final = 100_000
"""Most value nodes visited in one validation; a larger value is refused with one issue."""

SCHEMA_ERROR_CODE: Final = "schema_definition"
"""The ``code`` of the :class:`~robota.ConfigurationError` raised for a schema that breaks S16."""

_SOUND_SCHEMAS_KEPT: Final = 512
_sound_schemas: dict[int, object] = {}
"""Schemas found sound, by ``id`` → the schema itself (held, so its id cannot be reused)."""
_sound_schemas_lock: Final = threading.Lock()
_UNSEEN: Final = object()

_ENUM_OPTIONS_SHOWN: Final = 10
_EXACT_IN_FLOAT: Final = 2**53
"""Every integer up to this converts to a float exactly."""


class _BrokenNode(Exception):
    """A node the traversal reached is broken: the schema changed after it was checked."""


_SCHEMA_CHANGED: Final = (_BrokenNode, AttributeError, TypeError, ValueError, KeyError)
"""What a schema changed after its verdict can raise mid-traversal (a keyword of a wrong type)."""


class _Budget:
    __slots__ = ("halted", "nodes")

    def __init__(self) -> None:
        self.nodes = 0
        self.halted: str | None = None

    def stopped(self) -> bool:
        """A bound was reached: the traversal is over (a method, so checkers see it change)."""
        return self.halted is not None

    def halt(self, issues: list[str], issue: str) -> None:
        """Stop the traversal with ``issue``, a bound the value went past."""
        self.halted = issue
        issues.append(issue)


class _PastBound(Exception):
    """Raised out of a nested comparison (``uniqueItems``) when the value goes past a bound."""


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
    *value*, and no value makes this raise; a fault of the schema is raised instead (see the
    module docstring).

    Raises:
        ConfigurationError: ``schema`` breaks the parameter-schema subset (S16) — it is not a
            mapping, a node has both ``type`` and ``anyOf`` or neither, a keyword's value is
            malformed, it nests too deeply, a pattern is not ECMA-262 this validator can run.
            ``code`` is :data:`SCHEMA_ERROR_CODE`; ``context["issues"]`` lists each fault as
            ``"schema error at <schema path>: …"``. The schema's author must fix it; no value can.
    """
    if _sound_schemas.get(id(schema), _UNSEEN) is not schema:
        _check_schema(schema)
    budget = _Budget()
    issues: list[str] = []
    try:
        _check(schema, value, None, 0, budget, issues)
    except _SCHEMA_CHANGED as exc:
        # S16: the verdict was remembered by identity and the schema changed since. Judge it
        # again: that raises the schema error. Still sound? Then the fault is here: re-raise.
        with _sound_schemas_lock:
            _sound_schemas.pop(id(schema), None)
        _check_schema(schema)
        if isinstance(exc, _BrokenNode):  # pragma: no cover - _check_schema raised for that node
            raise ConfigurationError(
                "the schema changed while a value was being validated against it",
                code=SCHEMA_ERROR_CODE,
            ) from None
        raise
    if budget.halted is not None and budget.halted not in issues:  # pragma: no cover - invariant
        issues.append(budget.halted)
    return issues


def _check_schema(schema: object) -> None:
    issues = [f"schema error at {issue}" for issue in validation_schema_issues(schema)]
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


def _kind(value: object) -> str:
    """What a type-mismatch issue says ``value`` is."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} (not a finite number)"
    return json_type_of(value)


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


def _json_equal(a: object, b: object) -> bool:
    # JSON equality: 1 == 1.0, but True is not 1. Recursion ends with the shallower operand; one
    # is always an enum option or const, which the subset keeps within MAX_SCHEMA_DEPTH.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _canonical(value: object, depth: int, budget: _Budget) -> object:
    """A hashable key under which JSON-equal values (and only those) coincide.

    Within the traversal's bounds (S16: they are owned by this one traversal): each part counts
    as a node, each nesting as a level, so a deep or cyclic value raises :class:`_PastBound`.
    """
    budget.nodes += 1
    if budget.nodes > MAX_VALIDATION_NODES:
        raise _PastBound(f"value is too large to validate (over {MAX_VALIDATION_NODES} nodes)")
    if depth > MAX_VALIDATION_DEPTH:
        raise _PastBound(f"value is nested too deeply (over {MAX_VALIDATION_DEPTH} levels)")
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)  # Python's int/float equality and hashing are exact: 1 ≡ 1.0
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, Mapping):
        return (
            "object",
            frozenset((k, _canonical(v, depth + 1, budget)) for k, v in value.items()),
        )
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_canonical(v, depth + 1, budget) for v in value))
    return ("other", id(value))  # not JSON: equal only to itself


_Path: TypeAlias = "tuple[_Path, str | int] | None"
"""Where a value sits, built as (parent, key) pairs and rendered only when an issue is reported."""

_KEY_SHOWN: Final = 40


def _render(path: _Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, segment = path
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif len(segment) <= _KEY_SHOWN and segment.isidentifier():
            parts.append(f".{segment}")
        else:
            parts.append(f"[{excerpt(segment)}]")  # a model-chosen key: bounded like a value
    return "$" + "".join(reversed(parts))


def _check(
    schema: Mapping[str, Any],
    value: object,
    path: _Path,
    depth: int,
    budget: _Budget,
    issues: list[str],
) -> None:
    if budget.halted is not None:
        return
    budget.nodes += 1
    if budget.nodes > MAX_VALIDATION_NODES:
        budget.halt(
            issues,
            f"{_render(path)}: value is too large to validate (over {MAX_VALIDATION_NODES} nodes)",
        )
        return
    if depth > MAX_VALIDATION_DEPTH:
        budget.halt(
            issues,
            f"{_render(path)}: value is nested too deeply (over {MAX_VALIDATION_DEPTH} levels)",
        )
        return

    # S16: exactly one of type/anyOf. The schema was checked before the traversal; this catches
    # a node changed since (the verdict is remembered by identity).
    any_of = schema.get("anyOf")
    declared = schema.get("type")
    if (any_of is None) == (declared is None):
        raise _BrokenNode
    if any_of is not None:
        # S16: a branch is a level too, so a schema recursing through anyOf is bounded as well.
        _check_any_of(any_of, value, path, depth + 1, budget, issues)
        if budget.stopped():
            return

    if declared is not None and not (
        _is_type(value, declared)
        if isinstance(declared, str)
        else any(_is_type(value, name) for name in declared)
    ):
        names = [declared] if isinstance(declared, str) else list(declared)
        expected = " or ".join(str(n) for n in names)
        issues.append(f"{_render(path)}: expected {expected}, got {_kind(value)}")
        return

    if "const" in schema and not _json_equal(value, schema["const"]):
        issues.append(f"{_render(path)}: must be {excerpt(schema['const'])}")
    enum = schema.get("enum")
    if enum is not None and not any(_json_equal(value, option) for option in enum):
        issues.append(f"{_render(path)}: must be one of {_options(enum)}; got {excerpt(value)}")

    if isinstance(value, str):
        _check_string(schema, value, path, issues)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(schema, value, path, issues)
    elif isinstance(value, Mapping):
        _check_object(schema, value, path, depth, budget, issues)
    elif isinstance(value, (list, tuple)):
        _check_array(schema, value, path, depth, budget, issues)


def _options(enum: Sequence[object]) -> str:
    shown = ", ".join(excerpt(option) for option in enum[:_ENUM_OPTIONS_SHOWN])
    if len(enum) > _ENUM_OPTIONS_SHOWN:
        shown += f", … ({len(enum)} options)"
    return shown


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
        if budget.halted is not None:
            # A bound was reached in this branch: the value is not judged, and no later branch
            # (which would return at once, with no issues) may pass for a match.
            issues.extend(branch_issues)
            return
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
        issues.append(f"{_render(path)}: must have at least {excerpt(minimum)} {noun}, got {count}")
    maximum = schema.get(high)
    if maximum is not None and count > maximum:
        issues.append(f"{_render(path)}: must have at most {excerpt(maximum)} {noun}, got {count}")


def _check_string(schema: Mapping[str, Any], value: str, path: _Path, issues: list[str]) -> None:
    # Code points, not UTF-16 units (S16).
    _check_count(schema, "minLength", "maxLength", len(value), "characters", path, issues)
    pattern = schema.get("pattern")
    if pattern is not None:
        compiled = compile_ecma_pattern(pattern)  # the schema check compiled it: cached
        if isinstance(compiled, str):
            raise _BrokenNode  # S16: a schema fault, never an issue the model is asked to fix
        if compiled.search(value) is None:
            issues.append(f"{_render(path)}: must match the pattern {excerpt(pattern)}")


def _check_number(
    schema: Mapping[str, Any], value: int | float, path: _Path, issues: list[str]
) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        return  # no JSON number: the type check or the anyOf branches have said so (S16)
    # Python compares int with float exactly (no conversion, no overflow), and the subset keeps
    # every bound a finite number, so these comparisons hold for a 400-digit integer too.
    minimum = schema.get("minimum")
    if minimum is not None and value < minimum:
        issues.append(f"{_render(path)}: must be >= {excerpt(minimum)}, got {excerpt(value)}")
    maximum = schema.get("maximum")
    if maximum is not None and value > maximum:
        issues.append(f"{_render(path)}: must be <= {excerpt(maximum)}, got {excerpt(value)}")
    exclusive_min = schema.get("exclusiveMinimum")
    if exclusive_min is not None and value <= exclusive_min:
        issues.append(f"{_render(path)}: must be > {excerpt(exclusive_min)}, got {excerpt(value)}")
    exclusive_max = schema.get("exclusiveMaximum")
    if exclusive_max is not None and value >= exclusive_max:
        issues.append(f"{_render(path)}: must be < {excerpt(exclusive_max)}, got {excerpt(value)}")
    multiple = schema.get("multipleOf")
    if multiple is not None and not _is_multiple(value, multiple):
        issues.append(
            f"{_render(path)}: must be a multiple of {excerpt(multiple)}, got {excerpt(value)}"
        )


def _is_multiple(value: int | float, step: int | float) -> bool:
    # S16: exact, with no tolerance (a tiny float is not a multiple of 1), for any finite operands:
    # integers by remainder; floats by math.fmod, which is exact; an integer too large to be a
    # float exactly goes through fractions (a float/int quotient would overflow or round).
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    if (isinstance(value, int) and abs(value) > _EXACT_IN_FLOAT) or (
        isinstance(step, int) and step > _EXACT_IN_FLOAT
    ):
        return Fraction(value) % Fraction(step) == 0
    return math.fmod(value, step) == 0


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
    if schema.get("uniqueItems") is True and len(value) > 1:
        seen: set[object] = set()
        for index, item in enumerate(value):
            try:
                key = _canonical(item, depth + 1, budget)
            except _PastBound as past:
                budget.halt(issues, f"{_render((path, index))}: {past}")
                return
            if key in seen:
                issues.append(f"{_render((path, index))}: duplicates an earlier item")
                break
            seen.add(key)
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            _check(items, item, (path, index), depth + 1, budget, issues)
