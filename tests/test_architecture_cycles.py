"""Zero import cycles in ``src/robota``, type-level included (issue 32, item 2).

The graph is read from the source with :mod:`ast`, never by importing it, so an import Python
defers is still an edge:

* every ``import`` and ``from ... import`` counts, at module level, under ``if TYPE_CHECKING:``
  (a type-level cycle is still a cycle: two modules that can only be read together) and inside
  functions (a deferred import is the usual way a cycle is hidden, not removed);
* relative imports are resolved against the importing module's package;
* ``import a.b.c`` is an edge to the module ``a.b.c`` only. Python also runs the ``__init__`` of
  ``a`` and ``a.b`` first, but every module depends on its ancestors that way; counting it would
  make each package ``__init__`` that re-exports its submodules a cycle with all of them;
* ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, otherwise
  to ``pkg`` itself — that is, to the package's ``__init__`` module, where ``name`` is read;
* a module importing itself (a package ``__init__`` naming its own package) is not a cycle.

Nothing is exempt. Two public types that name each other get a lower home for the shared type
instead of a deferred import: ``robota.core._agent_base.AgentBase`` is the agent that handoffs and
guardrails name (``Agent`` is its one subclass), ``robota.core.execution._state.ExecutionState``
the execution that the handoff machinery reads (``Execution`` is its one subclass).

Package ``__init__`` modules are ordinary nodes. A re-exporting ``__init__`` depends on its
submodules, so a submodule that reads a sibling through the package (``from robota.core import
Tool`` inside ``robota.core``) closes a cycle through it. The SCC check catches that only once
the ``__init__`` happens to re-export the importer; :func:`test_submodules_import_siblings_by_path`
makes the rule itself strict: no module imports an ancestor package's ``__init__``. The one
exception is the root package ``robota`` for modules outside ``robota.core``: it re-exports
``robota.core`` and nothing else (its documented public surface), so it is below every
package above core, and a core module importing it is still caught as a cycle.
"""

from __future__ import annotations

import ast
import itertools
import pathlib
import shutil
from dataclasses import dataclass
from typing import Literal

import pytest

import robota
from robota.core._agent_base import AgentBase
from robota.core.execution._loop import Execution
from robota.core.execution._state import ExecutionState

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

