"""Every relative link in the README and docs/ leads to a file in the repository (issue 25)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def _without_code(text: str) -> str:
    """The text outside fenced code blocks and inline code (a link there is not a link)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchor(heading: str) -> str:
    """The anchor a heading gets on the forge that renders it (GitHub's rule)."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def relative_links(text: str) -> list[str]:
    """The link targets in ``text`` that are not URLs."""
    found = []
    for match in _LINK.finditer(_without_code(text)):
        target = match.group(1) or match.group(2)
        if not _EXTERNAL.match(target):
            found.append(target)
    return found


def test_the_link_reader_finds_relative_links_and_skips_urls_and_code() -> None:
    text = (
        "See [spec](docs/spec.md#s23-cancellation), [site](https://example.org), "
        "[top](#quick-start) and `[not](a-link.md)`.\n```\n[nor](this.md)\n```\n"
    )
    assert relative_links(text) == ["docs/spec.md#s23-cancellation", "#quick-start"]


def test_the_documents_are_there() -> None:
    names = {p.name for p in DOCUMENTS}
    assert {"README.md", "spec.md", "architecture.md"} <= names
    assert len(DOCUMENTS) >= 4  # the README and docs/README.md, spec.md, architecture.md


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(document: Path) -> None:
    broken = []
    for target in relative_links(document.read_text(encoding="utf-8")):
        path, _, fragment = target.partition("#")
        destination = (document.parent / path).resolve() if path else document
        if not destination.exists() or not destination.is_relative_to(ROOT):
            broken.append(target)
        elif fragment and destination.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", destination.read_text(encoding="utf-8"), re.M)
            if fragment not in {_anchor(h) for h in headings}:
                broken.append(target)
    assert broken == []


# Issue 32 split the Agent facade and moved shared types to lower homes: a spec section's
# "Code:" line must still link the module that defines what the section specifies, not only the
# facade the code left. Each row: a section and a definition one of its linked files must hold.
_SPEC_ENTRY_POINTS = {
    "S18": "class ProviderCapabilities",  # the structured-output capability field
    "S20": "async def aclose",
    "S24": "def set_model",  # "the model in use can be read and changed"
    "S35": "def update_system_prompt",
    "S38": "async def _acquire",  # the agent's FIFO run slot
    "S43": "async def invoke_tool",
}


def _spec_code_links() -> dict[str, list[Path]]:
    """Each spec section's ``Code:`` links, as repository paths."""
    spec = ROOT / "docs" / "spec.md"
    links: dict[str, list[Path]] = {}
    section = None
    for line in spec.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## (S\d+)\b", line)
        if heading:
            section = heading.group(1)
        elif section is not None and line.startswith("Code:"):
            links[section] = [(spec.parent / t).resolve() for t in relative_links(line)]
    return links


@pytest.mark.parametrize(("section", "definition"), sorted(_SPEC_ENTRY_POINTS.items()))
def test_a_spec_sections_code_links_hold_what_it_specifies(section: str, definition: str) -> None:
    linked = _spec_code_links()[section]
    holders = [p for p in linked if p.is_file() and definition in p.read_text(encoding="utf-8")]
    assert holders, f"{section}: no linked file defines {definition!r}: {linked}"
