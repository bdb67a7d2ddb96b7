"""The model metadata registry and the context window a run plans against (S04, S13, S30, S39).

The one place that answers "how big is this model's context window?".

Core carries no vendor table (S02). Each provider package registers the models it owns with
:func:`register_model_metadata`; this registry is the only aggregation point. A model nobody
registered is a model nobody owns, and its window is *unknown*: no vendor's number is borrowed
for it (S13, and S30: silence is reported as unknown, never coerced into a value).
:func:`get_model_context_window` then says so — one warning per model through the diagnostic sink
(S14) — and returns ``None``.

A run asks :func:`resolve_context_window`, which takes, in order: the window the caller passed
(``Agent(context_window=...)``), what the server reports (:meth:`Provider.reported_context_window`,
e.g. an OpenAI-compatible server's ``/v1/models`` or llama.cpp's ``/props``), the registered
table; else the window is unknown — the pre-send guard (S39) then has no size to check, and the
run records that (``RunResult.context_window``, the ``execution.context_window_unknown`` event).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core._logging import get_logger
from robota.core._registry import ModelKeyedRegistry

if TYPE_CHECKING:
    from robota.core.providers._contract import Provider

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ContextWindow",
    "ContextWindowSource",
    "ModelMetadata",
    "check_context_window",
    "get_model_context_window",
    "get_model_metadata",
    "register_model_metadata",
    "resolve_context_window",
    "unregister_model_metadata",
]

ContextWindowSource: TypeAlias = Literal["caller", "server", "registry", "unknown"]
"""Where a run's context window came from (see :class:`ContextWindow`)."""

DEFAULT_CONTEXT_WINDOW: Final = 200_000
"""One vendor's context window (Claude's), kept as a named number for callers that want it.

It is never assumed: a model nobody registered has an *unknown* window (S13, S30). Pass it
yourself where you know it applies: ``Agent(model, context_window=DEFAULT_CONTEXT_WINDOW)``."""

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


def get_model_context_window(model: str, *, provider: str | None = None) -> int | None:
    """The registered context window of ``model``, or ``None`` when nobody registered it.

    For a model nobody registered, logs one warning per model name through the diagnostic sink
    (S13, S14): its window is unknown, and no default is assumed.
    """
    entry = _metadata.get(model, provider)
    if entry is not None:
        return entry.context_window
    with _warned_lock:
        first = model not in _warned
        _warned.add(model)
    if first:
        _log.warning(
            "model has no registered metadata; its context window is unknown (pass "
            "Agent(context_window=N) or register it with robota.register_model_metadata)",
            model=model,
        )
    return None


@final
@dataclass(frozen=True, slots=True)
class ContextWindow:
    """The context window a run planned against, and where it came from (S13, S39).

    Attributes:
        tokens: The window in tokens; ``None`` when it is unknown.
        source: ``"caller"`` (``Agent(context_window=...)``), ``"server"`` (what the provider's
            server reported), ``"registry"`` (the registered model table) or ``"unknown"`` —
            then the pre-send guard has no size to check against, and nothing is assumed.
    """

    tokens: int | None
    source: ContextWindowSource

    @property
    def known(self) -> bool:
        """Whether the window is known (``tokens`` is not ``None``)."""
        return self.tokens is not None


def check_context_window(value: object, where: str = "context_window") -> int | None:
    """``value`` as a window: a positive integer, or ``None`` (not given).

    Raises:
        ConfigurationError: for anything else; the message names the expected value.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigurationError(
            f"{where} must be a positive number of tokens (e.g. {where}=8192) or None, got "
            f"{value!r}"
        )
    return value


@functools.lru_cache(maxsize=128)
def _window(tokens: int | None, source: ContextWindowSource) -> ContextWindow:
    # Immutable and the same for every run on one model: one shared value, not one per
    # RunResult a caller keeps.
    return ContextWindow(tokens, source)


async def resolve_context_window(
    provider: Provider, model: str, *, given: int | None = None
) -> ContextWindow:
    """The window a run on ``provider``/``model`` plans against (S13, S39).

    In order: ``given`` (the caller's), what the provider's server reports
    (:meth:`~robota.Provider.reported_context_window`; a provider that raises is treated as
    reporting nothing), the registered table; else unknown. Never raises for a missing answer.
    """
    if given is not None:
        return _window(given, "caller")
    try:
        reported = await provider.reported_context_window(model)
    except asyncio.CancelledError:
        raise
    except Exception as error:  # noqa: BLE001 - a report is optional; the run goes on without it
        _log.warning(
            "the provider failed to report a context window; ignoring it",
            provider=provider.name,
            model=model,
            error=f"{type(error).__name__}: {error}",
        )
        reported = None
    if isinstance(reported, int) and not isinstance(reported, bool) and reported > 0:
        return _window(reported, "server")
    registered = get_model_context_window(model, provider=provider.name)
    if registered is not None:
        return _window(registered, "registry")
    return _window(None, "unknown")
