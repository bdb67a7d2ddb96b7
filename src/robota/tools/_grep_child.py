"""The ``Grep`` search itself, run as a child process (issue 30, S09, S23).

Python's ``re`` holds the GIL and cannot be interrupted, so a pattern that backtracks badly
(``(a+)+$``, or ``a.*b`` over a long line) would freeze whichever process runs it. The tool
therefore runs the regular expression here, in a child that leads its own process group and that
the parent kills at its time limit or on the run's abort.

This file is run by path with ``python -I`` and imports the standard library only: importing
``robota`` would cost the search a second. It never opens a path (S05): the parent walks the
workspace, opens each file under its containment rules and streams the contents over stdin:

* a header: 4-byte big-endian length, then JSON ``{"pattern": hex, "ignore_case", "context",
  "cap"}``;
* one record per file: ``!II`` (length of the path shown, length of the content), the path
  (UTF-8), the content; end of input ends the search.

It answers on stdout with one JSON object (the lines to show and the counters), and exits as
soon as the cap is passed, so the parent's next write fails and its walk stops.
"""

from __future__ import annotations

import json
import re
import struct
import sys
from typing import IO, Final

MAX_OUTPUT_CHARS: Final = 100_000
_MAX_LINE_CHARS: Final = 500
_SNIFF: Final = 8192
RECORD: Final = struct.Struct("!II")
HEADER: Final = struct.Struct("!I")


class Search:
    """The matching lines of the files fed to it, formatted like ``grep -rn``, up to a cap."""

    __slots__ = (
        "binary",
        "cap",
        "capped",
        "chars",
        "context",
        "files",
        "out",
        "regex",
        "shown",
        "total",
    )

    def __init__(self, regex: re.Pattern[bytes], context: int, cap: int) -> None:
        self.regex = regex
        self.context = context
        self.cap = cap
        self.out: list[str] = []
        self.shown = 0
        self.total = 0  # matching lines seen (the search stops once past the cap)
        self.files = 0
        self.binary = 0
        self.chars = 0  # characters in `out`, newlines included
        self.capped = False  # stopped at MAX_OUTPUT_CHARS

    def file(self, path: str, data: bytes) -> bool:
        """Search one file's content; ``False`` once the cap is passed (stop)."""
        self.files += 1
        if self.regex.search(data) is None:
            return True
        if b"\x00" in data[:_SNIFF]:
            self.binary += 1
            return True
        return self._lines(path, data)

    def _lines(self, shown_path: str, data: bytes) -> bool:
        lines = data.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        search = self.regex.search
        hits = [i for i, line in enumerate(lines) if search(line) is not None]
        if not hits:
            return True  # the whole-file search matched across lines only
        context = self.context
        hit_set = frozenset(hits)
        last_printed: int | None = None
        out = self.out
        group: list[str] = []
        for i in hits:
            self.total += 1
            if self.shown >= self.cap:
                return False
            start = i - context if last_printed is None else max(i - context, last_printed + 1)
            start = max(start, 0)
            if context and out and (last_printed is None or start > last_printed + 1):
                group.append("--")
            group.extend(f"{shown_path}-{j + 1}-{_text(lines[j])}" for j in range(start, i))
            group.append(f"{shown_path}:{i + 1}:{_text(lines[i])}")
            last_printed = i
            for j in range(i + 1, min(i + 1 + context, len(lines))):
                if j in hit_set:
                    break
                group.append(f"{shown_path}-{j + 1}-{_text(lines[j])}")
                last_printed = j
            size = sum(len(text) for text in group) + len(group)
            if self.chars + size > MAX_OUTPUT_CHARS and out:
                self.capped = True  # one answer stays readable, whatever max_results allows
                return False
            out.extend(group)
            group.clear()
            self.chars += size
            self.shown += 1
        return True

    def report(self) -> dict[str, object]:
        """What the parent needs to write the answer."""
        return {
            "out": self.out,
            "shown": self.shown,
            "total": self.total,
            "files": self.files,
            "binary": self.binary,
            "capped": self.capped,
        }


def _text(line: bytes) -> str:
    text = line.removesuffix(b"\r").decode("utf-8", "replace")
    if len(text) > _MAX_LINE_CHARS:
        return text[:_MAX_LINE_CHARS] + " …"
    return text


def _exactly(stream: IO[bytes], size: int) -> bytes | None:
    data = stream.read(size) if size else b""
    return data if len(data) == size else None


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Read the header and the records from ``source``; write the JSON answer to ``sink``."""
    head = _exactly(source, HEADER.size)
    if head is None:
        return
    body = _exactly(source, HEADER.unpack(head)[0])
    if body is None:
        return
    config = json.loads(body)
    flags = re.MULTILINE | (re.IGNORECASE if config["ignore_case"] else 0)
    search = Search(
        re.compile(bytes.fromhex(config["pattern"]), flags), config["context"], config["cap"]
    )
    while True:
        record = _exactly(source, RECORD.size)
        if record is None:
            break
        path_size, data_size = RECORD.unpack(record)
        path = _exactly(source, path_size)
        data = _exactly(source, data_size)
        if path is None or data is None:
            break
        if not search.file(path.decode("utf-8", "surrogateescape"), data):
            break
    sink.write(json.dumps(search.report()).encode("utf-8"))
    sink.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
