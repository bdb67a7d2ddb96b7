"""``robota.cli``: the ``robota`` command.

``robota run PROMPT --model PREFIX:MODEL`` runs one turn and streams it (``--json`` for one JSON
object); ``robota chat`` is an interactive session with history; ``robota auth`` stores API keys
in the OS keychain or an owner-only file; ``robota demo`` runs offline; ``robota serve --mcp
--agent MODULE:ATTR [--http HOST:PORT]`` serves an agent as an MCP server. ``robota --help`` has
the details. The package sits on top of the layers (it may import ``robota.providers`` and
``robota.host``); nothing imports it.
"""

from robota.cli._main import main

__all__ = ["main"]
