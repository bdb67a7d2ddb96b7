"""S06/S12: ``robota.core.urls``, the one reading of a URL, checked against outside readers.

The egress tests (``tests/host/test_egress*.py``) check the split and the host normalisation
through :func:`robota.host.check_url`; these check the pieces core adds or now writes itself —
the WHATWG path normaliser (against ada, a WHATWG parser), the target escaping that used to be
``urllib.parse.quote``, and the path readings — so the rules and the policy can rely on them.
"""

from __future__ import annotations

import ipaddress
import re
import string
from urllib.parse import quote

import ada_url
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.urls import (
    HostError,
    URLError,
    embedded_ipv4,
    escape_target,
    host_glob_kind,
    mapped_ipv4,
    normalise_host_pattern,
    normalise_path,
    normalise_target,
    path_readings,
    read_url,
)

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PIECES = [
    *"ab./%2eE;~-_\"<>^`{}|[]!$&'()*+,=:@ü日",
    "%2F",
    "%2e",
    "%2E",
    "%41",
    "%7e",
    "%zz",
    "%e6%97%a5",
    "..",
    "/",
]


def _rfc3986(path: str) -> str:
    """RFC 3986 §6.2.2 on a WHATWG path: unreserved escapes decoded, other hex upper-cased.

    Except that an escape of a hex digit right after a ``%`` WHATWG kept as written (``%`` or
    ``%h`` before it) is only upper-cased: decoded, it would complete that ``%`` into an escape.
    """

    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        completes = char in string.hexdigits and re.search(
            r"%[0-9A-Fa-f]?\Z", path[: match.start()]
        )
        return char if char in _UNRESERVED and not completes else "%" + match.group(1).upper()

    return re.sub(r"%([0-9A-Fa-f]{2})", one, path)


@settings(max_examples=1_500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
def test_s06_normalise_path_is_the_whatwg_path_in_rfc3986_normal_form(tail: str) -> None:
    path = "/" + tail
    whatwg = str(ada_url.parse_url("https://example.com" + path)["pathname"])
    assert normalise_path(path) == _rfc3986(whatwg), path


_QUERY_PIECES = [*"ab=&+%;/?.\"<>'^`{}|[]!$()*,:@~ü", "%41", "%zz", "%2e%2e"]


@settings(max_examples=1_000, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=12).map("".join),
    st.none() | st.lists(st.sampled_from(_QUERY_PIECES), max_size=10).map("".join),
)
def test_s06_normalise_target_is_the_whatwg_target_with_the_path_the_rules_judge(
    tail: str, query: str | None
) -> None:
    url = "https://example.com/" + tail + ("" if query is None else "?" + query)
    target = read_url(url).target
    sent = normalise_target(target)
    parsed = ada_url.parse_url(url)
    whatwg_query = parsed["search"] or ("?" if query is not None else "")
    assert sent == _rfc3986(str(parsed["pathname"])) + whatwg_query, url
    assert sent.partition("?")[0] == read_url(url).path == path_readings(target.split("?")[0])[0]
    assert normalise_target(sent) == sent  # what is sent reads as itself: one reading
    assert all(0x21 <= ord(char) < 0x7F for char in sent)


@pytest.mark.parametrize(
    ("path", "normal"),
    [
        ("/a/../b", "/b"),
        ("/a/%2E%2e/b", "/b"),
        ("/a/.%2e", "/"),
        ("/a/%2e", "/a/"),
        ("/..", "/"),
        ("/%61dmin/%7e", "/admin/~"),
        ("/a%2fb", "/a%2Fb"),
        ("/日本", "/%E6%97%A5%E6%9C%AC"),
        ("", "/"),
    ],
)
def test_s06_normalise_path_examples(path: str, normal: str) -> None:
    assert normalise_path(path) == normal


