r"""Unified diffs: applying a model's patch to one file's bytes, and showing a change as one.

A patch is applied to the file's bytes line by line: a context or removed line matches a file
line whose text (without its line ending) is the same; lines outside the hunks, and the line
endings of the lines kept, are left as they were, so CRLF files and bytes that are not UTF-8
survive. An added line ends as the file's first line does (``\r\n`` or ``\n``). Each hunk
must match exactly — at the line its header names, or else at one and only one place after
the previous hunk — or the whole patch is refused, naming the hunk.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Final

from robota.tools._files import encode_text
from robota.tools._workspace import Refused

__all__ = ["DIFF_MAX_LINES", "apply_patch", "changed_span", "split_lines", "unified_diff"]

_HUNK: Final = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_RANGE: Final = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@", re.MULTILINE)
_CONTEXT: Final = 3
#: The most lines on either side of a changed region that difflib is asked to match: its matcher
#: is quadratic on dense changes (every other line of a 200,000-line file: minutes). Past it the
#: region is shown as one hunk, its old lines removed and its new lines added.
DIFF_MAX_LINES: Final = 2000


@dataclass(slots=True)
class _Hunk:
    header: str
    start: int  # 1-based old start line (0 for an empty old side)
    old: list[bytes] = field(default_factory=list)  # the lines expected, without endings
    # The new side: (None, context index) for a kept line, copied from the file as it is; or
    # (added line, ends with a newline).
    new: list[tuple[bytes | None, int | bool]] = field(default_factory=list)


def split_lines(data: bytes) -> list[bytes]:
    r"""``data`` as lines, each keeping its ``\n`` (the last may have none)."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _text(line: bytes) -> bytes:
    return line.removesuffix(b"\n").removesuffix(b"\r")


def _parse(patch: str) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    files = 0
    last_new: tuple[_Hunk, int] | None = None  # where "\ No newline" may apply
    rows = patch.split("\n")  # not splitlines: a form feed inside a line is no line break
    if rows and rows[-1] == "":
        rows.pop()
    for number, row in enumerate(rows, 1):
        line = row.removesuffix("\r")
        if line == "" and hunks and _complete(hunks[-1]):
            continue  # a blank line after a full hunk separates, it is not an empty context line
        if line.startswith("--- ") and (not hunks or _complete(hunks[-1])):
            files += 1
            if files > 1:
                raise Refused("the patch changes more than one file; send one patch per file")
            continue
        if line.startswith("+++ ") and (not hunks or _complete(hunks[-1])):
            continue
        if line.startswith("@@"):
            found = _HUNK.match(line)
            if found is None:
                raise Refused(f"the hunk header {line!r} is not `@@ -a,b +c,d @@`")
            hunks.append(_Hunk(line, int(found[1])))
            last_new = None
            continue
        if not hunks:
            if line.startswith(("diff ", "index ", "new file", "deleted file")) or not line:
                continue
            raise Refused(f"the patch has no hunk header (`@@ -a,b +c,d @@`) before {line!r}")
        hunk = hunks[-1]
        body = encode_text(line[1:], f"line {number} of the patch")
        if line.startswith("\\"):
            if last_new is not None:
                owner, index = last_new
                owner.new[index] = (owner.new[index][0], False)
            continue
        if line.startswith(" ") or line == "":
            hunk.new.append((None, len(hunk.old)))
            hunk.old.append(body)
            last_new = None  # a kept line keeps the file's own ending (or lack of one)
        elif line.startswith("-"):
            hunk.old.append(body)
            last_new = None
        elif line.startswith("+"):
            hunk.new.append((body, True))
            last_new = (hunk, len(hunk.new) - 1)
        else:
            raise Refused(
                f"hunk {len(hunks)} ({hunk.header}): the line {line!r} starts with neither "
                "' ', '-' nor '+'"
            )
    if not hunks:
        raise Refused("the patch has no hunks (`@@ -a,b +c,d @@` followed by lines)")
    return hunks


def _complete(hunk: _Hunk) -> bool:
    found = _HUNK.match(hunk.header)
    assert found is not None
    old_count = int(found[2]) if found[2] is not None else 1
    new_count = int(found[4]) if found[4] is not None else 1
    return len(hunk.old) >= old_count and len(hunk.new) >= new_count


def apply_patch(data: bytes, patch: str) -> tuple[bytes, int]:
    """``data`` with ``patch`` applied, and the number of hunks.

    Raises:
        Refused: the patch cannot be read, or a hunk does not match the file (named).
    """
    hunks = _parse(patch)
    lines = split_lines(data)
    texts = [_text(line) for line in lines]
    crlf = bool(lines) and lines[0].endswith(b"\r\n")
    ending = b"\r\n" if crlf else b"\n"
    out: list[bytes] = []
    position = 0  # the first file line not yet copied
    for number, hunk in enumerate(hunks, 1):
        at = _locate(texts, hunk, position)
        if at is None:
            raise Refused(_mismatch(number, hunk, texts, position))
        out.extend(lines[position:at])
        for text, extra in hunk.new:
            if text is None:
                out.append(lines[at + int(extra)])  # a kept line, byte for byte
            else:
                out.append(text + (ending if extra else b""))
        position = at + len(hunk.old)
    out.extend(lines[position:])
    # A line without a newline (the file's last, or one marked "\ No newline") that is no
    # longer last gets one: `c` added after a last line `b` is a line of its own, not `bc`.
    for index in range(len(out) - 1):
        if not out[index].endswith(b"\n"):
            out[index] += ending
    return b"".join(out), len(hunks)


def _locate(texts: list[bytes], hunk: _Hunk, position: int) -> int | None:
    size = len(hunk.old)
    stated = max(hunk.start - 1, 0) if size else hunk.start
    if stated >= position and stated <= len(texts) and texts[stated : stated + size] == hunk.old:
        return stated
    if not size:
        return None
    return _only_place(texts, hunk.old, position)


