"""``robota serve --mcp``: serve one agent as an MCP server (issue 31), over stdio or HTTP."""

from __future__ import annotations

import asyncio
import importlib
import os
import socket
import sys
from typing import Final

import robota
from robota.cli._errors import CliError, one_line
from robota.core import install_command

__all__ = ["load_agent", "load_attribute", "serve_mcp_command"]

TOKEN_VARIABLE: Final = "ROBOTA_SERVE_TOKEN"  # noqa: S105 - the variable's name
_LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})


def load_agent(spec: str) -> robota.Agent:
    """The agent ``module:attr`` names: an :class:`~robota.Agent`, or a callable returning one.

    Raises:
        CliError: for a malformed spec, a module that fails to import, a missing attribute or
            a value that is not an agent (nor makes one).
    """
    value = load_attribute(spec)
    if not isinstance(value, robota.Agent) and callable(value):
        value = value()
    if not isinstance(value, robota.Agent):
        raise CliError(
            f"--agent: {spec} must be a robota.Agent or a callable returning one, got "
            f"{type(value).__name__}"
        )
    return value


def load_attribute(spec: str) -> object:
    """The object ``module:attr`` names (the current directory is importable).

    Raises:
        CliError: for a malformed spec, a module that fails to import or a missing attribute.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise CliError(f"--agent must be module:attr (e.g. myapp.agents:agent), got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's module's
        raise CliError(
            one_line(f"--agent: cannot import {module_name!r}: {type(exc).__name__}: {exc}")
        ) from None
    value: object = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise CliError(f"--agent: {module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise CliError(f"--http must be HOST:PORT (e.g. 127.0.0.1:8000), got {text!r}")
    return host, int(port)


def serve_mcp_command(agent_spec: str, *, http: str | None, expose_tools: bool) -> int:
    """Serve the agent until stdin closes (stdio) or until Ctrl-C / SIGTERM (``--http``)."""
    from robota.serve import mcp_server  # noqa: PLC0415 - the serve layer, loaded on use

    server = mcp_server(load_agent(agent_spec), expose_tools=expose_tools)
    if http is None:
        asyncio.run(server.run_stdio())
        return 0
    host, port = _address(http)
    token = os.environ.get(TOKEN_VARIABLE) or None
    if host.lower() not in _LOOPBACK and token is None:
        raise CliError(
            f"serving on {host!r} (not loopback) needs a bearer token: set {TOKEN_VARIABLE}"
        )
    try:
        import uvicorn  # noqa: PLC0415 - the `serve` extra
    except ImportError:
        raise CliError(
            f"--http needs uvicorn (the serve extra): {install_command('serve')}"
        ) from None

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise CliError(f"--http {http}: cannot listen there: {exc.strerror}") from None
    listener.listen(128)
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    allowed = () if host.lower() in _LOOPBACK else (f"{shown}:{bound}",)
    app = server.http_app(token=token, allowed_hosts=allowed)
    sys.stderr.write(f"serving the agent over MCP at http://{shown}:{bound}/mcp\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()
    return 0


def web_command(agent_spec: str, *, port: int) -> int:
    """``robota web``: serve the web console for one agent on 127.0.0.1 until Ctrl-C."""
    if not 0 <= port <= 65535:
        raise CliError(f"--port must be 0 to 65535, got {port}")
    value = load_attribute(agent_spec)
    if isinstance(value, robota.Agent):
        agent = value
        factory: object = lambda: agent  # noqa: E731 - one agent shared by every session
    elif callable(value):
        factory = value
    else:
        raise CliError(
            f"--agent: {agent_spec} must be a robota.Agent or a callable returning one, got "
            f"{type(value).__name__}"
        )
    try:
        import uvicorn  # noqa: PLC0415 - the `serve` extra

        from robota.serve import create_app  # noqa: PLC0415
    except ImportError:
        raise CliError(f"robota web needs the serve extra: {install_command('serve')}") from None
    name = agent_spec.rpartition(":")[2].rpartition(".")[2] or "agent"
    app = create_app({name: factory}, console=True)  # type: ignore[dict-item]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))  # loopback only: the console has no token
    except OSError as exc:
        listener.close()
        raise CliError(f"--port {port}: cannot listen there: {exc.strerror}") from None
    listener.listen(128)
    bound = listener.getsockname()[1]
    sys.stderr.write(f"the Robota web console is at http://127.0.0.1:{bound}/\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()
    return 0
