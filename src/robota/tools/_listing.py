"""``list_dir`` and ``glob``: what is in the workspace, by directory or by pattern."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

import robota.core
from robota.tools._base import WALK_ARGUMENT, WorkspaceTool
from robota.tools._patterns import Glob
from robota.tools._walk import ignore_rules_above, screened, walk, withheld_note
from robota.tools._workspace import Refused, display

__all__ = ["MAX_ENTRIES", "GlobTool", "ListDirTool"]

MAX_ENTRIES: Final = 1000


class ListDirTool(WorkspaceTool):
    """Lists one directory inside the workspace (see :func:`robota.tools.list_dir`)."""

    tool_name = "LS"
    tool_description = (
        "List the entries of one directory inside the workspace, sorted by name: directories "
        "end in `/`, files show their size in bytes, symbolic links end in `@` (they are not "
        "followed), other kinds are named. Pass `.` for the workspace root. At most "
        f"{MAX_ENTRIES} entries are listed. Use glob to find files by pattern across "
        "directories."
    )
    tool_parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The directory, relative to the workspace root (`.` for the root).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    tool_argument = WALK_ARGUMENT
    walks = True

    def run(self, args: Mapping[str, Any], stop: Callable[[], bool]) -> str:
        return self.run_screened(args, stop, robota.core.PathScreen())

    def run_screened(
        self, args: Mapping[str, Any], stop: Callable[[], bool], screen: robota.core.PathScreen
    ) -> str:
        workspace = self.workspace
        canonical = workspace.resolve(args["path"])
        shown = display(workspace.relative(canonical))
        if not os.path.isdir(canonical):
            raise Refused(f"{shown!r} is not a directory; use read_file for a file")
        withhold = screened(screen, canonical, workspace.given(canonical))
        fd = workspace.open_dir(canonical, shown)
        rows: list[tuple[str, str]] = []
        try:
            with os.scandir(fd) as entries:
                rows.extend(
                    (entry.name, _describe(entry))
                    for entry in entries
                    if withhold is None or not withhold(entry.name)  # S12: each entry judged
                )
        finally:
            os.close(fd)
        note = withheld_note(withhold.asked if withhold is not None else 0)
        if not rows:
            return "\n".join([f"{shown!r} is empty.", *([note] if note else [])])
        rows.sort()
        lines = [text for _, text in rows[:MAX_ENTRIES]]
        if len(rows) > MAX_ENTRIES:
            lines.append(
                f"[{len(rows) - MAX_ENTRIES} more entries not shown; {len(rows)} in all. "
                "Use glob with a narrower pattern]"
            )
        if note:
            lines.append(note)
        return "\n".join(lines)


def _describe(entry: os.DirEntry[str]) -> str:
    name = display(entry.name)
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return f"{name} (cannot be read)"
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return name + "/"
    if stat.S_ISREG(mode):
        return f"{name} ({info.st_size} bytes)"
    if stat.S_ISLNK(mode):
        return name + "@"
    if stat.S_ISFIFO(mode):
        return f"{name} (FIFO)"
    if stat.S_ISSOCK(mode):
        return f"{name} (socket)"
    return f"{name} (device)"


class GlobTool(WorkspaceTool):
    """Finds files by path pattern inside the workspace (see :func:`robota.tools.glob`)."""

    tool_name = "Glob"
    tool_description = (
        "Find files inside the workspace whose path matches a glob pattern, e.g. `**/*.py` or "
        "`src/**/test_*.py`. `*` and `?` match within one path component, `**` matches any "
        "number of directories, `[abc]` a set. The pattern is matched against paths relative "
        "to `path` (`.` for the workspace root); the answer lists paths relative to the "
        "workspace root, sorted. Files ignored by .gitignore and the .git directory are left "
        "out; symbolic links are not followed. At most "
        f"{MAX_ENTRIES} paths are listed."
    )
    tool_parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob, e.g. `**/*.py`."},
            "path": {
                "type": "string",
                "description": "The directory to search, relative to the workspace root "
                "(`.` for the root).",
            },
        },
        "required": ["pattern", "path"],
        "additionalProperties": False,
    }

    tool_argument = WALK_ARGUMENT
    walks = True

    def run(self, args: Mapping[str, Any], stop: Callable[[], bool]) -> str:
        return self.run_screened(args, stop, robota.core.PathScreen())

    def run_screened(
        self, args: Mapping[str, Any], stop: Callable[[], bool], screen: robota.core.PathScreen
    ) -> str:
        pattern: str = args["pattern"]
        workspace = self.workspace
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise Refused(
                f"glob pattern {pattern!r} must be relative and must not contain `..`; pass the "
                "directory to search as `path`"
            )
        try:
            regex = Glob(pattern.removeprefix("./"))
        except re.error as exc:
            raise Refused(f"glob pattern {pattern!r} cannot be read: {exc}") from None
        top = workspace.resolve(args["path"])
        if not os.path.isdir(top):
            raise Refused(f"{args['path']!r} is not a directory; pass a directory as `path`")
        base = workspace.relative(top)
        lead = "" if base == "." else base + "/"
        found: list[str] = []
        total = 0
        rules = ignore_rules_above(workspace.root, top)
        withhold = screened(screen, top, workspace.given(top))
        fd = workspace.open_dir(top, display(base))
        try:
            for entry in walk(fd, gitignore=rules, stop=stop, withhold=withhold):
                if regex.match(entry.path):
                    total += 1
                    if len(found) < MAX_ENTRIES:
                        found.append(display(lead + entry.path))
        finally:
            os.close(fd)
        note = withheld_note(withhold.asked if withhold is not None else 0)
        if not found:
            found.append(f"No files match {pattern!r} under {display(base)!r}.")
        elif total > MAX_ENTRIES:
            found.append(
                f"[{total - MAX_ENTRIES} more matches not shown; {total} in all. "
                "Narrow the pattern or the path]"
            )
        if note:
            found.append(note)
        return "\n".join(found)
