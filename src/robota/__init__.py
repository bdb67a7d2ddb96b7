"""Robota: an agent runtime for Python.

Provider-neutral, tool-using, permission-gated, cancellable and recoverable agents, safe with
untrusted model output. This module re-exports the public core API (:mod:`robota.core`);
host integrations live in :mod:`robota.host`, vendor adapters in ``robota.providers.*`` and the
offline test kit in :mod:`robota.testing`.

``import robota`` is cheap: the core runtime (and pydantic, asyncio) loads on the first use of a
public name (``robota.Agent``, ``from robota import tool``), so ``robota --help`` and a program
that only imports the package start at once. Vendor SDKs load only when a provider needs them.
"""

from typing import TYPE_CHECKING, Any

from robota._version import __version__

if TYPE_CHECKING:
    # What checkers and IDEs see: every public core name, re-exported (at run time, on first use).
    from robota import core
    from robota.core import *  # noqa: F403 - the public core API is re-exported whole

    __all__: list[str] = ["__version__"]
    __all__ += core.__all__


def __getattr__(name: str) -> Any:
    # PEP 562: the first public name asked for loads robota.core and binds all of them here, so
    # later lookups are plain module attributes. `__all__` and submodules (`robota.core`) too.
    if name.startswith("__") and name.endswith("__") and name != "__all__":
        # Probes for optional dunders (`__wrapped__`, `__file__` …) need not load the runtime.
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Not `from robota import core`: its hasattr(robota, "core") probe would land back here.
    import robota.core as core  # noqa: PLC0415, PLR0402 - only on first use

    namespace = globals()
    if "__all__" not in namespace:
        namespace.update((public, getattr(core, public)) for public in core.__all__)
        namespace["__all__"] = ["__version__", *core.__all__]
    if name in namespace:
        return namespace[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
