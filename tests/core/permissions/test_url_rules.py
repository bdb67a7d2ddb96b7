"""S12/S06: URL rules read a URL exactly as the egress policy does (issue 24).

Before the fix the rule matcher read URLs with a regular expression of its own while the egress
client normalised them and fetched: a deny on a domain was passed by spellings the client maps to
that domain (fullwidth letters, ideographic full stops, a soft hyphen, the U-label of an A-label,
a trailing dot), a deny on an address by the same address as one integer, in hex or octal, in a
short form or as an IPv4-mapped IPv6 literal, a pattern with a port or an IPv6 literal matched
nothing at all, and paths were compared before ``.`` and ``..`` segments were resolved. Now both
read a URL with :mod:`robota.core.urls`, patterns too, and a value that reading refuses makes a
deny or ask rule ask.

Decisions go through :func:`robota.evaluate_permission` with a WebFetch-like tool of the
``inspect`` class: with no rule it is allowed, so a deny rule that does not apply shows as
``allow``; allow rules are checked under ``ask_everything``, so one that does not apply shows as
``ask``.
"""

from __future__ import annotations

import asyncio
import ipaddress

import ada_url
import idna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import match_url, split_url
from robota.core.urls import HostError, URLError, normalise_host, read_url

from .conftest import make_tool

FETCH = make_tool(
    "WebFetch",
    risk="inspect",
    argument=robota.PermissionArgument("url", "url"),
    properties={"url": {"type": "string"}, "prompt": {"type": "string"}},
)


def deny(rule: str, url: object) -> str:
    """What a deny rule makes of the call: ``deny``, ``ask`` (unevaluable) or ``allow``."""
    return evaluate_permission(FETCH, {"url": url}, PermissionPolicy(deny=[rule])).behavior


def allow(rule: str, url: object) -> str:
    """What an allow rule makes of the call: ``allow`` when it applies, else ``ask``."""
    policy = PermissionPolicy(allow=[rule], ask_everything=True)
    return evaluate_permission(FETCH, {"url": url}, policy).behavior


# --------------------------------------------------------------------------- host spellings

_EXAMPLE_SPELLINGS = [
    "https://ｅｘａｍｐｌｅ.ｃｏｍ/",  # fullwidth letters
    "https://ＥＸＡＭＰＬＥ.com/",
    "https://example\u3002com/",  # ideographic full stop
    "https://example\uff0ecom/",  # fullwidth full stop
    "https://example\uff61com/",  # halfwidth ideographic full stop
    "https://exa\u00admple.com/",  # soft hyphen, dropped by UTS #46
    "https://exa\u200bmple.com/",  # zero-width space, dropped by UTS #46
    "https://example.com./",  # trailing dot
    "HTTPS://EXAMPLE.COM/",
    "https://ⓔⓧⓐⓜⓟⓛⓔ.com/",  # enclosed letters
]


@pytest.mark.parametrize("url", _EXAMPLE_SPELLINGS)
@pytest.mark.parametrize(
    "rule",
    ["WebFetch(domain:example.com)", "WebFetch(example.com)", "WebFetch(https://example.com/**)"],
)
def test_s12_url_deny_rule_is_not_passed_by_a_spelling_the_egress_maps_to_the_host(
    rule: str, url: str
) -> None:
    assert deny(rule, url) == "deny"


def test_s12_url_deny_rule_is_not_passed_by_a_fullwidth_host() -> None:
    assert deny("WebFetch(domain:example.com)", "https://api.ｅｘａｍｐｌｅ．ｃｏｍ/x") == "deny"


def test_s12_url_deny_rule_is_not_passed_by_ideographic_full_stops() -> None:
    assert deny("WebFetch(domain:example.com)", "https://a\u3002example\u3002com/") == "deny"


def test_s12_url_deny_rule_on_a_u_label_denies_its_a_label_and_back() -> None:
    assert deny("WebFetch(domain:bücher.example)", "https://xn--bcher-kva.example/") == "deny"
    assert deny("WebFetch(domain:xn--bcher-kva.example)", "https://BÜCHER.example/") == "deny"
    assert deny("WebFetch(https://*.bücher.example/**)", "https://a.xn--bcher-kva.example/") == (
        "deny"
    )


