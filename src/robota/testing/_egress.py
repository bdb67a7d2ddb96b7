"""Test-only loopback allowance for the egress policy (S06)."""

from __future__ import annotations

from robota.host.egress._policy import _TEST_TOKEN, LoopbackAllowance

__all__ = ["loopback_allowance"]


def loopback_allowance(*hosts: str) -> LoopbackAllowance:
    """Let the named hosts resolve to loopback addresses — for tests against local servers only.

    Pass it as ``allowance=`` to :func:`robota.host.check_url` or :class:`robota.host.EgressClient`
    together with a resolver that maps those names to ``127.0.0.1``. A literal loopback URL is
    still refused, and so is any host not named here.
    """
    return LoopbackAllowance(hosts, _token=_TEST_TOKEN)
