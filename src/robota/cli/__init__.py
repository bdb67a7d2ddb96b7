"""``robota.cli``: the ``robota`` command."""

from robota.cli._main import main

__all__ = ["main"]
