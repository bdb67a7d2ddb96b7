"""A custom import-linter contract: forbid submodules of external packages.

import-linter's own ``forbidden`` contract only forbids *top-level* external packages (it sees
``asyncio``, never ``asyncio.subprocess``), yet ``robota.core`` legitimately imports ``asyncio``
while it must never import ``asyncio.subprocess`` (spec S02: the core is platform-neutral and has
no host default). This contract reads the import statements grimp recorded for each import of the
external parent package and refuses the three spellings that reach the submodule:

    import asyncio.subprocess
    from asyncio.subprocess import PIPE
    from asyncio import subprocess

Attribute access through an already imported parent (``asyncio.create_subprocess_exec``) is not
an import at all; ruff's banned-API rule (TID251, configured in pyproject.toml) covers that.

This file is development tooling, loaded by ``lint-imports`` from the repository root; it is not
part of the ``robota`` distribution.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck
from importlinter.domain.helpers import module_expressions_to_modules


def _statement_reaches(statement: str, forbidden: str) -> bool:
    """Whether one recorded import statement imports ``forbidden`` (a dotted submodule name)."""
    parent, _, child = forbidden.rpartition(".")
    text = " ".join(statement.split())
    escaped = re.escape(forbidden)
    if re.search(rf"^import\s+(?:.*,\s*)?{escaped}(?:\.|\s|,|$)", text):
        return True
    if re.search(rf"^from\s+{escaped}(?:\.\S*)?\s+import\b", text):
        return True
    match = re.match(rf"^from\s+{re.escape(parent)}\s+import\s+\(?(.*?)\)?$", text)
    if match:
        names = [part.strip().split(" as ")[0].strip() for part in match.group(1).split(",")]
        return child in names
    return False


class ForbiddenSubmodulesContract(Contract):
    """Source modules must not import the listed submodules of external packages.

    Options:
        source_modules: packages whose modules (descendants included) are checked.
        forbidden_modules: dotted names of external submodules, e.g. ``asyncio.subprocess``.
    """

    type_name = "forbidden_submodules"

    source_modules = fields.ListField(subfield=fields.ModuleExpressionField())
    forbidden_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        violations: list[dict[str, Any]] = []
        sources: set[str] = set()
        for module in module_expressions_to_modules(graph, self.source_modules):  # type: ignore[arg-type]
            sources.add(module.name)
            sources.update(graph.find_descendants(module.name))
        for importer in sorted(sources):
            for forbidden in self.forbidden_modules:  # type: ignore[attr-defined]
                top_level = forbidden.split(".", 1)[0]
                if top_level not in graph.modules:
                    continue
                for detail in graph.get_import_details(importer=importer, imported=top_level):
                    if _statement_reaches(detail["line_contents"], forbidden):
                        violations.append(
                            {
                                "importer": importer,
                                "forbidden": forbidden,
                                "line_number": detail["line_number"],
                                "line_contents": detail["line_contents"],
                            }
                        )
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        _render(check, lambda v: f"{v['importer']} imports {v['forbidden']}")


def _render(check: ContractCheck, says: Callable[[dict[str, Any]], str]) -> None:
    """Print each violation of ``check``: what ``says`` names, then its line."""
    for violation in check.metadata["violations"]:
        output.print_error(
            f"{says(violation)} (l.{violation['line_number']}: {violation['line_contents']})",
            bold=False,
        )
        output.new_line()


def _private_below(module: str, container: str) -> bool:
    """Whether ``module`` is ``container``'s and a path component below it starts with ``_``."""
    if not module.startswith(container + "."):
        return False
    return any(part.startswith("_") for part in module[len(container) + 1 :].split("."))


class PrivateModulesContract(Contract):
    """Nothing outside a container package imports one of its private modules (issue 32).

    A module is private when any component of its path below the container starts with ``_``
    (``robota.core._errors``, ``robota.core.execution._journal``). Every import grimp records
    counts: module-level, ``if TYPE_CHECKING:`` and function-level ones alike. The container's
    own modules may import each other freely.

    Options:
        containers: the packages whose private modules are guarded, e.g. ``robota.core``.
    """

    type_name = "private_modules"

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        violations: list[dict[str, Any]] = []
        for container in self.containers:  # type: ignore[attr-defined]
            root = container.split(".", 1)[0]
            for importer in sorted(graph.modules):
                if importer == container or importer.startswith(container + "."):
                    continue
                if importer != root and not importer.startswith(root + "."):
                    continue  # an external package: not ours to hold
                imported_modules = graph.find_modules_directly_imported_by(importer)
                for imported in sorted(imported_modules):
                    if not _private_below(imported, container):
                        continue
                    for detail in graph.get_import_details(importer=importer, imported=imported):
                        violations.append(
                            {
                                "importer": importer,
                                "imported": imported,
                                "line_number": detail["line_number"],
                                "line_contents": detail["line_contents"],
                            }
                        )
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        _render(check, lambda v: f"{v['importer']} imports the private module {v['imported']}")