def test_s12_url_deny_rule_pattern_spelled_oddly_still_names_the_host() -> None:
    # Patterns are read by the same code: the operator's fullwidth or dotted spelling is the host.
    assert deny("WebFetch(domain:ｅｘａｍｐｌｅ。com.)", "https://example.com/") == "deny"
    assert deny("WebFetch(*.EXAMPLE.com)", "https://api.example.com/") == "deny"


def test_s12_url_domain_pattern_may_have_a_space_after_the_colon() -> None:
    assert deny("WebFetch(domain: example.com)", "https://a.example.com/") == "deny"
    assert allow("WebFetch(domain: example.com )", "https://example.com/") == "allow"


def test_s12_url_allow_rule_admits_every_spelling_of_its_host() -> None:
    for url in _EXAMPLE_SPELLINGS:
        assert allow("WebFetch(domain:example.com)", url) == "allow", url


def test_s12_url_host_rules_do_not_reach_other_hosts() -> None:
    for url in (
        "https://notexample.com/",
        "https://example.com.evil.net/",
        "https://example.co/",
        "https://xn--exmple-cua.com/",  # exämple.com
    ):
        assert deny("WebFetch(domain:example.com)", url) == "allow", url
        assert allow("WebFetch(domain:example.com)", url) == "ask", url


# --------------------------------------------------------------------------- address spellings

_METADATA_SPELLINGS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",  # one integer
    "http://0xa9fea9fe/",  # one hex number
    "http://0xa9.254.169.254/",  # a hex part
    "http://0251.0376.0251.0376/",  # octal parts
    "http://169.254.43518/",  # a short form: the last part holds 16 bits
    "http://169.16689662/",  # the last part holds 24 bits
    "http://１６９.２５４.１６９.２５４/",  # fullwidth digits
    "http://169。254。169。254/",
    "http://[::ffff:169.254.169.254]/",  # IPv4-mapped IPv6
    "http://[::ffff:a9fe:a9fe]/",
    "http://[0:0:0:0:0:ffff:a9fe:a9fe]:80/",
]


@pytest.mark.parametrize("url", _METADATA_SPELLINGS)
@pytest.mark.parametrize(
    "rule",
    [
        "WebFetch(169.254.169.254)",
        "WebFetch(domain:169.254.169.254)",
        "WebFetch(http://169.254.169.254/**)",
        "WebFetch(2852039166)",
        "WebFetch([::ffff:a9fe:a9fe])",
        "WebFetch(169.254.*.*)",
    ],
)
def test_s12_url_deny_rule_on_an_address_is_not_passed_by_another_spelling(
    rule: str, url: str
) -> None:
    assert deny(rule, url) == "deny"


def test_s12_url_deny_rule_on_an_address_is_not_passed_by_an_integer_host() -> None:
    assert deny("WebFetch(169.254.169.254)", "http://2852039166/") == "deny"


def test_s12_url_deny_rule_on_an_address_is_not_passed_by_an_ipv4_mapped_literal() -> None:
    assert deny("WebFetch(169.254.169.254)", "http://[::ffff:169.254.169.254]/") == "deny"


def test_s12_url_deny_rule_on_an_address_also_denies_it_through_nat64() -> None:
    # A NAT64 gateway connects 64:ff9b::a9fe:a9fe to 169.254.169.254: a deny must see it. An allow
    # does not widen that way: the operator named the IPv4 address, not a translator's.
    assert deny("WebFetch(169.254.169.254)", "http://[64:ff9b::a9fe:a9fe]/") == "deny"
    assert allow("WebFetch(169.254.169.254)", "http://[64:ff9b::a9fe:a9fe]/") == "ask"
    assert match_url("169.254.169.254", "http://[64:ff9b::a9fe:a9fe]/", direction="deny") == "match"
    assert match_url("169.254.169.254", "http://[64:ff9b::a9fe:a9fe]/", direction="allow") == (
        "no_match"
    )


def test_s12_url_address_rules_do_not_reach_other_addresses() -> None:
    for url in ("http://169.254.169.253/", "http://[::ffff:a9fe:a9fd]/", "http://2852039165/"):
        assert deny("WebFetch(169.254.169.254)", url) == "allow", url
    assert allow("WebFetch(93.184.215.14)", "http://1572394766/") == "allow"  # the same address
    assert allow("WebFetch(93.184.215.14)", "http://93.184.215.15/") == "ask"


