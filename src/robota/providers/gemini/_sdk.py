"""The lazy import of the official ``google-genai`` SDK.

``import robota`` and ``import robota.providers.gemini`` never import the SDK; the adapter does
on construction, so a missing extra fails there with the exact install command.
"""

from __future__ import annotations

from types import ModuleType

from robota.providers._kit import load_sdk

__all__ = ["load_genai"]


def load_genai(what: str) -> ModuleType:
    """The ``google.genai`` module, or a :class:`~robota.ConfigurationError` naming the install.

    ``what`` names the adapter asking, for the message.
    """
    return load_sdk("google.genai", what=what, sdk="google-genai", extra="gemini")
