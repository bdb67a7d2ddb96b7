"""The model metadata registry (S04, S13).

The one place that answers "how big is this model's context window?".

Core carries no vendor table (S02). Each provider package registers the models it owns with
:func:`register_model_metadata`; this registry is the only aggregation point. A model nobody
registered is a model nobody owns: :func:`get_model_context_window` then says so — one warning per
model through the diagnostic sink (S14) — before falling back to :data:`DEFAULT_CONTEXT_WINDOW`,
so nothing is planned against a borrowed number silently.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Final, final

from robota.core._errors import ConfigurationError
from robota.core._logging import get_logger
from robota.core._registry import ModelKeyedRegistry

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ModelMetadata",
    "get_model_context_window",
    "get_model_metadata",
    "register_model_metadata",
    "unregister_model_metadata",
]

DEFAULT_CONTEXT_WINDOW: Final = 200_000
"""The fallback context window for an unregistered model (S13). It is one vendor's number, which
is why using it always comes with a warning."""

_log = get_logger("robota.models")


@final
@dataclass(frozen=True, slots=True)
class ModelMetadata:
    """What a provider package states about one of its models.

    Attributes:
        model: The model name as requests carry it.
        context_window: Total tokens the model accepts (prompt plus output).
        max_output_tokens: The most tokens one response may contain, when stated.
        provider: The registering provider's opaque name; ``None`` for a provider-neutral entry.
    """

    model: str
    context_window: int
    max_output_tokens: int | None = None
    provider: str | None = None


_metadata: ModelKeyedRegistry[ModelMetadata] = ModelKeyedRegistry("model metadata")
_warned: set[str] = set()
_warned_lock = threading.Lock()


def _positive_int(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")


def register_model_metadata(
    model: str,
    *,
    context_window: int,
    max_output_tokens: int | None = None,
    provider: str | None = None,
    replace: bool = False,
) -> ModelMetadata:
    """Register a model's context window and output limit; returns the stored entry.

    Provider packages call this for the models they own. Registering the same values twice is
    harmless; different values for an already registered ``(model, provider)`` raise
    :class:`~robota.ConfigurationError` unless ``replace=True``.

    Raises:
        ConfigurationError: for an empty model name or a non-positive limit.
    """
    _positive_int("context_window", context_window, optional=False)
    _positive_int("max_output_tokens", max_output_tokens, optional=True)
    entry = ModelMetadata(model, context_window, max_output_tokens, provider)
    return _metadata.register(model, provider, entry, replace=replace)


def unregister_model_metadata(model: str, *, provider: str | None = None) -> bool:
    """Remove a registration (for a provider package being unloaded, or tests)."""
    return _metadata.unregister(model, provider)


def get_model_metadata(model: str, *, provider: str | None = None) -> ModelMetadata | None:
    """The registered metadata for ``model`` (preferring ``provider``'s entry), or ``None``."""
    return _metadata.get(model, provider)


def get_model_context_window(model: str, *, provider: str | None = None) -> int:
    """The context window of ``model``.

    For a model nobody registered, logs one warning per model name through the diagnostic sink
    and returns :data:`DEFAULT_CONTEXT_WINDOW`.
    """
    entry = _metadata.get(model, provider)
    if entry is not None:
        return entry.context_window
    with _warned_lock:
        first = model not in _warned
        _warned.add(model)
    if first:
        _log.warning(
            "model has no registered metadata; planning against the default context window",
            model=model,
            default_context_window=DEFAULT_CONTEXT_WINDOW,
        )
    return DEFAULT_CONTEXT_WINDOW
