"""The lazy import of the official ``openai`` SDK.

``import robota`` and ``import robota.providers.openai`` never import the SDK; an adapter does on
construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

from types import ModuleType

from robota.providers._kit import load_sdk

__all__ = ["load_openai"]


def load_openai(what: str) -> ModuleType:
    """The ``openai`` module, or a :class:`~robota.ConfigurationError` naming the install.

    ``what`` names the adapter asking, for the message.
    """
    return load_sdk("openai", what=what, sdk="openai", extra="openai")
