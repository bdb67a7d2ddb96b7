"""OpenAI's tool-schema rules as projection policies (S17)."""

from __future__ import annotations

from typing import Final

from robota.core.schema import ProjectionPolicy

__all__ = ["OPENAI_POLICY", "OPENAI_STRICT_POLICY"]

OPENAI_POLICY: Final = ProjectionPolicy(
    name="openai",
    open_arrays="declare_any",  # an array must declare items
    open_objects="declare_empty",  # an object must declare properties
    additional_properties="explicit",
)
"""Non-strict function calling: standard JSON Schema, with items and properties declared."""

OPENAI_STRICT_POLICY: Final = ProjectionPolicy(
    name="openai-strict",
    keywords=frozenset(
        {
            "type",
            "anyOf",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "description",
            "pattern",
            "format",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minItems",
            "maxItems",
        }
    ),  # no string-length or property-count bounds, no default (S17)
    open_arrays="reject",
    open_objects="reject",
    additional_properties="close",
    schema_additional_properties="reject",
    require_all=True,
)
"""Strict mode: every object closed, every property required (optional ⇒ nullable)."""
