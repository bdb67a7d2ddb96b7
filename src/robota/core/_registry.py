"""A small thread-safe registry keyed by model name and owning provider.

Shared by the model metadata registry (S13) and the pricing table (S04) so both answer "which
entry serves this model?" by the same rule. A lookup that names a provider gets the entry that
provider registered, else the provider-neutral entry — never another provider's. A lookup that
names none gets the neutral entry, else the only entry there is; two different providers'
entries for one model name are then ambiguous and answer nothing.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar, final

from robota.core._errors import ConfigurationError

__all__ = ["ModelKeyedRegistry"]

T = TypeVar("T")


@final
class ModelKeyedRegistry(Generic[T]):
    """Entries of type ``T`` keyed by ``(model, provider)``; ``provider=None`` is neutral."""

    __slots__ = ("_entries", "_lock", "_what")

    def __init__(self, what: str) -> None:
        self._what = what
        self._entries: dict[str, dict[str | None, T]] = {}
        self._lock = threading.Lock()

    def register(self, model: str, provider: str | None, entry: T, *, replace: bool) -> T:
        """Add ``entry`` and return it.

        Re-registering an equal entry is a no-op; a different one needs ``replace=True``, since
        two owners disagreeing about one model is a bug to surface.
        """
        # Typed callers cannot get these wrong; untyped ones (config files) can.
        model_value: object = model
        provider_value: object = provider
        if not isinstance(model_value, str) or not model_value.strip():
            raise ConfigurationError(
                f"{self._what}: model must be a non-empty string, got {model!r}"
            )
        if provider_value is not None and (
            not isinstance(provider_value, str) or not provider_value.strip()
        ):
            raise ConfigurationError(
                f"{self._what}: provider must be a non-empty string or None, got {provider!r}"
            )
        with self._lock:
            by_provider = self._entries.setdefault(model, {})
            existing = by_provider.get(provider)
            if existing is not None and existing != entry and not replace:
                owner = f" for provider {provider!r}" if provider else ""
                raise ConfigurationError(
                    f"{self._what} for model {model!r}{owner} is already registered as "
                    f"{existing!r}; pass replace=True to overwrite it with {entry!r}"
                )
            by_provider[provider] = entry
        return entry

    def unregister(self, model: str, provider: str | None = None) -> bool:
        """Remove one entry; returns whether there was one."""
        with self._lock:
            by_provider = self._entries.get(model)
            if by_provider is None or provider not in by_provider:
                return False
            del by_provider[provider]
            if not by_provider:
                del self._entries[model]
            return True

    def get(self, model: str, provider: str | None = None) -> T | None:
        """The entry serving ``model`` (see the module docstring for the rule), or ``None``."""
        with self._lock:
            by_provider = self._entries.get(model)
            if not by_provider:
                return None
            if provider is not None:
                # A named provider is served by its own entry or a provider-neutral one, never
                # by another provider's: that would price or plan one vendor's model by another
                # vendor's numbers (a compatible server reusing a model name, S04/S30).
                return by_provider.get(provider, by_provider.get(None))
            if None in by_provider:
                return by_provider[None]
            if len(by_provider) == 1:
                return next(iter(by_provider.values()))
            return None
