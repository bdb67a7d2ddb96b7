"""S06 finding 2: every host is normalised once, before the blocklist, the IP check and DNS.

Before the fix, ``ｌｏｃａｌｈｏｓｔ``, ``ⓛⓞⓒⓐⓛⓗⓞⓢⓣ`` and ``metadata。google。internal`` passed the
blocklist and went to the resolver, because the blocklist compared the raw text while a browser
and the resolver read the UTS #46 mapping of it. The host is now mapped once (non-transitional
UTS #46, the alternative full stops, lower case, one trailing dot dropped, A-labels) and every
later step — blocklist, suffixes, the IPv4-number reading, the resolver, ``Allowed.host`` and the
pins — reads that one form.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host.test_egress_reference import reference_allows_address
from robota.host import BLOCKED_HOSTNAMES, check_url, parse_ip_literal
from robota.host.egress._host import HostError, normalise_host, parse_ipv4
from robota.testing import loopback_allowance

_PUBLIC = "93.184.215.14"
_DOTS = (".", "\u3002", "\uff0e", "\uff61")  # full stop, ideographic, fullwidth, halfwidth


class Recorder:
    """A resolver stub: every name resolves to one public address, and each call is recorded."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.calls: list[str] = []
        self.answers = answers or [_PUBLIC]

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        return self.answers


# --------------------------------------------------------------------------- the examples


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("http://ｌｏｃａｌｈｏｓｔ/", "localhost"),
        ("http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "localhost"),
        ("http://metadata。google。internal/", "metadata.google.internal"),
        ("http://METADATA．GOOGLE｡INTERNAL。/", "metadata.google.internal"),
        ("http://ｍｅｔａｄａｔａ.google.internal/", "metadata.google.internal"),
        ("http://local\u00adhost/", "localhost"),  # soft hyphen: ignored by UTS #46
        ("http://local\u200bhost/", "localhost"),  # zero-width space: ignored
        ("http://foo.ｌｏｃａｌｈｏｓｔ/", "foo.localhost"),
        ("http://printer。local/", "printer.local"),
        ("http://kubernetes。default。svc/", "kubernetes.default.svc"),
        ("http://𝐥𝐨𝐜𝐚𝐥𝐡𝐨𝐬𝐭/", "localhost"),  # mathematical bold
    ],
)
async def test_s06_confusable_spellings_of_blocked_names_are_refused_before_dns(
    url: str, normalised: str
) -> None:
    resolver = Recorder()
    decision = await check_url(url, resolver=resolver)
    assert decision.ok is False
    assert "blocklist" in decision.reason
    assert repr(normalised) in decision.reason
    assert resolver.calls == []


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://１２７.０.０.１/", "127.0.0.1"),
        ("http://１２７。０。０。１/", "127.0.0.1"),
        ("http://０ｘ７ｆ.１/", "127.0.0.1"),
        ("http://２１３０７０６４３３/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7F.0.0.1/", "127.0.0.1"),
        ("http://169.254.43518/", "169.254.169.254"),
        ("http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
        ("http://0x/", "0.0.0.0"),  # noqa: S104 - an address under test, not a bind
    ],
)
async def test_s06_a_host_that_is_an_ipv4_number_in_any_spelling_is_classified_not_resolved(
    url: str, address: str
) -> None:
    resolver = Recorder()
    decision = await check_url(url, resolver=resolver)
    assert decision.ok is False
    assert address in decision.reason
    assert resolver.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "http://1.2.3.999/",
        "http://example.123/",
        "http://1.2.3.4.5/",
        "http://09.1/",  # a leading 0 is octal: 9 is not an octal digit
        "http://1..2/",
        "http://99999999999999999999/",
        "http://" + "9" * 300 + "/",
    ],
)
async def test_s06_a_host_ending_in_a_number_that_is_not_ipv4_is_refused_not_resolved(
    url: str,
) -> None:
    resolver = Recorder()
    decision = await check_url(url, resolver=resolver)
    assert decision.ok is False
    assert resolver.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "http://xn--/",
        "http://xn--a-/",
        "http://xn---bbk/",  # a non-canonical A-label
        "http://xn--zz/",
        "http://a..b/",
        "http://example.com../",
        "http://./",
        "http://\u3002/",
        "http://☃.com/",  # IDNA 2008 disallows symbols
        "http://a／b.com/",  # fullwidth solidus maps to '/'
        "http://a_ü.com/",  # '_' is fine in an ASCII label, not in an IDNA one
        "http://" + "a" * 64 + ".com/",
        "http://" + ".".join(["a" * 60] * 5) + "/",
        "http://\U000e0001.com/",  # a tag character
        "http://\ud800.com/",  # a lone surrogate
        "http://\u0301a.com/",  # a label may not start with a combining mark
    ],
)
async def test_s06_a_host_that_cannot_be_normalised_is_a_rejection_with_a_reason(url: str) -> None:
    resolver = Recorder()
    decision = await check_url(url, resolver=resolver)
    assert decision.ok is False
    assert decision.reason
    assert resolver.calls == []


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://example.com/", "example.com"),
        ("https://Example.COM./", "example.com"),
        ("https://ＥＸＡＭＰＬＥ．ｃｏｍ/", "example.com"),
        ("https://例え.jp/", "xn--r8jz45g.jp"),
        ("https://例え。ｊｐ/", "xn--r8jz45g.jp"),
        ("https://XN--R8JZ45G.jp/", "xn--r8jz45g.jp"),
        ("https://faß.de/", "xn--fa-hia.de"),  # non-transitional: ß stays ß
        ("https://bücher.example/", "xn--bcher-kva.example"),
        ("http://a_b.example/", "a_b.example"),
    ],
)
async def test_s06_allowed_host_is_the_normalised_a_label_and_it_is_what_is_resolved(
    url: str, host: str
) -> None:
    resolver = Recorder()
    decision = await check_url(url, resolver=resolver)
    assert decision.ok, decision
    assert decision.host == host
    assert resolver.calls == [host]
    assert decision.addresses == (_PUBLIC,)


