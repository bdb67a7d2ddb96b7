"""Schemas (S16–S18): the parameter-schema subset, conversion, the one validator, projection."""

from robota.core.schema._convert import schema_from_type
from robota.core.schema._project import (
    DANGEROUS_PROPERTY_NAMES,
    ProjectionOutcome,
    ProjectionPolicy,
    ProjectionResult,
    default_projection_note,
    project_tool_schema,
    project_tool_spec,
)
from robota.core.schema._subset import (
    ANNOTATION_KEYWORDS,
    CONSTRAINT_KEYWORDS,
    SUBSET_KEYWORDS,
    JsonType,
    ParameterSchema,
    check_parameter_schema,
)
from robota.core.schema._validate import (
    MAX_VALIDATION_DEPTH,
    MAX_VALIDATION_NODES,
    json_type_of,
    validate_against_json_schema,
)

__all__ = [
    "ANNOTATION_KEYWORDS",
    "CONSTRAINT_KEYWORDS",
    "DANGEROUS_PROPERTY_NAMES",
    "MAX_VALIDATION_DEPTH",
    "MAX_VALIDATION_NODES",
    "SUBSET_KEYWORDS",
    "JsonType",
    "ParameterSchema",
    "ProjectionOutcome",
    "ProjectionPolicy",
    "ProjectionResult",
    "check_parameter_schema",
    "default_projection_note",
    "json_type_of",
    "project_tool_schema",
    "project_tool_spec",
    "schema_from_type",
    "validate_against_json_schema",
]