# S06/S12: escape case. A server decodes each "%XX" once, whatever the case of its hex digits, so
# the path the rules judge and the client sends writes every escape in one case (RFC 3986
# §6.2.2.1: upper). Decoding an unreserved escape must never turn a "%" WHATWG keeps as written
# (not followed by two hex digits) into a new escape: "/%%41a" read once is "%Aa", never byte 0xAA.
@pytest.mark.parametrize(
    ("path", "normal"),
    [
        ("/%Aa", "/%AA"),
        ("/%aA", "/%AA"),
        ("/%aa/%AA", "/%AA/%AA"),
        ("/%2f", "/%2F"),
        ("/%2F", "/%2F"),
        ("/%41", "/A"),
        ("/%7e%2D%5f", "/~-_"),
        ("%Aa", "/%AA"),  # a path alone, as a rule pattern's path is read
        ("/%%41a", "/%%41a"),
        ("/%%41", "/%%41"),
        ("/%a%41", "/%a%41"),
        ("/%%34%31", "/%%341"),  # "%" then "%34": "%41" read once, as before
        ("/%4%31", "/%4%31"),
        ("/x/%2%65", "/x/%2%65"),  # not "/x/%2e", which a server resolves to "/x/"
        ("/x/%%32e", "/x/%%32e"),
        ("/%%7e", "/%~"),  # "~" is no hex digit: nothing new to read
        ("/%zz%41", "/%zzA"),
        ("/%41%41", "/AA"),
        ("/%%41%42", "/%%41B"),
    ],
)
def test_s06_normalise_path_writes_escapes_in_one_case_and_never_makes_one(
    path: str, normal: str
) -> None:
    assert normalise_path(path) == normal
    assert normalise_path(normal) == normal
    assert path_readings(path) == path_readings(normal)


@pytest.mark.parametrize(
    ("target", "sent"),
    [
        ("/%aA?%aA", "/%AA?%aA"),
        ("/%%41a?%%41a", "/%%41a?%%41a"),
        # S06: a query is not judged by the rules and goes out as a WHATWG client writes it
        # (a signed query must arrive byte for byte): escapes keep their case there.
        ("/p?%aA=%2f&%41", "/p?%aA=%2f&%41"),
        ("/?%Aa", "/?%Aa"),
    ],
)
def test_s06_normalise_target_puts_only_the_path_escapes_in_one_case(
    target: str, sent: str
) -> None:
    assert normalise_target(target) == sent
    assert normalise_target(sent) == sent


