"""Media bytes as base64 text for a vendor's JSON wire, in one allocation (issue 26).

A base64 wire (OpenAI's ``data:`` URLs and ``input_audio``, Anthropic's ``base64`` sources)
needs the bytes as a ``str``. The obvious spelling, ``f"{prefix}{b64encode(data).decode()}"``,
allocates the encoded text three times (the encoded ``bytes``, their ``str``, the
concatenation), and two of them are alive at once: a 20 MB image peaks at 53 MB. Here the text
is built once: the bytes are encoded a window at a time and appended to one string, which
CPython grows in place while nothing else refers to it (``benchmarks/media_memory.py`` measures
the peak at the text plus one window). On an interpreter that copies on ``+=`` — another Python
implementation, or CPython under a line tracer such as coverage or a debugger — the result is
the same, only slower, and the peak is two copies.
"""

from __future__ import annotations

import binascii
from typing import Final

__all__ = ["base64_text"]

# A multiple of 3, so each window encodes without padding and the windows join into the same
# text as one encoding of the whole; 768 KiB in, 1 MiB out.
_WINDOW: Final = 3 * 256 * 1024


def base64_text(data: bytes, prefix: str = "") -> str:
    """``prefix`` followed by ``data`` in standard base64, built as one string.

    Equal to ``prefix + base64.b64encode(data).decode("ascii")``; the peak allocation is the
    result plus one window (about 2 MB), not two copies of the result.
    """
    if len(data) <= _WINDOW:
        return prefix + binascii.b2a_base64(data, newline=False).decode("ascii")
    view = memoryview(data)
    # A new string (never an interned one): only `text` refers to it, so each `+=` below
    # resizes it in place instead of copying it.
    text = prefix + binascii.b2a_base64(view[:_WINDOW], newline=False).decode("ascii")
    for start in range(_WINDOW, len(data), _WINDOW):
        text += binascii.b2a_base64(view[start : start + _WINDOW], newline=False).decode("ascii")
    return text