Where = Literal["module", "type-checking", "function"]


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` imports ``target`` at ``line`` (``where`` says how it runs)."""

    source: str
    target: str
    line: int
    where: Where


def _modules(src: pathlib.Path) -> dict[str, pathlib.Path]:
    found: dict[str, pathlib.Path] = {}
    for path in sorted((src / "robota").rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _where(node: ast.AST, stack: list[ast.AST]) -> Where:
    if any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) for n in stack):
        return "function"
    path = [*stack, node]
    for parent, child in itertools.pairwise(path):
        if (
            isinstance(parent, ast.If)
            and ast.unparse(parent.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            and child in parent.body
        ):
            return "type-checking"
    return "module"


def _known(name: str, modules: dict[str, pathlib.Path]) -> str:
    # `import robota.core.tools._tool.Tool` is not valid Python, but a dotted name may end in a
    # module that does not exist (a typo is an ImportError elsewhere); the nearest module counts.
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def import_graph(src: pathlib.Path) -> list[Edge]:
    """Every import of a ``robota`` module by a ``robota`` module under ``src``."""
    modules = _modules(src)
    edges: list[Edge] = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        todo: list[tuple[ast.AST, list[ast.AST]]] = [(ast.parse(path.read_text()), [])]
        while todo:
            node, stack = todo.pop()
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "robota":
                        target = _known(alias.name, modules)
                        edges.append(Edge(module, target, line, _where(node, stack)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                if base.split(".")[0] == "robota":
                    for alias in node.names:
                        sub = f"{base}.{alias.name}"
                        target = sub if sub in modules else _known(base, modules)
                        edges.append(Edge(module, target, line, _where(node, stack)))
            todo.extend((child, [*stack, node]) for child in ast.iter_child_nodes(node))
    return [e for e in edges if e.source != e.target]


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    counter = itertools.count()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        # Iterative Tarjan: each frame is a node and the iterator over its successors.
        index[start] = low[start] = next(counter)
        stack.append(start)
        on_stack.add(start)
        frames = [(start, iter(sorted(graph[start])))]
        while frames:
            node, successors = frames[-1]
            child = next(successors, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = next(counter)
                    stack.append(child)
                    on_stack.add(child)
                    frames.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            frames.pop()
            if frames:
                parent = frames[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _report(edges: list[Edge], found: list[list[str]]) -> str:
    lines: list[str] = []
    for component in found:
        members = set(component)
        lines.append(f"cycle of {len(component)} modules: {', '.join(component)}")
        lines.extend(
            f"    {e.source} -> {e.target} (line {e.line}, {e.where})"
            for e in sorted(set(edges), key=lambda e: (e.source, e.target, e.line))
            if e.source in members and e.target in members
        )
    return "\n".join(lines)


def test_src_has_no_import_cycles_type_level_included() -> None:
    edges = import_graph(SRC)
    found = cycles(edges)
    assert found == [], "import cycles in src/robota:\n" + _report(edges, found)


def ancestor_imports(edges: list[Edge]) -> list[str]:
    """Each import of a package ``__init__`` by a module inside that package."""
    return [
        f"{e.source} imports its ancestor package {e.target} (line {e.line}, {e.where})"
        for e in edges
        if e.source.startswith(e.target + ".")
        and not (e.target == "robota" and not e.source.startswith("robota.core."))
    ]


def test_submodules_import_siblings_by_path() -> None:
    assert ancestor_imports(import_graph(SRC)) == []


# --- the checker itself: planted cycles must be found ---------------------------------------


def _tree(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "src"


@pytest.mark.parametrize(
    ("importer", "where"),
    [
        ("from robota.a import A\n", "module"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from robota.a import A\n",
            "type-checking",
        ),
        (
            "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    import robota.a\n",
            "module",
        ),
        ("class C:\n    async def f(self):\n        import robota.a\n", "function"),
        ("def f():\n    from robota.a import A\n", "function"),
        ("try:\n    from robota.a import A\nexcept ImportError:\n    A = None\n", "module"),
        ("from .a import A\n", "module"),
        ("from . import a\n", "module"),
        ("import robota.a\n", "module"),
        ("import robota.a as alias\n", "module"),
    ],
)
def test_checker_finds_a_cycle_however_it_is_imported(
    tmp_path: pathlib.Path, importer: str, where: Where
) -> None:
    src = _tree(
        tmp_path,
        {
            "robota/__init__.py": "",
            "robota/a.py": "from robota.b import B\nclass A: ...\n",
            "robota/b.py": importer + "class B: ...\n",
        },
    )
    edges = import_graph(src)
    assert cycles(edges) == [["robota.a", "robota.b"]]
    assert [e.where for e in edges if (e.source, e.target) == ("robota.b", "robota.a")] == [where]


def test_checker_reads_from_package_import_name_as_the_init_unless_a_submodule(
    tmp_path: pathlib.Path,
) -> None:
    src = _tree(
        tmp_path,
        {
            "robota/__init__.py": "",
            "robota/pkg/__init__.py": "from robota.pkg._impl import Thing\n",
            "robota/pkg/_impl.py": "class Thing: ...\n",
            "robota/pkg/_other.py": "from robota.pkg import _impl\n",
            "robota/pkg/_user.py": "from robota.pkg import Thing\n",
            "robota/pkg/sub/__init__.py": "from ..._version import v\nfrom .. import Thing\n",
            "robota/_version.py": "v = 1\n",
        },
    )
    targets = {(e.source, e.target) for e in import_graph(src)}
    assert ("robota.pkg._other", "robota.pkg._impl") in targets
    assert ("robota.pkg._user", "robota.pkg") in targets
    assert ("robota.pkg.sub", "robota._version") in targets
    assert ("robota.pkg.sub", "robota.pkg") in targets
    assert cycles(import_graph(src)) == []


def test_checker_finds_a_submodule_reading_a_sibling_through_its_package(
    tmp_path: pathlib.Path,
) -> None:
    src = _tree(
        tmp_path,
        {
            "robota/__init__.py": "",
            "robota/pkg/__init__.py": "from robota.pkg._a import A\nfrom robota.pkg._b import B\n",
            "robota/pkg/_a.py": "class A: ...\n",
            "robota/pkg/_b.py": "from robota.pkg import A\nclass B: ...\n",
        },
    )
    assert cycles(import_graph(src)) == [["robota.pkg", "robota.pkg._b"]]


def test_checker_finds_a_type_level_cycle_planted_in_the_real_tree(
    tmp_path: pathlib.Path,
) -> None:
    src = tmp_path / "src"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__"))
    usage = src / "robota" / "core" / "_usage.py"
    usage.write_text(
        usage.read_text()
        + "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        + "    from robota.core._agent import Agent\n"
    )
    edges = import_graph(src)
    found = cycles(edges)
    assert any({"robota.core._usage", "robota.core._agent"} <= set(c) for c in found)
    assert "robota.core._usage -> robota.core._agent" in _report(edges, found)


def test_checker_refuses_a_submodule_reading_its_package_even_without_a_cycle(
    tmp_path: pathlib.Path,
) -> None:
    src = _tree(
        tmp_path,
        {
            "robota/__init__.py": "",
            "robota/core/__init__.py": "from robota.core._a import A\n",
            "robota/core/_a.py": "class A: ...\n",
            "robota/core/_b.py": "from robota.core import A\n",
            "robota/core/sub/_c.py": "from robota import core\nimport robota\n",
            "robota/host/_d.py": "from robota import A\n",
        },
    )
    edges = import_graph(src)
    assert cycles(edges) == []
    assert sorted(ancestor_imports(edges)) == [
        "robota.core._b imports its ancestor package robota.core (line 1, module)",
        "robota.core.sub._c imports its ancestor package robota (line 2, module)",
        "robota.core.sub._c imports its ancestor package robota.core (line 1, module)",
    ]


def test_lower_homes_stand_for_their_one_subclass() -> None:
    # Issue 32 item 2: `isinstance(x, AgentBase)` in the handoff and guardrail checks means "is a
    # robota.Agent", and ExecutionState names an Execution, only while each has that one subclass;
    # neither base may cost its subclass its slots (no instance __dict__).
    assert AgentBase.__subclasses__() == [robota.Agent]
    assert ExecutionState.__subclasses__() == [Execution]
    assert robota.Agent.__dictoffset__ == 0
    assert Execution.__dictoffset__ == 0
