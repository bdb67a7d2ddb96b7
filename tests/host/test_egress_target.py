"""S06/S12: the request line on the wire carries the path the checks judged.

The URL permission rules and the egress policy judge a URL's path in its WHATWG reading
(``/admin/%2e%2e/public`` is ``/public``). A client that sent the path as written would let a
server that routes on the raw path land in ``/admin/`` after an allow on ``/public/**`` and past
a deny on ``/admin/**``. These tests read the request line a real loopback server receives.
"""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host.test_egress import LOCAL, client, resolver_for, serve
from robota.core.permissions import match_url
from robota.core.permissions._globs import segments_cover
from robota.core.urls import normalise_target, path_readings, read_url
from robota.host import EgressTransport
from robota.testing import loopback_allowance

_PATHS = [
    ("/admin/%2e%2e/public", "/public"),
    ("/admin/%2E%2e/public/x", "/public/x"),
    ("/admin/.%2e/public", "/public"),
    ("/admin/%2e/x", "/admin/x"),
    ("/a/./b/../c", "/a/c"),
    ("/%61dmin/%7e/x", "/admin/~/x"),
    ("/a%2fb/%zz", "/a%2Fb/%zz"),
    ("/日本/x", "/%E6%97%A5%E6%9C%AC/x"),
    ("/a{b}^`|[]", "/a%7Bb%7D%5E%60|[]"),
    ("/a/%2e%2e/../b", "/b"),
    # Escapes go out in one case, and decoding one never completes a "%" kept as written.
    ("/%aA/%2f", "/%AA/%2F"),
    ("/%%41a", "/%%41a"),
    ("/x/%2%65", "/x/%2%65"),
    ("", "/"),
    # Ordinary paths go out as written.
    ("/search", "/search"),
    ("/repos/o/r/issues/24", "/repos/o/r/issues/24"),
    ("/a%20b/c%2Fd", "/a%20b/c%2Fd"),
]


@pytest.mark.parametrize(("path", "sent"), _PATHS)
async def test_s06_the_client_sends_the_path_the_rules_judged(path: str, sent: str) -> None:
    async with serve() as server, client() as http:
        url = f"http://a.test:{server.port}{path}"
        result = await http.get(url)
    assert result.ok
    assert [seen.path for seen in server.seen] == [sent]
    assert sent == read_url(url).path


async def test_s06_a_dot_segment_the_rules_resolved_never_reaches_the_server() -> None:
    # The review's example: an allow on /public/** matched, a deny on /admin/** did not.
    async with serve() as server, client() as http:
        url = f"http://a.test:{server.port}/admin/%2e%2e/public"
        assert match_url("http://a.test/public/**", url, direction="allow") == "match"
        assert match_url("http://a.test/admin/**", url) == "no_match"
        result = await http.get(url)
    assert result.ok
    assert server.seen[0].path == "/public"
    assert result.url == f"http://a.test:{server.port}/public"


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        ("?q=1&x=%2e%2e/../a", "?q=1&x=%2e%2e/../a"),  # a query is not a path: kept as written
        ("?q=a+b&c=%20&d=%zz", "?q=a+b&c=%20&d=%zz"),
        ("?q=\"<x>'", "?q=%22%3Cx%3E%27"),  # what a WHATWG client encodes
        ("?q=ü", "?q=%C3%BC"),
        ("?", "?"),
    ],
)
async def test_s06_the_query_goes_out_as_a_whatwg_client_sends_it(query: str, sent: str) -> None:
    async with serve() as server, client() as http:
        result = await http.get(f"http://a.test:{server.port}/a/%2e%2e/p{query}#frag")
    assert result.ok
    assert server.seen[0].path == "/p" + sent


async def test_s06_a_redirect_hop_is_sent_with_the_path_the_policy_checked() -> None:
    async with serve() as server, client() as http:
        server.routes["/go"] = (302, {"location": "/admin/%2e%2e/public?x=1"}, b"", 0.0)
        server.routes["/b"] = (
            302,
            {"location": f"http://b.test:{server.port}/x/%2E%2E/y/./z"},
            b"",
            0.0,
        )
        first = await http.get(f"http://a.test:{server.port}/go")
        second = await http.get(f"http://a.test:{server.port}/b")
    assert first.ok
    assert second.ok
    assert [seen.path for seen in server.seen] == ["/go", "/public?x=1", "/b", "/y/z"]


async def test_s06_the_egress_transport_sends_the_path_the_policy_checked() -> None:
    transport = EgressTransport(
        resolver=resolver_for(LOCAL), allowance=loopback_allowance("a.test")
    )
    async with serve() as server, httpx2.AsyncClient(transport=transport, trust_env=False) as http:
        response = await http.get(f"http://a.test:{server.port}/admin/%2e%2e/public?q=%3C")
        ordinary = await http.get(f"http://a.test:{server.port}/docs/a%20b")
    assert (response.status_code, ordinary.status_code) == (200, 200)
    assert [seen.path for seen in server.seen] == ["/public?q=%3C", "/docs/a%20b"]


_PIECES = [*"ab./%;", "%2e", "%2E", "%2f", "%41", "%zz", "..", "ü", "{", "^", "|"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=10).map("".join),
    st.none() | st.text(alphabet="a=&%2e<'", max_size=6),
)
def test_s06_s12_every_target_is_sent_as_the_one_reading(tail: str, query: str | None) -> None:
    path = "/" + tail + ("" if query is None else "?" + query)

    async def fetch() -> list[str]:
        async with serve() as server, client() as http:
            result = await http.get(f"http://a.test:{server.port}{path}")
            assert result.ok
        return [seen.path for seen in server.seen]

    url = f"http://a.test{path}"
    assert asyncio.run(fetch()) == [normalise_target(read_url(url).target)]


# --------------------------------------------------------------------------- the rules' side


def test_s12_a_path_rule_reads_the_path_the_egress_sends_as_servers_do() -> None:
    # Sent as written, every modelled server reads this as outside /b/; sent in its WHATWG
    # reading (/b;%5C//), a server that drops `;` parameters reads /b. The rule must see both.
    url = "https://example.com/b;%5c//..;b/.."
    assert normalise_target(read_url(url).target) == "/b;%5C//"
    assert match_url("https://example.com/b/**", url) == "unevaluable"
    assert match_url("https://example.com/b/**", url, direction="allow") == "unevaluable"
    # Ordinary paths keep their answer.
    assert match_url("https://example.com/b/**", "https://example.com/b/c") == "match"
    assert match_url("https://example.com/b/**", "https://example.com/a/../b/c") == "match"
    assert match_url("https://example.com/b/**", "https://example.com/c/b") == "no_match"


_RULE_PIECES = ["a", "b", "/", "//", ".", "..", "%2e", "%2f", "%5c", ";", "..;", "A", "%41"]


@settings(max_examples=2_000, deadline=None)
@given(
    st.lists(st.sampled_from(_RULE_PIECES), max_size=9).map("".join),
    st.sampled_from(["/a/**", "/b/**", "/a", "/a/b", "/*/b/**", "/A/**"]),
)
def test_s12_a_definite_path_answer_holds_for_the_path_the_egress_sends(
    tail: str, rule_path: str
) -> None:
    url = "https://example.com/" + tail
    answer = match_url("https://example.com" + rule_path, url)
    if answer == "unevaluable":
        return
    sent = normalise_target(read_url(url).target)
    # Whatever a modelled server makes of the path actually sent, the rule's answer holds.
    pairs = zip(path_readings(rule_path), path_readings(sent), strict=True)
    assert {segments_cover(p, v) for p, v in pairs} == {answer}, (url, sent)
