"""Structural invariants the security review asked for, checked over the whole source tree.

S06: the egress verdict must be the same on every supported Python, so it may not consult the
interpreter's ``ipaddress`` classification properties — they changed between releases (before
3.11.10 / 3.12.4 ``is_global`` called most of ``192.0.0.0/24`` global). The policy decides from
its own table (``robota/host/egress/_table.py``) instead. This test walks every module under
``src/`` with :mod:`ast`, so an attribute *access* anywhere is caught while the names may still be
mentioned in comments and docstrings.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src"

# S06: what ipaddress decides by interpreter version; the egress policy must not read any of it.
_VERSION_DEPENDENT_FLAGS = frozenset(
    {
        "is_global",
        "is_private",
        "is_reserved",
        "is_loopback",
        "is_link_local",
        "is_multicast",
        "is_site_local",
        "is_unspecified",
    }
)


def _flag_reads(path: pathlib.Path, root: pathlib.Path = SOURCE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
        ):
            name = str(node.args[1].value)  # getattr(address, "is_global") is the same read
        if name in _VERSION_DEPENDENT_FLAGS:
            found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found


def test_s06_no_source_file_reads_an_ipaddress_classification_flag() -> None:
    files = sorted(SOURCE.rglob("*.py"))
    assert files, SOURCE
    reads = [read for path in files for read in _flag_reads(path)]
    assert reads == [], "decide from robota/host/egress/_table.py instead:\n" + "\n".join(reads)


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("address.is_global", True),
        ("x = a.b.is_private or c", True),
        ("getattr(address, 'is_reserved')", True),
        ("# address.is_global in a comment", False),
        ("'''address.is_loopback in a docstring'''", False),
        ("is_global = 1", False),
    ],
)
def test_s06_the_flag_scan_sees_attribute_reads_not_prose(
    tmp_path: pathlib.Path, source: str, caught: bool
) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(source + "\n", encoding="utf-8")
    assert bool(_flag_reads(probe, tmp_path)) is caught
