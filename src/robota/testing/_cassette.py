"""``CassetteProvider``: record any provider's exchanges to a JSON file and replay them offline.

Each interaction stores a hash of the normalised request (model, tool choice, offered tools and
the messages' kinds, contents, tool calls and states — not ids or timestamps) and the response as
stream events. Replay refuses a request that differs from the recorded one, with a message that
says how to re-record, so a cassette can never silently answer a conversation it did not see.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, final

from robota.core import AbortSignal, RobotaError, ToolCall, Usage
from robota.core.providers import (
    ChatRequest,
    ChatResponse,
    Provider,
    ProviderCapabilities,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    collect_stream,
    normalize_request,
    request_fingerprint,
)

__all__ = ["CassetteMismatchError", "CassetteMode", "CassetteProvider"]

CassetteMode: TypeAlias = Literal["replay", "record", "auto"]
"""``replay``: answer from the file only; ``record``: call the real provider and (re)write the
file; ``auto``: replay when the file exists, else record."""

CASSETTE_VERSION: Final = 1
MODE_ENVIRONMENT_VARIABLE: Final = "ROBOTA_CASSETTE_MODE"


class CassetteMismatchError(RobotaError, AssertionError):
    """A request differs from what the cassette recorded (or the cassette has run out).

    A :class:`~robota.RobotaError` (raised by the loop as itself) and an ``AssertionError``.
    """

    default_code = "cassette_mismatch"
    default_category = "user"


def _event_to_json(event: StreamEvent) -> dict[str, Any]:
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ToolCallReady):
        call = event.call
        return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
    usage = None
    if event.usage is not None:
        usage = {
            **event.usage.to_triple(),  # S29: the persisted shape is the triple
            "cache_read_tokens": event.usage.cache_read_tokens,
            "partial": event.usage.partial,
        }
    return {
        "type": "done",
        "model": event.model,
        "usage": usage,
        "finish_reason": event.finish_reason,
        "continuation": event.continuation,
    }


def _event_from_json(data: dict[str, Any]) -> StreamEvent:
    kind = data.get("type")
    if kind == "text":
        return TextDelta(str(data["text"]))
    if kind == "tool_call":
        return ToolCallReady(ToolCall(str(data["id"]), str(data["name"]), str(data["arguments"])))
    if kind == "done":
        raw = data.get("usage")
        usage = None
        if isinstance(raw, dict):
            usage = Usage(
                int(raw["prompt_tokens"]),
                int(raw["completion_tokens"]),
                int(raw["total_tokens"]),
                raw.get("cache_read_tokens"),
                bool(raw.get("partial", False)),
            )
        return ResponseDone(
            model=data.get("model"),
            usage=usage,
            finish_reason=data.get("finish_reason"),
            continuation=data.get("continuation"),
        )
    raise CassetteMismatchError(f"unknown event type in cassette: {data!r}")


@final
class CassetteProvider(Provider):
    """Records a provider's exchanges to ``path`` and replays them.

    Args:
        path: The cassette file (JSON).
        provider: The real provider, needed to record.
        mode: See :data:`CassetteMode`. The ``ROBOTA_CASSETTE_MODE`` environment variable, when
            set, overrides it (``record`` re-records every cassette a test suite uses).
        name: The provider name to present; default: the real provider's name, or the one
            stored in the cassette.
        chunk_delay: Seconds between replayed events (to exercise streaming consumers).
        honor_environment: Let ``ROBOTA_CASSETTE_MODE`` override ``mode`` (default); pass
            ``False`` for a cassette that must always replay (a shipped demo).

    Raises:
        CassetteMismatchError: at a call whose request differs from the recorded one, or when
            the cassette has no interaction left.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        provider: Provider | None = None,
        mode: CassetteMode = "auto",
        name: str | None = None,
        chunk_delay: float = 0.0,
        honor_environment: bool = True,
    ) -> None:
        self._path = Path(path)
        self._inner = provider
        env_mode = os.environ.get(MODE_ENVIRONMENT_VARIABLE) if honor_environment else None
        chosen = env_mode if env_mode in ("replay", "record", "auto") else mode
        if chosen == "auto":
            chosen = "replay" if self._path.exists() else "record"
        if chosen == "record" and provider is None:
            raise ValueError(f"recording {self._path} needs the real provider: pass provider=...")
        self._mode: Literal["replay", "record"] = "record" if chosen == "record" else "replay"
        self._chunk_delay = chunk_delay
        self._interactions: list[dict[str, Any]] = []
        stored_name: str | None = None
        if self._mode == "replay":
            try:
                data = json.loads(self._path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise CassetteMismatchError(
                    f"cassette {self._path} does not exist; record it by passing the real "
                    f"provider with mode='record' (or {MODE_ENVIRONMENT_VARIABLE}=record)"
                ) from None
            if data.get("version") != CASSETTE_VERSION:
                raise CassetteMismatchError(
                    f"cassette {self._path} has version {data.get('version')!r}; this build "
                    f"reads version {CASSETTE_VERSION}. Re-record it."
                )
            self._interactions = list(data.get("interactions", []))
            stored_name = data.get("provider")
        self._name = (
            name or (provider.name if provider is not None else None) or stored_name or "cassette"
        )
        self._next = 0

    @property
    def name(self) -> str:
        """The presented provider name."""
        return self._name

    @property
    def mode(self) -> Literal["replay", "record"]:
        """Whether this instance replays or records."""
        return self._mode

    def capabilities(self) -> ProviderCapabilities | None:
        """The real provider's table when recording; none when replaying."""
        return self._inner.capabilities() if self._inner is not None else None

    async def chat(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> ChatResponse:
        """Replay or record one exchange as a complete response."""
        return await collect_stream(self.chat_stream(request, signal=signal))

    def chat_stream(
        self, request: ChatRequest, *, signal: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Replay or record one exchange as stream events."""
        if self._mode == "record":
            return self._record(request, signal)
        return self._replay(request, signal)

    async def _replay(
        self, request: ChatRequest, signal: AbortSignal | None
    ) -> AsyncIterator[StreamEvent]:
        index = self._next
        fingerprint = request_fingerprint(request)
        if index >= len(self._interactions):
            raise CassetteMismatchError(
                f"cassette {self._path} has {len(self._interactions)} interactions; request "
                f"#{index + 1} has none. Re-record: {MODE_ENVIRONMENT_VARIABLE}=record (or "
                "mode='record' with the real provider)."
            )
        recorded = self._interactions[index]
        if recorded.get("request_hash") != fingerprint:
            raise CassetteMismatchError(
                f"request #{index + 1} differs from the one recorded in {self._path} "
                f"(hash {fingerprint[:12]}… vs {str(recorded.get('request_hash'))[:12]}…): the "
                "conversation, tools or model changed since recording. Re-record: "
                f"{MODE_ENVIRONMENT_VARIABLE}=record (or mode='record' with the real provider)."
            )
        self._next += 1
        for position, data in enumerate(recorded.get("events", [])):
            if signal is not None:
                signal.throw_if_aborted()
            if position and self._chunk_delay > 0:
                await asyncio.sleep(self._chunk_delay)
            yield _event_from_json(data)

    async def _record(
        self, request: ChatRequest, signal: AbortSignal | None
    ) -> AsyncIterator[StreamEvent]:
        assert self._inner is not None
        events: list[dict[str, Any]] = []
        async for event in self._inner.chat_stream(request, signal=signal):
            events.append(_event_to_json(event))
            yield event
        self._interactions.append(
            {
                "request_hash": request_fingerprint(request),
                "request": normalize_request(request),
                "events": events,
            }
        )
        self._next += 1
        self._save()

    def _save(self) -> None:
        data = {
            "version": CASSETTE_VERSION,
            "provider": self._name,
            "interactions": self._interactions,
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=self._path.name, dir=self._path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, ensure_ascii=False, default=str)
                handle.write("\n")
            os.replace(temp, self._path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def assert_complete(self) -> None:
        """Fail unless every recorded interaction was replayed."""
        if self._mode == "replay" and self._next != len(self._interactions):
            raise AssertionError(
                f"cassette {self._path}: {len(self._interactions) - self._next} recorded "
                "interactions were never requested"
            )

    async def aclose(self) -> None:
        """Close the real provider when recording."""
        if self._inner is not None:
            await self._inner.aclose()
