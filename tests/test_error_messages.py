"""Error messages are formatted: no robota error carries a literal ``{name}`` placeholder.

Issue 25 (item 8): the untyped-tool message printed ``{param.name}`` verbatim because one part of
an implicitly concatenated message lacked its ``f`` prefix. This scans every module under
``src/robota`` for a plain (non-f) string literal that holds a ``{identifier}`` placeholder and
sits in a ``raise`` statement or in a call to an ``…Error`` class, unless the literal is the
receiver of ``.format(…)``. Literal braces a message means to print are written as ``{{…}}`` in
an f-string, so they never count.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "robota"

_PLACEHOLDER = re.compile(
    r"\{[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]{}]*\])*(?:![rsa])?(?::[^{}]*)?\}"
)

Span = tuple[tuple[int, int], tuple[int, int]]


def _span(node: ast.AST) -> Span:
    return (
        (node.lineno, node.col_offset),  # type: ignore[attr-defined]
        (node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
    )


def _inside(position: tuple[int, int], spans: list[Span]) -> bool:
    return any(start <= position < end for start, end in spans)


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def unformatted_placeholders(source: str) -> list[tuple[int, str]]:
    """``(line, literal)`` for each plain string literal with a placeholder in an error message."""
    tree = ast.parse(source)
    messages: list[Span] = []
    formatted: list[Span] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            messages.append(_span(node.exc))
        elif isinstance(node, ast.Call):
            if _called_name(node).endswith("Error"):
                messages.append(_span(node))
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("format", "format_map"):
                formatted.append(_span(func.value))
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.STRING:
            continue
        prefix = token.string[: token.string.index(token.string.lstrip("rRbBuUfF")[0])]
        if "f" in prefix.lower() or "b" in prefix.lower():
            continue
        if not _inside(token.start, messages) or _inside(token.start, formatted):
            continue
        value = ast.literal_eval(token.string)
        if isinstance(value, str) and _PLACEHOLDER.search(value):
            found.append((token.start[0], value))
    return found


def test_the_scan_finds_a_missing_f_prefix_in_a_concatenated_message() -> None:
    source = (
        "def check(param):\n"
        "    raise ConfigurationError(\n"
        '        f"parameter {param.name!r} has no type; "\n'
        '        "write `{param.name}: str`"\n'
        "    )\n"
    )
    assert unformatted_placeholders(source) == [(4, "write `{param.name}: str`")]


def test_the_scan_accepts_escaped_braces_templates_and_other_strings() -> None:
    source = (
        "def check(name):\n"
        '    raise ValueError(f"write {{name}} for {name!r}")\n'
        "def template(name):\n"
        '    raise ValueError("{name} is wrong".format(name=name))\n'
        'INSTRUCTION = "fill in {schema}"\n'
        "def other(x):\n"
        '    print("{x}")\n'
    )
    assert unformatted_placeholders(source) == []


def test_no_robota_error_message_has_an_unformatted_placeholder() -> None:
    offenders = [
        f"{path.relative_to(SRC.parent)}:{line}: {literal!r}"
        for path in sorted(SRC.rglob("*.py"))
        for line, literal in unformatted_placeholders(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
