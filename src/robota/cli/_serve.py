"""``robota serve``: agents over HTTP (AG-UI, the UI message stream), or one as an MCP server.

``robota serve --agent NAME=MODULE:ATTR ...`` serves :func:`robota.serve.create_app` with
:func:`robota.serve.serve`; ``robota serve --mcp --agent MODULE:ATTR`` serves one agent as an
MCP server over stdio or streamable HTTP (issue 31).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ipaddress
import os
import re
import socket
import sys
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Final, cast

import robota
from robota.cli._errors import CliError, one_line
from robota.core import install_command

__all__ = ["load_agent", "load_attribute", "serve_http_command", "serve_mcp_command", "web_command"]

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


def _factory(name: str, spec: str) -> Callable[..., robota.Agent]:
    """The session factory ``--agent NAME=spec`` names.

    The callable itself, so an ``approver`` parameter still reaches it; an Agent object
    serves one session only.
    """
    value = load_attribute(spec)
    if isinstance(value, robota.Agent):
        agent = value
        given: list[robota.Agent] = []

        def once() -> robota.Agent:
            # One Agent object holds one conversation: sessions must not share it.
            if given:
                raise robota.ConfigurationError(
                    f"agent {name!r} is one Agent object and serves one session; name a "
                    "factory to serve more"
                )
            given.append(agent)
            return agent

        return once
    if not callable(value):
        raise CliError(
            f"--agent: {spec} must be a robota.Agent or a callable returning one, got "
            f"{type(value).__name__}"
        )
    return cast("Callable[..., robota.Agent]", value)


def _agents(specs: Sequence[str]) -> dict[str, Callable[..., robota.Agent]]:
    agents: dict[str, Callable[..., robota.Agent]] = {}
    for spec in specs:
        name, sep, target = spec.partition("=")
        if not sep or not name or "/" in name or not target:
            raise CliError(
                f"--agent must be NAME=MODULE:ATTR (e.g. helper=myapp.agents:make), got {spec!r}"
            )
        if name in agents:
            raise CliError(f"--agent: the name {name!r} is given twice")
        agents[name] = _factory(name, target)
    return agents


def serve_http_command(
    agent_specs: Sequence[str],
    *,
    host: str,
    port: int,
    sessions_db: str | None,
    cors_origins: Sequence[str],
) -> int:
    """Serve ``create_app`` for the agents named until Ctrl-C / SIGTERM."""
    try:
        from robota.serve import create_app, serve  # noqa: PLC0415 - the serve extra
    except ImportError:
        raise CliError(f"robota serve needs the serve extra: {install_command('serve')}") from None
    if not 0 <= port <= 65535:
        raise CliError(f"--port must be 0 to 65535, got {port}")
    agents = _agents(agent_specs)
    origins = [_origin(origin) for origin in cors_origins]
    token = os.environ.get(TOKEN_VARIABLE) or None
    if token is None and not _loopback(host):
        # serve() refuses too; saying it here names the variable and binds nothing.
        raise CliError(
            f"serving on {host!r} (not loopback) needs a bearer token: set {TOKEN_VARIABLE}"
        )
    store = None
    if sessions_db is not None:
        from robota.cli._sessions import open_store  # noqa: PLC0415

        store, _ = open_store(sessions_db)
    try:
        app = create_app(agents, sessions=store, token=token, cors_origins=origins)
        listener = _listen(host, port, "--host/--port")
        try:
            shown = f"[{host}]" if listener.family == socket.AF_INET6 else host
            url = f"http://{shown}:{listener.getsockname()[1]}"
            sys.stderr.write(f"serving agents over HTTP at {url} ({', '.join(agents)})\n")
            sys.stderr.flush()
            serve(app, host=host, port=port, token=token, sockets=[listener], log_level="warning")
        finally:
            listener.close()
    except robota.ConfigurationError as exc:
        raise CliError(one_line(exc.message)) from None
    finally:
        if store is not None:
            asyncio.run(store.aclose())
    return 0


def _loopback(host: str) -> bool:
    from robota.serve import is_loopback_host  # noqa: PLC0415 - the serve extra, checked first

    return is_loopback_host(host)


def _origin(text: str) -> str:
    # An origin is scheme://host[:port]; '*' would open the API to every page a user visits.
    parsed = urllib.parse.urlsplit(text)
    if parsed.scheme not in {"http", "https"} or not parsed.netloc or parsed.path not in {"", "/"}:
        raise CliError(
            f"--cors-origin must be an origin like https://app.example.com, got {text[:80]!r}"
        )
    return f"{parsed.scheme}://{parsed.netloc}"


def _listen(host: str, port: int, flag: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host.strip("[]"), port))
    except OSError as exc:
        listener.close()
        raise CliError(f"{flag} {host}:{port}: cannot listen there: {exc.strerror}") from None
    listener.listen(128)
    return listener


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise CliError(f"--http must be HOST:PORT (e.g. 127.0.0.1:8000), got {text!r}")
    return host, int(port)


_WILDCARD_BINDS: Final = frozenset({"0.0.0.0", "::"})  # noqa: S104 - names, not a bind
# A name, an IPv4 address or a bracketed IPv6 one, with an optional :PORT; or a bare IPv6 one.
_PUBLIC_HOST: Final = re.compile(
    r"(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*"
)


def _wildcard(host: str) -> bool:
    """Whether binding ``host`` listens on every interface (``0.0.0.0``, ``::``, ``0::0``...)."""
    if host in _WILDCARD_BINDS:
        return True
    try:
        # All zeros, however spelt (S06: no version-dependent classification flag is read).
        return int(ipaddress.ip_address(host)) == 0
    except ValueError:
        return False


def _host_entries(name: str, port: int) -> list[str]:
    """The SDK allow-list entries (``host:port`` forms) of one name clients reach us by."""
    if (name.startswith("[") and "]:" in name) or name.count(":") == 1:
        return [name]  # HOST:PORT as given
    shown = f"[{name}]" if ":" in name and not name.startswith("[") else name
    # With the port (what a client sends for a non-default port) and without (port 80).
    return [f"{shown}:{port}", shown]


def _machine_names() -> list[str]:
    """This machine's host names and the addresses they resolve to (best effort)."""
    names = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None):
            names.add(str(info[4][0]))
    return sorted(n for n in names if n and not _loopback(n))


