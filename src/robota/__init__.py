"""Robota: an agent runtime for Python.

Provider-neutral, tool-using, permission-gated, cancellable and recoverable agents, safe with
untrusted model output. This module re-exports the public core API (:mod:`robota.core`);
host integrations live in :mod:`robota.host`, vendor adapters in ``robota.providers.*`` and the
offline test kit in :mod:`robota.testing`.
"""

import contextlib as _contextlib

from robota import core
from robota._version import __version__
from robota.core import *  # noqa: F403 - the public core API is re-exported whole

__all__: list[str] = ["__version__"]
__all__ += core.__all__


def _relabel_public_objects() -> None:
    # Public objects report the public path (`robota.Agent`, not `robota.core._agent.Agent`) in
    # reprs, tracebacks and pickles; every one of them is importable from here.
    namespace = globals()
    for name in __all__:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith("robota.core."):
            # Aliases of builtin types (unions, literals) cannot be relabelled; they keep theirs.
            with _contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = __name__


_relabel_public_objects()
del _relabel_public_objects
