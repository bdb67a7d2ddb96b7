"""The distribution version; the one place it is written (read by hatchling and by robota)."""

__version__ = "0.1.0.dev0"
