r"""The parameter-schema subset (S16): one shape for the root and every nested node.

:class:`ParameterSchema` is the JSON Schema subset every tool schema and structured-output schema
in Robota is expressed in. The same shape describes the root object and every nested node — there
is no separate nested form. :func:`check_parameter_schema` states the subset's rules:

* exactly one of ``type`` / ``anyOf`` per node — both (a provider applies both and rejects
  whichever fails) or neither (an unconstrained value) is refused;
* every keyword's value is what JSON Schema (draft 2020-12) says it must be: a type name or a
  list of unique ones; a non-empty list of schemas for ``anyOf``; names mapped to schemas for
  ``properties``; a list of unique names for ``required``; a boolean or a schema for
  ``additionalProperties``; a schema for ``items``; a non-empty list of JSON values for ``enum``
  and a JSON value for ``const``; a string for ``pattern``; a non-negative integer (``2.0``
  counts) for the length, item and property counts; a finite number for the bounds; a finite
  number greater than 0 for ``multipleOf``; a boolean for ``uniqueItems``. A keyword present with
  a wrong value is refused, never read as absent (``"required": null`` is a fault, not "none");
* no node sits more than :data:`MAX_SCHEMA_DEPTH` levels below the root (every ``anyOf`` branch,
  property, ``items`` and ``additionalProperties`` is a level), and an ``enum`` or ``const``
  value nests no deeper either;
* keywords outside the subset are refused (they would be silently ignored somewhere);
* a schema that refers to itself (a cycle) is refused — the wire cannot carry one;
* the root of a tool or structured-output schema is an object.

The closure rule (S16) is a matter of meaning, not shape: a node that declares ``properties`` —
even an empty one — rejects undeclared properties unless ``additionalProperties`` says otherwise;
a node without ``properties`` accepts any. ``validate_against_json_schema`` applies it.

**Patterns are ECMA-262** (JSON Schema 2020-12, core §6.4), not Python ``re``, whose ``$`` also
matches before a final newline, whose ``\d``/``\w``/``\b`` are Unicode-aware, whose ``\s`` is
another set and whose ``.`` excludes only ``\n``. :func:`compile_ecma_pattern` is the one place a
pattern is compiled; it gives the pattern its ECMA meaning (its docstring says how) or names the
construct it refuses. Whether a pattern compiles is a fact only a validator needs — on the wire,
the provider judges a pattern with its own engine — so :func:`check_parameter_schema` asks only
that it be a string, and the validator's reading of the rules (:func:`validation_schema_issues`)
adds that it compiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, TypeGuard

from typing_extensions import TypedDict

from robota.core.schema._excerpt import excerpt
from robota.core.schema._pattern import compile_ecma_pattern

__all__ = [
    "ANNOTATION_KEYWORDS",
    "CONSTRAINT_KEYWORDS",
    "MAX_SCHEMA_DEPTH",
    "SUBSET_KEYWORDS",
    "JsonType",
    "ParameterSchema",
    "check_parameter_schema",
]

JsonType: TypeAlias = Literal["string", "number", "integer", "boolean", "object", "array", "null"]
"""A JSON Schema type name."""


class ParameterSchema(TypedDict, total=False):
    """One node of the parameter-schema subset (S16); the root uses the same shape.

    Exactly one of ``type`` and ``anyOf`` is present on every node.
    """

    type: JsonType | list[JsonType]
    anyOf: list[ParameterSchema]
    properties: dict[str, ParameterSchema]
    required: list[str]
    additionalProperties: bool | ParameterSchema
    items: ParameterSchema
    enum: list[Any]
    const: Any
    description: str
    default: Any
    examples: list[Any]
    format: str
    pattern: str
    minLength: int
    maxLength: int
    minimum: float
    maximum: float
    exclusiveMinimum: float
    exclusiveMaximum: float
    multipleOf: float
    minItems: int
    maxItems: int
    uniqueItems: bool
    minProperties: int
    maxProperties: int


CONSTRAINT_KEYWORDS: Final = frozenset(
    {
        "type",
        "anyOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)
"""Keywords that restrict which values are accepted (dropping one widens a contract)."""

ANNOTATION_KEYWORDS: Final = frozenset({"description", "default", "examples", "format", "title"})
"""Keywords that describe without restricting (``format`` is not checked, S16)."""

SUBSET_KEYWORDS: Final = CONSTRAINT_KEYWORDS | ANNOTATION_KEYWORDS

MAX_SCHEMA_DEPTH: Final = 64
"""Deepest nesting of schema nodes below the root (and of an ``enum``/``const`` value)."""

_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
_COUNT_KEYWORDS: Final = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_BOUND_KEYWORDS: Final = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_MAX_VALUE_NODES: Final = 100_000
"""Most parts an ``enum`` option or ``const`` value may have."""


def check_parameter_schema(schema: object, *, object_root: bool = True) -> list[str]:
    """The subset rules ``schema`` breaks, as readable issues naming each node's path.

    Args:
        schema: The schema to check.
        object_root: Require the root to be an object schema (tool and output schemas).
    """
    return _Checker(for_validation=False).run(schema, object_root=object_root)


def validation_schema_issues(schema: object) -> list[str]:
    """The subset rules as a validator reads them (S16): what makes ``schema`` unusable.

    :func:`check_parameter_schema`'s rules on any root, less two that are about the wire, not
    about judging a value — keywords outside the subset are ignored, and a schema may refer to
    itself through ``items``, ``properties`` or ``additionalProperties`` (the validator's depth
    bound owns such recursion) — and plus two: every ``pattern`` compiles
    (:func:`compile_ecma_pattern`), and no ``anyOf`` leads back to its own node without
    descending into the value (such a cycle never ends, whatever the value).
    """
    return _Checker(for_validation=True).run(schema, object_root=False)


class _Checker:
    """One walk over a schema: each node is judged once, its height remembered by identity.

    Remembering heights keeps a schema that shares nodes linear to check, and still measures a
    shared node's depth on every path it is reached by.
    """

    __slots__ = ("active", "edges", "for_validation", "heights", "issues", "too_deep")

    def __init__(self, *, for_validation: bool) -> None:
        self.for_validation = for_validation
        self.issues: list[str] = []
        self.heights: dict[int, int] = {}
        self.active: dict[int, int] = {}  # a node being walked → its position on `edges`
        self.edges: list[str] = []  # the member each walked node was reached through
        self.too_deep = False

    def run(self, schema: object, *, object_root: bool) -> list[str]:
        if not isinstance(schema, Mapping):
            return [f"$: a schema node must be an object, got {type(schema).__name__}"]
        if object_root and schema.get("type") != "object":
            self.issues.append('$: the root must be an object schema ({"type": "object", ...})')
        self.node(schema, "$", 0, "root")
        return self.issues

    def node(self, node: object, path: str, depth: int, edge: str) -> int:
        """Judge ``node`` and everything below it; return its height (levels below it)."""
        if not isinstance(node, Mapping):
            self.issues.append(
                f"{path}: a schema node must be an object, got {type(node).__name__}"
            )
            return 0
        key = id(node)
        position = self.active.get(key)
        if position is not None:
            self._cycle(path, position, edge)
            return 0
        height = self.heights.get(key)
        if height is not None:  # judged already, reached again by another path
            self._depth(path, depth + height)
            return height
        if depth > MAX_SCHEMA_DEPTH:  # S16: refused before recursing, so no RecursionError
            self._depth(path, depth)
            return 0
        self.active[key] = len(self.edges)
        self.edges.append(edge)
        height = self._members(node, path, depth)
        self.edges.pop()
        del self.active[key]
        self.heights[key] = height
        return height

    def _cycle(self, path: str, position: int, edge: str) -> None:
        if not self.for_validation:
            self.issues.append(f"{path}: the schema refers to itself (a cycle)")
        elif edge == "anyOf" and all(e == "anyOf" for e in self.edges[position + 1 :]):
            self.issues.append(
                f"{path}: anyOf leads back to an enclosing node without descending into the "
                "value (a cycle no value can end)"
            )

    def _depth(self, path: str, deepest: int) -> None:
        if deepest > MAX_SCHEMA_DEPTH and not self.too_deep:
            self.too_deep = True  # one issue says it; the rest of the walk is cut off the same way
            self.issues.append(
                f"{path}: the schema is nested more than {MAX_SCHEMA_DEPTH} levels deep"
            )

    def _child(self, value: object, path: str, depth: int, edge: str) -> int:
        return 1 + self.node(value, path, depth + 1, edge)

    def _members(self, node: Mapping[Any, Any], path: str, depth: int) -> int:
        issues = self.issues
        height = 0
        has_type = "type" in node
        has_any_of = "anyOf" in node
        if has_type and has_any_of:
            issues.append(f"{path}: declares both type and anyOf; use exactly one")
        elif not has_type and not has_any_of:
            issues.append(f"{path}: declares neither type nor anyOf; every node needs exactly one")
        if not self.for_validation:
            issues.extend(
                f"{path}: keyword {excerpt(keyword)} is outside the parameter-schema subset"
                for keyword in node
                if keyword not in SUBSET_KEYWORDS
            )
        if has_type:
            issues.extend(f"{path}: {fault}" for fault in _type_faults(node["type"]))
        if has_any_of:
            branches = node["anyOf"]
            if not isinstance(branches, list) or not branches:
                issues.append(f"{path}: anyOf must be a non-empty list of schemas")
            else:
                for index, branch in enumerate(branches):
                    found = self._child(branch, f"{path}.anyOf[{index}]", depth, "anyOf")
                    height = max(height, found)
        properties = node.get("properties")
        if "properties" in node:
            if not isinstance(properties, Mapping):
                issues.append(f"{path}: properties must map names to schemas")
            else:
                for name, child in properties.items():
                    if not isinstance(name, str):
                        issues.append(
                            f"{path}: property names must be strings, got {excerpt(name)}"
                        )
                        continue
                    found = self._child(child, f"{path}.properties[{excerpt(name)}]", depth, "key")
                    height = max(height, found)
        if "required" in node:
            self._required(node, path)
        if "additionalProperties" in node:
            additional = node["additionalProperties"]
            if isinstance(additional, Mapping):
                found = self._child(additional, f"{path}.additionalProperties", depth, "extra")
                height = max(height, found)
            elif not isinstance(additional, bool):
                issues.append(
                    f"{path}: additionalProperties must be true, false or a schema, got "
                    + excerpt(additional)
                )
        if "items" in node:
            height = max(height, self._child(node["items"], f"{path}.items", depth, "items"))
        if "enum" in node:
            enum = node["enum"]
            if not isinstance(enum, list) or not enum:
                issues.append(f"{path}: enum must be a non-empty list")
            else:
                for index, option in enumerate(enum):
                    fault = _json_fault(option)
                    if fault is not None:
                        issues.append(f"{path}: enum must list JSON values; item {index} {fault}")
                        break
        if "const" in node:
            fault = _json_fault(node["const"])
            if fault is not None:
                issues.append(f"{path}: const must be a JSON value; it {fault}")
        if "pattern" in node:
            self._pattern(node["pattern"], path)
        self._numbers(node, path)
        if "uniqueItems" in node and not isinstance(node["uniqueItems"], bool):
            issues.append(
                f"{path}: uniqueItems must be true or false, got {excerpt(node['uniqueItems'])}"
            )
        return height

    def _required(self, node: Mapping[Any, Any], path: str) -> None:
        required = node["required"]
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            self.issues.append(f"{path}: required must be a list of property names")
            return
        repeated = _repeated(required)
        if repeated:
            self.issues.extend(
                f"{path}: required names {excerpt(name)} more than once" for name in repeated
            )
            return
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            missing = [r for r in required if r not in properties]
            if missing and node.get("additionalProperties", False) is False:
                self.issues.append(
                    f"{path}: required names undeclared properties {excerpt(missing)}, which the "
                    "closed object can never contain"
                )

    def _pattern(self, pattern: object, path: str) -> None:
        if not isinstance(pattern, str):
            self.issues.append(f"{path}: pattern must be a string, got {excerpt(pattern)}")
        elif self.for_validation:
            compiled = compile_ecma_pattern(pattern)
            if isinstance(compiled, str):
                self.issues.append(f"{path}: pattern {excerpt(pattern)} {compiled}")

    def _numbers(self, node: Mapping[Any, Any], path: str) -> None:
        for keyword in _COUNT_KEYWORDS:
            if keyword in node and not _is_count(node[keyword]):
                shown = excerpt(node[keyword])
                self.issues.append(f"{path}: {keyword} must be a non-negative integer, got {shown}")
        for keyword in _BOUND_KEYWORDS:
            if keyword in node and not _is_finite_number(node[keyword]):
                self.issues.append(
                    f"{path}: {keyword} must be a finite number, got {excerpt(node[keyword])}"
                )
        if "multipleOf" in node:
            step = node["multipleOf"]
            if not (_is_finite_number(step) and step > 0):
                self.issues.append(
                    f"{path}: multipleOf must be a finite number greater than 0, got "
                    + excerpt(step)
                )


def _type_faults(declared: object) -> list[str]:
    names = [declared] if isinstance(declared, str) else declared
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and n in _TYPES for n in names)
    ):
        return ["type must be a JSON type name or a non-empty list of them"]
    return [f"type lists {excerpt(name)} more than once" for name in _repeated(names)]


def _repeated(names: list[str]) -> list[str]:
    """The names listed more than once, each once, in order (JSON Schema: MUST be unique)."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name in names:
        if name in seen:
            repeated[name] = None
        seen.add(name)
    return list(repeated)


