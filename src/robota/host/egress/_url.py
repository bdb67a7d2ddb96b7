r"""The egress policy's strict URL reading: core's, plus a comparison with ``urllib.parse`` (S06).

The split itself — ``http``/``https`` only, no controls, whitespace, backslashes, credentials, odd
ports or malformed authorities — is :func:`robota.core.urls.split_url`, the one reading the
permission rules use too (S12), so what a rule judged is what the policy checks. It refuses every
URL that ``urllib.parse`` and a WHATWG parser could read differently (``http://127.0.0.1:80\@evil
.com/`` is ``evil.com`` to one and ``127.0.0.1`` to the other). Core may not import ``urllib``, so
the last guard lives here: the split is compared with ``urllib.parse``'s reading of the same text,
and any difference in host or port is refused. The request is then built from these components —
scheme, normalised host, port and target — never from the raw string.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from robota.core.urls import DEFAULT_PORTS, SplitURL, URLError, unsafe_character
from robota.core.urls import split_url as strict_split

__all__ = ["DEFAULT_PORTS", "SplitURL", "URLError", "split_url", "unsafe_character"]


def _cross_check(text: str, host: str, port: int | None) -> None:
    # S06: the last guard against a differential — urllib must read the same host and port.
    try:
        parts = urlsplit(text)
        theirs = (parts.hostname or "", parts.port)
    except ValueError as exc:
        raise URLError(f"ambiguous URL: urllib.parse cannot read it ({exc})") from exc
    ours = (host.strip("[]").lower(), port)
    if theirs != ours:
        raise URLError(f"ambiguous URL: urllib.parse reads the host and port as {theirs!r}")


def split_url(url: str) -> SplitURL:
    """The strict split of ``url`` checked against ``urllib.parse``, or :class:`URLError`."""
    parts = strict_split(url)
    _cross_check(url, parts.host, parts.port)
    return parts
