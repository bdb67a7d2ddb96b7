"""Anthropic's tool-schema rules as a projection policy (S17)."""

from __future__ import annotations

from typing import Final

from robota.core.schema import ProjectionPolicy

__all__ = ["ANTHROPIC_POLICY"]

ANTHROPIC_POLICY: Final = ProjectionPolicy(
    name="anthropic",
    unknown_keywords="keep",  # standard JSON Schema with an object root
    additional_properties="explicit",
)
"""Standard JSON Schema: the closure rule's implied ``false`` is stated, nothing is dropped."""
