"""S06: the explicit private-network allowance admits the caller's own network, never metadata."""

from __future__ import annotations

import pytest

from robota.host import Allowed, Rejected, check_url


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/mcp",
        "http://127.0.0.1:8080/mcp",
        "http://192.168.1.5/",
        "http://172.16.0.9/",
        "http://100.64.0.1/",
        "http://[fd12:3456::1]/",
        "http://[::1]:9000/",
    ],
)
async def test_s06_private_network_allowance_admits_own_network_addresses(url: str) -> None:
    assert isinstance(await check_url(url), Rejected)  # refused by default
    assert isinstance(await check_url(url, private_network=True), Allowed)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.170.2/v2/credentials",
        "http://169.254.1.1/",  # link-local: where metadata services live
        "http://[fe80::1]/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://192.0.0.192/",
        "http://metadata.google.internal/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
    ],
)
async def test_s06_private_network_allowance_never_admits_metadata_or_link_local(url: str) -> None:
    assert isinstance(await check_url(url, private_network=True), Rejected)


async def test_s06_private_network_allowance_applies_to_resolved_names_too() -> None:
    async def resolve(host: str) -> list[str]:
        return {"intranet.example": ["10.0.0.7"], "imds.example": ["169.254.169.254"]}[host]

    allowed = await check_url("http://intranet.example/", resolver=resolve, private_network=True)
    assert isinstance(allowed, Allowed)
    assert allowed.addresses == ("10.0.0.7",)
    refused = await check_url("http://imds.example/", resolver=resolve, private_network=True)
    assert isinstance(refused, Rejected)
