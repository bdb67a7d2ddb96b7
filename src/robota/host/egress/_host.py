"""The egress policy's host normalisation (S06) is core's: :mod:`robota.core.urls`.

:func:`~robota.core.urls.normalise_host` is applied exactly once, before anything looks at a
host: the blocklist, the suffix rules, the IP-literal check and the resolver all read its result,
and so do the pinned connection and the permission rules (S12), so there is no second spelling
for a bypass to hide in. Its docstring lists the steps (UTS #46, alternative full stops, one
trailing dot, A-labels, IPv4 in every WHATWG spelling). The names are re-exported here for the
egress modules.
"""

from __future__ import annotations

from robota.core.urls import Host, HostError, normalise_host, parse_ipv4

__all__ = ["Host", "HostError", "normalise_host", "parse_ipv4"]
