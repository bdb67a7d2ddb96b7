"""HTML to readable text with the standard library's ``html.parser`` (issue 30, ``WebFetch``).

What a model needs from a page is its words and where its links go, not its markup. Scripts,
styles and other non-text elements are dropped with everything inside them; headings become
``#`` lines, list items ``- `` lines, links ``text (url)`` with the URL resolved against the
page's own address (or its ``<base href>``); ``<pre>`` blocks are kept verbatim inside a fence;
other whitespace is collapsed. Entities are decoded by the parser.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Final
from urllib.parse import urljoin, urlsplit

__all__ = ["html_charset", "html_to_text"]

# Elements whose content is never text a reader sees.
_SKIPPED: Final = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object"}
)
# Elements that start a new block of text.
_BLOCKS: Final = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "header", "hr", "html", "legend", "main", "nav", "ol", "p", "section", "summary",
        "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS: Final = {f"h{level}": level for level in range(1, 7)}
_VOID: Final = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_SPACE: Final = re.compile(r"\s+")
_META_CHARSET: Final = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE
)


def html_charset(head: bytes) -> str | None:
    """The charset a page's ``<meta>`` names in its first 4 KB, when it is one Python knows."""
    found = _META_CHARSET.search(head[:4096])
    if found is None:
        return None
    return known_charset(found.group(1).decode("ascii", "replace"))


# A byte of every kind: ASCII, a lone continuation byte, a UTF-16 lead surrogate's bytes.
_PROBE = b"a<\xff-\xfe\xd8\x00"


def known_charset(name: str) -> str | None:
    """``name`` when it names a text encoding that decodes any bytes, else ``None``.

    ``codecs.lookup`` also knows bytes-to-bytes codecs (``base64``, ``zlib``), text-to-text
    ones (``rot13``) and encodings that refuse ``errors="replace"`` (``idna``, ``punycode``); a
    page naming one is read as if it named none, never with an exception.
    """
    try:
        info = codecs.lookup(name.strip().strip("\"'"))
        # The probe decodes under every real text encoding, and raises under the others.
        _PROBE.decode(info.name, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None
    return info.name


class _Reader(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.title = ""
        self.size = 0  # characters of text made so far (about)
        self._in_title = False
        self._blocks: list[tuple[str, bool]] = []  # (text, tight: no blank line before it)
        self._line: list[str] = []
        self._prefix = ""
        self._tight = False
        self._skip: list[str] = []
        self._lists = 0
        self._pre = 0
        self._pre_text: list[str] = []
        self._links: list[tuple[str | None, int]] = []

    # -- blocks -----------------------------------------------------------------------------

    def _flush(self) -> None:
        text = _SPACE.sub(" ", "".join(self._line)).strip()
        self._line = []
        if not text:
            return  # an empty block keeps its prefix for the text inside it (<li><p>…)
        self._blocks.append((self._prefix + text, self._tight))
        self.size += len(self._prefix) + len(text) + 2
        self._prefix = ""
        self._tight = False

    def _start_block(self, prefix: str = "", *, tight: bool = False) -> None:
        self._flush()
        self._prefix = prefix
        self._tight = tight

    # -- parser callbacks -------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip:
            if tag not in _VOID:
                self._skip.append(tag)
            return
        if tag == "title":
            self._in_title = True
            return
        if tag in _SKIPPED:
            if tag == "head":
                return  # the title is read from inside it; the rest of head has no text
            self._skip.append(tag)
            return
        if tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base = urljoin(self.base, href.strip())
            return
        if self._pre:
            if tag == "br":
                self._pre_text.append("\n")
            return
        if tag == "pre":
            self._flush()
            self._pre = 1
            self._pre_text = []
        elif tag in _HEADINGS:
            self._start_block("#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self._start_block("  " * max(self._lists - 1, 0) + "- ", tight=True)
        elif tag in ("ul", "ol"):
            self._flush()
            self._lists += 1
        elif tag in ("td", "th"):
            if self._line:
                self._line.append(" | ")
        elif tag == "br":
            self._start_block(tight=True)
        elif tag in _BLOCKS:
            self._flush()
        elif tag == "a":
            self._links.append((dict(attrs).get("href"), len(self._line)))
        elif tag == "code":
            self._line.append("`")

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            if tag == self._skip[-1]:
                self._skip.pop()
            elif tag in self._skip:  # an element left open inside: close it too
                del self._skip[self._skip.index(tag) :]
            return
        if tag == "title":
            self._in_title = False
            return
        if self._pre:
            if tag == "pre":
                self._pre = 0
                text = "".join(self._pre_text).strip("\n")
                if text.strip():
                    self._blocks.append((f"```\n{text}\n```", False))
                    self.size += len(text) + 8
            return
        if tag in _HEADINGS or tag == "li" or (tag in _BLOCKS and tag not in ("ul", "ol")):
            self._flush()
        elif tag in ("ul", "ol"):
            self._flush()
            self._lists = max(self._lists - 1, 0)
        elif tag == "a" and self._links:
            href, start = self._links.pop()
            self._link(href, start)
        elif tag == "code":
            self._line.append("`")

    def _link(self, href: str | None, start: int) -> None:
        if not href or start > len(self._line):
            return
        href = href.strip()
        if href.startswith("#") or urlsplit(href).scheme.lower() in ("javascript", "data"):
            return
        label = _SPACE.sub(" ", "".join(self._line[start:])).strip()
        if not label:
            return
        url = urljoin(self.base, href)
        if url != label:
            self._line.append(f" ({url})")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            if len(self.title) <= TITLE_LIMIT:  # the rest is never shown: not kept either
                self.title += data[: TITLE_LIMIT + 1]
            return
        if self._pre:
            self._pre_text.append(data)
            return
        self._line.append(data)

    def text(self) -> str:
        self._flush()
        if self._pre:  # an unclosed <pre> at the end of the page
            self._blocks.append(("```\n" + "".join(self._pre_text).strip("\n") + "\n```", False))
            self._pre = 0
        pieces: list[str] = []
        for text, tight in self._blocks:
            if pieces:
                pieces.append("\n" if tight else "\n\n")
            pieces.append(text)
        return "".join(pieces)


_CHUNK: Final = 64 * 1024
#: The most characters of ``<title>`` returned (a page's title is a line, not a body).
TITLE_LIMIT: Final = 300


def html_to_text(
    html: str,
    base_url: str,
    *,
    enough: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[str, str, bool]:
    """The readable text of ``html``, its ``<title>``, and whether the whole page was read.

    The title is cut at :data:`TITLE_LIMIT` characters (ending ``…`` when cut).

    Links are resolved against ``base_url``. ``enough``: stop parsing once that many characters
    of text were made (``html.parser`` is slow; text past the caller's cap is never shown), in
    which case the third value is ``False``. ``stop``: asked before each chunk after the first
    (64 KiB); once it answers ``True`` (the run was aborted, the time is up) parsing ends there,
    also incomplete — a page of inline tags finishes no block, so ``enough`` alone may not stop.
    """
    reader = _Reader(base_url)
    complete = True
    for start in range(0, len(html), _CHUNK):
        if start and stop is not None and stop():
            complete = False
            break
        reader.feed(html[start : start + _CHUNK])
        if enough is not None and reader.size > enough:
            complete = start + _CHUNK >= len(html)
            break
    reader.close()
    title = _SPACE.sub(" ", reader.title).strip()
    if len(title) > TITLE_LIMIT:
        title = title[:TITLE_LIMIT].rstrip() + "…"
    return reader.text(), title, complete