async def test_s06_an_idn_resolving_to_a_private_address_is_refused() -> None:
    decision = await check_url("https://例え.jp/", resolver=Recorder(["10.0.0.1"]))
    assert decision.ok is False
    assert "10.0.0.1" in decision.reason


async def test_s06_the_loopback_allowance_names_are_normalised_too() -> None:
    allowance = loopback_allowance("ＳＶＣ。test.")
    resolver = Recorder(["127.0.0.1"])
    assert (await check_url("http://svc.test/", resolver=resolver, allowance=allowance)).ok
    assert (await check_url("http://ｓｖｃ.ｔｅｓｔ/", resolver=resolver, allowance=allowance)).ok
    with pytest.raises(ValueError, match="not a host name"):
        loopback_allowance("a..b")


def test_s06_parse_ip_literal_reads_the_normalised_host() -> None:
    assert parse_ip_literal("１２７.０.０.１") == ipaddress.IPv4Address("127.0.0.1")
    assert parse_ip_literal("0x7f.1") == ipaddress.IPv4Address("127.0.0.1")
    assert parse_ip_literal("[::ffff:7f00:1]") == ipaddress.IPv6Address("::ffff:7f00:1")
    assert parse_ip_literal("fe80::1%eth0") == ipaddress.IPv6Address("fe80::1")
    assert parse_ip_literal("example.com") is None
    assert parse_ip_literal("1.2.3.999") is None


# --------------------------------------------------------------------------- the class, generated


def _fullwidth(c: str) -> str:
    return chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c


def _circled(c: str) -> str:
    if "a" <= c <= "z":
        return chr(0x24D0 + ord(c) - ord("a"))
    return c


def _bold(c: str) -> str:
    if "a" <= c <= "z":
        return chr(0x1D41A + ord(c) - ord("a"))
    return c


_STYLES: tuple[Callable[[str], str], ...] = (str, str.upper, _fullwidth, _circled, _bold)
_blocked = [
    *sorted(BLOCKED_HOSTNAMES),
    "x.localhost",
    "printer.local",
    "db.corp.internal",
    "api.kubernetes.default.svc",
]


@st.composite
def _confusable(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(_blocked))
    out = []
    for c in name:
        if c == ".":
            out.append(draw(st.sampled_from(_DOTS)))
        else:
            out.append(draw(st.sampled_from(_STYLES))(c))
            if draw(st.integers(0, 9)) == 0:
                out.append(draw(st.sampled_from(["\u00ad", "\u200b", "\u2060"])))
    if draw(st.booleans()):
        out.append(draw(st.sampled_from(_DOTS)))
    return "".join(out), name


@settings(max_examples=1_500, deadline=None)
@given(_confusable())
def test_s06_every_confusable_spelling_of_a_blocked_name_is_refused(
    spelled: tuple[str, str],
) -> None:
    host, name = spelled
    resolver = Recorder()
    decision = asyncio.run(check_url(f"http://{host}/", resolver=resolver))
    assert decision.ok is False, (host, decision)
    assert resolver.calls == []
    assert normalise_host(host).text == name


