"""Building :class:`~robota.ProviderError` values the same way in every adapter (S42).

Each adapter keeps its own table of rows (what a vendor's status, type or code means, and
whether it is ``switchable``); what is the same for every vendor is here: the network errors an
SDK's timeout and connection exceptions become, the one choice of error class for a row, and
the reading of an error body a server sent inside a stream.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from robota.core import AuthenticationError, NetworkError, ProviderError, RateLimitError

__all__ = [
    "STREAM_ERROR_TEXT",
    "classified_error",
    "error_body",
    "text_or_none",
    "timeout_error",
    "unreachable_error",
]

STREAM_ERROR_TEXT = "the server reported an error inside the stream"
"""The message for an error body that carries none of its own."""


def text_or_none(value: object) -> str | None:
    """``str(value)``, or ``None`` for ``None`` (an SDK field that may be absent)."""
    return None if value is None else str(value)


def timeout_error(
    *, provider: str, model: str | None, switchable: bool, cause: BaseException
) -> NetworkError:
    """The error for a call the server did not answer in time (S42)."""
    return NetworkError(
        f"provider {provider!r} did not answer in time (timeout)",
        vendor_type="timeout",
        provider=provider,
        model=model,
        switchable=switchable,
        cause=cause,
    )


def unreachable_error(
    detail: str, *, provider: str, model: str | None, switchable: bool, cause: BaseException
) -> NetworkError:
    """The error for a server the SDK could not reach; ``detail`` says why (S42)."""
    return NetworkError(
        f"provider {provider!r} could not be reached: {detail}",
        vendor_type="connection_error",
        provider=provider,
        model=model,
        switchable=switchable,
        cause=cause,
    )


def classified_error(
    message: str,
    row: str,
    *,
    authentication: Container[str],
    rate_limited: Container[str],
    **fields: Any,
) -> ProviderError:
    """The error for a vendor failure an adapter's table put in ``row`` (S42).

    A row in ``authentication`` is an :class:`~robota.AuthenticationError`, one in
    ``rate_limited`` a :class:`~robota.RateLimitError`; any other is a
    :class:`~robota.ProviderError` whose ``code`` is the row (none for ``"unknown"``).
    ``fields`` are the error's keyword arguments (status, vendor type, provider, …).
    """
    if row in authentication:
        return AuthenticationError(message, **fields)
    if row in rate_limited:
        return RateLimitError(message, **fields)
    return ProviderError(message, code=row if row != "unknown" else None, **fields)


def error_body(payload: object) -> Mapping[str, Any]:
    """The error object of a body a server sent (``{"error": {...}}`` or bare), as a mapping.

    A body that is not a mapping becomes ``{"message": str(body)}``.
    """
    inner = payload.get("error", payload) if isinstance(payload, Mapping) else payload
    if not isinstance(inner, Mapping):
        return {"message": str(inner)}
    return inner