def _is_finite_number(value: object) -> TypeGuard[int | float]:
    # JSON numbers: not booleans (True is not 1 in JSON), not NaN or an infinity.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_count(value: object) -> bool:
    # Draft 2020-12's non-negative integer: a JSON integer, so 2.0 is one.
    if not _is_finite_number(value):
        return False
    return value >= 0 and (isinstance(value, int) or value.is_integer())


def _json_fault(value: object) -> str | None:
    """Why ``value`` is not a JSON value an ``enum`` or ``const`` may hold, or ``None``.

    Iterative and bounded, so a deep or cyclic value is refused rather than recursed into; the
    bound also bounds the validator's comparisons against the value.
    """
    pending: list[tuple[object, int]] = [(value, 0)]
    parts = 0
    while pending:
        item, depth = pending.pop()
        parts += 1
        if parts > _MAX_VALUE_NODES:
            return f"has more than {_MAX_VALUE_NODES} parts"
        if depth > MAX_SCHEMA_DEPTH:
            return f"is nested more than {MAX_SCHEMA_DEPTH} levels deep"
        if item is None or isinstance(item, (bool, int, str)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"holds {item!r}, which is not a finite number"
        elif isinstance(item, (list, tuple)):
            pending.extend((member, depth + 1) for member in item)
        elif isinstance(item, Mapping):
            for key, member in item.items():
                if not isinstance(key, str):
                    return f"holds the property name {excerpt(key)}, which is not a string"
                pending.append((member, depth + 1))
        else:
            return f"holds a value of type {type(item).__name__}, which is not a JSON value"
    return None
