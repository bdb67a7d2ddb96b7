"""The host's half of :mod:`robota.lowlevel`: the egress pieces integrations build on.

Import these names from :mod:`robota.lowlevel`, which re-exports all of them beside core's half
(:mod:`robota.core.lowlevel`). This module exists so that ``robota.lowlevel`` and the provider
adapters reach the host through a public path only: no module outside :mod:`robota.host` imports
one of its private modules (issue 32; the import-linter contract ``host-private`` holds every
package to it).

Stability: public and typed, but lower level than :mod:`robota.host`; a minor release may change
these names, and the changelog says so when it does.
"""

from __future__ import annotations

from robota.host.egress._media_fetch import NO_FETCH, FetchRule, MediaFetcher
from robota.host.egress._policy import _TEST_TOKEN, LoopbackAllowance

__all__ = ["NO_FETCH", "FetchRule", "MediaFetcher", "loopback_allowance"]


def loopback_allowance(*hosts: str) -> LoopbackAllowance:
    """Let the named hosts resolve to loopback addresses — for tests against local servers only.

    Pass it as ``allowance=`` to :func:`robota.host.check_url` or :class:`robota.host.EgressClient`
    together with a resolver that maps those names to ``127.0.0.1``. A literal loopback URL is
    still refused, and so is any host not named here. :func:`robota.testing.loopback_allowance`
    is this function.

    Raises:
        ValueError: for a name that is not a host name.
    """
    return LoopbackAllowance(hosts, _token=_TEST_TOKEN)
