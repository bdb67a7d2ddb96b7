"""Tools (S41): the base class, ``@tool``, the registry and the execution service."""

from robota.core.tools._executor import (
    Admission,
    ToolCallOutcome,
    ToolExecutionService,
    ToolGate,
    ToolInvocation,
)
from robota.core.tools._function import FunctionTool, tool
from robota.core.tools._registry import ToolLike, ToolRegistry, as_tool
from robota.core.tools._tool import (
    ArgumentKind,
    OutsideResponder,
    PermissionArgument,
    RiskClass,
    Tool,
    ToolContext,
    ToolOutput,
    ToolResult,
    to_tool_result,
)

__all__ = [
    "Admission",
    "ArgumentKind",
    "FunctionTool",
    "OutsideResponder",
    "PermissionArgument",
    "RiskClass",
    "Tool",
    "ToolCallOutcome",
    "ToolContext",
    "ToolExecutionService",
    "ToolGate",
    "ToolInvocation",
    "ToolLike",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "as_tool",
    "to_tool_result",
    "tool",
]