def _decode_once(text: str) -> str:
    """What a server that decodes each valid escape once reads (a stray ``%`` kept)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda match: chr(int(match.group(1), 16)), text)


_HEX_PIECES = [*"%%aAfF0249e./-~", "%41", "%61", "%2f", "%2F", "%aA", "%Aa", "%34", "%32", "%65"]


@settings(max_examples=1_500, deadline=None)
@given(st.lists(st.sampled_from(_HEX_PIECES), max_size=12).map("".join))
def test_s06_normalise_path_reads_as_the_whatwg_path_to_a_server_in_any_escape_case(
    tail: str,
) -> None:
    path = "/" + tail
    normal = normalise_path(path)
    whatwg = str(ada_url.parse_url("https://example.com" + path)["pathname"])
    assert _decode_once(normal) == _decode_once(whatwg), path
    assert all(hex_ == hex_.upper() for hex_ in re.findall(r"%([0-9A-Fa-f]{2})", normal)), path
    assert normalise_path(normal) == normal, path


@settings(max_examples=800, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=20))
def test_s06_escape_target_is_what_urllib_quote_made_of_it(text: str) -> None:
    printable = "".join(chr(c) for c in range(0x21, 0x7F))
    assert escape_target(text) == quote(text, safe=printable)


def test_s12_path_readings_start_with_the_whatwg_reading_and_model_servers() -> None:
    readings = path_readings("/a//../B%2Fc/x;p/..;/y")
    assert len(readings) == 16
    assert readings[0] == normalise_path("/a//../B%2Fc/x;p/..;/y") == "/a/B%2Fc/x;p/..;/y"
    assert "/b/c/y" in readings  # decoded, merged, parameters dropped, case folded
    assert "/a/B%2Fc/y" in readings  # parameters dropped: "..;" is ".."
    assert set(path_readings("/Docs/a/b")) == {"/Docs/a/b", "/docs/a/b"}  # only case folding
    assert set(path_readings("/docs/a/b")) == {"/docs/a/b"}


def test_s12_normalise_host_pattern_keeps_glob_labels_and_reads_the_rest() -> None:
    assert normalise_host_pattern("*.ＥＸＡＭＰＬＥ。com.") == ("*", "example", "com")
    assert normalise_host_pattern("**.bücher.example") == ("**", "xn--bcher-kva", "example")
    assert normalise_host_pattern("169.254.*.*") == ("169", "254", "*", "*")
    assert normalise_host_pattern("example.com") == read_url("http://example.com/").host
    for bad in ("*.0x7f.1", "*.ü*.com", "[*::1]", "*.a%62.com", "*.1.2.3.4"):
        with pytest.raises(HostError):
            normalise_host_pattern(bad)


@pytest.mark.parametrize(
    ("pattern", "kind"),
    [
        ("*", "any"),
        ("**", "any"),
        ("***.", "any"),
        ("192.168.*.*", "address"),
        ("10.**", "address"),
        ("*.*.*.1", "address"),
        ("1*.2*.*.*", "name"),  # nothing written out: a name glob, as before
        ("*.*", "name"),
        ("*.example.com", "name"),
        ("*.1.example.com", "name"),
        ("**.bücher.example", "name"),
    ],
)
def test_s12_host_glob_kind_says_what_a_host_glob_names(pattern: str, kind: str) -> None:
    labels = normalise_host_pattern(pattern)
    assert isinstance(labels, tuple)
    assert host_glob_kind(labels) == kind


@pytest.mark.parametrize(
    "pattern", ["10.*", "1.2.*", "10.*.*.*.*", "0x7f.*.*.*", "010.*.*.*", "10.a*.*.*", "*.b.123"]
)
def test_s12_an_address_glob_that_cannot_match_dotted_decimal_is_refused(pattern: str) -> None:
    with pytest.raises(HostError):
        normalise_host_pattern(pattern)


def test_s06_embedded_ipv4_reads_every_position_of_the_one_table() -> None:
    def carried(text: str) -> dict[str, str]:
        found = embedded_ipv4(ipaddress.IPv6Address(text))
        return {c.embedding.role: str(c.address) for c in found}

    assert carried("::ffff:a9fe:a9fe") == {"IPv4-mapped": "169.254.169.254"}
    assert carried("::a9fe:a9fe") == {"IPv4-compatible": "169.254.169.254"}
    assert carried("64:ff9b::a9fe:a9fe") == {"NAT64": "169.254.169.254"}
    assert carried("2002:5db8:d822::1") == {"6to4": "93.184.216.34"}
    assert carried("2001:0:4136:e378:8000:63bf:80ff:fffe") == {
        "Teredo server": "65.54.227.120",
        "Teredo client": "127.0.0.1",
    }
    for nothing in ("::", "::1", "2606:4700::1111", "2003::1"):
        assert carried(nothing) == {}, nothing
    assert embedded_ipv4(ipaddress.IPv4Address("10.0.0.1")) == ()


def test_s06_mapped_ipv4_is_read_from_the_value() -> None:
    mapped = ipaddress.IPv6Address("::ffff:169.254.169.254")
    assert mapped_ipv4(mapped) == ipaddress.IPv4Address("169.254.169.254")
    assert mapped_ipv4(ipaddress.IPv6Address("64:ff9b::a9fe:a9fe")) is None
    assert mapped_ipv4(ipaddress.IPv4Address("10.0.0.1")) is None


def test_s06_read_url_gives_the_effective_port_and_refuses_what_the_split_refuses() -> None:
    url = read_url("HTTPS://Ｅxample.com/a/./b?q=1#f")
    assert (url.scheme, url.host.text, url.port, url.path, url.target) == (
        "https",
        "example.com",
        443,
        "/a/b",
        "/a/./b?q=1",
    )
    assert read_url("http://[::1]:8080").port == 8080
    with pytest.raises(URLError):
        read_url("https://user@example.com/")
    with pytest.raises(HostError):
        read_url("https://exa%6dple.com/")
