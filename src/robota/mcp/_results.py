"""MCP tools and results in robota's terms: names, schemas, the tool class, result mapping."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, final

from robota.core import (
    AbortSignal,
    AudioPart,
    ImagePart,
    RejectedTool,
    RobotaError,
    Tool,
    ToolContext,
    ToolOutput,
    ToolResult,
    check_parameter_schema,
)
from robota.core.schema import json_type_of

__all__ = [
    "MCPConnectionError",
    "MCPProtocolError",
    "MCPTool",
    "build_tools",
    "check_server_name",
    "map_result",
    "tool_name",
]

_NAME_PART: Final = re.compile(r"[^A-Za-z0-9_-]")
_SERVER_NAME: Final = re.compile(r"^[A-Za-z0-9-](?:[A-Za-z0-9_-]{0,30}[A-Za-z0-9-])?$")
# What OpenAI and Gemini accept for a function name (^[a-zA-Z0-9_-]{1,64}$): a longer one
# would make every request of the agent fail there, so such a tool is left out.
_MAX_TOOL_NAME: Final = 64


class MCPConnectionError(RobotaError):
    """The connection to an MCP server failed or died: a transport failure, not a tool's answer.

    Calls in flight when it died fail with it; the server is restarted by the agent's next run.
    """

    default_code = "mcp_connection"
    default_category = "system"
    default_recoverable = True


class MCPProtocolError(RobotaError):
    """An MCP server answered a call with a protocol error (unknown tool, invalid params …)."""

    default_code = "mcp_protocol"
    default_category = "system"
    default_recoverable = True


def check_string_map(value: object, what: str) -> dict[str, str]:
    """``value`` (``None`` or a mapping of strings to strings) as a dict, or a clear error."""
    from robota.core import ConfigurationError  # noqa: PLC0415 - one use

    if value is None:
        return {}
    if not (
        isinstance(value, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    ):
        raise ConfigurationError(f"{what} must map names to strings, got {value!r}")
    return dict(value)


def check_server_name(name: object) -> str:
    """An MCP server's name as tool names carry it (``mcp__<name>__<tool>``), or a clear error."""
    from robota.core import ConfigurationError  # noqa: PLC0415 - one use

    if not isinstance(name, str) or not _SERVER_NAME.match(name) or "__" in name:
        # No '_' at either end either: 'hr_' would make mcp__hr___x, which a rule for the
        # server 'hr' (mcp__hr__*) matches — an allow rule would reach another server's tools.
        raise ConfigurationError(
            "an MCP server name must be 1-32 letters, digits, '_' or '-', without '__' and "
            "without '_' at either end (it is the <server> of mcp__<server>__<tool>, which "
            f"permission rules match); got {name!r}"
        )
    return name


def default_server_name(text: str) -> str:
    """A server name made from a command or host: its safe characters, ``__`` collapsed."""
    cleaned = re.sub(r"_{2,}", "_", _NAME_PART.sub("_", text)).strip("_-")[:32].strip("_-")
    return cleaned or "server"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, the tool's characters outside ``[A-Za-z0-9_-]`` as ``_``."""
    return f"mcp__{server}__{_NAME_PART.sub('_', tool)}"


Caller = Callable[[str, Mapping[str, Any], AbortSignal], Awaitable[Any]]


@final
class MCPTool(Tool):
    """One tool of an MCP server, registered as ``mcp__<server>__<tool>`` (S41).

    Its input schema is the server's, checked against the schema subset (S16); the body calls
    the server with the validated arguments and maps the result (see :func:`map_result`). It
    declares no risk class: a server's own hints are claims, not grants (S21).

    Attributes:
        server: The server's name.
        remote_name: The tool's name on the server.
    """

    def __init__(
        self,
        *,
        server: str,
        remote_name: str,
        description: str,
        parameters: Mapping[str, Any],
        call: Caller,
        defer: bool = False,
    ) -> None:
        super().__init__(
            tool_name(server, remote_name),
            description,
            parameters,
            source=f"mcp:{server}",
            defer=defer,
        )
        self.server = server
        self.remote_name = remote_name
        self._call = call

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Call the server's tool; its ``isError`` result is a failure the model sees."""
        return map_result(await self._call(self.remote_name, args, ctx.signal))


def normalise_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A server's input schema in the subset's spelling, meaning unchanged.

    Annotation-only keywords (``$schema``, ``$id``, ``$comment``) are dropped — the TypeScript
    SDK writes ``$schema`` on every schema — and ``const: v`` becomes ``enum: [v]`` with the
    value's JSON type, which is what it means.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, Mapping):
            return node
        out = {k: walk(v) for k, v in node.items() if k not in _ANNOTATION_ONLY}
        if "const" in out and "enum" not in out:
            value = out.pop("const")
            out["enum"] = [value]
            if "type" not in out:
                out["type"] = json_type_of(value)
        return out

    result: dict[str, Any] = walk(schema)
    return result


