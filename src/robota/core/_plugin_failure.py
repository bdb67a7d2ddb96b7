"""The record of a plugin hook that raised (S20).

Defined below both :mod:`robota.core._plugins` (which records failures and re-exports this
class) and :mod:`robota.core.execution._result` (whose ``RunResult.plugin_errors`` holds them),
so the plugin base class can name the ``RunResult`` its ``after_run`` receives without an import
cycle (issue 32).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

__all__ = ["PluginFailure"]


@final
@dataclass(frozen=True, slots=True)
class PluginFailure:
    """A plugin hook that raised; recorded and swallowed (S20).

    Attributes:
        plugin: The plugin's name.
        hook: The hook's name (``"before_run"`` …).
        error: What it raised.
    """

    plugin: str
    hook: str
    error: Exception