# --------------------------------------------------------------------------- ports and IPv6


def test_s12_url_pattern_with_a_port_matches_that_port() -> None:
    rule = "WebFetch(https://example.com:8443/**)"
    assert deny(rule, "https://example.com:8443/x") == "deny"
    assert deny(rule, "https://ＥＸＡＭＰＬＥ.com:8443/") == "deny"
    assert allow(rule, "https://example.com:8443/x?y=1") == "allow"
    assert deny(rule, "https://example.com/x") == "allow"  # port 443: another service
    assert allow(rule, "https://example.com:8080/x") == "ask"


def test_s12_url_pattern_port_matches_the_scheme_default_port() -> None:
    assert allow("WebFetch(https://example.com:443/**)", "https://example.com/x") == "allow"
    assert allow("WebFetch(example.com:80)", "http://example.com/") == "allow"
    assert allow("WebFetch(example.com:80)", "https://example.com/") == "ask"
    assert deny("WebFetch(http://example.com:80/**)", "http://example.com:080/") == "deny"


def test_s12_url_pattern_without_a_port_matches_any_port() -> None:
    assert deny("WebFetch(https://example.com/**)", "https://example.com:8443/x") == "deny"
    assert deny("WebFetch(domain:example.com)", "https://a.example.com:1/") == "deny"


def test_s12_url_pattern_with_an_ipv6_literal_matches_by_value() -> None:
    rule = "WebFetch(http://[::1]/**)"
    for url in ("http://[::1]/x", "http://[0:0::1]:8080/x", "http://[0000::0001]/"):
        assert deny(rule, url) == "deny", url
        assert allow(rule, url) == "allow", url
    assert deny(rule, "http://[::2]/x") == "allow"
    assert allow("WebFetch([2606:4700::1111])", "https://[2606:4700:0::1111]/") == "allow"
    assert deny("WebFetch([::1]:8080)", "http://[::1]:8080/") == "deny"
    assert deny("WebFetch([::1]:8080)", "http://[::1]:8081/") == "allow"


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    "path",
    [
        "/3/../2/x",
        "/3/%2e%2e/2/x",
        "/3/%2E%2E/2/x",
        "/3/.%2e/2/x",
        "/3/%2e./2/x",
        "/3/a/../../2/x",
        "/3/./../2/x",
        "/3/..",
    ],
)
def test_s12_url_allow_rule_on_a_path_is_not_escaped_by_dot_segments(path: str) -> None:
    assert allow("WebFetch(https://docs.python.org/3/**)", "https://docs.python.org" + path) == (
        "ask"
    )


@pytest.mark.parametrize(
    "path",
    [
        "/a/../admin/x",
        "/a/%2e%2e/admin/x",
        "/a/b/%2E%2e/../admin/",
        "/./admin/x",
        "/%2e/admin/x",
        "/admin/%2e/x",
        "/admin/.",
        "/%61dmin/x",  # percent-encoded unreserved: the same URL (RFC 3986 §2.3)
        "/adm%69n/x",
        "/admin",
    ],
)
def test_s12_url_deny_rule_on_a_path_is_not_passed_by_dot_segments_or_encoding(
    path: str,
) -> None:
    assert deny("WebFetch(https://example.com/admin/**)", "https://example.com" + path) == "deny"


@pytest.mark.parametrize(
    "path",
    [
        "/api/group%2Fadmin/x",  # %2F: a separator to some servers, a character to others
        "/api/group%5Cadmin/x",
        "/x/..;/api/group/admin/",  # ..; is .. to Tomcat
        "/api/group/ADMIN/x",  # case: one path to IIS
        "/api/group/q//../admin/x",  # /api/group/q/admin to WHATWG, /api/group/admin to nginx
    ],
)
def test_s12_url_path_servers_read_differently_makes_a_path_rule_unevaluable(path: str) -> None:
    url = "https://example.com" + path
    assert deny("WebFetch(https://example.com/api/group/admin/**)", url) == "ask"
    assert allow("WebFetch(https://example.com/api/group/admin/**)", url) == "ask"


