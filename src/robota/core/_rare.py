"""Rarely set per-object state, kept off the object until first set (issue 27).

Internal. A :class:`RareField` is a class attribute standing for an instance attribute that most
instances leave at its default their whole life (an agent's sync driver, its close errors, its
tool-source bookkeeping). Reading it gives the default until a different value is set; setting
one stores it in the instance's ``_rare`` dict, built then. An agent that never streams, closes
or has tool sources therefore carries one empty slot instead of one slot per field.

The owner declares a ``_rare`` slot initialised to ``None`` before any field is set.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast, final

__all__ = ["RareField"]

T = TypeVar("T")


@final
class RareField(Generic[T]):
    """An instance attribute held in the instance's ``_rare`` dict while not at its default."""

    __slots__ = ("_default", "_name")

    def __init__(self, default: T) -> None:
        self._default = default
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, instance: Any, owner: type | None = None) -> T:
        if instance is None:
            return cast("T", self)  # the class attribute itself, for introspection
        rare: dict[str, object] | None = instance._rare
        if rare is None:
            return self._default
        return cast("T", rare.get(self._name, self._default))

    def __set__(self, instance: Any, value: T) -> None:
        rare: dict[str, object] | None = instance._rare
        if value is self._default:
            if rare is not None:
                rare.pop(self._name, None)
            return
        if rare is None:
            rare = instance._rare = {}
        rare[self._name] = value
