"""``EgressClient`` (S06): a per-request byte limit, a truncating read, and no cookie jar."""

from __future__ import annotations

import pytest

import robota.host
from host.test_egress import client, serve


async def test_s06_a_truncating_read_stops_at_the_limit_and_says_so() -> None:
    async with serve() as server, client(max_bytes=1000) as http:
        server.routes["/big"] = (200, {}, b"0123456789" * 100, 0.0)
        cut = await http.get(f"http://a.test:{server.port}/big", max_bytes=25, truncate=True)
        whole = await http.get(f"http://a.test:{server.port}/big", truncate=True)
    assert isinstance(cut, robota.host.Fetched)
    assert isinstance(whole, robota.host.Fetched)
    assert (cut.content, cut.truncated) == (b"0123456789012345678901234", True)
    assert (len(whole.content), whole.truncated) == (1000, False)  # exactly the limit: whole


async def test_s06_a_per_request_limit_never_raises_the_clients() -> None:
    async with serve() as server, client(max_bytes=10) as http:
        server.routes["/big"] = (200, {}, b"x" * 100, 0.0)
        with pytest.raises(robota.host.ResponseTooLargeError, match="exceeded 10 bytes"):
            await http.get(f"http://a.test:{server.port}/big", max_bytes=50)


async def test_s06_a_cookie_a_server_sets_is_never_sent_back() -> None:
    async with serve() as server, client() as http:
        server.routes["/login"] = (200, {"set-cookie": "session=abc; Path=/"}, b"ok", 0.0)
        await http.get(f"http://a.test:{server.port}/login")
        await http.get(f"http://a.test:{server.port}/next")
    assert [seen.path for seen in server.seen] == ["/login", "/next"]
    assert "cookie" not in server.seen[1].headers