def test_s12_url_path_ambiguity_that_does_not_change_the_answer_is_no_ambiguity() -> None:
    # Every reading of these is under /api/projects/ (or every reading is outside /admin/).
    url = "https://gitlab.example/api/projects/group%2Fproject/issues?state=opened"
    assert allow("WebFetch(https://gitlab.example/api/projects/**)", url) == "allow"
    assert deny("WebFetch(https://gitlab.example/admin/**)", url) == "allow"
    assert deny("WebFetch(example.com)", "https://example.com/a%2Fb/..;/c") == "deny"


def test_s12_url_percent_encoded_unreserved_is_the_same_path_both_ways() -> None:
    assert allow("WebFetch(https://example.com/docs/**)", "https://example.com/%64ocs/x") == (
        "allow"
    )
    assert allow("WebFetch(https://example.com/%64ocs/**)", "https://example.com/docs/x") == (
        "allow"
    )
    assert allow(
        "WebFetch(https://example.com/日本/**)", "https://example.com/%E6%97%A5%E6%9C%AC/"
    ) == ("allow")


# --------------------------------------------------------------------------- unreadable values


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "https://user@example.com/",
        "https://user:pw@example.com/",
        "https://example.com:0/",
        "https://example.com:99999/",
        "https://exa%6dple.com/",
        "https://example.com/\n",
        " https://example.com/",
        "https://example.com\\@evil.com/",
        "http://[fe80::1%25eth0]/",
        "https:example.com",
        "https://exa\u200dmple.com/",  # a zero-width joiner IDNA 2008 refuses here
        "javascript:alert(1)",
        "example.com",
        "",
        5,
        None,
    ],
)
def test_s12_url_a_value_the_reading_refuses_makes_a_deny_rule_ask(url: object) -> None:
    assert deny("WebFetch(domain:example.com)", url) == "ask"
    assert deny("WebFetch(https://other.example/**)", url) == "ask"
    assert allow("WebFetch(domain:example.com)", url) == "ask"
    assert match_url("domain:example.com", url) == "unevaluable"


@pytest.mark.parametrize(
    "pattern",
    [
        "domain:*.example.com",
        "domain:",
        "domain:example.com:443",
        "domain:example.com/x",
        "https:///path",
        "://example.com",
        "https://exa mple.com/",
        "https://example.com:99999/",
        "https://[::1/",
        "https://ex%61mple.com/",
        "https://user@example.com/",
        "https://example.com/search?q=x",
        "https://example.com/a%2Ab/",
        "*.0x7f.1",
        "h\\ost",
    ],
)
def test_s12_url_a_pattern_the_reading_refuses_is_unevaluable(pattern: str) -> None:
    assert match_url(pattern, "https://example.com/") == "unevaluable"
    assert deny(f"WebFetch({pattern})", "https://unrelated.example/") == "ask"


# --------------------------------------------------------------------------- ordinary rules stay


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.python.org/3/library/os.html",
        "https://docs.python.org",
        "https://docs.python.org/",
        "https://DOCS.Python.org/3/",
        "HTTPS://docs.python.org/3/search.html?q=path&check_keywords=yes#x",
        "https://docs.python.org:443/3/",
        "https://docs.python.org./3/",
        "http://docs.python.org/3/",
    ],
)
def test_s12_url_readme_domain_rule_still_allows_ordinary_urls(url: str) -> None:
    assert allow("WebFetch(domain:docs.python.org)", url) == "allow"


@pytest.mark.parametrize(
    "url",
    [
        "https://api.github.com/repos/python/cpython/issues?state=open&page=2",
        "https://api.github.com/repos/python/cpython",
        "https://api.github.com/repos/python/cpython/",
        "https://API.GITHUB.COM/repos/python/cpython/pulls/1#issuecomment-2",
        "https://api.github.com:443/repos/o/r/contents/docs/a%20b.md",
        "https://api.github.com/repos/o/r/./contents",
        "https://api.github.com/repos/o/x/../r",
        "https://api.github.com/repos",
    ],
)
def test_s12_url_readme_path_rule_still_allows_ordinary_urls(url: str) -> None:
    assert allow("WebFetch(https://api.github.com/repos/**)", url) == "allow"


