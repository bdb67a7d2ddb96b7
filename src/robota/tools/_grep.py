"""``grep``: lines matching a regular expression in the workspace's files."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from robota.tools._base import WorkspaceTool
from robota.tools._patterns import glob_regex
from robota.tools._walk import ignore_rules_above, walk_batches
from robota.tools._workspace import Refused, display, open_regular_at

__all__ = ["DEFAULT_RESULTS", "MAX_FILE_BYTES", "MAX_RESULTS", "GrepTool"]

DEFAULT_RESULTS: Final = 100
MAX_RESULTS: Final = 1000
MAX_CONTEXT: Final = 10
MAX_FILE_BYTES: Final = 20 * 1024 * 1024
_MAX_LINE_CHARS: Final = 500
_SNIFF: Final = 8192


class GrepTool(WorkspaceTool):
    """Searches file contents inside the workspace (see :func:`robota.tools.grep`)."""

    tool_name = "Grep"
    tool_description = (
        "Search the contents of files inside the workspace for a regular expression (Python "
        "`re` syntax, matched line by line against the file's bytes, so `.` is one byte). "
        "Answers like `grep -rn`: `path:line:text` for a matching line and `path-line-text` "
        "for a context line, groups separated by `--`, paths relative to the workspace root. "
        "`path` is a directory (searched recursively; `.` for the root) or one file. Files "
        "ignored by .gitignore, the .git directory, binary files and files over "
        f"{MAX_FILE_BYTES // (1024 * 1024)} MB are skipped; symbolic links are not followed. "
        "Narrow with `glob` (e.g. `**/*.py`). At most `max_results` matching lines are shown "
        f"(default {DEFAULT_RESULTS}, at most {MAX_RESULTS})."
    )
    tool_parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression."},
            "path": {
                "type": "string",
                "description": "A directory or file, relative to the workspace root "
                "(`.` for the root).",
            },
            "glob": {
                "type": "string",
                "description": "Only files whose path below `path` matches this glob.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "description": "Lines of context before and after each match. Default 0.",
            },
            "case_insensitive": {
                "type": "boolean",
                "description": "Match ASCII letters regardless of case. Default false.",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": f"Most matching lines to show. Default {DEFAULT_RESULTS}.",
            },
        },
        "required": ["pattern", "path"],
        "additionalProperties": False,
    }

    def run(self, args: Mapping[str, Any], stop: Callable[[], bool]) -> str:
        pattern: str = args["pattern"]
        flags = re.MULTILINE | (re.IGNORECASE if args.get("case_insensitive") else 0)
        try:
            regex = re.compile(pattern.encode("utf-8", "surrogateescape"), flags)
        except re.error as exc:
            raise Refused(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        only: re.Pattern[str] | None = None
        if "glob" in args:
            try:
                only = re.compile(glob_regex(args["glob"].removeprefix("./")) + r"\Z", re.DOTALL)
            except re.error as exc:
                raise Refused(f"glob {args['glob']!r} cannot be read: {exc}") from None
        context: int = args.get("context", 0)
        cap: int = args.get("max_results", DEFAULT_RESULTS)
        workspace = self.workspace
        top = workspace.resolve(args["path"])
        base = workspace.relative(top)
        search = _Search(regex, context, cap)
        if os.path.isdir(top):
            lead = "" if base == "." else base + "/"
            rules = ignore_rules_above(workspace.root, top)
            for fd, prefix, names in walk_batches(top, gitignore=rules, stop=stop):
                if not search.directory(fd, prefix, names, lead, only):
                    break
        else:
            parent, name = os.path.split(top)
            fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                search.file(fd, name, base, explicit=True)
            finally:
                os.close(fd)
        return search.answer(pattern, display(base))


class _Search:
    __slots__ = ("binary", "cap", "context", "files", "large", "out", "regex", "shown", "total")

    def __init__(self, regex: re.Pattern[bytes], context: int, cap: int) -> None:
        self.regex = regex
        self.context = context
        self.cap = cap
        self.out: list[str] = []
        self.shown = 0
        self.total = 0  # matching lines seen (the search stops once past the cap)
        self.files = 0
        self.binary = 0
        self.large = 0

    def directory(
        self, fd: int, prefix: str, names: list[str], lead: str, only: re.Pattern[str] | None
    ) -> bool:
        """Search the files ``names`` of one walked directory; ``False`` to stop walking."""
        for name in names:
            if only is not None and not only.match(prefix + name):
                continue
            if not self.file(fd, name, lead + prefix + name):
                return False
        return True

    def file(self, dir_fd: int, name: str, path: str, *, explicit: bool = False) -> bool:
        """Search one file; ``False`` once the cap is passed (stop walking)."""
        try:
            # A regular file's reads ignore O_NONBLOCK, and only regular files are read.
            fd, info = open_regular_at(name, path, dir_fd=dir_fd, blocking=False)
        except Refused:
            if explicit:
                raise
            return True  # swapped, vanished or not regular since the walk listed it
        try:
            if info.st_size > MAX_FILE_BYTES:
                self.large += 1
                return True
            data = _read_all(fd, info.st_size)
        finally:
            os.close(fd)
        self.files += 1
        if self.regex.search(data) is None:
            return True
        if b"\x00" in data[:_SNIFF]:
            self.binary += 1
            return True
        return self._lines(path, data)

    def _lines(self, path: str, data: bytes) -> bool:
        lines = data.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        search = self.regex.search
        hits = [i for i, line in enumerate(lines) if search(line) is not None]
        if not hits:
            return True  # the whole-file search matched across lines only
        shown_path = display(path)
        context = self.context
        hit_set = frozenset(hits)
        last_printed: int | None = None
        out = self.out
        for i in hits:
            self.total += 1
            if self.shown >= self.cap:
                return False
            start = i - context if last_printed is None else max(i - context, last_printed + 1)
            start = max(start, 0)
            if context and out and (last_printed is None or start > last_printed + 1):
                out.append("--")
            out.extend(f"{shown_path}-{j + 1}-{_text(lines[j])}" for j in range(start, i))
            out.append(f"{shown_path}:{i + 1}:{_text(lines[i])}")
            self.shown += 1
            last_printed = i
            for j in range(i + 1, min(i + 1 + context, len(lines))):
                if j in hit_set:
                    break
                out.append(f"{shown_path}-{j + 1}-{_text(lines[j])}")
                last_printed = j
        return True

    def answer(self, pattern: str, where: str) -> str:
        skipped: list[str] = []
        if self.binary:
            skipped.append(f"{self.binary} binary files that match were skipped")
        if self.large:
            skipped.append(f"{self.large} files over {MAX_FILE_BYTES} bytes were skipped")
        notes = [f"[{'; '.join(skipped)}]"] if skipped else []
        if not self.out:
            return "\n".join([f"No matches for {pattern!r} under {where!r}.", *notes])
        if self.total > self.shown:
            notes.append(
                f"[result cap reached: {self.shown} matching lines shown, more exist. Narrow "
                "the pattern, the path or the glob, or raise max_results]"
            )
        return "\n".join([*self.out, *notes])


def _text(line: bytes) -> str:
    text = line.removesuffix(b"\r").decode("utf-8", "replace")
    if len(text) > _MAX_LINE_CHARS:
        return text[:_MAX_LINE_CHARS] + " …"
    return text


def _read_all(fd: int, size: int) -> bytes:
    # One read for the size fstat gave (a file that grows meanwhile is read as of then).
    data = os.read(fd, size) if size else b""
    if len(data) == size:
        return data
    chunks = [data]
    left = size - len(data)
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
