"""Reading SDK objects and the errors for answers that are not the API's (S31, S42).

Vendor-neutral values every adapter shares: :func:`member` and :func:`count` read SDK objects
(and servers' extra fields), :func:`attested` applies the usage attestation rule,
:func:`invalid_response` and :func:`incomplete_stream` are the errors for an answer that is not
the API's, :func:`map_transport_error` maps ``httpx2`` transport failures, and
:func:`retry_after_seconds` reads a server's retry hint.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import httpx2

from robota.core import (
    NativePayload,
    NetworkError,
    ProviderError,
    Usage,
)
from robota.providers._kit._errors import timeout_error


def member(obj: Any, name: str) -> Any:
    """An attribute of an SDK object or a key of a dict (servers' extras stay reachable)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            return extra.get(name)
    return value


def count(value: Any) -> int | None:
    """``value`` when it is an integer count (never a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def attested(usage: Usage) -> Usage:
    """``usage`` marked partial when a dispatched response claims no prompt at all (S31).

    A request always has a prompt, so a zero prompt count (one recorded turn reports 0/0/0 for a
    reply with two tool calls) is not a count anyone can attest; it is kept and marked partial.
    """
    if usage.prompt_tokens == 0 and not usage.partial:
        return replace(usage, partial=True)
    return usage


def invalid_response(message: str, *, provider: str, model: str | None) -> ProviderError:
    """The server answered with something that is not this API's response (S42)."""
    return ProviderError(
        f"provider {provider!r}: {message}",
        vendor_type="invalid_response",
        provider=provider,
        model=model,
        switchable=False,
    )


def incomplete_stream(*, provider: str, model: str | None) -> NetworkError:
    """A stream that ended before the server said the response was finished (S42)."""
    return NetworkError(
        f"provider {provider!r}: the response stream ended before the server finished it",
        vendor_type="incomplete_stream",
        provider=provider,
        model=model,
        switchable=False,
    )


def no_capture(payload: NativePayload) -> None:
    """The capture used on the universal surface: reports nowhere."""


def map_transport_error(error: BaseException, *, provider: str, model: str | None) -> BaseException:
    """A transport failure (``httpx2``) or an unreadable answer as the error to raise (S42).

    Timeouts and connection failures become :class:`~robota.NetworkError`, a ``ValueError``
    from decoding the answer ``invalid_response``; anything else (cancellation, an abort, a
    bug, an SDK exception the adapter maps itself) is returned unchanged.
    """
    if isinstance(error, httpx2.TimeoutException):
        return timeout_error(provider=provider, model=model, switchable=True, cause=error)
    if isinstance(error, httpx2.TransportError):
        # E.g. the connection dropped in the middle of a streamed response.
        return NetworkError(
            f"provider {provider!r}: the connection failed: {type(error).__name__}: {error}",
            vendor_type="connection_error",
            provider=provider,
            model=model,
            switchable=False,
            cause=error,
        )
    if isinstance(error, ValueError):
        # The SDK decodes each SSE ``data:`` line and JSON body as it reads it: a server that
        # sent something else made it raise a plain ValueError (JSONDecodeError).
        mapped = invalid_response(
            f"the server's answer could not be read: {error}", provider=provider, model=model
        )
        mapped.__cause__ = error
        return mapped
    return error


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (delta or HTTP date), when present."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
