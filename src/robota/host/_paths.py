"""Canonical paths and the one containment check (S05).

``os.path.normpath``/``abspath`` are lexical: they cannot see a symlink, so a link inside a root
pointing outside it passes a ``startswith(root)`` test while the file operation that follows
escapes. Containment here compares *canonical* paths: every existing component resolved (the
longest existing prefix), then the missing tail appended. Every containment decision in Robota
routes through :func:`is_path_inside`; two checks that can disagree are their own defect.
"""

from __future__ import annotations

import os

__all__ = ["canonical_path", "is_path_inside"]


def canonical_path(path: str | os.PathLike[str]) -> str:
    """The absolute path with every existing component's symlinks resolved.

    Components that do not exist yet are appended as written (after lexical normalisation), so
    the answer is meaningful for a file about to be created.
    """
    return os.path.realpath(os.fspath(path), strict=False)


def is_path_inside(root: str | os.PathLike[str], candidate: str | os.PathLike[str]) -> bool:
    """Whether ``candidate`` is ``root`` or lies beneath it, judged on canonical paths (S05).

    A relative ``candidate`` is taken relative to ``root``.

    Raises:
        ValueError: when ``root`` is not an absolute path to an existing directory — the
            invariant a containment decision needs; the message names what is wrong.
    """
    root_text = os.fspath(root)
    if not os.path.isabs(root_text):
        raise ValueError(f"containment root must be an absolute path, got {root_text!r}")
    if not os.path.isdir(root_text):
        raise ValueError(f"containment root must be an existing directory, got {root_text!r}")
    real_root = canonical_path(root_text)
    target = os.fspath(candidate)
    if not os.path.isabs(target):
        target = os.path.join(real_root, target)
    real_target = canonical_path(target)
    return os.path.commonpath([real_root, real_target]) == real_root