_ANNOTATION_ONLY: Final = frozenset({"$schema", "$id", "$comment"})


def build_tools(
    server: str, listed: Sequence[Any], call: Caller, *, defer: bool = False
) -> tuple[list[MCPTool], list[RejectedTool]]:
    """The server's tools as :class:`MCPTool`, and the ones left out with why (never a crash)."""
    tools: list[MCPTool] = []
    rejected: list[RejectedTool] = []
    seen: set[str] = set()
    for item in listed:
        remote = getattr(item, "name", None)
        if not isinstance(remote, str) or not remote:
            rejected.append(
                RejectedTool(f"mcp__{server}__?", "the server sent a tool with no name")
            )
            continue
        name = tool_name(server, remote)
        if name in seen:
            rejected.append(
                RejectedTool(name, f"its name {remote!r} collides with another tool of the server")
            )
            continue
        if len(name) > _MAX_TOOL_NAME:
            rejected.append(
                RejectedTool(name, f"the name is longer than {_MAX_TOOL_NAME} characters")
            )
            continue
        schema = getattr(item, "input_schema", None)
        if isinstance(schema, Mapping):
            schema = normalise_schema(schema)
        issues = check_parameter_schema(schema) if isinstance(schema, Mapping) else ["no schema"]
        if issues:
            reason = "its input schema is outside the schema subset (S16): " + "; ".join(issues)
            rejected.append(RejectedTool(name, reason[:1000]))
            continue
        description = getattr(item, "description", None) or getattr(item, "title", None) or ""
        try:
            tool = MCPTool(
                server=server,
                remote_name=remote,
                description=str(description),
                parameters=dict(schema),  # type: ignore[arg-type]
                call=call,
                defer=defer,
            )
        except RobotaError as exc:
            rejected.append(RejectedTool(name, exc.message))
            continue
        seen.add(name)
        tools.append(tool)
    return tools, rejected


def _size(data: object) -> str:
    if not isinstance(data, str):
        return "?"
    try:
        return str(len(base64.b64decode(data, validate=False)))
    except (binascii.Error, ValueError):
        return "?"


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "unknown type"
        return f"[{kind}: {mime}, {_size(getattr(block, 'data', None))} bytes]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = str(getattr(resource, "uri", ""))
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {uri}]\n{text}"
        mime = getattr(resource, "mime_type", None) or "unknown type"
        return f"[resource {uri}: {mime}, {_size(getattr(resource, 'blob', None))} bytes]"
    if kind == "resource_link":
        name = getattr(block, "name", "")
        return f"[resource link: {name} {getattr(block, 'uri', '')}]"
    return f"[{kind or 'unknown'} content]"


def _media_part(block: Any) -> ImagePart | AudioPart | None:
    """An MCP image or audio block as the part the model is shown (issue 26).

    ``None`` for any other block, for data that is not base64, and for a media type the parts
    do not take (an SVG image, say): the model then sees only the block's bracketed line.
    """
    kind = getattr(block, "type", None)
    if kind not in ("image", "audio"):
        return None
    data, mime = getattr(block, "data", None), getattr(block, "mime_type", None)
    if not isinstance(data, str) or not isinstance(mime, str):
        return None
    try:
        raw = base64.b64decode(data, validate=True)
        return (
            ImagePart(data=raw, media_type=mime)
            if kind == "image"
            else AudioPart(data=raw, media_type=mime)
        )
    except (binascii.Error, ValueError):  # ConfigurationError is a ValueError
        return None


def _dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(by_alias=True, exclude_none=True, mode="json") if callable(dump) else value


def map_result(result: Any) -> ToolResult:
    """An MCP ``CallToolResult`` as a :class:`~robota.ToolResult`.

    The model is shown the text blocks as they are, each image, audio, blob resource and
    resource link as a bracketed line naming it (type, size, URI), a text resource with its URI,
    and the structured content as JSON when the server sent no text. Image and audio blocks of a
    media type the message parts take are also the result's ``parts`` (issue 26), so the model
    sees the image or hears the clip where its adapter can send it. ``isError`` makes it a
    failure the model sees. The whole result, binary data included, is kept as the display
    ``view`` (never sent to the model).
    """
    blocks = list(getattr(result, "content", None) or ())
    texts = [_block_text(block) for block in blocks]
    structured = getattr(result, "structured_content", None)
    has_text = any(getattr(block, "type", None) == "text" for block in blocks)
    if structured is not None and not has_text:
        texts.append(json.dumps(structured, ensure_ascii=False, default=str))
    view = {
        "content": [_dump(block) for block in blocks],
        "structured_content": structured,
    }
    media = tuple(part for part in map(_media_part, blocks) if part is not None)
    return ToolResult(
        "\n".join(texts),
        is_error=bool(getattr(result, "is_error", False)),
        view=view,
        parts=media,
    )
