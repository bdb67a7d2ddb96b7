"""``read_file``: numbered lines of one text file in the workspace."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from robota.tools._base import WorkspaceTool
from robota.tools._workspace import Refused, display

__all__ = ["DEFAULT_LINES", "MAX_LINE_CHARS", "MAX_OUTPUT_CHARS", "ReadFileTool"]

DEFAULT_LINES: Final = 2000
MAX_LINE_CHARS: Final = 2000
MAX_OUTPUT_CHARS: Final = 100_000
_SNIFF: Final = 8192
_BUFFER: Final = 1 << 16


class ReadFileTool(WorkspaceTool):
    """Reads lines of a text file inside the workspace (see :func:`robota.tools.read_file`)."""

    tool_name = "Read"
    tool_description = (
        "Read a text file inside the workspace. Returns numbered lines (`   12\\t<text>`). "
        f"Reads {DEFAULT_LINES} lines from the start unless you pass `offset` (first line, "
        "1-based) and `limit` (how many lines); for a large file, read the part you need. "
        f"Lines longer than {MAX_LINE_CHARS} characters are cut, and one answer holds at most "
        f"{MAX_OUTPUT_CHARS} characters: when it stops early it says which offset to continue "
        "from. Binary files are refused; bytes that are not UTF-8 are shown as U+FFFD. Paths "
        "are relative to the workspace root; anything outside it (including through a "
        "symbolic link) is refused."
    )
    tool_parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file, relative to the workspace root."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "The first line to read (1-based). Default 1.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"How many lines to read. Default {DEFAULT_LINES}.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def run(self, args: Mapping[str, Any], stop: Callable[[], bool]) -> str:
        workspace = self.workspace
        canonical = workspace.resolve(args["path"])
        shown = display(workspace.relative(canonical))
        offset: int = args.get("offset", 1)
        limit: int = args.get("limit", DEFAULT_LINES)
        fd, info = workspace.open_regular(canonical, shown)
        # One pass over the file, in bounded chunks: lines before `offset` are counted and
        # dropped, nothing after the last line wanted is read (issue 30: a 10 MB file is not
        # loaded more than once, nor held whole).
        with io.BufferedReader(io.FileIO(fd, "rb"), _BUFFER) as stream:
            head = stream.peek(_SNIFF)[:_SNIFF]
            if b"\x00" in head:
                raise Refused(
                    f"{shown!r} is a binary file ({info.st_size} bytes; it contains NUL bytes); "
                    "read_file shows text only"
                )
            lines: list[str] = []
            used = 0
            replaced = False
            number = 0
            stopped_at: int | None = None  # the first line not shown, when the cap stopped us
            more = False
            for number, raw in enumerate(stream, 1):
                if number < offset:
                    continue
                if number >= offset + limit:
                    more = True
                    break
                body = raw.rstrip(b"\n").removesuffix(b"\r")
                try:
                    text = body.decode("utf-8")
                except UnicodeDecodeError:
                    text = body.decode("utf-8", "replace")
                    replaced = True
                if len(text) > MAX_LINE_CHARS:
                    text = text[:MAX_LINE_CHARS] + f" … [line cut: {len(text)} characters]"
                entry = f"{number:>6}\t{text}"
                if used + len(entry) + 1 > MAX_OUTPUT_CHARS and lines:
                    stopped_at = number
                    break
                lines.append(entry)
                used += len(entry) + 1
                if number % 4096 == 0 and stop():
                    break
        return _answer(shown, info.st_size, offset, number, lines, replaced, stopped_at, more)


def _answer(
    shown: str,
    size: int,
    offset: int,
    last: int,
    lines: list[str],
    replaced: bool,
    stopped_at: int | None,
    more: bool,
) -> str:
    if size == 0:
        return f"{shown!r} is empty (0 bytes)."
    if not lines:
        return (
            f"{shown!r} has {last} lines; offset {offset} is past the end. "
            "Call again with a smaller offset."
        )
    notes: list[str] = []
    if replaced:
        notes.append("[some bytes are not UTF-8; they are shown as U+FFFD]")
    if stopped_at is not None:
        notes.append(
            f"[output capped at {MAX_OUTPUT_CHARS} characters; the file is {size} bytes. "
            f"Continue with offset={stopped_at}]"
        )
    elif more:
        first_unread = offset + len(lines)
        notes.append(f"[more lines follow; continue with offset={first_unread}]")
    return "\n".join([*lines, *notes])
