"""``edit_file`` and ``write_file``: change one file in the workspace, undoably."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import robota.core
from robota.tools._base import judge_spelled
from robota.tools._files import (
    MAX_FILE_BYTES,
    Existing,
    Target,
    check_size,
    encode_text,
    looks_binary,
    open_target,
    read_existing,
    replace_file,
)
from robota.tools._patch import apply_patch, changed_span, unified_diff
from robota.tools._undo import FileChange, commit, discard, keep, root_lock
from robota.tools._workspace import Refused, Workspace

__all__ = ["EditTool", "WriteTool"]

_SNIPPET_CONTEXT: Final = 3
_SNIPPET_LINES: Final = 40
_PATH: Final = {"type": "string", "description": "The file, relative to the workspace root."}
_RULES: Final = (
    "Paths are relative to the workspace root; a path outside it, through a symbolic link, or "
    "starting with `~` is refused, as are directories, FIFOs and devices, and files over "
    f"{MAX_FILE_BYTES // (1024 * 1024)} MB. The change can be undone by the user."
)


class _ChangeTool(robota.core.Tool):
    """A tool that changes one file: modify-class (S21), scoped to ``path`` (S12).

    The change runs in a worker thread under the workspace's lock; a :class:`Refused` becomes
    an error result the model reads. An abort before the change starts stops it (S23); one
    that arrives while the file is being replaced lets it finish, so the history says what the
    file holds.
    """

    tool_name: ClassVar[str]
    tool_description: ClassVar[str]
    tool_parameters: ClassVar[Mapping[str, Any]]
    creates_parents: ClassVar[bool]
    #: S12: the other tools whose deny and ask rules judge this one's calls, as Claude Code's
    #: settings read them (an ``Edit(...)`` rule covers ``Write``; a ``Read(...)`` deny covers
    #: an ``Edit``, which shows the lines it changed).
    judged_as: ClassVar[tuple[str, ...]]

    def __init__(self, workspace: Workspace, *, name: str | None = None) -> None:
        super().__init__(
            name or self.tool_name,
            self.tool_description,
            self.tool_parameters,
            risk="modify",
            permission_argument=robota.core.PermissionArgument(
                "path", "path", also_judged_as=self.judged_as
            ),
            source="robota.tools",
            idempotent=False,
        )
        self.workspace = workspace

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        ctx.signal.throw_if_aborted()
        try:
            judge_spelled(self.workspace, args, ctx)  # S12: an escaped name, by its real name
            return await asyncio.to_thread(self._change, args)
        except Refused as exc:
            return robota.core.ToolResult(str(exc), is_error=True)

    def _change(self, args: Mapping[str, Any]) -> robota.core.ToolResult:
        self.check(args)
        root = self.workspace.root
        with root_lock(root):
            target = open_target(self.workspace, args["path"], create_parents=self.creates_parents)
            try:
                existing = read_existing(target)
                after, summary, same = self.new_bytes(target, existing, args)
                check_size(len(after), target.shown)  # a patch's result, too
                before = existing.data if existing is not None else None
                mode = existing.mode if existing is not None else None
                kept = keep(target, self.name, before, mode)  # S08: before the change
                try:
                    replace_file(target, after, mode)
                except OSError as exc:
                    discard(kept)
                    raise Refused(
                        f"{target.shown!r} could not be written: {exc.strerror}"
                    ) from None
                commit(root, kept, after)
            finally:
                os.close(target.dir_fd)
        old = before if before is not None else b""
        view = FileChange(
            target.shown,
            unified_diff(target.shown, old, after, created=before is None, same=same),
            before is None,
        )
        return robota.core.ToolResult(summary, view=view)

    def check(self, args: Mapping[str, Any]) -> None:
        """Refuse a combination of arguments the schema cannot express."""

    def new_bytes(
        self, target: Target, existing: Existing | None, args: Mapping[str, Any]
    ) -> tuple[bytes, str, tuple[int, int] | None]:
        """The new bytes, the model's confirmation, and the bytes certainly kept at each end.

        The last is ``(leading, trailing)`` byte counts, or ``None`` when not known. Raise
        :class:`Refused` to refuse.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} in {self.workspace.root!r}>"


