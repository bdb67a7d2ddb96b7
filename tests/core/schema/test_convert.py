"""S16 conversion from Python types and pydantic models."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest
from typing_extensions import TypedDict

import robota
from robota import SchemaConversionError, check_parameter_schema, schema_from_type


def _field(model: Any, name: str) -> Any:
    return schema_from_type(model)["properties"][name]


def test_s16_optional_keeps_the_null_branch() -> None:
    class M(pydantic.BaseModel):
        count: Optional[int] = None  # noqa: UP045 - the spelling under test

    assert _field(M, "count") == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}


def test_s16_int_enum_emits_only_its_values_never_its_names() -> None:
    class Level(enum.IntEnum):
        LOW = 1
        HIGH = 2

    class M(pydantic.BaseModel):
        level: Level

    schema = _field(M, "level")
    assert schema == {"type": "integer", "enum": [1, 2]}
    assert "LOW" not in repr(schema)


def test_s16_string_enum_and_mixed_literals_get_a_type() -> None:
    class Color(enum.Enum):
        RED = "red"

    class M(pydantic.BaseModel):
        color: Color
        mixed: Literal["auto", 0]
        single: Literal["only"]

    assert _field(M, "color") == {"type": "string", "enum": ["red"]}
    assert _field(M, "mixed") == {"enum": ["auto", 0], "type": ["string", "integer"]}
    assert _field(M, "single")["type"] == "string"


def test_s16_tuple_is_refused_naming_tuple_and_suggesting_list_or_a_model() -> None:
    class M(pydantic.BaseModel):
        pair: tuple[int, str]

    with pytest.raises(SchemaConversionError) as info:
        schema_from_type(M)
    message = str(info.value)
    assert "tuple" in message
    assert "list[T]" in message
    assert "model" in message
    assert info.value.construct == "a fixed-length tuple"


def test_s16_variable_length_tuple_is_a_list() -> None:
    class M(pydantic.BaseModel):
        values: tuple[int, ...]

    assert _field(M, "values") == {"type": "array", "items": {"type": "integer"}}


def test_s16_recursive_model_is_refused() -> None:
    class Node(pydantic.BaseModel):
        name: str
        children: list[Node] = []

    Node.model_rebuild()
    with pytest.raises(SchemaConversionError, match="refers to itself") as info:
        schema_from_type(Node)
    assert "recursive" in info.value.construct


def test_s16_non_recursive_defs_are_inlined() -> None:
    class Address(pydantic.BaseModel):
        city: str

    class Person(pydantic.BaseModel):
        home: Address
        work: Address | None = None

    schema = schema_from_type(Person)
    assert "$defs" not in repr(schema)
    assert "$ref" not in repr(schema)
    assert schema["properties"]["home"]["properties"] == {"city": {"type": "string"}}


def test_s16_extra_modes_map_distinctly() -> None:
    class Forbid(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        a: int

    class Ignore(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="ignore")
        a: int

    class Allow(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        a: int

    assert schema_from_type(Forbid)["additionalProperties"] is False
    assert schema_from_type(Ignore)["additionalProperties"] is True  # accepted, then dropped
    assert schema_from_type(Allow)["additionalProperties"] is True
    # Same emitted flag for ignore and allow, different behaviour of the type afterwards:
    assert Ignore.model_validate({"a": 1, "b": 2}).model_extra is None
    assert Allow.model_validate({"a": 1, "b": 2}).model_extra == {"b": 2}


def test_s16_annotated_constraints_and_defaults_are_kept() -> None:
    class M(pydantic.BaseModel):
        name: Annotated[str, pydantic.Field(min_length=2, max_length=8, description="Who")]
        age: Annotated[int, pydantic.Field(ge=0, lt=150)] = 30
        tags: Annotated[list[str], pydantic.Field(max_length=3)] = []

    schema = schema_from_type(M)
    assert schema["properties"]["name"] == {
        "type": "string",
        "minLength": 2,
        "maxLength": 8,
        "description": "Who",
    }
    assert schema["properties"]["age"] == {
        "type": "integer",
        "minimum": 0,
        "exclusiveMaximum": 150,
        "default": 30,
    }
    assert schema["properties"]["tags"]["maxItems"] == 3
    assert schema["required"] == ["name"]


def test_s16_validators_and_serializers_are_unwrapped() -> None:
    class M(pydantic.BaseModel):
        slug: str

        @pydantic.field_validator("slug")
        @classmethod
        def lower(cls, value: str) -> str:
            return value.lower()

        @pydantic.field_serializer("slug")
        def upper(self, value: str) -> str:
            return value.upper()

    assert _field(M, "slug") == {"type": "string"}


def test_s16_records_dataclasses_and_typed_dicts() -> None:
    @dataclasses.dataclass
    class Point:
        x: int

    class Options(TypedDict):
        verbose: bool

    class M(pydantic.BaseModel):
        scores: dict[str, float]
        point: Point
        options: Options

    schema = schema_from_type(M)
    assert schema["properties"]["scores"] == {
        "type": "object",
        "additionalProperties": {"type": "number"},
    }
    assert schema["properties"]["point"]["properties"] == {"x": {"type": "integer"}}
    assert schema["properties"]["options"]["properties"] == {"verbose": {"type": "boolean"}}
    assert check_parameter_schema(schema) == []


def test_s16_discriminated_unions_become_any_of() -> None:
    class Cat(pydantic.BaseModel):
        kind: Literal["cat"]

    class Dog(pydantic.BaseModel):
        kind: Literal["dog"]

    class M(pydantic.BaseModel):
        pet: Annotated[Cat | Dog, pydantic.Field(discriminator="kind")]

    pet = _field(M, "pet")
    assert [b["properties"]["kind"]["const"] for b in pet["anyOf"]] == ["cat", "dog"]
    assert "discriminator" not in repr(pet)


def test_s16_any_is_refused_with_an_alternative() -> None:
    class M(pydantic.BaseModel):
        blob: Any

    with pytest.raises(SchemaConversionError, match="concrete type"):
        schema_from_type(M)

    class L(pydantic.BaseModel):
        items: list[Any]

    with pytest.raises(SchemaConversionError, match=r"list\[Any\]"):
        schema_from_type(L)


def test_s16_a_non_object_root_is_refused() -> None:
    with pytest.raises(SchemaConversionError, match="not an object type"):
        schema_from_type(int)
    with pytest.raises(SchemaConversionError, match="not an object type"):
        schema_from_type(list[str])


def test_s16_dict_with_non_string_keys_is_refused() -> None:
    class M(pydantic.BaseModel):
        by_id: dict[Literal["a", "b"], int]

    with pytest.raises(SchemaConversionError, match="propertyNames"):
        schema_from_type(M)


def test_types_pydantic_cannot_describe_are_reported_as_conversion_errors() -> None:
    class Opaque:
        pass

    with pytest.raises(SchemaConversionError, match="cannot be described"):
        schema_from_type(Opaque)
    assert issubclass(SchemaConversionError, robota.ConfigurationError)
