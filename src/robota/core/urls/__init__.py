"""``robota.core.urls``: the one reading of a URL (S06, S12).

Two checks look at the URLs a model hands a tool: the egress policy (:func:`robota.host.check_url`,
which decides whether a request may go out) and the permission rules (``WebFetch(domain:…)``,
which decide whether the call may run at all). If they read a URL differently, a spelling one of
them normalises slips past the other — ``ｅｘａｍｐｌｅ。com`` past a deny on ``example.com``,
``http://2852039166/`` past a deny on ``169.254.169.254``. So both read it here, with the same
code, and so do the patterns the rules are written in. Pure Python, no networking module: the
reading is what a WHATWG URL parser (a browser, ada, the HTTP stacks that follow the standard)
makes of a URL, minus anything where ``urllib.parse`` would read a different host.

* :func:`read_url` — the entry point: :class:`URLReading` with the scheme, the normalised
  :class:`Host`, the effective port, the normalised path and the target as sent. Raises
  :class:`URLError` or :class:`HostError` (both ``ValueError``) for a URL it refuses.
* :func:`split_url` — the strict split (``http``/``https`` only; no controls, whitespace,
  backslashes, credentials or odd ports); :func:`read_split` reads an already split URL.
* :func:`normalise_host` — UTS #46 mapping, alternative full stops, one trailing dot, A-labels;
  a host ending in a number is an IPv4 address in any WHATWG spelling (``0xa9.254.43518``);
  :func:`normalise_host_pattern` reads a pattern's host the same way, ``*`` labels kept as globs.
* :func:`format_address` — the one text of an address; :func:`mapped_ipv4` — the IPv4 address an
  IPv4-mapped IPv6 address is; :func:`embedded_ipv4` — every IPv4 address an IPv6 address
  carries (mapped, compatible, NAT64, 6to4, Teredo), read from :data:`IPV4_EMBEDDINGS`, the one
  table the egress classifier and the URL rules share.
* :func:`host_glob_kind` — what a host glob from :func:`normalise_host_pattern` names: every
  host (``*``), IPv4 addresses only (``10.*.*.*``), or names.
* :func:`normalise_path` — dot segments resolved the WHATWG way, percent-encoded ones included,
  in RFC 3986 normal form; :func:`path_readings` — the path as common origin servers read it;
  :func:`normalise_target` (:attr:`URLReading.request_target`) — that path plus the query: the
  request target a client must send, so the server is asked for the path the checks judged.

What it does not do: resolve names, or decide whether an address may be reached — that is the
egress policy's table in :mod:`robota.host`. Misuse: reading a URL with anything else (``urllib``,
a regular expression) anywhere a decision is made, which brings back a second reading.
"""

from robota.core.urls._address import IPAddress, format_address, mapped_ipv4
from robota.core.urls._embedded import (
    IPV4_EMBEDDINGS,
    EmbeddedIPv4,
    EmbeddingPosition,
    IPv4Embedding,
    embedded_ipv4,
)
from robota.core.urls._host import (
    Host,
    HostError,
    HostGlobKind,
    host_glob_kind,
    normalise_host,
    normalise_host_pattern,
    parse_ipv4,
)
from robota.core.urls._path import normalise_path, path_readings
from robota.core.urls._reading import URLReading, normalise_target, read_split, read_url
from robota.core.urls._split import (
    DEFAULT_PORTS,
    SplitURL,
    URLError,
    escape_target,
    parse_port,
    split_authority,
    split_url,
    unsafe_character,
)

__all__ = [
    "DEFAULT_PORTS",
    "IPV4_EMBEDDINGS",
    "EmbeddedIPv4",
    "EmbeddingPosition",
    "Host",
    "HostError",
    "HostGlobKind",
    "IPAddress",
    "IPv4Embedding",
    "SplitURL",
    "URLError",
    "URLReading",
    "embedded_ipv4",
    "escape_target",
    "format_address",
    "host_glob_kind",
    "mapped_ipv4",
    "normalise_host",
    "normalise_host_pattern",
    "normalise_path",
    "normalise_target",
    "parse_ipv4",
    "parse_port",
    "path_readings",
    "read_split",
    "read_url",
    "split_authority",
    "split_url",
    "unsafe_character",
]
