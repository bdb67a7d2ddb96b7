"""The lazy import of the official ``google-genai`` SDK.

``import robota`` and ``import robota.providers.gemini`` never import the SDK; the adapter does
on construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

from types import ModuleType

from robota.core import ConfigurationError, install_command

__all__ = ["load_genai"]


def load_genai(what: str) -> ModuleType:
    """The ``google.genai`` module, or a :class:`~robota.ConfigurationError` naming the install.

    ``what`` names the adapter asking, for the message.
    """
    try:
        from google import genai  # noqa: PLC0415 - lazy: the SDK loads only when built
    except ImportError as error:
        raise ConfigurationError(
            f"{what} needs the official google-genai SDK, which is not installed; run: "
            f"{install_command('gemini')}",
            cause=error,
        ) from error
    return genai
