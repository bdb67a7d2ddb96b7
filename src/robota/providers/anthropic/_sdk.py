"""The lazy import of the official ``anthropic`` SDK.

``import robota`` and ``import robota.providers.anthropic`` never import the SDK; the adapter does
on construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

from types import ModuleType

from robota.core import ConfigurationError, install_command

__all__ = ["load_anthropic"]


def load_anthropic(what: str) -> ModuleType:
    """The ``anthropic`` module, or a :class:`~robota.ConfigurationError` naming the install.

    ``what`` names the adapter asking, for the message.
    """
    try:
        import anthropic  # noqa: PLC0415 - lazy: the SDK loads only when an adapter is built
    except ImportError as error:
        raise ConfigurationError(
            f"{what} needs the official anthropic SDK, which is not installed; run: "
            f"{install_command('anthropic')}",
            cause=error,
        ) from error
    return anthropic
