"""Model strings: ``"prefix:model"`` → a provider, through the ``robota.providers`` entry points.

A package that ships a provider registers a factory under a prefix in its metadata::

    [project.entry-points."robota.providers"]
    openai = "robota.providers.openai:OpenAIProvider"

and ``Agent("openai:gpt-5-mini")`` with no ``provider=`` calls that factory and addresses
``gpt-5-mini``. The factory gets as keyword arguments only the options the caller gave —
``api_key=``, ``base_url=`` and any further ``options`` — so with none it is called with no
arguments and finds its own settings (its key by :func:`robota.host.find_api_key`'s order:
environment, then the stored credential). ``robota.Agent`` and the ``robota`` command both
resolve model strings here, so one string means the same provider in both.

Core reads the group and never names a vendor (S02): our own adapters (``openai``,
``anthropic``, ``gemini``, ``openai-compatible``) register exactly the way a third party's do. A
factory that cannot run because an optional dependency is missing raises a
:class:`~robota.ConfigurationError` that says what to install; it is passed on unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
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


def provider_for_model(
    spec: object,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    options: Mapping[str, object] | None = None,
) -> tuple[Provider, str]:
    """Build the provider a ``"prefix:model"`` string names; return it with the model name.

    The model name is everything after the first colon (``"openai-compatible:llama3:8b"``
    addresses ``llama3:8b``).

    Args:
        spec: The model string.
        api_key: Passed to the factory as ``api_key=`` when given (else the factory looks its
            key up itself: environment, then the stored credential).
        base_url: Passed to the factory as ``base_url=`` when given: the server's API root.
        options: Further keyword arguments for the factory (e.g. ``{"api": "chat"}`` for
            ``openai:``).

    Raises:
        ConfigurationError: for a string without a prefix or without a model after it, a
            prefix no installed package
            registered (the message lists those that are), a factory whose import fails, one
            that does not take an option given, one that does not return a
            :class:`~robota.Provider`, or any the factory raised (a missing key says where
            to put one).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigurationError(f"model must be a non-empty string, got {spec!r}")
    prefix, sep, model = spec.partition(":")
    known = _entry_points()
    if sep and prefix in known and not model.strip():
        raise ConfigurationError(
            f"model {spec!r} names no model after the prefix {prefix!r}: write '{prefix}:MODEL'"
        )
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
    arguments: dict[str, object] = dict(options or {})
    if api_key is not None:
        arguments["api_key"] = api_key
    if base_url is not None:
        arguments["base_url"] = base_url
    _check_arguments(factory, arguments, prefix=prefix, where=point.value)
    provider = factory(**arguments)
    if not isinstance(provider, Provider):
        raise ConfigurationError(
            f"the factory registered for prefix {prefix!r} ({point.value}) returned "
            f"{type(provider).__name__}, not a robota Provider"
        )
    return provider, model


def _listing(known: dict[str, EntryPoint]) -> str:
    return ", ".join(sorted(known)) or "none installed"


def _check_arguments(
    factory: object, arguments: Mapping[str, object], *, prefix: str, where: str
) -> None:
    """Refuse, before the call, an option the factory does not take.

    Checked against the signature because a ``TypeError`` from the call could come from anywhere
    inside the factory.
    """
    if not arguments or not callable(factory):
        return
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to read (a builtin): let the call decide
        return
    try:
        signature.bind(**arguments)
    except TypeError:
        names = ", ".join(f"{name}=" for name in sorted(arguments))
        raise ConfigurationError(
            f"the provider for prefix {prefix!r} ({where}) does not take {names}; build it "
            "yourself and pass provider=",
            context={"prefix": prefix, "options": tuple(sorted(arguments))},
        ) from None
