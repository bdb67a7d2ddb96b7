"""The one place that says how to install an extra (``openai``, ``postgres`` …) of Robota.

No release of Robota is on a package index, and the name ``robota`` there is not ours, so no
message may tell a user to install ``robota`` from one. Every "missing extra" error asks
:func:`install_command` instead. It reads how the running installation was made, as pip records it
(``direct_url.json`` in the distribution's metadata, PEP 610), and repeats that source with the
extra added:

* an editable install of a checkout → ``pip install -e "/path/to/checkout[openai]"``;
* an install from a local directory → ``pip install "/path/to/checkout[openai]"``;
* an install from a version-control URL → ``pip install "robota[openai] @ git+URL@COMMIT"``;
* an install from an archive (a wheel or sdist URL) → ``pip install "robota[openai] @ URL"``.

When nothing usable is recorded (no metadata, a directory or file that is gone, an unreadable
record), the command installs from the checkout the user has: ``pip install -e ".[openai]"``, run
in the Robota checkout.

Core may not use :mod:`urllib` (S02), so the ``file:`` URLs pip writes are read here by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

__all__ = ["DISTRIBUTION_NAME", "install_command"]

DISTRIBUTION_NAME: Final = "robota"
"""The distribution whose metadata records where Robota was installed from."""

_FALLBACK: Final = 'pip install -e ".[{extra}]" (run it in your Robota checkout)'
_SHELL_SPECIAL: Final = re.compile(r'["$`\\!]')
_EXTRA: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:,[A-Za-z0-9._-]+)*")


def install_command(extra: str) -> str:
    """A shell command that installs Robota's ``extra`` from where this Robota came from.

    The command never names a package index: it is an install from the recorded checkout,
    directory, version-control URL or archive, or else ``pip install -e ".[extra]"`` to be run in
    the Robota checkout (the returned text says so).

    Args:
        extra: The extra's name as declared in ``pyproject.toml`` (``"openai"``), or several
            separated by commas (``"openai,keyring"``).

    Raises:
        ValueError: ``extra`` is not an extra's name (an internal misuse, not a user's mistake).
    """
    if not _EXTRA.fullmatch(extra):
        raise ValueError(f"not an extra's name: {extra!r}")
    recorded = _recorded_source()
    if recorded is None:
        return _FALLBACK.format(extra=extra)
    return _command_for(recorded, extra) or _FALLBACK.format(extra=extra)


def _recorded_source() -> dict[str, object] | None:
    """The distribution's ``direct_url.json`` as a mapping, or ``None`` if absent or unreadable."""
    # Imported on first use: reading package metadata is not part of `import robota`.
    from importlib.metadata import PackageNotFoundError, distribution  # noqa: PLC0415

    try:
        text = distribution(DISTRIBUTION_NAME).read_text("direct_url.json")
    except (PackageNotFoundError, OSError):
        return None
    if text is None:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _command_for(record: dict[str, object], extra: str) -> str | None:
    """The command that repeats the recorded install with ``extra``, or ``None`` if it cannot."""
    url = record.get("url")
    if not isinstance(url, str) or not url:
        return None
    vcs_info = record.get("vcs_info")
    if isinstance(vcs_info, dict):
        return _vcs_command(url, vcs_info, record.get("subdirectory"), extra)
    dir_info = record.get("dir_info")
    if isinstance(dir_info, dict):
        directory = _local_path(url)
        if directory is None or not (directory / "pyproject.toml").is_file():
            return None  # moved or deleted since: its source is no longer there to reinstall
        editable = "-e " if dir_info.get("editable") is True else ""
        return f"pip install {editable}{_quoted(f'{directory}[{extra}]')}"
    if isinstance(record.get("archive_info"), dict):
        if url.startswith("file:"):
            archive = _local_path(url)
            if archive is None or not archive.is_file():
                return None
        return f"pip install {_quoted(f'{DISTRIBUTION_NAME}[{extra}] @ {url}')}"
    return None


def _vcs_command(url: str, vcs_info: dict[object, object], subdirectory: object, extra: str) -> str:
    vcs = vcs_info.get("vcs")
    commit = vcs_info.get("commit_id")
    scheme = f"{vcs}+" if isinstance(vcs, str) and vcs and not url.startswith(f"{vcs}+") else ""
    pinned = f"@{commit}" if isinstance(commit, str) and commit else ""
    fragment = f"#subdirectory={subdirectory}" if isinstance(subdirectory, str) else ""
    requirement = f"{DISTRIBUTION_NAME}[{extra}] @ {scheme}{url}{pinned}{fragment}"
    return f"pip install {_quoted(requirement)}"


def _local_path(url: str) -> Path | None:
    """The path a ``file:`` URL names (``file:///p``, ``file://localhost/p``), else ``None``."""
    for prefix in ("file://localhost/", "file:///"):
        if url.startswith(prefix):
            return Path("/" + _percent_decoded(url[len(prefix) :]))
    return None


def _percent_decoded(text: str) -> str:
    raw = re.sub(
        rb"%([0-9A-Fa-f]{2})",
        lambda match: bytes([int(match.group(1), 16)]),
        text.encode("utf-8", "surrogateescape"),
    )
    return raw.decode("utf-8", "surrogateescape")


def _quoted(argument: str) -> str:
    """``argument`` as one shell word: in double quotes unless it holds what they would expand."""
    if _SHELL_SPECIAL.search(argument) is None:
        return f'"{argument}"'
    return "'" + argument.replace("'", "'\"'\"'") + "'"
