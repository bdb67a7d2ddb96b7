"""S12: the one wildcard matcher under every rule glob, and the work it may do.

The value a rule is matched against is model output: a path, a URL or a command word tens of
kilobytes long, shaped so a backtracking matcher blows up, would stall the synchronous
permission check and the event loop under it. These tests hold the matchers to the answers of
simple reference implementations on small inputs, and bound the work on pathological ones by
counting it (single-item comparisons, items copied) rather than timing it.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
from robota import PermissionPolicy, evaluate_permission
from robota.core.permissions import _globs, _shell_words, glob_match, match_url
from robota.core.permissions._globs import segments_match, wildcard_match

from .conftest import make_tool

# --------------------------------------------------------------------------- references


def _reference_segments(pattern: Sequence[str], value: Sequence[str]) -> bool:
    """The obvious recursive definition (exponential in general, fine on small inputs)."""
    if not pattern:
        return not value
    if pattern[0] == "**":
        return any(_reference_segments(pattern[1:], value[i:]) for i in range(len(value) + 1))
    return (
        bool(value)
        and fnmatch.fnmatchcase(value[0], pattern[0])
        and _reference_segments(pattern[1:], value[1:])
    )


def _reference_glob(pattern: str, text: str) -> bool:
    """Command-word globs as a regular expression (``*`` is ``.*``): the obvious translation."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\" and index + 1 < len(pattern):
            out.append(re.escape(pattern[index + 1]))
            index += 2
            continue
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and (close := _shell_words._bracket_end(pattern, index)) is not None:
            body = pattern[index + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            members = (
                "\\s\\S" if "[:" in body else "".join(c if c == "-" else re.escape(c) for c in body)
            )
            out.append(f"[{'^' if negate else ''}{members}]")
            index = close + 1
            continue
        else:
            out.append(re.escape(ch))
        index += 1
    return re.fullmatch("".join(out), text, re.DOTALL) is not None


# --------------------------------------------------------------------------- counting work


class _Counted(Sequence[str]):
    """A sequence that counts the items read from it, slices (copies) included."""

    def __init__(self, items: list[str]) -> None:
        self._items = items
        self.reads = 0

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            copied = self._items[index]
            self.reads += len(copied)
            return copied
        self.reads += 1
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        for item in self._items:
            self.reads += 1
            yield item


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    calls = [0]
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def counted(*args: Any) -> Any:
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(owner, name, counted)
    return calls


# --------------------------------------------------------------------------- path segments

_SEGMENT_PATTERNS = st.lists(
    st.sampled_from(["**", "*", "a", "b", "a*", "?", "[ab]", "*b"]), max_size=7
)
_SEGMENTS = st.lists(st.sampled_from(["a", "b", "ab", "ba", "c"]), max_size=8)


@settings(max_examples=1_000, deadline=None)
@given(_SEGMENT_PATTERNS, _SEGMENTS)
def test_s12_segment_globs_agree_with_the_recursive_definition(
    pattern: list[str], value: list[str]
) -> None:
    assert segments_match(pattern, value) is _reference_segments(pattern, value)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(["**", "*", "a", "b", "a*", "?"]), max_size=12),
    st.lists(st.sampled_from(["a", "b", "ab"]), max_size=40),
)
def test_s12_wildcard_match_compares_at_most_pattern_times_value_items(
    pattern: list[str], value: list[str]
) -> None:
    calls = [0]

    def one(item: str, segment: str) -> bool:
        calls[0] += 1
        return fnmatch.fnmatchcase(segment, item)

    wildcard_match(pattern, value, is_star=lambda item: item == "**", one=one)
    assert calls[0] <= (len(pattern) + 1) * (len(value) + 1)


@pytest.mark.parametrize(
    ("pattern", "size", "expected"),
    [
        (["**", "a", "**", "b"], 400, False),  # every split of every `**` tried: cubic
        (["**", "a", "**", "a", "**", "a", "**", "c"], 60, False),
        (["**", "admin"], 5_000, False),  # copying value[i:] for every i: quadratic
        (["**", "a", "**"], 5_000, True),
    ],
)
def test_s12_segment_globs_do_bounded_work_on_pathological_values(
    monkeypatch: pytest.MonkeyPatch, pattern: list[str], size: int, expected: bool
) -> None:
    calls = _counting(monkeypatch, fnmatch, "fnmatchcase")
    value = _Counted(["a"] * size)
    assert segments_match(pattern, value) is expected
    bound = (len(pattern) + 1) * (len(value) + 1)
    assert calls[0] <= bound
    assert value.reads <= bound