@pytest.mark.parametrize(
    "url",
    [
        "https://api.github.com/users/python",
        "https://api.github.com/reposx/o",
        "http://api.github.com/repos/o/r",
        "https://api.github.com.evil.com/repos/o/r",
        "https://api.github.com/repos/../users/x",
    ],
)
def test_s12_url_readme_path_rule_does_not_reach_beyond_what_it_names(url: str) -> None:
    assert allow("WebFetch(https://api.github.com/repos/**)", url) == "ask"


def test_s12_url_glob_and_bare_host_rules_keep_their_meaning() -> None:
    assert allow("WebFetch(https://*.example.com/docs/**)", "https://api.example.com/docs/a") == (
        "allow"
    )
    assert allow("WebFetch(https://*.example.com/docs/**)", "https://example.com/docs/a") == "ask"
    assert allow("WebFetch(example.com)", "http://example.com") == "allow"
    assert allow("WebFetch(example.com/a/**)", "https://example.com/a/b") == "allow"
    assert allow("WebFetch(*://example.com/**)", "http://example.com/") == "allow"
    assert deny("WebFetch(*.evil.com)", "https://x.com/?q=a.evil.com") == "allow"


def test_s12_split_url_is_the_one_reading() -> None:
    assert split_url("HTTPS://Example.COM.:8443/a/./b/../c?q=1#f") == (
        "https",
        "example.com",
        "/a/c",
    )
    assert split_url("http://[0::1]:8080/x") == ("http", "[::1]", "/x")
    assert split_url("http://２８５２０３９１６６/") == ("http", "169.254.169.254", "/")
    assert split_url("https://user@example.com/") is None


# --------------------------------------------------------------------------- properties: hosts

_IGNORED = ["\u00ad", "\u200b", "\u2060", "\ufeff"]  # UTS #46 drops these
_REFUSED = ["\u200d", "\u200c"]  # joiners: kept by non-transitional UTS #46, refused by IDNA 2008
_DOTS = [".", "\u3002", "\uff0e", "\uff61"]
_BASES = [
    "example.com",
    "api.example.org",
    "bücher.example",
    "metadata.google.internal",
    "a-b.c_d.io",
]


@st.composite
def _spelling(draw: st.DrawFn, base: str) -> str:
    """One spelling of ``base`` a WHATWG parser may map back to it (or refuse)."""
    if draw(st.booleans()):
        # the A-label form
        base = ".".join(
            label if label.isascii() else idna.alabel(label).decode() for label in base.split(".")
        )
    out: list[str] = []
    for char in base:
        if char == ".":
            out.append(draw(st.sampled_from(_DOTS)))
            continue
        kind = draw(st.sampled_from(["plain", "upper", "wide", "wide"]))
        spelt = char
        if kind == "upper":
            spelt = char.upper()
        elif kind == "wide" and char.isascii() and char.isalnum():
            spelt = chr(ord(char.upper() if draw(st.booleans()) else char) + 0xFEE0)
        out.append(spelt)
        if draw(st.integers(0, 9)) == 0:
            out.append(draw(st.sampled_from(_IGNORED + _REFUSED)))
    if draw(st.booleans()):
        out.append(".")
    return "".join(out)


@st.composite
def _host_pair(draw: st.DrawFn) -> tuple[str, str, str]:
    base = draw(st.sampled_from(_BASES))
    return base, draw(_spelling(base)), draw(_spelling(base))


def _reads_as(host: str) -> str | None:
    try:
        return normalise_host(host).text
    except HostError:
        return None


@settings(max_examples=600, deadline=None)
@given(_host_pair(), st.sampled_from(["domain:{}", "{}", "https://{}/**", "*://{}:443/**"]))
def test_s12_url_deny_rule_in_any_spelling_denies_every_spelling_of_its_host(
    pair: tuple[str, str, str], form: str
) -> None:
    base, written, requested = pair
    url = f"https://{requested}/x"
    expected = normalise_host(base).text
    result = match_url(form.format(written), url)
    if _reads_as(written) is None:
        assert result == "unevaluable", (written, requested)
        return
    assert _reads_as(written) == expected
    if _reads_as(requested) == expected:
        assert result == "match", (written, requested)
        assert match_url(form.format(written), url, direction="allow") == "match"
    else:
        # The reading refuses it (a joiner): a deny asks, an allow never admits it.
        assert _reads_as(requested) is None
        assert result == "unevaluable", (written, requested)


