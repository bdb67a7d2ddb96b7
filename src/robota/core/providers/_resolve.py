"""Model strings: ``"prefix:model"`` → a provider, through the ``robota.providers`` entry points.

A package that ships a provider registers a factory under a prefix in its metadata::

    [project.entry-points."robota.providers"]
    openai = "robota.providers.openai:OpenAIProvider"

and ``Agent(model="openai:gpt-5-mini")`` with no ``provider=`` calls that factory with no
arguments (so it reads its key from the environment) and addresses ``gpt-5-mini``. Core reads the
group and never names a vendor (S02): our own adapters register exactly the way a third party's
do. A factory that cannot run because an optional dependency is missing raises a
:class:`~robota.ConfigurationError` that says what to install; it is passed on unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from robota.core._errors import ConfigurationError
from robota.core.providers._contract import Provider

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["PROVIDER_ENTRY_POINT_GROUP", "provider_for_model", "registered_provider_prefixes"]

PROVIDER_ENTRY_POINT_GROUP: Final = "robota.providers"
"""The entry-point group provider packages register their factories in."""


def _entry_points() -> dict[str, EntryPoint]:
    # Imported on first use: reading package metadata is not part of `import robota`.
    from importlib.metadata import entry_points  # noqa: PLC0415

    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=PROVIDER_ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)
    return found


def registered_provider_prefixes() -> tuple[str, ...]:
    """The model-string prefixes installed packages registered, sorted."""
    return tuple(sorted(_entry_points()))


def provider_for_model(spec: object) -> tuple[Provider, str]:
    """Build the provider a ``"prefix:model"`` string names; return it with the model name.

    Raises:
        ConfigurationError: for a string without a prefix, a prefix no installed package
            registered (the message lists those that are), a factory whose import fails, or a
            factory that does not return a :class:`~robota.Provider`.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigurationError(f"model must be a non-empty string, got {spec!r}")
    prefix, sep, model = spec.partition(":")
    known = _entry_points()
    if not sep or not prefix or not model:
        raise ConfigurationError(
            f"an agent needs a provider: model {spec!r} names none, so pass provider= or "
            f"providers=, or write 'prefix:model' with a registered prefix ({_listing(known)})"
        )
    point = known.get(prefix)
    if point is None:
        raise ConfigurationError(
            f"unknown model prefix {prefix!r} in {spec!r}; registered prefixes: "
            f"{_listing(known)}. A provider package registers its prefix in the "
            f"{PROVIDER_ENTRY_POINT_GROUP!r} entry-point group"
        )
    try:
        factory = point.load()
    except ImportError as error:
        raise ConfigurationError(
            f"the provider for prefix {prefix!r} ({point.value}) cannot be imported: {error}; "
            "install the package (or extra) that provides it",
            cause=error,
        ) from error
    provider = factory()
    if not isinstance(provider, Provider):
        raise ConfigurationError(
            f"the factory registered for prefix {prefix!r} ({point.value}) returned "
            f"{type(provider).__name__}, not a robota Provider"
        )
    return provider, model


def _listing(known: dict[str, EntryPoint]) -> str:
    return ", ".join(sorted(known)) or "none installed"
