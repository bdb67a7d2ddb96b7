"""``WebFetch`` review (issue 30): a page's charset name never turns into an exception.

``codecs.lookup`` knows bytes-to-bytes codecs (``base64``, ``hex``), text-to-text ones (``rot13``)
and encodings that refuse ``errors="replace"`` (``idna``, ``punycode``): a page naming one in its
header or ``<meta>`` must still be read (as UTF-8, bad bytes replaced), never raise.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import robota
import robota.tools
from tools._http_site import Site, client, reply, serve


@pytest.fixture
def site() -> Iterator[Site]:
    yield from serve()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html; charset=rot13", b"<p>hello \xff</p>"),
        ("text/html", b'<meta charset="base64"><p>hello \xff</p>'),
        ("text/plain; charset=hex", b"hello \xff"),
        ("text/plain; charset=idna", b"hello \xff"),
        ("text/plain; charset=punycode", b"hello \xff"),
        (
            "text/html",
            b'<meta http-equiv="content-type" content="text/html; charset=zlib">hello \xff',
        ),
    ],
)
async def test_a_charset_that_is_not_a_text_encoding_reads_as_utf8(
    site: Site, content_type: str, body: bytes
) -> None:
    site.routes["/page"] = reply(200, body, content_type)
    tool = robota.tools.web_fetch(client=client())
    checked = tool.validate_arguments({"url": site.url("/page")})
    ctx = robota.ToolContext(
        signal=robota.AbortController().signal, call_id="c1", tool_name=tool.name
    )
    result = await tool.execute(checked, ctx)
    assert isinstance(result, robota.ToolResult)
    assert not result.is_error, result.content
    assert "hello \ufffd" in result.content


def test_known_charset_names_only_text_encodings() -> None:
    from robota.tools._html_text import known_charset

    assert known_charset("UTF-8") == "utf-8"
    assert known_charset("latin1") == "iso8859-1"
    for name in ("rot13", "base64", "hex", "zlib", "idna", "punycode", "nonsense"):
        assert known_charset(name) is None, name


async def test_a_huge_title_does_not_pass_the_text_cap(site: Site) -> None:
    # The title line is part of the answer: it is held to a short cap, like the text is to
    # max_chars, so a page cannot hand the model megabytes through its <title>.
    site.routes["/title"] = reply(
        200, b"<title>" + b"t" * 1_000_000 + b"</title><p>body</p>", "text/html"
    )
    tool = robota.tools.web_fetch(client=client())
    checked = tool.validate_arguments({"url": site.url("/title"), "max_chars": 1000})
    ctx = robota.ToolContext(
        signal=robota.AbortController().signal, call_id="c1", tool_name=tool.name
    )
    result = await tool.execute(checked, ctx)
    assert isinstance(result, robota.ToolResult)
    assert not result.is_error
    assert len(result.content) < 2_000
    assert "body" in result.content
