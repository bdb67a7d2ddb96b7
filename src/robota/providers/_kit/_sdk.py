"""The lazy import of a vendor's official SDK, one rule for every adapter.

``import robota`` and ``import robota.providers.<vendor>`` never import the SDK; the adapter does
on construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from robota.core import ConfigurationError, install_command

__all__ = ["load_sdk"]


def load_sdk(module: str, *, what: str, sdk: str, extra: str) -> ModuleType:
    """The SDK ``module``, or a :class:`~robota.ConfigurationError` naming the install command.

    Args:
        module: The module to import (``"anthropic"``, ``"google.genai"``).
        what: The adapter asking, for the message.
        sdk: The SDK's distribution name, for the message (``"google-genai"``).
        extra: The robota extra that installs it (``"gemini"``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ConfigurationError(
            f"{what} needs the official {sdk} SDK, which is not installed; run: "
            f"{install_command(extra)}",
            cause=error,
        ) from error
