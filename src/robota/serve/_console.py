"""The local web console (issue 31, item 4): three static files and the routes that serve them.

``create_app(..., console=True)`` adds these routes to the app (``robota web`` does that):

* ``GET /`` — the console page (``web/index.html``);
* ``GET /console/console.js`` and ``GET /console/console.css`` — its script and style;
* ``GET /console/agents`` — ``{"agents": [name, ...], "journal": bool}``: the agents the
  page can pick, and whether the journal inspector is served;
* ``GET /favicon.ico`` — 204 (the console has no icon).

The files ship inside the wheel (package data under ``robota/serve/web``); there is no CDN and
no build step. Every response carries a strict Content-Security-Policy (``default-src
'self'``, no inline script or style), ``X-Content-Type-Options: nosniff`` and a frame ban, and
the script inserts everything a model or tool produced with ``textContent``, never as HTML.
The page talks to the app's own paths (the UI message stream of ``POST /agents/{name}/chat``,
the approvals and cancel endpoints, ``GET /agents/{name}/sessions``), so it serves a
loopback-only app: a browser does not send a bearer token.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["CONSOLE_HEADERS", "console_routes"]

CONSOLE_HEADERS: dict[str, str] = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}
"""The security headers of every console response."""

_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/console/console.js": ("console.js", "text/javascript; charset=utf-8"),
    "/console/console.css": ("console.css", "text/css; charset=utf-8"),
}


def _read(name: str) -> bytes:
    return resources.files("robota.serve").joinpath("web", name).read_bytes()


def console_routes(agent_names: Sequence[str], *, journal: bool = False) -> list[Route]:
    """The console's routes: its three files and the list of ``agent_names``.

    ``journal`` tells the page whether the app serves the journal inspector.
    """
    contents = {path: (_read(name), media) for path, (name, media) in _FILES.items()}
    names = list(agent_names)

    def static(path: str) -> Route:
        body, media = contents[path]

        async def endpoint(request: Request) -> Response:
            return Response(body, media_type=media, headers=CONSOLE_HEADERS)

        return Route(path, endpoint, methods=["GET"])

    async def agents(request: Request) -> Response:
        return JSONResponse({"agents": names, "journal": journal}, headers=CONSOLE_HEADERS)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204, headers=CONSOLE_HEADERS)  # no icon, and no 404 for it

    return [
        *(static(path) for path in contents),
        Route("/console/agents", agents, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]
