"""An agent's fallback models and retry policy, as the constructor and runs take them (issue 28).

``Agent(model=..., fallback=[...], retry=RetryPolicy(...))``: each fallback entry is a model
string (resolved like ``model``: ``"provider:model"`` naming one of the agent's providers, else a
registered ``"prefix:model"`` that builds a provider the agent then owns), a provider instance
(addressed with the agent's own model name — the same model on another endpoint), or a
``(provider, "model")`` pair. The order is the try order (S30: the loop never picks a model of
its own).

One place owns retries: when a run has a policy, the providers the agent built from model strings
have their SDK's own retries turned off (:meth:`~robota.Provider.disable_sdk_retries`, the hook
robota.temporal calls when Temporal owns retries). A provider instance the caller passed keeps
whatever its builder chose; build it with ``max_retries=0`` to leave retries to the policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeAlias

from robota.core._errors import ConfigurationError
from robota.core._retry import RetryPolicy
from robota.core.execution._retry import ModelCandidate
from robota.core.providers._contract import Provider
from robota.core.providers._resolve import provider_for_model, registered_provider_prefixes

__all__ = ["FallbackEntry", "check_retry", "disable_sdk_retries", "resolve_fallback"]

FallbackEntry: TypeAlias = str | Provider | tuple[Provider, str]
"""A model string, a provider instance (same model name), or a ``(provider, model)`` pair."""


def check_retry(value: object, where: str) -> RetryPolicy | None:
    """``value`` as a retry policy (``None``: no retry)."""
    if value is None or isinstance(value, RetryPolicy):
        return value
    raise ConfigurationError(
        f"{where} must be a robota.RetryPolicy (e.g. RetryPolicy(attempts=3)) or None, got "
        f"{type(value).__name__}"
    )


def resolve_fallback(
    entries: object,
    *,
    model: str,
    providers: Sequence[Provider],
    resolve: Callable[[str], tuple[Provider, str]],
    window: Callable[[str, str], int | None],
) -> tuple[tuple[ModelCandidate, ...], tuple[Provider, ...]]:
    """The fallback chain (after the agent's own model) and the providers built for it.

    Args:
        entries: What the caller passed as ``fallback=``.
        model: The agent's own model name (a bare provider entry addresses it).
        providers: The agent's providers (a ``"name:model"`` entry naming one reuses it).
        resolve: The agent's own model-string resolution.
        window: The caller's context window for a provider and model, if one was given.

    Raises:
        ConfigurationError: for an entry of the wrong type, or a string nothing resolves.
    """
    if isinstance(entries, (str, Provider)) or not isinstance(entries, Iterable):
        raise ConfigurationError(
            "fallback must be a list of models (fallback=['anthropic:claude-sonnet-4-5', ...]), "
            f"got {type(entries).__name__}"
        )
    known = {p.name: p for p in providers}
    built: list[Provider] = []
    chain: list[ModelCandidate] = []
    for entry in entries:
        provider: Provider
        name: str
        if isinstance(entry, Provider):
            provider, name = entry, model
        elif (
            isinstance(entry, tuple)
            and len(entry) == 2
            and isinstance(entry[0], Provider)
            and isinstance(entry[1], str)
            and entry[1].strip()
        ):
            provider, name = entry
        elif isinstance(entry, str) and entry.strip():
            prefix, sep, rest = entry.partition(":")
            if sep and rest and prefix in known:
                provider, name = known[prefix], rest
            elif sep and rest and prefix in registered_provider_prefixes():
                provider, name = provider_for_model(entry)
                known[provider.name] = provider
                built.append(provider)
            else:
                provider, name = resolve(entry)
        else:
            raise ConfigurationError(
                "each fallback entry is a model string, a robota.Provider or a (provider, "
                f"'model') pair; got {entry!r}"
            )
        chain.append(ModelCandidate(provider, name, window(provider.name, name)))
    return tuple(chain), tuple(built)


def disable_sdk_retries(providers: Iterable[Provider]) -> None:
    """One owner of retries (issue 28): turn the SDK retries of ``providers`` off.

    The rule robota.temporal follows for every provider of a worker's agent (Temporal retries
    activities) and an agent follows for the providers it built once a run has a policy.
    """
    for provider in providers:
        provider.disable_sdk_retries()
