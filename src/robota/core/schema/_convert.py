"""``schema_from_type``: Python types and pydantic models → the parameter-schema subset (S16).

pydantic describes the type; this module holds the result to the subset and to S16's deliberate
choices:

* ``Optional[X]`` keeps its ``null`` branch — dropping it would reject a payload the author's own
  type accepts.
* An ``Enum`` (``IntEnum`` included) emits only its *values*, never its member names.
* Validators and serializers are unwrapped: the schema describes the validated input.
* A model's unknown-key mode maps distinctly: ``extra="forbid"`` → ``additionalProperties:
  false``; ``"allow"`` → ``true``; ``"ignore"`` (pydantic's default) also → ``true``, because
  extra keys are accepted and dropped, not rejected — under the closure rule, leaving it out
  would tell consumers to reject payloads the type accepts.
* Non-recursive ``$defs`` are inlined; ``title`` annotations are dropped.

Refused, with an error naming the construct, why, and an alternative (never mapped lossily):
fixed-length tuples (no positional items in the subset), recursive models (no ``$ref``),
intersections (no ``allOf``), unconstrained values (``Any``: no type), and any other keyword the
subset cannot carry. A non-object root is refused too: an empty schema would reach a model as
"an object, contents unspecified".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

import pydantic
from pydantic.json_schema import GenerateJsonSchema

from robota.core._errors import SchemaConversionError
from robota.core.schema._subset import SUBSET_KEYWORDS, ParameterSchema, check_parameter_schema
from robota.core.schema._validate import json_type_of

__all__ = ["schema_from_type"]

_DROPPED: Final = frozenset(
    {"title", "readOnly", "writeOnly", "deprecated", "$schema", "$id", "$defs"}
)

_REFUSED: Final = {
    "prefixItems": (
        "a fixed-length tuple",
        "the schema subset has no positional items",
        "use list[T] for a sequence, or a model with named fields for a fixed record",
    ),
    "allOf": (
        "an intersection (allOf)",
        "the schema subset has no allOf",
        "declare one model that has all the fields",
    ),
    "not": ("a negation (not)", "the schema subset has no not", "state what is accepted instead"),
    "patternProperties": (
        "pattern-keyed properties",
        "the schema subset has no patternProperties",
        "use dict[str, T]",
    ),
    "propertyNames": (
        "constrained property names (e.g. dict with non-string or Literal keys)",
        "the schema subset has no propertyNames",
        "use dict[str, T] and check the keys in the tool",
    ),
    "if": ("a conditional (if/then/else)", "the schema subset has no conditionals", "use a union"),
    "dependentRequired": (
        "dependent requirements",
        "the schema subset has no dependentRequired",
        "use a union of models",
    ),
}


def schema_from_type(tp: object) -> ParameterSchema:
    """The parameter schema (S16) of a Python type or pydantic model; the root must be an object.

    Accepts what pydantic accepts as a field type: ``str``, ``int``, ``float``, ``bool``,
    ``list[T]``, ``dict[str, T]``, models, dataclasses, ``typing_extensions.TypedDict``,
    ``Literal``, ``Enum``, unions, ``Optional``, ``Annotated`` constraints, defaults.

    Raises:
        SchemaConversionError: for a construct the subset cannot carry faithfully, naming it,
            saying why, and suggesting an alternative; or for a non-object root.
    """
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(tp)  # type: ignore[arg-type]
        raw = adapter.json_schema(mode="validation", schema_generator=GenerateJsonSchema)
    except SchemaConversionError:
        raise
    except Exception as exc:
        raise SchemaConversionError(
            f"{_name(tp)} cannot be described as a schema: {exc}", construct=_name(tp)
        ) from exc
    defs = raw.get("$defs", {})
    converted = _convert(raw, defs, (), "$")
    if converted.get("type") != "object":
        raise SchemaConversionError(
            f"{_name(tp)} is not an object type; a tool or output schema's root must be an "
            "object. Wrap the value in a model with a named field.",
            construct=_name(tp),
        )
    issues = check_parameter_schema(converted)
    if issues:  # pragma: no cover - a converter bug, not a user error
        raise SchemaConversionError(
            f"internal: converted schema of {_name(tp)} breaks the subset: {issues}",
            construct=_name(tp),
        )
    return converted  # type: ignore[return-value]


def _name(tp: object) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def _convert(
    node: Any, defs: Mapping[str, Any], trail: tuple[str, ...], path: str
) -> dict[str, Any]:
    if node is True or node == {}:
        raise _unconstrained(path)
    if not isinstance(node, Mapping):
        raise SchemaConversionError(
            f"{path}: unexpected schema node {node!r}", construct=repr(node)
        )
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in trail:
            raise SchemaConversionError(
                f"{path}: {name!r} refers to itself; recursive models cannot be expressed in the "
                "schema subset, which has no $ref (S16). Use a non-recursive shape, e.g. a flat "
                "list of items that name their parent by id.",
                construct=f"recursive model {name}",
            )
        if name not in defs:
            raise SchemaConversionError(f"{path}: unresolvable reference {ref!r}", construct=ref)
        target = _convert(defs[name], defs, (*trail, name), path)  # builds a new tree
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings:
            target.update(_convert_keywords(siblings, defs, trail, path))
        return target
    return _convert_keywords(node, defs, trail, path)


def _convert_keywords(
    node: Mapping[str, Any], defs: Mapping[str, Any], trail: tuple[str, ...], path: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for keyword, value in node.items():
        if keyword in _DROPPED:
            continue
        if keyword in _REFUSED:
            construct, why, alternative = _REFUSED[keyword]
            raise SchemaConversionError(
                f"{path}: {construct} cannot be expressed: {why} (S16). Instead, {alternative}.",
                construct=construct,
            )
        if keyword == "discriminator":
            continue  # an annotation of a oneOf
        if keyword in ("oneOf", "anyOf"):
            # oneOf is a discriminated union: its branches exclude each other, so anyOf means
            # the same.
            out["anyOf"] = [
                _convert(branch, defs, trail, f"{path}.anyOf[{i}]")
                for i, branch in enumerate(value)
            ]
        elif keyword == "properties":
            out["properties"] = {
                name: _convert(child, defs, trail, f"{path}.{name}")
                for name, child in value.items()
            }
        elif keyword == "items":
            if value is True or value == {}:
                raise SchemaConversionError(
                    f"{path}: a list of unconstrained values (list[Any]) cannot be described "
                    "(S16). Use list[T] with a concrete T.",
                    construct="list[Any]",
                )
            out["items"] = _convert(value, defs, trail, f"{path}[]")
        elif keyword == "additionalProperties" and isinstance(value, Mapping):
            out["additionalProperties"] = _convert(value, defs, trail, f"{path}{{}}")
        elif keyword in SUBSET_KEYWORDS:
            out[keyword] = copy.deepcopy(value)
        else:
            raise SchemaConversionError(
                f"{path}: the keyword {keyword!r} has no counterpart in the schema subset (S16); "
                "use a simpler type for this field",
                construct=keyword,
            )
    if "enum" in out and "type" not in out and "anyOf" not in out:
        out["type"] = _types_of(out["enum"])
    if "const" in out and "type" not in out and "anyOf" not in out:
        out["type"] = _types_of([out["const"]])
    if "type" not in out and "anyOf" not in out:
        raise _unconstrained(path)
    if "properties" in out and "additionalProperties" not in out:
        # pydantic states forbid (false) and allow (true); silence is its default, "ignore":
        # extra keys are accepted and dropped, so under the closure rule that is `true` (S16).
        out["additionalProperties"] = True
    return out


def _unconstrained(path: str) -> SchemaConversionError:
    return SchemaConversionError(
        f"{path}: an unconstrained value (Any) cannot be described: every node needs a type "
        "(S16). Use a concrete type, or a union of the types you accept.",
        construct="Any",
    )


def _types_of(values: list[Any]) -> str | list[str]:
    names = list(dict.fromkeys(json_type_of(value) for value in values))
    return names[0] if len(names) == 1 else names
