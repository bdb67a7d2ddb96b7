"""robota.agents uses core's public surface only (DESIGN.md: no ``robota.core._x`` imports)."""

from __future__ import annotations

import ast
import inspect
import pathlib

import robota.agents

PACKAGE = pathlib.Path(robota.agents.__file__).parent


def _robota_imports(path: pathlib.Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return [name for name in names if name == "robota" or name.startswith("robota.")]


def test_the_agents_package_imports_no_private_module_of_another_package() -> None:
    offending = [
        f"{path.name}: {name}"
        for path in sorted(PACKAGE.glob("*.py"))
        for name in _robota_imports(path)
        if not name.startswith("robota.agents")
        and any(part.startswith("_") for part in name.split("."))
    ]
    assert offending == []


def test_public_names_report_the_public_module_and_are_documented() -> None:
    for name in robota.agents.__all__:
        obj = getattr(robota.agents, name)
        if inspect.isclass(obj):
            assert obj.__module__ == "robota.agents", name
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name
