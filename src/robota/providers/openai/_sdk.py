"""The lazy import of the official ``openai`` SDK.

``import robota`` and ``import robota.providers.openai`` never import the SDK; an adapter does on
construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

from types import ModuleType

from robota.core import ConfigurationError, install_command

__all__ = ["load_openai"]


def load_openai(what: str) -> ModuleType:
    """The ``openai`` module, or a :class:`~robota.ConfigurationError` naming the install command.

    ``what`` names the adapter asking, for the message.
    """
    try:
        import openai  # noqa: PLC0415 - lazy: the SDK loads only when an adapter is built
    except ImportError as error:
        raise ConfigurationError(
            f"{what} needs the official openai SDK, which is not installed; run: "
            f"{install_command('openai')}",
            cause=error,
        ) from error
    return openai
