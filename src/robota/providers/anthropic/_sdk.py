"""The lazy import of the official ``anthropic`` SDK.

``import robota`` and ``import robota.providers.anthropic`` never import the SDK; the adapter does
on construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

from types import ModuleType

from robota.providers._kit import load_sdk

__all__ = ["load_anthropic"]


def load_anthropic(what: str) -> ModuleType:
    """The ``anthropic`` module, or a :class:`~robota.ConfigurationError` naming the install.

    ``what`` names the adapter asking, for the message.
    """
    return load_sdk("anthropic", what=what, sdk="anthropic", extra="anthropic")