def _digits(text: str, draw: st.DrawFn) -> str:
    return "".join(_fullwidth(c) if draw(st.booleans()) else c for c in text)


@st.composite
def _ipv4_spelling(draw: st.DrawFn) -> tuple[str, ipaddress.IPv4Address]:
    value = draw(
        st.one_of(
            st.integers(0, 2**32 - 1),
            st.sampled_from([0x7F000001, 0xA9FEA9FE, 0x0A000001, 0xC00000C0, 0x08080808]),
        )
    )
    octets = [(value >> s) & 0xFF for s in (24, 16, 8, 0)]
    parts = draw(st.integers(1, 4))
    numbers = [*octets[: parts - 1], value & ((1 << (8 * (5 - parts))) - 1)]
    radix = draw(st.lists(st.sampled_from(["dec", "oct", "hex", "HEX"]), min_size=4, max_size=4))
    spelled = []
    for number, style in zip(numbers, radix, strict=False):
        text = {"dec": str(number), "oct": f"0{number:o}", "hex": f"0x{number:x}"}.get(
            style, f"0X{number:X}"
        )
        spelled.append(text)
    dot = draw(st.sampled_from(_DOTS))
    host = _digits(dot.join(spelled), draw) + draw(st.sampled_from(["", ".", "\u3002"]))
    return host, ipaddress.IPv4Address(value)


@settings(max_examples=2_000, deadline=None)
@given(_ipv4_spelling())
def test_s06_every_spelling_of_an_ipv4_number_is_classified_as_that_address(
    spelled: tuple[str, ipaddress.IPv4Address],
) -> None:
    host, address = spelled
    assert parse_ipv4(normalise_host(host).text) == int(address)
    resolver = Recorder()
    decision = asyncio.run(check_url(f"http://{host}/", resolver=resolver))
    assert resolver.calls == []
    assert decision.ok is reference_allows_address(address), (host, decision)
    if decision.ok:
        assert decision.host == str(address)


_HOST_ALPHABET = st.sampled_from(
    list("abcxyz019-_.")
    + list(_DOTS)
    + ["ß", "ü", "例", "ｌ", "Ａ", "①", "\u00ad", "\u200d"]
    + ["%", "@", ":", "[", "]", "\\", " ", "\t", "\x00", "/", "?", "#", "～", "＠", "☃", "\ud800"]
)


@settings(max_examples=3_000, deadline=None)
@given(st.one_of(st.text(_HOST_ALPHABET, max_size=24), st.text(max_size=24)))
def test_s06_any_host_text_gives_a_decision_never_an_exception(host: str) -> None:
    decision = asyncio.run(check_url(f"http://{host}/", resolver=Recorder()))
    if decision.ok:
        assert re.fullmatch(r"[a-z0-9_.:-]+", decision.host), decision
        # The normal form is a fixed point: normalising it again changes nothing.
        again = normalise_host(f"[{decision.host}]" if ":" in decision.host else decision.host)
        assert again.text == decision.host
    else:
        assert decision.reason


@settings(max_examples=1_000, deadline=None)
@given(st.text(max_size=30))
def test_s06_normalise_host_raises_only_host_error(host: str) -> None:
    with contextlib.suppress(HostError):
        normalise_host(host)


def _newer_than_this_python() -> list[str]:
    """Letters idna's (newer) Unicode maps or allows that this Python's Unicode leaves unassigned."""
    import unicodedata

    import idna

    found = []
    for cp in range(0xA0, 0x20000):
        c = chr(cp)
        if unicodedata.category(c) != "Cn":
            continue
        try:
            idna.uts46_remap(c, std3_rules=False)
        except idna.IDNAError:
            continue
        found.append(c)
        if len(found) == 20:
            break
    return found


@pytest.mark.parametrize("char", _newer_than_this_python() or ["\U0010fffd"])
async def test_s06_a_code_point_this_pythons_unicode_does_not_assign_is_refused(char: str) -> None:
    # WHATWG parsers on an older Unicode read it as invalid; we must not read it as a letter.
    resolver = Recorder()
    decision = await check_url(f"http://a{char}b.example/", resolver=resolver)
    assert decision.ok is False
    assert resolver.calls == []


async def test_s06_non_string_urls_and_answers_are_rejections() -> None:
    odd: object = 12
    assert (await check_url(odd, resolver=Recorder())).ok is False  # type: ignore[arg-type]
    weird = Recorder([None, "1.1.1.1"])  # type: ignore[list-item]
    assert (await check_url("http://example.com/", resolver=weird)).ok is False
