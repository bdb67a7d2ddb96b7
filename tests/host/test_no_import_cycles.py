"""Issue 32: no import cycle inside ``robota.host``, the provider kit or ``robota.otel``.

Type-level imports count too (``if TYPE_CHECKING:``): the owner record's types have a lower home
(``robota.host.store._owner``) so the host's errors, lifetime and store no longer import each
other in a ring.
"""

from __future__ import annotations

import grimp

PACKAGES = ("robota.host", "robota.providers._kit", "robota.otel")


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), or self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.find_modules_directly_imported_by(node) & modules:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def _modules(graph: grimp.ImportGraph, package: str) -> set[str]:
    return {package, *graph.find_descendants(package)}


def test_issue32_host_kit_and_otel_have_no_import_cycle() -> None:
    graph = grimp.build_graph("robota", cache_dir=None)
    for package in PACKAGES:
        assert _cycles(graph, _modules(graph, package)) == [], package


def test_issue32_the_cycle_check_finds_a_planted_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert _cycles(graph, {"pkg", "pkg.a", "pkg.b", "pkg.c"}) == [["pkg.a", "pkg.b", "pkg.c"]]
