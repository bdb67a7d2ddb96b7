"""What an OpenAI-compatible server says about its context window (S13, S39).

An unregistered model's window is unknown (S13), but many servers can be asked:

* ``GET {base_url}/models`` — the OpenAI model list. Servers add the window to each entry under
  their own name: vLLM ``max_model_len``, OpenRouter and LM Studio ``context_length``, Groq
  ``context_window``, llama.cpp's ``llama-server`` ``meta.n_ctx_train`` (the length the model was
  trained for, not necessarily what the server was started with).
* ``GET {root}/props`` — llama.cpp's server properties, beside ``/v1``:
  ``default_generation_settings.n_ctx`` is the window one request slot actually has (``-c``
  divided among ``-np`` slots), the number its own size check refuses against.

:class:`WindowProbe` asks both once per provider instance, lazily (on the first run that needs
it), with a short timeout and no retries; a missing endpoint, an error status, a timeout or a body
it cannot read is "not reported", never a failure of the run. When both answer, the smaller
number wins: it is the one the server enforces.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, Final, final

from robota.core import get_logger

__all__ = ["PROBE_TIMEOUT", "WindowProbe", "window_from_models", "window_from_props"]

PROBE_TIMEOUT: Final = 3.0
"""Seconds each of the two questions may take before it counts as unanswered."""

_ENTRY_FIELDS: Final = ("max_model_len", "context_length", "context_window")
_META_FIELDS: Final = ("n_ctx", "n_ctx_train")

_log = get_logger("robota.providers.openai_compatible")


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _entry_window(entry: Mapping[str, Any]) -> int | None:
    for name in _ENTRY_FIELDS:
        found = _positive(entry.get(name))
        if found is not None:
            return found
    meta = entry.get("meta")
    if isinstance(meta, Mapping):
        for name in _META_FIELDS:
            found = _positive(meta.get(name))
            if found is not None:
                return found
    return None


def window_from_models(body: object, model: str) -> int | None:
    """The window a ``/v1/models`` body states for ``model``, or ``None``.

    The entry whose ``id`` is ``model``; when no entry has that id and the server lists exactly
    one model, that one (llama.cpp serves one model under any requested name).
    """
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, list):
        return None
    entries = [entry for entry in data if isinstance(entry, Mapping)]
    named = [entry for entry in entries if entry.get("id") == model]
    if named:
        return _entry_window(named[0])
    if len(entries) == 1:
        return _entry_window(entries[0])
    return None


def window_from_props(body: object) -> int | None:
    """``default_generation_settings.n_ctx`` of a llama.cpp ``/props`` body, or ``None``."""
    settings = body.get("default_generation_settings") if isinstance(body, Mapping) else None
    if not isinstance(settings, Mapping):
        return None
    return _positive(settings.get("n_ctx"))


def _props_url(base_url: str) -> str:
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return root + "/props"


@final
class WindowProbe:
    """Asks one server for its context window, once, and remembers the answers.

    Args:
        client: The provider's ``openai.AsyncOpenAI`` client (its HTTP client, headers and key
            are used, so the questions go where the provider's requests go).
        base_url: The provider's API root.
        timeout: Seconds per question.
    """

    __slots__ = ("_asked", "_base_url", "_client", "_lock", "_models", "_props", "_timeout")

    def __init__(self, client: Any, base_url: str, *, timeout: float = PROBE_TIMEOUT) -> None:
        self._client = client
        self._base_url = base_url
        self._timeout = timeout
        self._lock: asyncio.Lock | None = None
        self._asked = False
        self._models: object = None
        self._props: object = None

    async def window(self, model: str) -> int | None:
        """What the server reports for ``model`` (the smaller of its two answers), or ``None``."""
        if not self._asked:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if not self._asked:
                    self._models = await self._get("models")
                    self._props = await self._get(_props_url(self._base_url))
                    self._asked = True
        answers = [
            found
            for found in (window_from_models(self._models, model), window_from_props(self._props))
            if found is not None
        ]
        return min(answers) if answers else None

    async def _get(self, path: str) -> object:
        import httpx2  # noqa: PLC0415 - loaded with the openai SDK already; kept out of import

        try:
            response = await self._client.get(
                path,
                cast_to=httpx2.Response,
                options={"timeout": self._timeout, "max_retries": 0},
            )
            return json.loads(response.content)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - an unanswered question is "not reported"
            _log.debug(
                "the server did not report a context window here",
                path=path,
                error=f"{type(error).__name__}: {error}",
            )
            return None
