"""``WebFetch``: one web page as readable text, fetched through the egress client (S06).

Every hop goes through :class:`robota.host.EgressClient`: the URL and each redirect target are
checked by the egress policy before anything is sent, and the connection goes only to the
address that check validated — so a page cannot bounce the tool to a loopback, private or
metadata address, and a refusal is the model's answer (an error result naming the reason),
never a stack trace. The body is read up to a byte cap (the rest is never read; the answer says
it was cut), the whole fetch up to a time cap, and the run's abort ends it at once (S23).

Risk ``execute`` (S21): a fetch sends the URL — and whatever the model put in it — off this
machine, so it is not an inspection: default and accept-edits modes ask before a domain no rule
allows, plan mode refuses unless a rule allows it. Rules scope to the ``url`` argument read as a
URL (S12): ``WebFetch(domain:docs.python.org)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

import httpx2

import robota.core
import robota.host
from robota.tools._html_text import html_charset, html_to_text, known_charset

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    "WebFetchTool",
]

DEFAULT_MAX_BYTES: Final = 5 * 1024 * 1024
DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_MAX_CHARS: Final = 100_000
MAX_REDIRECTS: Final = 5
USER_AGENT: Final = "robota-webfetch/1 (+https://pypi.org/project/robota/)"

#: S12: rules scope to the ``url`` argument, read as the egress policy reads it.
URL_ARGUMENT = robota.core.PermissionArgument("url", "url")

_HTML: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT: Final = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/x-ndjson",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
    }
)
_ERROR_EXCERPT: Final = 1_000

_DESCRIPTION = """\
Fetch one web page (http or https) and return it as readable text.

HTML is converted to text: headings as '#' lines, list items as '- ', links as 'text (url)',
code blocks kept verbatim. Plain text, Markdown and JSON are returned as they are. Images,
PDFs and other binary types are refused. The first line names the final URL (after redirects)
and the HTTP status. Long pages are cut; pass max_chars to ask for less.

Only public addresses can be fetched: local, private and cloud-metadata addresses are refused,
redirects included. The URL leaves this machine, so never put secrets in it."""

_PARAMETERS: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "description": "The full URL, starting with https:// or http://.",
        },
        "max_chars": {
            "type": "integer",
            "minimum": 100,
            "description": "The most characters of text to return (default 100000).",
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}


class WebFetchTool(robota.core.Tool):
    """The ``WebFetch`` tool: a page through the egress client, as text (S06, S12, S21, S23)."""

    def __init__(
        self,
        *,
        name: str | None = None,
        client: robota.host.EgressClient | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        timeout: float = DEFAULT_TIMEOUT,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        if client is not None and not isinstance(client, robota.host.EgressClient):
            raise TypeError(
                f"client= must be a robota.host.EgressClient, got {type(client).__name__}"
            )
        _check_limit("max_bytes", max_bytes, 1, whole=True)
        _check_limit("timeout", timeout, 0, whole=False)
        _check_limit("max_chars", max_chars, 100, whole=True)
        super().__init__(
            name or "WebFetch",
            _DESCRIPTION,
            _PARAMETERS,
            # S21: a fetch sends data off the machine — never auto-allowed as an inspection.
            risk="execute",
            permission_argument=URL_ARGUMENT,
            source="robota.tools",
            idempotent=True,
        )
        self.client = client
        self.max_bytes = max_bytes
        self.timeout = float(timeout)
        self.max_chars = max_chars

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[robota.host.EgressClient]:
        if self.client is not None:
            yield self.client  # the caller's: its policy and redirect cap, left open
            return
        # S06: the default policy; never an ambient proxy; no cookies, no keys (fresh headers).
        async with robota.host.EgressClient(
            timeout=self.timeout,
            max_redirects=MAX_REDIRECTS,
            max_bytes=self.max_bytes,
            user_agent=USER_AGENT,
        ) as client:
            yield client

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        url: str = args["url"]
        max_chars = min(int(args.get("max_chars") or self.max_chars), self.max_chars)
        deadline = time.monotonic() + self.timeout  # the whole call: fetch and conversion
        try:
            async with asyncio.timeout(self.timeout), self._client() as client:
                result = await client.get(
                    url,
                    headers={
                        "User-Agent": USER_AGENT,
                        "Accept": "text/html, text/markdown, text/plain, application/json;q=0.9,"
                        " */*;q=0.1",
                        # Undecoded bytes count against the cap exactly as they arrive.
                        "Accept-Encoding": "identity",
                    },
                    signal=ctx.signal,  # S23: the run's abort ends the fetch
                    max_bytes=self.max_bytes,
                    truncate=True,
                )
        except TimeoutError:
            return _error(
                f"The fetch of {url} took longer than {self.timeout:g} s and was stopped."
            )
        except httpx2.TransportError as exc:
            return _error(f"Could not fetch {url}: {type(exc).__name__}: {str(exc) or 'no answer'}")
        if isinstance(result, robota.host.Rejected):
            # S06: the policy's reason, naming the hop it refused.
            where = f" at a redirect to {result.url}" if result.url != url else ""
            return _error(f"The fetch of {url} was refused{where}: {result.reason}")
        # Parsing megabytes of HTML takes a while: off the event loop, so it stays responsive.
        signal = ctx.signal

        def stop() -> bool:  # asked between chunks of the parse (S23, and the time limit)
            return signal.aborted or time.monotonic() > deadline

        answer = await asyncio.to_thread(_answer, result, max_chars, self.max_bytes, stop)
        ctx.signal.throw_if_aborted()  # S23: an answer finished after the abort is not a result
        return answer

    def __repr__(self) -> str:
        return f"<WebFetchTool {self.name!r}>"


def _check_limit(name: str, value: object, least: float, *, whole: bool) -> None:
    """Refuse a limit that is not a number (an int when ``whole``) above ``least``."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if (
        number is None
        or (whole and not isinstance(number, int))
        or not number >= least
        or number == 0
    ):
        kind = "an int" if whole else "a number"
        bound = f"at least {least:g}" if whole else "more than 0"
        raise ValueError(f"{name} must be {kind} {bound}, got {value!r}")


