"""The one reading of a URL (S06, S12): scheme, normalised host, effective port, normalised path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, final

from robota.core.urls._host import Host, normalise_host
from robota.core.urls._path import normalise_path
from robota.core.urls._split import DEFAULT_PORTS, SplitURL, escape_target, split_url

__all__ = ["URLReading", "normalise_target", "read_split", "read_url"]

# WHATWG's special-query percent-encode set, beyond what escape_target already escapes (C0,
# space, non-ASCII); "#" never reaches a target.
_QUERY_ENCODE: Final = {ord(char): f"%{ord(char):02X}" for char in "\"<>'"}


def normalise_target(target: str) -> str:
    """The request target to send for ``target`` (path and query, as the strict split gives it).

    The path is :func:`~robota.core.urls.normalise_path`'s — dot segments resolved, their
    ``%2e`` spellings included, in RFC 3986 normal form: exactly the path the URL permission
    rules judge (S12) and the egress policy checks (S06), so a server that routes on the raw
    path cannot be sent ``/admin/%2e%2e/public`` after a rule judged ``/public``. The query is
    kept as written except that what a WHATWG client percent-encodes in it is (``"``, ``<``,
    ``>``, ``'``, and anything outside printable ASCII); a ``?`` with nothing after it stays.
    The result is printable ASCII. Misuse: sending the target as written (or letting an HTTP
    library re-normalise it) after a check judged this one.
    """
    path, mark, query = target.partition("?")
    return normalise_path(path) + mark + escape_target(query).translate(_QUERY_ENCODE)


@final
@dataclass(frozen=True, slots=True)
class URLReading:
    """What a URL names, read once, in the form every check compares.

    Attributes:
        scheme: ``http`` or ``https``.
        host: The normalised host (:func:`~robota.core.urls.normalise_host`).
        port: The effective port: the URL's, or the scheme's default when it names none.
        path: The path in its normal form (:func:`~robota.core.urls.normalise_path`).
        target: Path and query as written (``/`` when empty; non-ASCII escaped, dot
            segments as written, no fragment) — what a client that does not normalise would
            send; :attr:`request_target` is what a request is built from.
    """

    scheme: Literal["http", "https"]
    host: Host
    port: int
    path: str
    target: str

    @property
    def request_target(self) -> str:
        """The target a request sends: :attr:`path` and the query (:func:`normalise_target`)."""
        return normalise_target(self.target)


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