FETCH = make_tool(
    "WebFetch",
    risk="inspect",
    argument=robota.PermissionArgument("url", "url"),
    properties={"url": {"type": "string"}},
)
READ = make_tool("Read", risk="inspect", argument=robota.PermissionArgument("path", "path"))


def test_s12_a_url_path_rule_with_several_globstars_does_bounded_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _counting(monkeypatch, fnmatch, "fnmatchcase")
    url = "https://example.com" + "/a" * 300
    policy = PermissionPolicy(deny=["WebFetch(https://example.com/**/a/**/b)"])
    assert evaluate_permission(FETCH, {"url": url}, policy).behavior == "allow"
    assert match_url("https://example.com/**/a/**/b", url + "/b") == "match"
    # Sixteen path readings of the value, each one scan of 4 pattern segments over 300.
    assert 0 < calls[0] <= 2 * 16 * 5 * 302 + 10


def test_s12_a_path_rule_with_several_globstars_does_bounded_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _counting(monkeypatch, fnmatch, "fnmatchcase")
    path = "/w" + "/a" * 800
    policy = PermissionPolicy(deny=["Read(/**/a/**/b)"])
    assert evaluate_permission(READ, {"path": path}, policy).behavior == "allow"
    assert evaluate_permission(READ, {"path": path + "/b"}, policy).behavior == "deny"
    assert 0 < calls[0] <= 2 * 4 * 5 * 802


def test_s12_host_label_globs_use_the_same_matcher() -> None:
    assert _globs.segments_match(("**", "example", "com"), ("a", "b", "example", "com"))
    assert match_url("https://**.example.com/", "https://a.b.example.com/") == "match"
    assert match_url("https://*.example.com/", "https://a.b.example.com/") == "no_match"


# --------------------------------------------------------------------------- command words

_WORD_PATTERNS = st.lists(
    st.sampled_from(["*", "?", "a", "b", "/", "[ab]", "[!a]", "[a-c]", "[[:alpha:]]", "\\*", "["]),
    max_size=7,
).map("".join)
_WORDS = st.text(alphabet="ab/c*[", max_size=9)


@settings(max_examples=1_000, deadline=None)
@given(_WORD_PATTERNS, _WORDS)
def test_s12_command_word_globs_agree_with_the_regular_expression_reading(
    pattern: str, word: str
) -> None:
    assert glob_match(pattern, word) is _reference_glob(pattern, word)


@pytest.mark.parametrize(
    ("pattern", "fill"),
    [("*a*a*a*b", "a"), ("*a*a*a*a*a*a*a*a*c", "a"), ("*[ab]*?*[!c]*c", "a"), ("--*=*=*=*x", "=")],
)
def test_s12_command_word_globs_do_bounded_work_on_long_words(
    monkeypatch: pytest.MonkeyPatch, pattern: str, fill: str
) -> None:
    calls = _counting(monkeypatch, _shell_words, "_glob_char_matches")
    word = "--" + fill * 20_000
    assert glob_match(pattern, word) is False
    assert glob_match(pattern, word + pattern[-1]) is True
    assert 0 < calls[0] <= 2 * (len(pattern) + 1) * (len(word) + 2)


def test_s12_a_deny_rule_with_several_stars_on_a_long_word_does_bounded_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _counting(monkeypatch, _shell_words, "_glob_char_matches")
    bash = make_tool(
        "Bash", risk="execute", argument=robota.PermissionArgument("command", "command")
    )
    policy = PermissionPolicy(deny=["Bash(curl *a*a*a*a*b)"])
    command = "curl " + "a" * 5_000
    assert evaluate_permission(bash, {"command": command}, policy).behavior != "deny"
    assert evaluate_permission(bash, {"command": command + "b"}, policy).behavior == "deny"
    assert calls[0] <= 50 * 11 * 5_002
