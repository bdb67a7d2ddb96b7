"""Schemas (S16–S18): the parameter-schema subset and the one validator."""

from robota.core.schema._validate import (
    MAX_VALIDATION_DEPTH,
    MAX_VALIDATION_NODES,
    validate_against_json_schema,
)

__all__ = ["MAX_VALIDATION_DEPTH", "MAX_VALIDATION_NODES", "validate_against_json_schema"]