class EditTool(_ChangeTool):
    """Replaces an exact string in, or applies a patch to, one file (see ``edit_file``)."""

    tool_name = "Edit"
    creates_parents = False
    judged_as = ("Read",)
    tool_description = (
        "Edit an existing text file inside the workspace. Either replace an exact string: "
        "pass `old_string` (copied exactly from the file, whitespace and indentation included, "
        "without Read's line-number prefix) and `new_string`; `old_string` must occur exactly "
        "once unless `replace_all` is true (then every occurrence is replaced), so include "
        "enough surrounding lines to make it unique. Or pass `patch`: a unified diff of this "
        "one file (`@@ -a,b +c,d @@` hunks with ' ', '-', '+' lines); every hunk must match the "
        "file exactly or nothing is changed. Only the replaced text changes: line endings and "
        "other bytes are kept. Returns the changed lines, numbered. Read the file first. "
        "Use Write to create a file. " + _RULES
    )
    tool_parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "path": _PATH,
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence of old_string. Default false.",
            },
            "patch": {
                "type": "string",
                "description": "A unified diff of this file, instead of old_string/new_string.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def check(self, args: Mapping[str, Any]) -> None:
        has_patch = "patch" in args
        has_strings = "old_string" in args or "new_string" in args
        if has_patch == has_strings:
            raise Refused(
                "pass either `old_string` and `new_string`, or `patch` (a unified diff), not "
                "both and not neither"
            )
        if has_strings:
            if "old_string" not in args or "new_string" not in args:
                raise Refused("pass both `old_string` and `new_string`")
            if args["old_string"] == "":
                raise Refused(
                    "`old_string` is empty; to create a file or replace all of it, use Write"
                )
            if args["old_string"] == args["new_string"]:
                raise Refused("`old_string` and `new_string` are the same; nothing to change")
        elif args.get("replace_all"):
            raise Refused("`replace_all` goes with `old_string`/`new_string`, not with `patch`")

    def new_bytes(
        self, target: Target, existing: Existing | None, args: Mapping[str, Any]
    ) -> tuple[bytes, str, tuple[int, int] | None]:
        shown = target.shown
        if existing is None:
            raise Refused(f"{shown!r} does not exist; use Write to create a file")
        data = existing.data
        if looks_binary(data):
            raise Refused(f"{shown!r} is a binary file (it contains NUL bytes); not edited")
        if "patch" in args:
            after, hunks = apply_patch(data, args["patch"])
            if after == data:
                raise Refused("the patch changes nothing")
            start, end = changed_span(data, after)
            head = f"Edited {shown}: {hunks} hunk{'s' if hunks != 1 else ''} applied"
            return after, head + "\n" + _snippet(after, start, end), (start, len(after) - end)
        old = encode_text(args["old_string"], "`old_string`")
        new = encode_text(args["new_string"], "`new_string`")
        count = data.count(old)
        if count == 0 and b"\r\n" in data and b"\r" not in old and b"\n" in old:
            # A CRLF file and a string written with `\n`: match and replace in the file's style
            # (a line break already written `\r\n` in new_string stays one break).
            old = old.replace(b"\n", b"\r\n")
            new = new.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            count = data.count(old)
        if count == 0:
            raise Refused(
                f"`old_string` was not found in {shown!r}; it must match the file exactly "
                "(whitespace, indentation and line breaks included, without Read's line-number "
                "prefix). Read the file again and copy the text"
            )
        first = data.find(old)
        if count == 1 and not args.get("replace_all"):
            # `count` does not count overlapping places ("\n\n" in "\n\n\n"); a second one
            # starts inside the first, so at most len(old) - 1 more are looked for.
            count += sum(1 for at in range(first + 1, first + len(old)) if data.startswith(old, at))
        if count > 1 and not args.get("replace_all"):
            raise Refused(
                f"`old_string` occurs {count} times in {shown!r}; include more surrounding "
                "lines to make it unique, or pass `replace_all: true` to replace every one"
            )
        # Built only within the cap (S08 keeps its pre-image too): a model's replace_all must
        # not make the agent hold gigabytes.
        check_size(len(data) + count * (len(new) - len(old)), shown)
        tail = len(data) - data.rfind(old) - len(old)  # bytes after the last replacement
        after = data.replace(old, new)
        head = f"Edited {shown}: {count} replacement{'s' if count != 1 else ''}"
        return after, head + "\n" + _snippet(after, first, first + len(new)), (first, tail)


class WriteTool(_ChangeTool):
    """Creates or overwrites one file (see ``write_file``)."""

    tool_name = "Write"
    creates_parents = True
    judged_as = ("Edit",)
    tool_description = (
        "Write a file inside the workspace: creates it (and any missing parent directories) or "
        "replaces all of its content with `content`. Prefer Edit to change part of an existing "
        "file; read an existing file before overwriting it. " + _RULES
    )
    tool_parameters: ClassVar[Mapping[str, Any]] = {
        "type": "object",
        "properties": {
            "path": _PATH,
            "content": {"type": "string", "description": "The file's whole new content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def check(self, args: Mapping[str, Any]) -> None:
        # Before any parent directory is made.
        size = len(encode_text(args["content"], "`content`"))
        if size > MAX_FILE_BYTES:
            raise Refused(f"the content is {size} bytes; at most {MAX_FILE_BYTES} are written")

    def new_bytes(
        self, target: Target, existing: Existing | None, args: Mapping[str, Any]
    ) -> tuple[bytes, str, tuple[int, int] | None]:
        after = encode_text(args["content"], "`content`")
        lines = after.count(b"\n") + (1 if after and not after.endswith(b"\n") else 0)
        verb = "Created" if existing is None else "Wrote"
        return after, f"{verb} {target.shown} ({lines} lines, {len(after)} bytes)", None


def _snippet(data: bytes, start: int, end: int) -> str:
    """The changed lines of ``data`` (bytes ``start``–``end``) with context, numbered as Read."""
    first = data.count(b"\n", 0, start) + 1
    last = first + data.count(b"\n", start, max(end - 1, start))
    show_from = max(first - _SNIPPET_CONTEXT, 1)
    show_to = min(last + _SNIPPET_CONTEXT, show_from + _SNIPPET_LINES - 1)
    begin = data.rfind(b"\n", 0, start) + 1
    for _ in range(first - show_from):
        begin = data.rfind(b"\n", 0, begin - 1) + 1
    out: list[str] = []
    position = begin
    for number in range(show_from, show_to + 1):
        if position >= len(data) and number > show_from:
            break
        stop = data.find(b"\n", position)
        stop = len(data) if stop < 0 else stop
        text = data[position:stop].removesuffix(b"\r").decode("utf-8", "replace")
        out.append(f"{number:>6}\t{text[:2000]}")
        position = stop + 1
    if last > show_to:
        out.append(f"[… {last - show_to} more changed lines]")
    return "\n".join(out)
