"""Integrations use core's and host's public surfaces only (issue 32 item 1, docs/lowlevel.md).

Two rules, each shown able to fail:

* no module outside ``robota.core`` (``robota.host``) imports one of its private modules — a
  path component below the package starting with ``_`` — whether the import is at module level,
  under ``if TYPE_CHECKING:`` or inside a function. The import-linter contract
  ``core-and-host-private`` holds it; each case here plants one bad import in a copy of the tree;
* no module outside ``robota.core`` reads a private attribute of an :class:`~robota.Agent`
  (``agent._tools``, ``agent._route_dispatch``): :func:`robota.lowlevel.agent_parts` and
  :func:`robota.lowlevel.route_dispatch` are the public seams.

``robota.lowlevel`` itself must import without importing any integration.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

from robota import Agent
from robota.testing import ScriptedProvider
from test_architecture import ROOT, _copy_project, _lint

TYPE_CHECKING_IMPORT = (
    "from typing import TYPE_CHECKING\n"
    "if TYPE_CHECKING:\n"
    "    from robota.core._messages import Message\n"
)
FUNCTION_IMPORT = "def late() -> object:\n    from robota.core.tools._executor import ToolCallOutcome\n    return ToolCallOutcome\n"

PRIVATE_IMPORTS = [
    ("temporal", "from robota.core._errors import RobotaError\n", "robota.core._errors"),
    ("temporal", "from robota.core import _errors\n", "robota.core._errors"),
    ("testing", "import robota.core.execution._journal\n", "robota.core.execution._journal"),
    ("temporal", TYPE_CHECKING_IMPORT, "robota.core._messages"),
    ("cli", FUNCTION_IMPORT, "robota.core.tools._executor"),
    ("lowlevel", "from robota.core._abort import is_abort\n", "robota.core._abort"),
    ("host", "import robota.core._abort\n", "robota.core._abort"),
    (
        "providers",
        "from robota.host.egress._policy import check_url\n",
        "robota.host.egress._policy",
    ),
    ("tools", "from robota.host.egress import _media_fetch\n", "robota.host.egress._media_fetch"),
]


@pytest.mark.parametrize(
    ("package", "line", "imported"),
    PRIVATE_IMPORTS,
    ids=[f"{case[0]}: {case[1].strip().splitlines()[-1].strip()}" for case in PRIVATE_IMPORTS],
)
def test_no_private_core_or_host_import_outside_its_package(
    tmp_path: pathlib.Path, package: str, line: str, imported: str
) -> None:
    project = _copy_project(tmp_path)
    source = project / "src" / "robota"
    if package == "lowlevel":  # a module, not a package: plant the import in it
        target = source / "lowlevel.py"
        target.write_text(target.read_text() + "\n" + line)
        importer = "robota.lowlevel"
    else:
        (source / package / "_bad.py").write_text(line)
        importer = f"robota.{package}._bad"
    result = _lint(project)
    assert result.returncode != 0
    expected = f"{importer} imports the private module {imported}"
    assert expected in " ".join(result.stdout.split()), result.stdout


def test_the_private_modules_contract_allows_a_package_its_own_private_modules(
    tmp_path: pathlib.Path,
) -> None:
    project = _copy_project(tmp_path)
    (project / "src" / "robota" / "core" / "_bad.py").write_text(
        "from robota.core.execution._journal import ExecutionJournal\n"
    )
    result = _lint(project)
    assert result.returncode == 0, result.stdout + result.stderr


def test_lowlevel_imports_no_integration() -> None:
    code = (
        "import sys, robota.lowlevel\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('robota.')}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.strip() == "['_version', 'core', 'host', 'lowlevel']"


def _agent_private_names() -> frozenset[str]:
    """Every private attribute an Agent has: its classes' methods and its instance state."""
    agent = Agent(provider=ScriptedProvider([]), model="scripted")
    names = {name for cls in type(agent).__mro__ for name in vars(cls)}
    names.update(vars(agent) if hasattr(agent, "__dict__") else ())
    for cls in type(agent).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            names.add(slot)
        names.update(getattr(cls, "__annotations__", {}))
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def _own_names(tree: ast.AST) -> set[str]:
    """The private names a module defines for its own classes (``self._x = …``, ``def _x``)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    return own


def agent_private_reads(source: pathlib.Path) -> list[str]:
    """``path:line: expr`` for each read of an Agent's private attribute outside robota.core.

    A name the module defines itself (its own class's ``self._state``) is not counted there, nor
    is a read through ``self``, ``cls`` or ``super()``.
    """
    private = _agent_private_names()
    found: list[str] = []
    for path in sorted(source.rglob("*.py")):
        if "core" in path.relative_to(source).parts[:1]:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _own_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in private:
                continue
            base = ast.unparse(node.value)
            if base in {"self", "cls", "super()"} or node.attr in own:
                continue
            found.append(f"{path.relative_to(source)}:{node.lineno}: {base}.{node.attr}")
    return found


def test_no_private_agent_attribute_read_outside_core() -> None:
    # Issue 32: robota.temporal routed agents through agent._route_dispatch and read
    # agent._tools, _guardrails, _executor.gate …; robota.lowlevel is the public seam.
    assert agent_private_reads(ROOT / "src" / "robota") == []


def test_the_agent_attribute_check_catches_a_private_read(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "robota"
    (source / "temporal").mkdir(parents=True)
    (source / "temporal" / "_bad.py").write_text(
        "def tools(agent):\n    return agent._tools, agent._executor.gate\n"
    )
    (source / "core").mkdir()
    (source / "core" / "_fine.py").write_text("def tools(agent):\n    return agent._tools\n")
    assert agent_private_reads(source) == [
        "temporal/_bad.py:2: agent._tools",
        "temporal/_bad.py:2: agent._executor",
    ]
