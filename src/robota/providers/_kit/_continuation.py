"""The continuation text an adapter hands back to itself between turns (S26).

One shape for every adapter: ``{"<key>": {"<field>": [item, …]}}`` as compact JSON, where
``key`` names the adapter, so a continuation another provider wrote reads as empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["decode_continuation", "encode_continuation"]


def encode_continuation(key: str, field: str, items: Sequence[Mapping[str, Any]]) -> str | None:
    """The continuation text carrying ``items`` under ``key``/``field``; ``None`` for none."""
    if not items:
        return None
    return json.dumps({key: {field: list(items)}}, separators=(",", ":"))


def decode_continuation(text: str | None, key: str, field: str) -> list[dict[str, Any]]:
    """The items (objects only) a continuation carries under ``key``/``field``, else none."""
    if not text:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []  # written by another provider: not ours to read
    own = data.get(key) if isinstance(data, dict) else None
    items = own.get(field) if isinstance(own, dict) else None
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict)]
