"""Tool schema projection (S17): one pure projector every provider uses.

Each vendor's wire format accepts a different subset of JSON Schema. Instead of each adapter
reshaping schemas itself, an adapter describes its vendor as a :class:`ProjectionPolicy` (the
policy object lives in the provider package that owns those facts; core names no vendor) and calls
:func:`project_tool_schema`. The projector

* is pure and deterministic, never raises, and never mutates its input;
* returns ``adopted`` (the very same object, nothing to change), ``adapted`` (a projected copy
  with the list of changes) or ``rejected`` (unusable for this provider, with the reason);
* refuses a non-object root, a dangerous property name (``__proto__``, ``constructor``,
  ``prototype``), a cycle, excessive depth or node count, and — per policy — unknown keywords or
  a node declaring both ``type`` and ``anyOf``;
* when an adaptation removes a real validation *constraint* (a pattern, ``additionalProperties``,
  a bound …) rather than an annotation, reports it, so the tool description can carry one trailing
  note naming what this provider was not shown (:func:`project_tool_spec`).

A projection changes only the wire. Arguments are always validated against the *original* schema,
so a wire relaxation — strict mode's optional-as-nullable, a dropped pattern — can never widen what
a call may contain (S17). :meth:`ProjectionResult.unwire` maps strict mode's ``null`` for an
optional field back to "absent" before that validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, TypeAlias, final

from robota.core.providers._contract import ToolSpec
from robota.core.schema._subset import CONSTRAINT_KEYWORDS, SUBSET_KEYWORDS

__all__ = [
    "DANGEROUS_PROPERTY_NAMES",
    "ProjectionOutcome",
    "ProjectionPolicy",
    "ProjectionResult",
    "default_projection_note",
    "project_tool_schema",
    "project_tool_spec",
]

ProjectionOutcome: TypeAlias = Literal["adopted", "adapted", "rejected"]

DANGEROUS_PROPERTY_NAMES: Final = frozenset({"__proto__", "constructor", "prototype"})
"""Property names refused for every provider (they poison prototypes in JavaScript consumers)."""


@final
@dataclass(frozen=True, slots=True)
class ProjectionPolicy:
    """What one vendor's wire format accepts; each provider package defines its own (S17).

    Attributes:
        name: The policy's name, for messages (``"openai-strict"`` …).
        keywords: Keywords the vendor accepts. Others are handled by ``unknown_keywords``.
        unknown_keywords: ``"strip"`` (drop, noting dropped constraints), ``"reject"``, or
            ``"keep"`` (pass through; for vendors that take standard JSON Schema).
        type_and_any_of: A node declaring both: ``"reject"`` or ``"keep"``.
        single_type: The vendor takes one type per node (OpenAPI 3.0): ``["X", "null"]`` becomes
            ``X`` with ``nullable``, several types become an ``anyOf``.
        null_branch: ``"keep"`` a ``{"type": "null"}`` branch, or turn it into ``nullable``.
        const_as_enum: Express ``const`` as a one-value ``enum``.
        open_arrays: An array without typed ``items``: ``"keep"``, ``"declare_any"`` (add empty
            ``items``) or ``"reject"``.
        open_objects: An object without ``properties``: ``"keep"``, ``"declare_empty"`` (add
            empty ``properties``) or ``"reject"``.
        additional_properties: ``"explicit"`` (state the closure rule's ``false`` wherever it is
            implied), ``"drop"`` (the vendor cannot carry it), or ``"close"`` (every object
            closed).
        schema_additional_properties: A schema-valued ``additionalProperties`` (a ``dict[str,
            T]``): ``"keep"`` or ``"reject"``.
        require_all: Every property required; an optional one is made nullable instead.
        max_depth: Deepest nesting accepted.
        max_nodes: Most schema nodes accepted.
    """

    name: str
    keywords: frozenset[str] = SUBSET_KEYWORDS
    unknown_keywords: Literal["strip", "reject", "keep"] = "strip"
    type_and_any_of: Literal["reject", "keep"] = "reject"
    single_type: bool = False
    null_branch: Literal["keep", "nullable"] = "keep"
    const_as_enum: bool = False
    open_arrays: Literal["keep", "declare_any", "reject"] = "keep"
    open_objects: Literal["keep", "declare_empty", "reject"] = "keep"
    additional_properties: Literal["explicit", "drop", "close"] = "explicit"
    schema_additional_properties: Literal["keep", "reject"] = "keep"
    require_all: bool = False
    max_depth: int = 32
    max_nodes: int = 10_000


@final
@dataclass(frozen=True, slots=True)
class ProjectionResult:
    """The projector's answer.

    Attributes:
        outcome: ``"adopted"``, ``"adapted"`` or ``"rejected"``.
        schema: The schema to send (the input itself when adopted); ``None`` when rejected.
        changes: What was changed, one readable line each (``"$.email: dropped pattern"``).
        reason: Why it was rejected, or ``None``.
        dropped_constraints: The real constraints the provider is not shown, as
            ``"keyword ($.path)"``; they feed the description note.
        nullable_paths: Property paths strict mode made nullable-and-required (see :meth:`unwire`).
    """

    outcome: ProjectionOutcome
    schema: Mapping[str, Any] | None
    changes: tuple[str, ...] = ()
    reason: str | None = None
    dropped_constraints: tuple[str, ...] = ()
    nullable_paths: tuple[tuple[str, ...], ...] = field(default=())

    def unwire(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Arguments as the original schema expects them.

        A ``null`` that the nullable-and-required compensation put in place of an optional field
        becomes absent again, so validation against the original schema sees what it expects.
        """
        if not self.nullable_paths or not isinstance(arguments, Mapping):
            return arguments
        result: dict[str, Any] = dict(arguments)
        for path in self.nullable_paths:
            _drop_null(result, path)
        return result


