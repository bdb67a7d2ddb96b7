"""Shared helpers for the Gemini adapter's replay tests.

Every test drives the real ``google-genai`` SDK against :class:`~providers.replay.ReplayServer`
(``HttpOptions(base_url=...)``, no ``retry_options``: one attempt per call).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from providers.replay import Exchange, ReplayServer, cassette_path, load_cassette
from robota.providers.gemini import GeminiProvider

__all__ = ["VENDOR", "body", "gemini", "recorded", "same_signature", "serve"]

VENDOR = "gemini"


def recorded(name: str) -> list[Exchange]:
    """The exchanges of one Gemini recording."""
    return load_cassette(cassette_path(VENDOR, name))


def serve(name: str, *, only: slice | None = None) -> ReplayServer:
    """A replay server answering with a recording (or a slice of its exchanges)."""
    exchanges = recorded(name)
    return ReplayServer(exchanges[only] if only is not None else exchanges)


def gemini(server: ReplayServer, **options: Any) -> GeminiProvider:
    """``GeminiProvider`` pointed at ``server``; it streams only when the answers are streams."""
    if server.exchanges:
        options.setdefault("streaming", server.exchanges[0].mode == "sse")
    options.setdefault("http_options", {"base_url": server.base_url + "/"})
    return GeminiProvider(api_key="test", **options)


def body(exchange: Exchange) -> dict[str, Any]:
    """A JSON exchange's body, parsed."""
    parsed: dict[str, Any] = json.loads(exchange.body)
    return parsed


def same_signature(sent: str, received: str) -> bool:
    """Whether two base64 texts (URL-safe or standard alphabet) carry the same bytes (S26)."""
    return base64.urlsafe_b64decode(sent.replace("+", "-").replace("/", "_")) == (
        base64.urlsafe_b64decode(received.replace("+", "-").replace("/", "_"))
    )
