"""``grep``: lines matching a regular expression in the workspace's files."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

import robota.core
import robota.host
from robota.tools._base import WALK_ARGUMENT, WorkspaceTool, judge_spelled
from robota.tools._grep_child import HEADER, MAX_OUTPUT_CHARS, RECORD
from robota.tools._group import kill_group
from robota.tools._patterns import Glob
from robota.tools._walk import Screened, ignore_rules_above, screened, walk_batches, withheld_note
from robota.tools._workspace import Refused, Workspace, display, open_regular_at, plain

__all__ = [
    "DEFAULT_RESULTS",
    "DEFAULT_TIME_LIMIT",
    "MAX_FILE_BYTES",
    "MAX_OUTPUT_CHARS",
    "MAX_RESULTS",
    "GrepTool",
]

DEFAULT_RESULTS: Final = 100
MAX_RESULTS: Final = 1000
MAX_CONTEXT: Final = 10
MAX_FILE_BYTES: Final = 20 * 1024 * 1024
#: Seconds a whole search may take before its child is killed (issue 30: ``re`` cannot be
#: interrupted, so a pattern that backtracks badly is stopped from outside).
DEFAULT_TIME_LIMIT: Final = 30.0
_CHUNK: Final = 256 * 1024  # bytes buffered before a write to the child
# Run by path, without importing robota (see its docstring).
_CHILD: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_grep_child.py")


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
        f"(default {DEFAULT_RESULTS}, at most {MAX_RESULTS}). The search is stopped at a "
        "time limit, so avoid patterns that backtrack badly (nested repetition like `(a+)+`)."
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

    tool_argument = WALK_ARGUMENT
    walks = True

    def __init__(
        self,
        workspace: Workspace,
        *,
        name: str | None = None,
        time_limit: float = DEFAULT_TIME_LIMIT,
    ) -> None:
        if not time_limit > 0:
            raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
        super().__init__(workspace, name=name)
        self.time_limit = time_limit

    def run(self, args: Mapping[str, Any], stop: Callable[[], bool]) -> str:
        """The search outside an event loop (``execute`` is the tool's way in)."""
        controller = robota.core.AbortController()

        async def search() -> str:
            return await self._search(args, controller.signal, robota.core.PathScreen())

        return asyncio.run(search())

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        try:
            judge_spelled(self.workspace, args, ctx)  # S12: an escaped name, by its real name
            text = await self._search(args, ctx.signal, ctx.path_screen(args))
        except Refused as exc:
            ctx.signal.throw_if_aborted()  # S23: an abort is raised, not reported as a refusal
            return robota.core.ToolResult(str(exc), is_error=True)
        ctx.signal.throw_if_aborted()  # S23: an aborted search's partial answer is not a result
        return robota.core.ToolResult(text)

    async def _search(
        self,
        args: Mapping[str, Any],
        signal: robota.core.AbortSignal,
        screen: robota.core.PathScreen,
    ) -> str:
        pattern: str = args["pattern"]
        raw = pattern.encode("utf-8", "surrogateescape")
        ignore_case = bool(args.get("case_insensitive"))
        try:
            re.compile(raw, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
        except re.error as exc:
            raise Refused(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        only: Glob | None = None
        if "glob" in args:
            try:
                only = Glob(args["glob"].removeprefix("./"))
            except re.error as exc:
                raise Refused(f"glob {args['glob']!r} cannot be read: {exc}") from None
        workspace = self.workspace
        top = await asyncio.to_thread(workspace.resolve, args["path"])
        base = workspace.relative(top)
        header = json.dumps(
            {
                "pattern": raw.hex(),
                "ignore_case": ignore_case,
                "context": args.get("context", 0),
                "cap": args.get("max_results", DEFAULT_RESULTS),
            }
        ).encode()
        feed = _Feed(HEADER.pack(len(header)) + header)
        withhold = screened(
            screen, top, workspace.given(top)
        )  # S12: each file and directory the walk meets
        report = await self._in_child(
            feed, signal, lambda stop: _walk(workspace, top, base, only, feed, stop, withhold)
        )
        asked = withhold.asked if withhold is not None else 0
        return _answer(report, feed.large, pattern, display(base), asked)

    async def _in_child(
        self,
        feed: _Feed,
        signal: robota.core.AbortSignal,
        body: Callable[[Callable[[], bool]], None],
    ) -> dict[str, Any]:
        """Run ``body`` (the walk feeding ``feed``) in a thread, the regex in a child (S09)."""
        read_fd, write_fd = os.pipe()  # both close-on-exec; the child gets read_fd as stdin
        try:
            # S09: the child leads its own process group (its own session once children are
            # isolated), so the deadline and the abort kill it with anything it started.
            process = await robota.host.spawn(
                sys.executable,
                "-I",
                _CHILD,
                stdin=read_fd,  # stdout and stderr: pipes (spawn's default)
                process_group=0,
            )
        except BaseException:
            os.close(write_fd)
            raise
        finally:
            os.close(read_fd)
        feed.fd = write_fd
        halted = False

        def feeding() -> None:
            try:
                body(lambda: halted or signal.aborted)
            finally:
                feed.close()

        fed = asyncio.ensure_future(asyncio.to_thread(feeding))
        answer = asyncio.ensure_future(process.communicate())
        aborted = asyncio.ensure_future(signal.wait())
        ending = "stopped"  # until the wait below says otherwise (a cancellation, say)
        try:
            done, _ = await asyncio.wait(
                {answer, aborted}, timeout=self.time_limit, return_when=asyncio.FIRST_COMPLETED
            )
            if answer in done:
                ending = "done"
            elif aborted in done:
                ending = "aborted"
            else:
                ending = "timeout"
        finally:
            aborted.cancel()
            halted = True  # the walk stops at its next directory, whatever the ending
            if ending != "done":
                kill_group(process)  # S23: the whole group, at once
            # The child's pipes close once it is dead, and the feeding thread's next write fails.
            await asyncio.wait({answer, fed})
        if ending == "aborted":
            raise Refused("the search was stopped because the run was aborted")
        if ending == "timeout":
            raise Refused(
                f"the pattern took too long: the search was stopped after {self.time_limit:g} "
                "seconds. Simplify it (nested repetition such as `(a+)+`, or `.*` between two "
                "literals on long lines, backtracks badly), or narrow the path or the glob"
            )
        fed.result()  # a refusal of an explicitly named file, or a failure of the walk
        stdout, stderr = answer.result()
        if process.returncode != 0:
            detail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            raise Refused(f"the search failed (exit status {process.returncode}): {detail[0]}")
        report: dict[str, Any] = json.loads(stdout)
        return report


class _Feed:
    """The parent's end of the pipe to the search child: one record per file opened (S05)."""

    __slots__ = ("broken", "buffer", "fd", "large")

    def __init__(self, header: bytes) -> None:
        self.fd = -1
        self.buffer = bytearray(header)
        self.large = 0
        self.broken = False  # the child has stopped reading (its cap passed, or it was killed)

    def file(self, dir_fd: int, name: str, path: str, *, explicit: bool = False) -> bool:
        """Open one file as the workspace allows and send it; ``False`` once the child is gone."""
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
        # A name that is not UTF-8, or holds a line break or another control character: shown
        # as `\\xNN` (display), so a name can never forge an output line.
        shown = path.encode("utf-8") if plain(path) else display(path).encode("utf-8")
        buffer = self.buffer
        buffer += RECORD.pack(len(shown), len(data))
        buffer += shown
        if len(data) >= _CHUNK:
            self._send(buffer)
            buffer.clear()
            self._send(data)
        else:
            buffer += data
            if len(buffer) >= _CHUNK:
                self._send(buffer)
                buffer.clear()
        return not self.broken

    def close(self) -> None:
        """Send what is buffered and close the pipe: the child then answers."""
        if self.buffer:
            self._send(self.buffer)
            self.buffer.clear()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _send(self, data: bytes | bytearray) -> None:
        if self.broken:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except BrokenPipeError:
            self.broken = True
        finally:
            view.release()


def _walk(
    workspace: Workspace,
    top: str,
    base: str,
    only: Glob | None,
    feed: _Feed,
    stop: Callable[[], bool],
    withhold: Screened | None = None,
) -> None:
    """Feed the files under ``top`` (or the file ``top``) to the child, in ``grep -r`` order."""
    if os.path.isdir(top):
        lead = "" if base == "." else base + "/"
        rules = ignore_rules_above(workspace.root, top)
        opened = workspace.open_dir(top, display(base))
        try:
            batches = walk_batches(opened, gitignore=rules, stop=stop, withhold=withhold)
            for fd, prefix, names in batches:
                for name in names:
                    if only is not None and not only.match(prefix + name):
                        continue
                    if not feed.file(fd, name, lead + prefix + name):
                        return
        finally:
            os.close(opened)
    else:
        parent, name = os.path.split(top)
        fd = workspace.open_dir(parent, display(base))
        try:
            feed.file(fd, name, base, explicit=True)
        finally:
            os.close(fd)


def _answer(report: Mapping[str, Any], large: int, pattern: str, where: str, asked: int = 0) -> str:
    out: list[str] = report["out"]
    shown: int = report["shown"]
    skipped: list[str] = []
    if report["binary"]:
        skipped.append(f"{report['binary']} binary files that match were skipped")
    if large:
        skipped.append(f"{large} files over {MAX_FILE_BYTES} bytes were skipped")
    notes = [f"[{'; '.join(skipped)}]"] if skipped else []
    withheld = withheld_note(asked)
    if withheld:
        notes.append(withheld)
    if not out:
        return "\n".join([f"No matches for {pattern!r} under {where!r}.", *notes])
    if report["capped"]:
        notes.append(
            f"[output capped at {MAX_OUTPUT_CHARS} characters: {shown} matching lines "
            "shown, more exist. Narrow the pattern, the path or the glob, or use less context]"
        )
    elif report["total"] > shown:
        notes.append(
            f"[result cap reached: {shown} matching lines shown, more exist. Narrow "
            "the pattern, the path or the glob, or raise max_results]"
        )
    return "\n".join([*out, *notes])


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