def _error(text: str) -> robota.core.ToolResult:
    return robota.core.ToolResult(text, is_error=True)


def _media_type(fetched: robota.host.Fetched) -> tuple[str, str | None]:
    """The bare media type and the ``charset`` parameter of the response's ``Content-Type``."""
    header = fetched.headers.get("content-type", "")
    media, _, params = header.partition(";")
    charset = None
    for piece in params.split(";"):
        key, _, value = piece.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = known_charset(value)
    return media.strip().lower(), charset


def _sniff(content: bytes) -> str:
    """A media type for a response that named none: HTML, text, or unknown bytes."""
    head = content[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    if b"\0" in content[:8192]:
        return "application/octet-stream"
    return "text/plain"


def _is_text(media: str) -> bool:
    return media.startswith("text/") or media in _TEXT or media.endswith(("+json", "+xml"))


def _decode(content: bytes, charset: str | None, *, html: bool) -> str:
    if content.startswith(b"\xef\xbb\xbf"):
        return content[3:].decode("utf-8", errors="replace")
    if charset is None and html:
        charset = html_charset(content)
    try:
        return content.decode(charset or "utf-8", errors="replace")
    except (LookupError, UnicodeError, ValueError):  # a codec the probe did not catch
        return content.decode("utf-8", errors="replace")


def _answer(
    fetched: robota.host.Fetched,
    max_chars: int,
    max_bytes: int,
    stop: Callable[[], bool] | None = None,
) -> robota.core.ToolResult:
    media, charset = _media_type(fetched)
    if not media or media in ("application/octet-stream", "binary/octet-stream"):
        sniffed = _sniff(fetched.content)
        media = sniffed if not media or sniffed != "text/plain" else media
    status = f"HTTP {fetched.status}"
    if not (media in _HTML or _is_text(media)):
        return _error(
            f"{fetched.url} ({status}) is {media}, which WebFetch does not read: only HTML and"
            " text (plain, Markdown, JSON, XML) are returned."
        )
    html = media in _HTML
    text = _decode(fetched.content, charset, html=html)
    title = ""
    complete = True
    if html:
        text, title, complete = html_to_text(text, fetched.url, enough=max_chars, stop=stop)
    lines = [f"URL: {fetched.url} ({status}, {media})"]
    if fetched.redirects:
        lines.append("Redirected from: " + " -> ".join(fetched.redirects))
    if title:
        lines.append(f"Title: {title}")
    if fetched.truncated:
        lines.append(
            f"[The response was larger than {max_bytes} bytes: only the first {max_bytes} were"
            " read.]"
        )
    if fetched.status >= 400:
        excerpt = text[:_ERROR_EXCERPT]
        body = f"\n\n{excerpt}" if excerpt.strip() else ""
        return _error(
            f"The server answered {status} for {fetched.url}.\n" + "\n".join(lines) + body
        )
    if len(text) > max_chars or not complete:
        of = f" of {len(text)}" if complete else ""
        text = (
            text[:max_chars].rstrip()
            + f"\n\n[Cut at character {max_chars}{of}: the rest of the page is not shown.]"
        )
    return robota.core.ToolResult("\n".join(lines) + "\n\n" + text)
