"""Tools (S41): the base class, ``@tool``, the registry and the execution service."""

from robota.core.tools._deferral import (
    AUTO_DEFERRAL_SCHEMA_SHARE,
    AUTO_DEFERRAL_TOOL_COUNT,
    TOOL_SEARCH_NAME,
    ToolCatalog,
    ToolDeferral,
    ToolSearchTool,
    estimate_schema_tokens,
)
from robota.core.tools._executor import (
    Admission,
    ToolCallOutcome,
    ToolExecutionService,
    ToolGate,
    ToolInvocation,
)
from robota.core.tools._function import FunctionTool, tool
from robota.core.tools._registry import ToolLike, ToolRegistry, as_tool
from robota.core.tools._screen import PathScreen, PathVerdict
from robota.core.tools._source import RejectedTool, ToolSource
from robota.core.tools._tool import (
    ArgumentKind,
    OutsideResponder,
    PermissionArgument,
    RiskClass,
    Tool,
    ToolContext,
    ToolOutput,
    ToolResidency,
    ToolResult,
    to_tool_result,
)

__all__ = [
    "AUTO_DEFERRAL_SCHEMA_SHARE",
    "AUTO_DEFERRAL_TOOL_COUNT",
    "TOOL_SEARCH_NAME",
    "Admission",
    "ArgumentKind",
    "FunctionTool",
    "OutsideResponder",
    "PathScreen",
    "PathVerdict",
    "PermissionArgument",
    "RejectedTool",
    "RiskClass",
    "Tool",
    "ToolCallOutcome",
    "ToolCatalog",
    "ToolContext",
    "ToolDeferral",
    "ToolExecutionService",
    "ToolGate",
    "ToolInvocation",
    "ToolLike",
    "ToolOutput",
    "ToolRegistry",
    "ToolResidency",
    "ToolResult",
    "ToolSearchTool",
    "ToolSource",
    "as_tool",
    "estimate_schema_tokens",
    "to_tool_result",
    "tool",
]