def _ipv4_spellings(value: int) -> list[str]:
    octets = [(value >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    wide = str.maketrans("0123456789x.", "０１２３４５６７８９ｘ．")
    forms = [
        ".".join(map(str, octets)),
        str(value),
        hex(value),
        "0X" + format(value, "X"),
        ".".join(f"0{o:o}" for o in octets),
        ".".join(hex(o) for o in octets),
        f"{octets[0]}.{octets[1]}.{(octets[2] << 8) | octets[3]}",
        f"{octets[0]}.{value & 0xFFFFFF}",
        f"{hex(octets[0])}.0{octets[1]:o}.{octets[2]}.{octets[3]}",
        ".".join(map(str, octets)) + ".",
        "\u3002".join(map(str, octets)),
        f"[::ffff:{'.'.join(map(str, octets))}]",
        f"[::ffff:{value >> 16:x}:{value & 0xFFFF:x}]",
        f"[0:0:0:0:0:FFFF:{value >> 16:X}:{value & 0xFFFF:X}]",
    ]
    return forms + [form.translate(wide) for form in forms if not form.startswith("[")]


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.sampled_from([0xA9FEA9FE, 0x7F000001, 0x0A000001, 0x5DB8D70E, 0]),
        st.integers(0, 2**32 - 1),
    ),
    st.data(),
)
def test_s12_url_deny_rule_on_an_address_denies_every_spelling_of_it(
    value: int, data: st.DataObject
) -> None:
    spellings = _ipv4_spellings(value)
    written = data.draw(st.sampled_from(spellings))
    requested = data.draw(st.sampled_from(spellings))
    assert normalise_host(requested).address in (
        ipaddress.IPv4Address(value),
        ipaddress.IPv6Address(0xFFFF00000000 | value),
    )
    for form in ("{}", "domain:{}", "http://{}/**"):
        pattern = form.format(written)
        assert match_url(pattern, f"http://{requested}/latest") == "match", (pattern, requested)
        other = f"http://{ipaddress.IPv4Address(value ^ 1)}/"
        assert match_url(pattern, other) == "no_match", (pattern, other)


# --------------------------------------------------------------------------- properties: paths

_SEGMENTS = ["3", "2", "x", "docs", "..", ".", "%2e", "%2E%2e", ".%2e", "%2e.", "%2e%2E", ""]


def _whatwg_path(path: str) -> str:
    """ada's (WHATWG) reading of the path: an oracle independent of robota.core.urls."""
    return str(ada_url.parse_url("https://example.com" + path)["pathname"])


def _under(path: str, prefix: str) -> bool:
    parts = [p for p in path.split("/") if p]
    wanted = [p for p in prefix.split("/") if p]
    return parts[: len(wanted)] == wanted


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=7))
def test_s12_url_dot_segments_never_escape_an_allow_nor_pass_a_deny(segments: list[str]) -> None:
    path = "/" + "/".join(segments)
    url = "https://example.com" + path
    under = _under(_whatwg_path(path), "/3")
    allowed = match_url("https://example.com/3/**", url, direction="allow")
    denied = match_url("https://example.com/3/**", url, direction="deny")
    if allowed == "match":
        assert under, path
    if under:
        assert denied in ("match", "unevaluable"), path
    else:
        assert denied in ("no_match", "unevaluable"), path


_NOISE = ["x/..", ".", "%2e", "x/%2e%2e", "x/.%2E", "x/%2E.", "a/b/../..", "./."]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(["3", "2", "x", "docs", "admin"]), min_size=1, max_size=5),
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from(_NOISE)), max_size=3),
)
def test_s12_url_inserting_dot_noise_never_changes_a_path_rule(
    segments: list[str], noise: list[tuple[int, str]]
) -> None:
    clean = "/" + "/".join(segments)
    noisy = list(segments)
    for at, piece in noise:
        noisy.insert(min(at, len(noisy)), piece)
    url = "https://example.com/" + "/".join(noisy)
    for pattern in ("https://example.com/3/**", "https://example.com/admin/**"):
        expected = match_url(pattern, "https://example.com" + clean)
        assert expected in ("match", "no_match")
        assert match_url(pattern, url) == expected, (pattern, url)
        assert match_url(pattern, url, direction="allow") == expected, (pattern, url)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"abAB09/.%2eE;~-_", "%2F", "%5C", "%2e", "%2E", "%41", "%7e"]),
        max_size=24,
    ).map("".join)
)
def test_s12_url_a_deny_on_a_path_is_never_answered_no_match_when_whatwg_puts_it_there(
    tail: str,
) -> None:
    path = "/" + tail
    url = "https://example.com" + path
    whatwg = _whatwg_path(path)
    result = match_url("https://example.com/ab/**", url)
    if _under(_rfc3986(whatwg), "/ab"):
        assert result in ("match", "unevaluable"), (path, whatwg)
    if match_url("https://example.com/ab/**", url, direction="allow") == "match":
        assert _under(_rfc3986(whatwg), "/ab"), (path, whatwg)