def _drop_null(node: dict[str, Any], path: tuple[str, ...]) -> None:
    head, *rest = path
    if not rest:
        if head in node and node[head] is None:
            del node[head]
        return
    child = node.get(head)
    if isinstance(child, Mapping):
        copied = dict(child)
        _drop_null(copied, tuple(rest))
        node[head] = copied


class _Rejected(Exception):
    pass


class _Projector:
    __slots__ = ("changes", "dropped", "nodes", "nullable", "policy")

    def __init__(self, policy: ProjectionPolicy) -> None:
        self.policy = policy
        self.changes: list[str] = []
        self.dropped: list[str] = []
        self.nullable: list[tuple[str, ...]] = []
        self.nodes = 0

    def change(self, path: str, text: str) -> None:
        self.changes.append(f"{path}: {text}")

    def drop(self, path: str, keyword: str) -> None:
        self.change(path, f"dropped {keyword}")
        if keyword in CONSTRAINT_KEYWORDS:
            self.dropped.append(f"{keyword} ({path})")

    def node(
        self,
        value: object,
        path: str,
        depth: int,
        active: frozenset[int],
        props: tuple[str, ...] | None,
    ) -> dict[str, Any]:
        policy = self.policy
        if not isinstance(value, Mapping):
            raise _Rejected(f"{path}: a schema node must be an object, got {type(value).__name__}")
        if id(value) in active:
            raise _Rejected(f"{path}: the schema refers to itself (a cycle)")
        if depth > policy.max_depth:
            raise _Rejected(f"{path}: nested deeper than {policy.max_depth} levels")
        self.nodes += 1
        if self.nodes > policy.max_nodes:
            raise _Rejected(f"the schema has more than {policy.max_nodes} nodes")
        active = active | {id(value)}
        if "type" in value and "anyOf" in value and policy.type_and_any_of == "reject":
            raise _Rejected(f"{path}: declares both type and anyOf")
        out: dict[str, Any] = {}
        for keyword, item in value.items():
            if keyword in ("properties", "items", "anyOf", "additionalProperties", "required"):
                continue  # structural keywords below
            if keyword == "const" and policy.const_as_enum:
                out["enum"] = [item]
                self.change(path, "const expressed as a one-value enum")
            elif (
                keyword in policy.keywords
                or keyword == "nullable"
                or (policy.unknown_keywords == "keep" and keyword not in SUBSET_KEYWORDS)
            ):
                out[keyword] = item
            elif policy.unknown_keywords == "reject" and keyword not in SUBSET_KEYWORDS:
                raise _Rejected(f"{path}: keyword {keyword!r} is not accepted by {policy.name}")
            else:
                self.drop(path, keyword)
        self._any_of(value, out, path, depth, active)
        self._types(out, path)
        if _has_type(out, "object") or "properties" in value:
            self._object(value, out, path, depth, active, props)
        if _has_type(out, "array") or "items" in value:
            self._array(value, out, path, depth, active)
        return out

    def _any_of(
        self,
        value: Mapping[str, Any],
        out: dict[str, Any],
        path: str,
        depth: int,
        active: frozenset[int],
    ) -> None:
        branches = value.get("anyOf")
        if branches is None:
            return
        if not isinstance(branches, list) or not branches:
            raise _Rejected(f"{path}: anyOf must be a non-empty list")
        projected = [
            self.node(b, f"{path}.anyOf[{i}]", depth + 1, active, None)
            for i, b in enumerate(branches)
        ]
        if self.policy.null_branch == "nullable":
            non_null = [b for b in projected if b.get("type") != "null"]
            if len(non_null) != len(projected):
                self.change(path, "null branch expressed as nullable")
                if len(non_null) == 1:
                    out.update(non_null[0])
                    out["nullable"] = True
                    return
                out["nullable"] = True
                projected = non_null
        out["anyOf"] = projected

    def _types(self, out: dict[str, Any], path: str) -> None:
        declared = out.get("type")
        if not isinstance(declared, list) or not self.policy.single_type:
            return
        names = [n for n in declared if n != "null"]
        if len(names) != len(declared):
            out["nullable"] = True
        if len(names) == 1:
            out["type"] = names[0]
            self.change(path, "type list expressed as one type with nullable")
        else:
            del out["type"]
            out["anyOf"] = [{"type": n} for n in names]
            self.change(path, "type list expressed as anyOf")

    def _object(
        self,
        value: Mapping[str, Any],
        out: dict[str, Any],
        path: str,
        depth: int,
        active: frozenset[int],
        props: tuple[str, ...] | None,
    ) -> None:
        policy = self.policy
        properties = value.get("properties")
        additional = value.get("additionalProperties")
        if properties is not None and not isinstance(properties, Mapping):
            raise _Rejected(f"{path}: properties must map names to schemas")
        required = value.get("required")
        if required is not None and not (
            isinstance(required, list) and all(isinstance(r, str) for r in required)
        ):
            raise _Rejected(f"{path}: required must be a list of names")
        if isinstance(additional, Mapping) and policy.schema_additional_properties == "reject":
            raise _Rejected(
                f"{path}: a schema-valued additionalProperties (a dict of values) cannot be "
                f"expressed by {policy.name}"
            )
        if properties is not None:
            projected: dict[str, Any] = {}
            for name, child in properties.items():
                if name in DANGEROUS_PROPERTY_NAMES:
                    raise _Rejected(f"{path}: dangerous property name {name!r}")
                child_props = (*props, name) if props is not None else None
                projected[name] = self.node(child, f"{path}.{name}", depth + 1, active, child_props)
            out["properties"] = projected
        elif policy.open_objects == "reject":
            raise _Rejected(
                f"{path}: an open object (no properties) cannot be expressed by {policy.name}"
            )
        elif policy.open_objects == "declare_empty":
            out["properties"] = {}
            self.change(path, "declared empty properties")
        if required is not None:
            out["required"] = list(required)
        if isinstance(additional, Mapping):
            if policy.additional_properties == "drop":
                self.drop(path, "additionalProperties")
            else:
                out["additionalProperties"] = self.node(
                    additional, f"{path}{{}}", depth + 1, active, None
                )
        else:
            self._closure(additional, properties is not None, out, path)
        if policy.require_all and properties is not None:
            self._require_all(out, path, props)

    def _closure(self, additional: object, declared: bool, out: dict[str, Any], path: str) -> None:
        mode = self.policy.additional_properties
        # S16: with declared properties, silence means closed.
        closed = additional is False or (additional is None and declared)
        if mode == "drop":
            if closed:
                self.drop(path, "additionalProperties")
            elif additional is not None:
                self.change(path, "dropped additionalProperties")
        elif mode == "close":
            if additional is not False:
                self.change(path, "closed the object (additionalProperties: false)")
            out["additionalProperties"] = False
        elif additional is None and declared:
            self.change(path, "stated the implied additionalProperties: false")
            out["additionalProperties"] = False
        elif additional is not None:
            out["additionalProperties"] = additional

    def _require_all(self, out: dict[str, Any], path: str, props: tuple[str, ...] | None) -> None:
        properties: dict[str, Any] = out["properties"]
        required = list(out.get("required", []))
        for name, child in properties.items():
            if name in required:
                continue
            required.append(name)
            widened = _nullable(child)
            self.change(f"{path}.{name}", "optional property made nullable and required")
            if widened is not child:
                properties[name] = widened
                if props is not None:
                    self.nullable.append((*props, name))
        out["required"] = required

    def _array(
        self,
        value: Mapping[str, Any],
        out: dict[str, Any],
        path: str,
        depth: int,
        active: frozenset[int],
    ) -> None:
        items = value.get("items")
        policy = self.policy
        if isinstance(items, Mapping) and ("type" in items or "anyOf" in items or "enum" in items):
            out["items"] = self.node(items, f"{path}[]", depth + 1, active, None)
            return
        if items is not None and not isinstance(items, Mapping):
            raise _Rejected(f"{path}: items must be a schema")
        if policy.open_arrays == "reject":
            raise _Rejected(
                f"{path}: an array without typed items cannot be expressed by {policy.name}"
            )
        if policy.open_arrays == "declare_any":
            out["items"] = {}
            if items is None:
                self.change(path, "declared items")
        elif items is not None:
            out["items"] = self.node(items, f"{path}[]", depth + 1, active, None)


