"""Tools shaped like the ones permission rules are written for."""

from __future__ import annotations

from typing import Any

import pytest

import robota


def make_tool(
    name: str,
    *,
    risk: robota.RiskClass | None,
    argument: robota.PermissionArgument | None,
    properties: dict[str, Any] | None = None,
    operator_only: bool = False,
) -> robota.Tool:
    props = (
        properties
        if properties is not None
        else ({argument.key: {"type": "string"}} if argument is not None else {})
    )

    class _T(robota.Tool):
        async def execute(self, args: Any, ctx: robota.ToolContext) -> str:
            return "ran"

    tool = _T(
        name,
        f"The {name} tool.",
        {"type": "object", "properties": props},
        risk=risk,
        permission_argument=argument,
    )
    tool.operator_only = operator_only
    return tool


@pytest.fixture
def read() -> robota.Tool:
    return make_tool("Read", risk="inspect", argument=robota.PermissionArgument("path", "path"))


@pytest.fixture
def write() -> robota.Tool:
    return make_tool(
        "Write",
        risk="modify",
        argument=robota.PermissionArgument("path", "path"),
        properties={"path": {"type": "string"}, "content": {"type": "string"}},
    )


@pytest.fixture
def bash() -> robota.Tool:
    return make_tool(
        "Bash",
        risk="execute",
        argument=robota.PermissionArgument("command", "command"),
        properties={"command": {"type": "string"}, "timeout": {"type": "integer"}},
    )


@pytest.fixture
def fetch() -> robota.Tool:
    return make_tool(
        "WebFetch",
        risk="inspect",
        argument=robota.PermissionArgument("url", "url"),
        properties={"url": {"type": "string"}, "prompt": {"type": "string"}},
    )


@pytest.fixture
def unclassified() -> robota.Tool:
    return make_tool("Mystery", risk=None, argument=None)