def _allowed_hosts(host: str, port: int, public_hosts: Sequence[str]) -> list[str]:
    """The ``Host`` values a non-loopback MCP bind admits (the SDK's DNS-rebinding list).

    The bound address itself, or — for a wildcard bind (``0.0.0.0``, ``::``), which has no
    address of its own — the machine's names and the addresses they resolve to; and every
    ``--public-host`` (the names clients use: a DNS name, a LAN address, a proxy's host).
    """
    names = [*public_hosts]
    names += _machine_names() if _wildcard(host) else [host]
    return list(dict.fromkeys(e for name in names for e in _host_entries(name, port)))


def serve_mcp_command(
    agent_spec: str, *, http: str | None, expose_tools: bool, public_hosts: Sequence[str] = ()
) -> int:
    """Serve the agent until stdin closes (stdio) or until Ctrl-C / SIGTERM (``--http``)."""
    from robota.serve import mcp_server  # noqa: PLC0415 - the serve layer, loaded on use

    if public_hosts and http is None:
        raise CliError("--public-host goes with --http HOST:PORT (the names HTTP clients use)")
    for name in public_hosts:
        if not _PUBLIC_HOST.fullmatch(name):
            raise CliError(
                f"--public-host must be a host name or address (with an optional :PORT), "
                f"got {name[:80]!r}"
            )
    server = mcp_server(load_agent(agent_spec), expose_tools=expose_tools)
    if http is None:
        asyncio.run(server.run_stdio())
        return 0
    host, port = _address(http)
    token = os.environ.get(TOKEN_VARIABLE) or None
    loopback = host.lower() in _LOOPBACK
    if not loopback and token is None:
        raise CliError(
            f"serving on {host!r} (not loopback) needs a bearer token: set {TOKEN_VARIABLE}"
        )
    if loopback and public_hosts:
        # A loopback bind answers loopback names only (DNS rebinding), with no token to guard it.
        raise CliError("--public-host is for a non-loopback --http bind (with a token)")
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
    # Loopback keeps the SDK's strict list (loopback names); a token-protected bind beyond it
    # also admits the host it is bound to or told to serve as.
    allowed = () if loopback else _allowed_hosts(host, bound, public_hosts)
    app = server.http_app(token=token, allowed_hosts=allowed)
    sys.stderr.write(f"serving the agent over MCP at http://{shown}:{bound}/mcp\n")
    if _wildcard(host):
        sys.stderr.write(
            f"admitting the Host names {', '.join(allowed)}; add others with --public-host\n"
        )
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
    name = agent_spec.rpartition(":")[2].rpartition(".")[2] or "agent"
    # An Agent object serves one session (never shared: its history is one conversation).
    factory = _factory(name, agent_spec)
    try:
        import uvicorn  # noqa: PLC0415 - the `serve` extra

        from robota.serve import create_app  # noqa: PLC0415
    except ImportError:
        raise CliError(f"robota web needs the serve extra: {install_command('serve')}") from None
    app = create_app({name: factory}, console=True)
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