def _has_type(node: Mapping[str, Any], name: str) -> bool:
    declared = node.get("type")
    return declared == name or (isinstance(declared, list) and name in declared)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return schema if declared == "null" else {**schema, "type": [declared, "null"]}
    if isinstance(declared, list):
        return schema if "null" in declared else {**schema, "type": [*declared, "null"]}
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        if any(b.get("type") == "null" for b in branches if isinstance(b, Mapping)):
            return schema
        return {**schema, "anyOf": [*branches, {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def project_tool_schema(schema: Mapping[str, Any], policy: ProjectionPolicy) -> ProjectionResult:
    """Project ``schema`` for the vendor ``policy`` describes (S17). Pure; never raises.

    Returns ``adopted`` with the same object when nothing needs changing, ``adapted`` with a
    copy and its changes, or ``rejected`` with a reason.
    """
    candidate: object = schema  # untyped callers (MCP servers, config) can pass anything
    try:
        if not isinstance(candidate, Mapping) or candidate.get("type") != "object":
            return ProjectionResult("rejected", None, reason="the root must be an object schema")
        projector = _Projector(policy)
        projected = projector.node(schema, "$", 0, frozenset(), ())
    except _Rejected as rejection:
        return ProjectionResult("rejected", None, reason=str(rejection))
    except RecursionError:
        return ProjectionResult("rejected", None, reason="the schema is nested too deeply")
    except Exception as exc:  # noqa: BLE001 - S17: the projector never throws
        return ProjectionResult(
            "rejected", None, reason=f"the schema could not be projected: {exc!r}"
        )
    if not projector.changes:
        return ProjectionResult("adopted", schema)
    return ProjectionResult(
        "adapted",
        projected,
        changes=tuple(projector.changes),
        dropped_constraints=tuple(dict.fromkeys(projector.dropped)),
        nullable_paths=tuple(projector.nullable),
    )


def default_projection_note(dropped: tuple[str, ...]) -> str:
    """The neutral trailing description note naming constraints a provider was not shown."""
    return "(Constraints not shown in this schema but still enforced: " + ", ".join(dropped) + ".)"


def project_tool_spec(
    spec: ToolSpec,
    policy: ProjectionPolicy,
    *,
    note: Callable[[tuple[str, ...]], str] = default_projection_note,
) -> tuple[ToolSpec | None, ProjectionResult]:
    """Project a tool as offered to a model (S17).

    The schema is projected; when real constraints were dropped, the description gains one
    trailing note naming them (``note`` is the override seam for its wording). Returns
    ``(None, result)`` when rejected.
    """
    result = project_tool_schema(spec.parameters, policy)
    if result.outcome == "rejected" or result.schema is None:
        return None, result
    if result.outcome == "adopted":
        return spec, result
    description = spec.description
    if result.dropped_constraints:
        text = note(result.dropped_constraints)
        description = f"{description}\n\n{text}" if description else text
    return replace(spec, description=description, parameters=result.schema), result
