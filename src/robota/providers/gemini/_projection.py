"""Gemini's tool-schema rules as a projection policy (S17)."""

from __future__ import annotations

from typing import Final

from robota.core.schema import ProjectionPolicy

__all__ = ["GEMINI_POLICY"]

GEMINI_POLICY: Final = ProjectionPolicy(
    name="gemini",
    # An OpenAPI 3.0 subset: one type per node with `nullable`, no additionalProperties.
    keywords=frozenset(
        {
            "type",
            "anyOf",
            "properties",
            "required",
            "items",
            "enum",
            "description",
            "default",
            "format",
            "pattern",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "nullable",
        }
    ),
    single_type=True,
    null_branch="nullable",
    const_as_enum=True,
    open_arrays="reject",  # arrays need typed items
    additional_properties="drop",
)
"""Gemini function declarations: OpenAPI-3.0-shaped, so closure cannot be carried."""
