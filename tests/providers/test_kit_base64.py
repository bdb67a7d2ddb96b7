"""Issue 26: media bytes reach a base64 wire as one copy (``robota.providers._kit._base64``).

Allocation peaks under ``tracemalloc`` are deterministic counts, not timings: the bounds below
hold on every run or on none.
"""

from __future__ import annotations

import base64
import sys
import tracemalloc
from collections.abc import Callable

import pytest

from robota.core import ImagePart, UserMessage
from robota.providers._kit._base64 import _WINDOW, base64_text
from robota.providers.anthropic._wire import wire_messages
from robota.providers.openai._common import data_url

SIZE = 6_000_000
"""Big enough for many windows, small enough to keep the test well under a second."""


def _bytes(size: int, shift: int = 0) -> bytes:
    """``size`` bytes running through every value (deterministic, unlike random content)."""
    return (bytes((i + shift) % 256 for i in range(256)) * (size // 256 + 1))[:size]


@pytest.mark.parametrize(
    "size", [0, 1, 2, 3, _WINDOW - 1, _WINDOW, _WINDOW + 1, 2 * _WINDOW, 3 * _WINDOW + 2]
)
@pytest.mark.parametrize("prefix", ["", "data:image/png;base64,"])
def test_the_text_equals_one_standard_base64_encoding(size: int, prefix: str) -> None:
    data = _bytes(size, size)
    assert base64_text(data, prefix) == prefix + base64.b64encode(data).decode("ascii")


def _peak(make: Callable[[], object]) -> tuple[int, object]:
    # A line tracer (coverage in `make check`, a debugger) makes CPython copy on `+=` instead
    # of growing the string in place: measure our code as it runs in production, untraced.
    tracer = sys.gettrace()
    sys.settrace(None)
    tracemalloc.start()
    try:
        result = make()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()
        sys.settrace(tracer)


def _one_copy(wire_chars: int) -> int:
    # The wire text itself, plus one window of encoded bytes and its str, plus 64 KiB of slack.
    return wire_chars + 2 * (_WINDOW * 4 // 3) + 65536


def test_base64_text_allocates_one_copy_of_the_wire_form() -> None:
    data = _bytes(SIZE)
    peak, text = _peak(lambda: base64_text(data, "data:image/png;base64,"))
    assert isinstance(text, str)
    assert peak <= _one_copy(len(text)), f"{peak / SIZE:.2f}x the bytes"
    # The naive spelling is what this guards against: two copies of the text alive at once.
    naive, _ = _peak(lambda: f"data:image/png;base64,{base64.b64encode(data).decode('ascii')}")
    assert naive > 2 * len(text)


def test_an_openai_data_url_is_one_copy_of_the_image() -> None:
    part = ImagePart(data=_bytes(SIZE, 1), media_type="image/png")
    peak, url = _peak(lambda: data_url(part))
    assert isinstance(url, str)
    assert url.startswith("data:image/png;base64,")
    assert peak <= _one_copy(len(url)), f"{peak / SIZE:.2f}x the image"


def test_an_anthropic_image_block_is_one_copy_of_the_image() -> None:
    part = ImagePart(data=_bytes(SIZE, 2), media_type="image/png")
    message = UserMessage((part,))
    peak, (_, turns) = _peak(lambda: wire_messages([message]))  # type: ignore[misc]
    encoded = turns[0]["content"][0]["source"]["data"]
    assert base64.b64decode(encoded) == part.data
    assert peak <= _one_copy(len(encoded)), f"{peak / SIZE:.2f}x the image"
