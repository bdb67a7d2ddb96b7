"""The one reading of a URL (S06, S12): scheme, normalised host, effective port, normalised path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, final

from robota.core.urls._host import Host, normalise_host
from robota.core.urls._path import normalise_path
from robota.core.urls._split import DEFAULT_PORTS, SplitURL, split_url

__all__ = ["URLReading", "read_split", "read_url"]


@final
@dataclass(frozen=True, slots=True)
class URLReading:
    """What a URL names, read once, in the form every check compares.

    Attributes:
        scheme: ``http`` or ``https``.
        host: The normalised host (:func:`~robota.core.urls.normalise_host`).
        port: The effective port: the URL's, or the scheme's default when it names none.
        path: The path in its normal form (:func:`~robota.core.urls.normalise_path`).
        target: Path and query as they are sent (``/`` when empty; non-ASCII escaped, dot
            segments as written, no fragment).
    """

    scheme: Literal["http", "https"]
    host: Host
    port: int
    path: str
    target: str


def read_split(parts: SplitURL) -> URLReading:
    """The reading of a URL already split by :func:`~robota.core.urls.split_url`.

    For a caller that adds its own check between the split and the reading (:mod:`robota.host`
    compares the split with ``urllib.parse``'s). Raises :class:`~robota.core.urls.HostError`
    when the host cannot be normalised. Misuse: passing a :class:`SplitURL` built by hand rather
    than by the strict split, which skips every check the split makes.
    """
    host = normalise_host(parts.host)
    port = parts.port if parts.port is not None else DEFAULT_PORTS[parts.scheme]
    path = normalise_path(parts.target.split("?", 1)[0])
    return URLReading(parts.scheme, host, port, path, parts.target)


def read_url(url: str) -> URLReading:
    """The one reading of ``url``: the strict split, then the host and the path normalised.

    Raises :class:`~robota.core.urls.URLError` for a URL the strict split refuses and
    :class:`~robota.core.urls.HostError` for a host that cannot be normalised (both are
    ``ValueError``). Nothing is stripped first: a caller that wants surrounding whitespace
    forgiven strips it itself, knowing that a parser elsewhere may not.
    """
    return read_split(split_url(url))
