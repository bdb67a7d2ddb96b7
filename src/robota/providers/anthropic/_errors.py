"""The one place Anthropic's failures become robota errors (S42).

Anthropic names every failure by an error ``type`` in its body (``{"type": "error", "error":
{"type": ..., "message": ...}, "request_id": ...}``), over HTTP statuses and inside a 200 stream
as an ``error`` event alike. The type decides the row; the HTTP status is the fallback when the
body names no type we know. ``switchable`` says whether another model could serve the request:

========================================  ==========  =========================================
row (type / status)                       switchable  why
========================================  ==========  =========================================
``overloaded_error`` (529)                yes         this model's capacity; another may have it
``rate_limit_error`` (429)                yes         the limit is per model; ``retry-after``
                                                      is kept on the :class:`RateLimitError`
``api_error`` (500, other 5xx)            yes         the vendor failed on this model
``invalid_request_error`` (400)           no          the request itself is wrong
``authentication_error`` (401)            no          the key is refused for every model
``permission_error`` (403)                no          the key may not do this, whatever model
``not_found_error`` (404)                 yes         the model is unknown; another may exist
``request_too_large`` (413)               no          the request is too big for every model
timeout (no answer in time)               yes         a slower model; another may answer
connection error (refused, reset, DNS)    no          between us and the vendor, not one model
``error`` event inside a 200 stream       by type     mapped by the type it names (e.g. an
                                                      ``overloaded_error`` mid-stream); its
                                                      ``status`` is ``None``: no HTTP error
unknown cause                             no          S42: never switch on an unknown cause
========================================  ==========  =========================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from robota.core import ProviderError
from robota.providers._kit import (
    STREAM_ERROR_TEXT,
    classified_error,
    error_body,
    retry_after_seconds,
    text_or_none,
    timeout_error,
    unreachable_error,
)

__all__ = ["SWITCHABLE", "from_error_payload", "map_anthropic_error", "retry_after_seconds"]

SWITCHABLE: Final[Mapping[str, bool]] = {
    "overloaded": True,
    "rate_limited": True,
    "api_error": True,
    "invalid_request": False,
    "authentication": False,
    "permission": False,
    "not_found": True,
    "request_too_large": False,
    "timeout": True,
    "connection": False,
    "unknown": False,
}
"""Row name → switchable; see the module docstring for each row's reason."""

_BY_TYPE: Final[Mapping[str, str]] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limited",
    "api_error": "api_error",
    "invalid_request_error": "invalid_request",
    "authentication_error": "authentication",
    "permission_error": "permission",
    "not_found_error": "not_found",
    "request_too_large": "request_too_large",
}
_BY_STATUS: Final[Mapping[int, str]] = {
    529: "overloaded",
    429: "rate_limited",
    400: "invalid_request",
    401: "authentication",
    403: "permission",
    404: "not_found",
    413: "request_too_large",
}


def _row(status: int | None, vendor_type: str | None) -> str:
    row = _BY_TYPE.get(vendor_type or "")
    if row is not None:
        return row
    if status is None:
        return "unknown"
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return "api_error" if status >= 500 else "unknown"


def _build(
    message: str,
    *,
    status: int | None,
    vendor_type: str | None,
    provider: str,
    model: str | None,
    request_id: str | None,
    retry_after: float | None,
    cause: BaseException | None,
) -> ProviderError:
    row = _row(status, vendor_type)
    common: dict[str, Any] = {
        "status": status,
        "vendor_type": vendor_type,
        "provider": provider,
        "model": model,
        "request_id": request_id,
        "switchable": SWITCHABLE[row],
        "cause": cause,
        "retry_after": retry_after,  # a 529 or 503 may say how long to wait too
    }
    if status is None and row in ("overloaded", "api_error"):
        common["recoverable"] = True  # a mid-stream overload is as transient as a 529
    return classified_error(
        message,
        row,
        authentication=("authentication", "permission"),
        rate_limited=("rate_limited",),
        **common,
    )


def from_error_payload(
    payload: object, *, provider: str, model: str | None, request_id: str | None = None
) -> ProviderError:
    """An error body Anthropic sent without an HTTP error status (an ``error`` stream event)."""
    inner = error_body(payload)
    if request_id is None and isinstance(payload, Mapping):
        request_id = text_or_none(payload.get("request_id"))
    text = text_or_none(inner.get("message")) or STREAM_ERROR_TEXT
    return _build(
        f"provider {provider!r} reported an error: {text}",
        status=None,
        vendor_type=text_or_none(inner.get("type")),
        provider=provider,
        model=model,
        request_id=request_id,
        retry_after=None,
        cause=None,
    )


def map_anthropic_error(error: BaseException, *, provider: str, model: str | None) -> ProviderError:
    """Translate an exception the ``anthropic`` SDK raised (S42).

    Keeps the HTTP status, Anthropic's error ``type``, the request id and ``retry-after``.
    """
    import anthropic  # noqa: PLC0415 - only reached once the SDK is loaded

    if isinstance(error, ProviderError):
        return error
    if isinstance(error, anthropic.APITimeoutError):
        return timeout_error(
            provider=provider, model=model, switchable=SWITCHABLE["timeout"], cause=error
        )
    if isinstance(error, anthropic.APIConnectionError):
        return unreachable_error(
            error.message,
            provider=provider,
            model=model,
            switchable=SWITCHABLE["connection"],
            cause=error,
        )
    if isinstance(error, anthropic.APIStatusError):
        if error.status_code < 400:
            # The SDK raises an ``error`` event inside a 200 stream as a status error carrying
            # the stream's own 200: the event's body is what the server meant.
            mapped = from_error_payload(
                error.body,
                provider=provider,
                model=model,
                request_id=text_or_none(error.request_id),
            )
            mapped.__cause__ = error
            return mapped
        body = error.body
        request_id = text_or_none(error.request_id)
        if request_id is None and isinstance(body, Mapping):
            request_id = text_or_none(body.get("request_id"))  # error bodies carry it too
        return _build(
            f"provider {provider!r} answered HTTP {error.status_code}: "
            f"{error.api_message or error.message}",
            status=error.status_code,
            vendor_type=text_or_none(error.type),
            provider=provider,
            model=model,
            request_id=request_id,
            retry_after=retry_after_seconds(dict(error.response.headers)),
            cause=error,
        )
    return _build(
        f"provider {provider!r} failed: {type(error).__name__}: {error}",
        status=None,
        vendor_type=type(error).__name__,
        provider=provider,
        model=model,
        request_id=None,
        retry_after=None,
        cause=error,
    )
