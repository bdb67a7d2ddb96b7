"""``$ENV:NAME`` references and the resolver port (S02).

Configuration may name a secret indirectly — ``api_key="$ENV:OPENAI_API_KEY"`` — so the value
never sits in a settings file. Core has **no host default**: such a reference resolves only
through an :class:`EnvResolver` the caller passes. ``robota.host.ProcessEnvResolver`` reads the
process environment; :class:`MappingEnvResolver` serves fixed values (tests, secrets fetched by
the host from elsewhere). Without a resolver, a reference is a configuration error rather than a
silent read of ``os.environ``.

Error messages name the variable, never its value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Protocol, final, runtime_checkable

from robota.core._errors import ConfigurationError

__all__ = [
    "ENV_REFERENCE_PREFIX",
    "EnvResolver",
    "MappingEnvResolver",
    "is_env_reference",
    "resolve_env_reference",
]

ENV_REFERENCE_PREFIX: Final = "$ENV:"
"""The prefix that marks a configuration string as a reference to an environment variable."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@runtime_checkable
class EnvResolver(Protocol):
    """The port through which ``$ENV:NAME`` references are resolved (S02)."""

    def get(self, name: str) -> str | None:
        """The value of variable ``name``, or ``None`` when it is not set."""
        ...


@final
class MappingEnvResolver:
    """An :class:`EnvResolver` over a fixed mapping (copied at construction)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def get(self, name: str) -> str | None:
        """The mapped value of ``name``, or ``None``."""
        return self._values.get(name)

    def __repr__(self) -> str:
        # Names only: values are typically secrets.
        return f"MappingEnvResolver(names={sorted(self._values)!r})"


def is_env_reference(value: str) -> bool:
    """Whether ``value`` is an ``$ENV:NAME`` reference."""
    return value.startswith(ENV_REFERENCE_PREFIX)


def resolve_env_reference(value: str, resolver: EnvResolver | None) -> str:
    """Resolve ``value`` if it is an ``$ENV:NAME`` reference; return any other string unchanged.

    Raises:
        ConfigurationError: when ``value`` is a reference and no resolver was passed, the name is
            not a valid variable name, or the variable is not set (or empty).
    """
    if not is_env_reference(value):
        return value
    name = value[len(ENV_REFERENCE_PREFIX) :].strip()
    if not _NAME.match(name):
        raise ConfigurationError(
            f"{value!r} is not a valid environment reference: write $ENV: followed by a variable "
            "name made of letters, digits and underscores"
        )
    if resolver is None:
        raise ConfigurationError(
            f"{ENV_REFERENCE_PREFIX}{name} needs an environment resolver, and none was passed: "
            "robota.core has no default. Pass env=robota.host.ProcessEnvResolver() to read the "
            "process environment, or a MappingEnvResolver with explicit values."
        )
    resolved = resolver.get(name)
    if not resolved:
        raise ConfigurationError(f"environment variable {name} is not set (or is empty)")
    return resolved
