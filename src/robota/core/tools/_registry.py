"""The tool registry: an agent's catalog of tools by name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, final

from robota.core._errors import ConfigurationError
from robota.core.providers._contract import ToolSpec
from robota.core.tools._function import FunctionTool
from robota.core.tools._tool import Tool

__all__ = ["ToolLike", "ToolRegistry", "as_tool"]

ToolLike = Tool | Callable[..., Any]
"""A :class:`Tool`, or a plain function that :func:`robota.tool` can wrap."""


def as_tool(item: ToolLike) -> Tool:
    """``item`` itself when it is a :class:`Tool`; a :class:`FunctionTool` around a function."""
    if isinstance(item, Tool):
        return item
    if callable(item):
        return FunctionTool(item)
    raise ConfigurationError(f"not a tool or a function: {item!r}")


@final
class ToolRegistry:
    """Tools by unique name, in registration order."""

    __slots__ = ("_specs", "_tools")

    def __init__(self, tools: Iterable[ToolLike] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: tuple[ToolSpec, ...] | None = None
        for item in tools:
            self.register(item)

    def register(self, item: ToolLike) -> Tool:
        """Add a tool (wrapping a function); returns it.

        Raises:
            ConfigurationError: if a tool of that name is already registered.
        """
        tool = as_tool(item)
        if tool.name in self._tools:
            raise ConfigurationError(
                f"a tool named {tool.name!r} is already registered; tool names must be unique"
            )
        self._tools[tool.name] = tool
        self._specs = None
        return tool

    def unregister(self, name: str) -> Tool | None:
        """Remove and return the tool named ``name`` (``None`` when there is none)."""
        tool = self._tools.pop(name, None)
        if tool is not None:
            self._specs = None
        return tool

    def get(self, name: str) -> Tool | None:
        """The tool named exactly ``name``, or ``None`` (names are never aliased, S37)."""
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order."""
        return tuple(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Every tool as offered to a model (read fresh after any change)."""
        if self._specs is None:
            self._specs = tuple(tool.spec() for tool in self._tools.values())
        return self._specs

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._tools)!r})"
