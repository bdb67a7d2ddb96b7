"""Matching one permission pattern against one argument, per argument kind (S12).

Every matcher answers one of three things: ``"match"``, ``"no_match"`` or ``"unevaluable"`` —
the pattern or the argument cannot be judged in its kind. Unevaluable is its own answer, never
folded into "no match": a deny or ask rule that cannot be judged must route to a person, or the
deny would silently lose to an allow beside it.

Kinds:

* ``path`` — path-segment globs (``*`` within one segment, ``**`` across segments) against the
  canonical path (symlinks resolved by the host's resolver when one is passed). A pattern without
  a glob covers the path and everything beneath it.
* ``url`` — scheme, host, port and path are matched apart, so a wildcard never spans scheme and
  host by accident: ``https://*.example.com/docs/**``, ``example.com`` (any scheme and path),
  ``domain:example.com`` (that host and its subdomains). Value and pattern are read by
  :mod:`robota.core.urls`, the egress policy's own reading (see :mod:`._url_patterns`).
* ``command`` — shell words, parsed (see :mod:`._shell`): the pattern's first word names the
  command; ``*`` as a last word (or a ``:*`` suffix) matches any further arguments. In the deny
  direction flags match regardless of order and clustering (``rm -rf`` also denies ``rm -f -r``),
  every command of a compound line is checked, and anything the parser cannot see makes the rule
  unevaluable — a literal non-match is not evidence the command will not run. In the allow
  direction every command of the line must be covered, exactly.
* ``text`` — a glob over the whole string.
"""

from __future__ import annotations

from robota.core.permissions._command_patterns import match_command
from robota.core.permissions._globs import (
    GLOB_CHARS,
    Direction,
    MatchResult,
    PathResolver,
    escape_glob,
)
from robota.core.permissions._path_patterns import match_path, match_text
from robota.core.permissions._url_patterns import match_url, split_url

__all__ = [
    "GLOB_CHARS",
    "Direction",
    "MatchResult",
    "PathResolver",
    "escape_glob",
    "match_command",
    "match_path",
    "match_text",
    "match_url",
    "split_url",
]
