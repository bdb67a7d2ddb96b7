"""The process-environment resolver (S02): the host side of core's ``EnvResolver`` port."""

from __future__ import annotations

import os
from typing import final

__all__ = ["ProcessEnvResolver"]


@final
class ProcessEnvResolver:
    """Resolves ``$ENV:NAME`` references from this process's environment, read at each call.

    Pass it explicitly where a reference must resolve; core never reads the environment on its
    own (S02).
    """

    __slots__ = ()

    def get(self, name: str) -> str | None:
        """``os.environ[name]``, or ``None`` when unset."""
        return os.environ.get(name)

    def __repr__(self) -> str:
        return "ProcessEnvResolver()"