def _rfc3986(path: str) -> str:
    """Percent-encoded unreserved characters decoded (RFC 3986 §2.3), written out independently."""
    out, i = [], 0
    while i < len(path):
        chunk = path[i : i + 3]
        if len(chunk) == 3 and chunk[0] == "%":
            try:
                char = chr(int(chunk[1:], 16))
            except ValueError:
                char = ""
            if char and (char.isascii() and (char.isalnum() or char in "-._~")):
                out.append(char)
                i += 3
                continue
        out.append(path[i])
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------- differential: egress


_DIFF_HOSTS = [
    "example.com",
    "ＥＸＡＭＰＬＥ.com",
    "example\u3002com",
    "exa\u00admple.com.",
    "bücher.example",
    "xn--bcher-kva.example",
    "2852039166",
    "0xa9.254.43518",
    "１２７.１",
    "[::ffff:a9fe:a9fe]",
    "[2606:4700:0::1111]",
    "[::1]",
    "exa%6dple.com",
    "example..com",
    "a_b.example",
    "☃.com",
    "1.2.3.999",
]
_DIFF_PORTS = ["", ":80", ":443", ":8443", ":0080", ":0", ":65536", ":x"]
_DIFF_TAILS = ["", "/", "/a/../b", "/%2e%2e/x?q#f", "?q", "#f", "/日本", "\\x", " "]
_DIFF_PREFIXES = ["http://", "https://", "HTTPS://", "ftp://", "http:/", "https://user@"]


async def _public(host: str) -> list[str]:
    return ["93.184.215.14"]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(_DIFF_PREFIXES),
    st.sampled_from(_DIFF_HOSTS),
    st.sampled_from(_DIFF_PORTS),
    st.sampled_from(_DIFF_TAILS),
)
def test_s12_url_rule_matcher_sees_the_host_and_port_the_egress_reads(
    prefix: str, host: str, port: str, tail: str
) -> None:
    # The one test that reads with the egress policy's own modules.
    from robota.host import check_url
    from robota.host.egress._host import normalise_host as egress_normalise
    from robota.host.egress._url import split_url as egress_split

    url = prefix + host + port + tail
    try:
        parts = egress_split(url)
        egress_host = egress_normalise(parts.host)
    except ValueError:
        # The egress refuses to read it: the matcher must not read it either.
        assert match_url("*", url) == "unevaluable", url
        assert match_url("domain:example.com", url) == "unevaluable", url
        return
    egress_port = parts.port or {"http": 80, "https": 443}[parts.scheme]
    address = egress_host.address
    shown = (
        f"[{egress_host.text}]"
        if address is not None and address.version == 6
        else egress_host.text
    )
    seen = split_url(url)
    assert seen is not None, url
    assert seen[:2] == (parts.scheme, shown), url
    assert match_url(f"{parts.scheme}://{shown}:{egress_port}", url, direction="allow") == "match"
    other = 1 if egress_port != 1 else 2
    assert match_url(f"{parts.scheme}://{shown}:{other}", url) == "no_match", url
    decision = asyncio.run(check_url(url, resolver=_public))
    if decision.ok:
        assert (decision.scheme, decision.host, decision.port) == (
            parts.scheme,
            egress_host.text,
            egress_port,
        )


def test_s12_url_reading_refusals_are_value_errors() -> None:
    for bad in ("ftp://x", "http://[::1", "http://exa%6dple.com/"):
        with pytest.raises((URLError, HostError)):
            read_url(bad)
