"""The parameter-schema subset (S16): one shape for the root and every nested node.

:class:`ParameterSchema` is the JSON Schema subset every tool schema and structured-output schema
in Robota is expressed in. The same shape describes the root object and every nested node — there
is no separate nested form. :func:`check_parameter_schema` states the subset's rules:

* exactly one of ``type`` / ``anyOf`` per node — both (a provider applies both and rejects
  whichever fails) or neither (an unconstrained value) is refused;
* keywords outside the subset are refused (they would be silently ignored somewhere);
* the root of a tool or structured-output schema is an object.

The closure rule (S16) is a matter of meaning, not shape: a node that declares ``properties`` —
even an empty one — rejects undeclared properties unless ``additionalProperties`` says otherwise;
a node without ``properties`` accepts any. ``validate_against_json_schema`` applies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

from typing_extensions import TypedDict

__all__ = [
    "ANNOTATION_KEYWORDS",
    "CONSTRAINT_KEYWORDS",
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

_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def check_parameter_schema(schema: object, *, object_root: bool = True) -> list[str]:
    """The subset rules ``schema`` breaks, as readable issues naming each node's path.

    Args:
        schema: The schema to check.
        object_root: Require the root to be an object schema (tool and output schemas).
    """
    issues: list[str] = []
    if not isinstance(schema, Mapping):
        return [f"$: a schema node must be an object, got {type(schema).__name__}"]
    if object_root and schema.get("type") != "object":
        issues.append('$: the root must be an object schema ({"type": "object", ...})')
    _check_node(schema, "$", issues, set())
    return issues


def _check_node(node: Mapping[str, Any], path: str, issues: list[str], seen: set[int]) -> None:
    if id(node) in seen:
        issues.append(f"{path}: the schema refers to itself (a cycle)")
        return
    seen = seen | {id(node)}
    has_type = "type" in node
    has_any_of = "anyOf" in node
    if has_type and has_any_of:
        issues.append(f"{path}: declares both type and anyOf; use exactly one")
    elif not has_type and not has_any_of:
        issues.append(f"{path}: declares neither type nor anyOf; every node needs exactly one")
    issues.extend(
        f"{path}: keyword {keyword!r} is outside the parameter-schema subset"
        for keyword in node
        if keyword not in SUBSET_KEYWORDS
    )
    if has_type:
        declared = node["type"]
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not names or any(n not in _TYPES for n in names):
            issues.append(f"{path}: type must be a JSON type name or a non-empty list of them")
    if has_any_of:
        branches = node["anyOf"]
        if not isinstance(branches, list) or not branches:
            issues.append(f"{path}: anyOf must be a non-empty list of schemas")
        else:
            for index, branch in enumerate(branches):
                _child(branch, f"{path}.anyOf[{index}]", issues, seen)
    properties = node.get("properties")
    if properties is not None:
        if not isinstance(properties, Mapping):
            issues.append(f"{path}: properties must map names to schemas")
        else:
            for name, child in properties.items():
                _child(child, f"{path}.properties[{name!r}]", issues, seen)
    required = node.get("required")
    if required is not None:
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            issues.append(f"{path}: required must be a list of property names")
        elif properties is not None and isinstance(properties, Mapping):
            missing = [r for r in required if r not in properties]
            if missing and node.get("additionalProperties", False) is False:
                issues.append(
                    f"{path}: required names undeclared properties {missing}, which the closed "
                    "object can never contain"
                )
    additional = node.get("additionalProperties")
    if additional is not None and not isinstance(additional, bool):
        _child(additional, f"{path}.additionalProperties", issues, seen)
    items = node.get("items")
    if items is not None:
        _child(items, f"{path}.items", issues, seen)
    enum = node.get("enum")
    if enum is not None and (not isinstance(enum, list) or not enum):
        issues.append(f"{path}: enum must be a non-empty list")


def _child(value: object, path: str, issues: list[str], seen: set[int]) -> None:
    if isinstance(value, Mapping):
        _check_node(value, path, issues, seen)
    else:
        issues.append(f"{path}: a schema node must be an object, got {type(value).__name__}")