def _only_place(texts: list[bytes], pattern: list[bytes], start: int) -> int | None:
    """Where ``pattern`` occurs in ``texts`` from ``start``, when it occurs exactly once.

    Knuth-Morris-Pratt over lines: each file line is looked at a bounded number of times, so a
    hunk of a thousand blank lines against a file of millions costs one pass, not a comparison
    of the whole hunk at every line (hours, with the workspace's lock held). Overlapping places
    count, as they are places the hunk could mean.
    """
    fallback = [0] * len(pattern)  # the longest proper prefix that is also a suffix
    matched = 0
    for index in range(1, len(pattern)):
        while matched and pattern[index] != pattern[matched]:
            matched = fallback[matched - 1]
        if pattern[index] == pattern[matched]:
            matched += 1
        fallback[index] = matched
    found: int | None = None
    matched = 0
    for index in range(start, len(texts)):
        line = texts[index]
        while matched and line != pattern[matched]:
            matched = fallback[matched - 1]
        if line == pattern[matched]:
            matched += 1
        if matched == len(pattern):
            if found is not None:
                return None  # a second place: ambiguous
            found = index - matched + 1
            matched = fallback[matched - 1]
    return found


def _mismatch(number: int, hunk: _Hunk, texts: list[bytes], position: int) -> str:
    name = f"hunk {number} ({hunk.header})"
    at = max(hunk.start - 1, 0)
    for offset, expected in enumerate(hunk.old):
        line = at + offset
        if line >= len(texts):
            return f"{name} does not apply: the file has only {len(texts)} lines; nothing changed"
        if texts[line] != expected:
            shown = texts[line].decode("utf-8", "replace")
            wanted = expected.decode("utf-8", "replace")
            return (
                f"{name} does not apply: line {line + 1} of the file is {shown!r}, the hunk "
                f"expects {wanted!r} (and it matches nowhere else exactly once); nothing "
                "changed. Read the file and send a patch against its current text"
            )
    return (
        f"{name} does not apply at or after line {position + 1} (hunks must come in file "
        "order); nothing changed"
    )


def unified_diff(
    shown: str,
    before: bytes,
    after: bytes,
    *,
    created: bool,
    same: tuple[int, int] | None = None,
) -> str:
    """A unified diff from ``before`` to ``after`` for a user interface.

    Only the changed region (with 3 lines of context) is diffed, so a one-line edit of a 10 MB
    file costs a scan for the first and last difference, not a diff of every line. ``same``,
    when the caller knows it: how many leading and trailing bytes the two certainly share (at
    most the true lengths; the scan is skipped).
    """
    if same is None:
        start = _common_prefix(before, after)
        end = _common_suffix(before, after, start)
    else:
        start, end = same
    start = before.rfind(b"\n", 0, start) + 1  # back to a line start
    head_line = before.count(b"\n", 0, start)
    for _ in range(_CONTEXT):
        if start == 0:
            break
        start = before.rfind(b"\n", 0, start - 1) + 1
        head_line -= 1
    old_end = _line_end(before, len(before) - end, _CONTEXT)
    new_end = _line_end(after, len(after) - end, _CONTEXT)
    if len(before) - old_end != len(after) - new_end:  # a ragged tail: take both to the end
        old_end, new_end = len(before), len(after)
    old = _display_lines(before[start:old_end])
    new = _display_lines(after[start:new_end])
    source = "/dev/null" if created else f"a/{shown}"
    if max(len(old), len(new)) <= DIFF_MAX_LINES:
        lines = list(difflib.unified_diff(old, new, source, f"b/{shown}", n=_CONTEXT))
    elif old == new:
        lines = []
    else:
        header = f"@@ -{_span(len(old))} +{_span(len(new))} @@\n"
        lines = [f"--- {source}\n", f"+++ b/{shown}\n", header]
        lines += [f"-{line}" for line in old] + [f"+{line}" for line in new]
    for index, line in enumerate(lines):
        if not line.endswith("\n"):
            lines[index] = line + "\n\\ No newline at end of file\n"
    text = "".join(lines)
    if head_line:
        text = _RANGE.sub(
            lambda m: f"@@ -{int(m[1]) + head_line}{m[2]} +{int(m[3]) + head_line}{m[4]} @@",
            text,
        )
    return text


def _span(count: int) -> str:
    # A hunk range from line 1, as difflib writes it (an empty one names the line before it).
    return "0,0" if count == 0 else "1" if count == 1 else f"1,{count}"


def _display_lines(data: bytes) -> list[str]:
    # Lines for a reader: bytes that are not UTF-8 as U+FFFD, CRLF shown as a plain newline.
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    parts = text.split("\n")  # not splitlines: a form feed or U+2028 is no line break here
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def changed_span(before: bytes, after: bytes) -> tuple[int, int]:
    """Where ``after`` differs from ``before``: ``after[start:end]`` replaced what was there."""
    start = _common_prefix(before, after)
    return start, len(after) - _common_suffix(before, after, start)


def _line_end(data: bytes, at: int, count: int) -> int:
    """The offset after ``count`` more line endings from the line holding ``at``."""
    position = at
    if position > 0 and data[position - 1 : position] == b"\n":
        position -= 1  # `at` right after a newline: the change ended that line
    for _ in range(count + 1):
        found = data.find(b"\n", position)
        if found < 0:
            return len(data)
        position = found + 1
    return position


def _common_prefix(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b))
    low, high = 0, limit  # a[:low] == b[:low]; the answer is in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: bytes, b: bytes, prefix: int) -> int:
    limit = min(len(a), len(b)) - prefix
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low
