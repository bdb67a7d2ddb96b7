"""The host's permission context: canonical paths, home, and the read-only classifier (S21)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

from robota.core.permissions import PermissionContext
from robota.host.paths._paths import canonical_path
from robota.host.paths._readonly import is_read_only_command

__all__ = ["permission_context"]


def permission_context(
    workspace: str | os.PathLike[str], *, remembered: Sequence[str] = (), **overrides: Any
) -> PermissionContext:
    """A :class:`~robota.PermissionContext` wired to this machine.

    Paths are canonicalised with symlinks followed (:func:`canonical_path`), ``~`` is this
    user's home (in its canonical form too), and command lines that only read inside
    ``workspace`` are decided as inspect (:func:`is_read_only_command`).

    Raises:
        ValueError: when ``workspace`` is not an absolute path to an existing directory.
    """
    root = os.fspath(workspace)
    if not os.path.isabs(root) or not os.path.isdir(root):
        raise ValueError(f"workspace must be an absolute path to an existing directory: {root!r}")
    root = canonical_path(root)
    home = os.path.expanduser("~")
    if os.path.isabs(home):
        # S05, S12: `~` rules and the always-ask protection of `~/.bashrc` compare in the one
        # canonical form; a home reached through a symlink (`/home` -> `/usr/home`) would
        # otherwise never match the canonical paths values resolve to.
        # A home that cannot be resolved stays as written (rules on it are then unevaluable).
        with contextlib.suppress(OSError, ValueError):
            home = canonical_path(home)
    options: dict[str, Any] = {
        "workspace": root,
        "home": home,
        "resolve_path": canonical_path,
        "read_only_command": lambda command: is_read_only_command(
            command, workspace=root, home=home
        ),
        "remembered": tuple(remembered),
    }
    options.update(overrides)
    return PermissionContext(**options)
