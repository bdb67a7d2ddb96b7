"""Path globs and ``.gitignore`` rules read the way git reads them (issue 30)."""

from __future__ import annotations

import re

import pytest

from robota.tools._patterns import IgnoreRules, glob_regex, parse_gitignore


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),  # `*` stays within one component
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**", "src/a/b.txt", True),
        ("src/**/test_*.py", "src/test_x.py", True),
        ("src/**/test_*.py", "src/a/b/test_x.py", True),
        ("?.txt", "a.txt", True),
        ("?.txt", "ab.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("a[/]b", "a/b", False),  # a set never matches the separator
        (r"\*.txt", "*.txt", True),
        (r"\*.txt", "a.txt", False),
        ("a**b", "axxb", True),
        ("a**b", "a/b", False),  # not a `**` component: two stars
    ],
)
def test_glob_regex(pattern: str, path: str, matches: bool) -> None:
    assert (re.match(glob_regex(pattern) + r"\Z", path, re.DOTALL) is not None) is matches


def _ignored(text: str, path: str, *, is_dir: bool = False) -> bool:
    return IgnoreRules().extended("", parse_gitignore(text)).ignored(path, is_dir=is_dir)


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/a.log", False, True),  # no inner `/`: at any depth
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),  # a leading `/` anchors
        ("doc/*.md", "doc/a.md", False, True),
        ("doc/*.md", "x/doc/a.md", False, False),  # an inner `/` anchors too
        ("build/", "build", True, True),
        ("build/", "build", False, False),  # directories only
        ("*.tmp\n!keep.tmp", "keep.tmp", False, False),  # the last rule wins
        ("!keep.tmp\n*.tmp", "keep.tmp", False, True),
        ("# comment\n\n", "# comment", False, False),
        (r"\#hash", "#hash", False, True),
        (r"\!bang", "!bang", False, True),
        ("trailing   ", "trailing", False, True),
        ("**/cache", "a/b/cache", True, True),
        ("[", "[", False, True),  # an unclosed bracket is literal, as in git
    ],
)
def test_gitignore_rules(rules: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert _ignored(rules, path, is_dir=is_dir) is ignored


def test_a_deeper_gitignore_wins_and_applies_below_its_directory() -> None:
    rules = IgnoreRules().extended("", parse_gitignore("*.txt"))
    rules = rules.extended("sub/", parse_gitignore("!keep.txt"))
    assert rules.ignored("a.txt", is_dir=False)
    assert rules.ignored("keep.txt", is_dir=False)  # the re-include is sub/'s
    assert not rules.ignored("sub/keep.txt", is_dir=False)
