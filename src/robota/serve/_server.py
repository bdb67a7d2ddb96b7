"""``serve``: run an app made by :func:`~robota.serve.create_app` with uvicorn, safely bound.

Binds ``127.0.0.1`` by default. Any other host (``0.0.0.0``, a LAN address, ``::``) serves
other machines, so it requires a bearer token — given here or to ``create_app(token=)`` — and
refuses to start without one (:class:`~robota.ConfigurationError`, before any socket opens).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette

from robota import ConfigurationError
from robota.serve._app import MIN_TOKEN_LENGTH
from robota.serve._guard import ServeConfig, is_loopback_host

__all__ = ["check_bind", "is_loopback_host", "serve"]


def _config(app: object) -> ServeConfig:
    state = getattr(app, "state", None)
    config = getattr(state, "robota_serve", None)
    if not isinstance(app, Starlette) or not isinstance(config, ServeConfig):
        raise ConfigurationError(
            f"serve() runs an app made by robota.serve.create_app() or a2a_app(), got {app!r}"
        )
    return config


def check_bind(app: Starlette, host: str, token: str | None = None) -> None:
    """Apply :func:`serve`'s rules without serving: set ``token`` on ``app``, check ``host``.

    Raises:
        ConfigurationError: see :func:`serve`.
    """
    config = _config(app)
    if token is not None:
        if len(token) < MIN_TOKEN_LENGTH:
            raise ConfigurationError(
                f"serve(token=) needs at least {MIN_TOKEN_LENGTH} characters; use "
                "secrets.token_urlsafe()"
            )
        if config.token is not None and config.token != token:
            raise ConfigurationError(
                "serve(token=) differs from the app's create_app(token=); give one of them"
            )
        config.token = token
    if not is_loopback_host(host) and config.token is None:
        raise ConfigurationError(
            f"refusing to serve on {host!r} without a token: a bind beyond loopback needs "
            "serve(app, host=..., token=secrets.token_urlsafe()) (or create_app(token=...)); "
            "clients then send 'Authorization: Bearer <token>'"
        )


def serve(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    sockets: Sequence[socket.socket] = (),
    **uvicorn_options: Any,
) -> None:
    """Serve ``app`` with uvicorn until interrupted (blocking).

    Args:
        app: An app made by :func:`~robota.serve.create_app`.
        host: The address to bind; ``127.0.0.1`` by default. Anything but loopback needs a token.
        port: The port (``0`` picks a free one).
        token: The bearer token every request must carry (at least 16 characters); set on the
            app. Must match ``create_app(token=)`` when both are given.
        sockets: Listening sockets the caller bound to ``host`` (e.g. at port ``0``, to read
            the port chosen) served instead of binding ``host:port``.
        **uvicorn_options: Passed to ``uvicorn.Config`` (``log_level``, ``ssl_certfile`` …).

    Raises:
        ConfigurationError: a non-loopback ``host`` with no token, a short or conflicting
            token, or an app not made by ``create_app`` — before anything is bound.
    """
    check_bind(app, host, token)
    import uvicorn  # noqa: PLC0415 - only the command that serves needs the server

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, **uvicorn_options))
    server.run(sockets=list(sockets) or None)
