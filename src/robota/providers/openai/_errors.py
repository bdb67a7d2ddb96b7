"""The one place ``openai`` SDK exceptions become :class:`~robota.ProviderError` (S42).

``switchable`` — whether another model could serve the same request — is decided by
:data:`SWITCHABLE`, one row per kind of failure, each with its reason, and a test per row:

========================================  ==========  =========================================
failure                                   switchable  why
========================================  ==========  =========================================
400 ``invalid_request_error`` (any code)  no          the request itself is wrong; it fails on
                                                      any model
400/404 code ``model_not_found``          yes         the model does not exist here; another
                                                      one can serve the request
401 / 403                                 no          the credentials are refused for every
                                                      model behind them
404 (other)                               yes         the model or deployment is missing
409                                       yes         a transient conflict on the vendor's side
422                                       no          the request is semantically invalid
429 (rate limit)                          yes         limits are per model; another has its own
429 code ``insufficient_quota``           no          the account is out of quota for all
                                                      models
5xx                                       yes         the vendor failed; another model may not
timeout (no answer in time)               yes         a slower model; another may answer
connection error (refused, reset, DNS)    no          the cause is between us and the vendor,
                                                      not in one model
error event inside a 200 stream           by code     mapped like the status or documented code
                                                      it names (``server_error``,
                                                      ``rate_limit_exceeded`` …), else no;
                                                      ``recoverable`` too (a ``server_error``
                                                      is, with no HTTP status)
unknown cause                             no          S42: never switch on an unknown cause
========================================  ==========  =========================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from robota.core import (
    ProviderError,
)
from robota.providers._kit import (
    STREAM_ERROR_TEXT,
    classified_error,
    error_body,
    retry_after_seconds,
    text_or_none,
    timeout_error,
    unreachable_error,
)

__all__ = ["SWITCHABLE", "from_error_payload", "map_openai_error", "retry_after_seconds"]

SWITCHABLE: Final[Mapping[str, bool]] = {
    "invalid_request": False,
    "model_not_found": True,
    "authentication": False,
    "not_found": True,
    "conflict": True,
    "unprocessable": False,
    "rate_limited": True,
    "insufficient_quota": False,
    "server_error": True,
    "timeout": True,
    "connection": False,
    "unknown": False,
}
"""Row name → switchable; see the module docstring for each row's reason."""


_STREAM_CODES: Final[Mapping[str, str]] = {
    "server_error": "server_error",
    "rate_limit_exceeded": "rate_limited",
    "insufficient_quota": "insufficient_quota",
    "invalid_prompt": "invalid_request",
    "invalid_request_error": "invalid_request",
}
"""Codes OpenAI documents for ``error`` / ``response.failed`` stream events → the row they mean."""


def _row(status: int | None, code: str | None, vendor_type: str | None) -> str:
    if code == "model_not_found":
        return "model_not_found"
    if status is None:
        # An error event inside a stream names no HTTP status, only OpenAI's documented code.
        return _STREAM_CODES.get(code or "", _STREAM_CODES.get(vendor_type or "", "unknown"))
    if status in (401, 403):
        return "authentication"
    if status == 429:
        if code == "insufficient_quota" or vendor_type == "insufficient_quota":
            return "insufficient_quota"
        return "rate_limited"
    if status >= 500:
        return "server_error"
    return {400: "invalid_request", 404: "not_found", 409: "conflict", 422: "unprocessable"}.get(
        status, "unknown"
    )


def _build(
    message: str,
    *,
    status: int | None,
    code: str | None,
    vendor_type: str | None,
    provider: str,
    model: str | None,
    request_id: str | None,
    retry_after: float | None,
    cause: BaseException | None,
) -> ProviderError:
    row = _row(status, code, vendor_type)
    common: dict[str, Any] = {
        "status": status,
        "vendor_type": vendor_type or code,
        "provider": provider,
        "model": model,
        "request_id": request_id,
        "switchable": SWITCHABLE[row],
        "cause": cause,
        "retry_after": retry_after,  # a 503 may say how long to wait too, not only a 429
    }
    if status is None and row == "server_error":
        # S42: a server error reported inside a 200 stream (``error`` / ``response.failed``
        # code ``server_error``) is as transient as the 5xx it stands for; without an HTTP
        # status the status-derived default would call it final and no retry would run.
        common["recoverable"] = True
    if row == "insufficient_quota":
        # Out of quota is its own failure kind (S42): waiting does not help, and a caller
        # branching on ``code`` must not take it for a rate limit.
        common["recoverable"] = False
        common["code"] = row
    return classified_error(
        message,
        row,
        authentication=("authentication",),
        rate_limited=("rate_limited", "insufficient_quota"),
        **common,
    )


def from_error_payload(
    payload: Mapping[str, Any], *, provider: str, model: str | None
) -> ProviderError:
    """An error object a server sent in a 200 answer or stream (``{"error": {...}}`` or bare).

    The status is read from a numeric ``code`` or ``status`` when the server gave one (some
    OpenAI-compatible servers do), so it maps like that HTTP status.
    """
    inner = error_body(payload)
    raw_code = inner.get("code")
    status: int | None = None
    code: str | None = None
    if isinstance(raw_code, int) and not isinstance(raw_code, bool) and 100 <= raw_code < 600:
        status = raw_code
    elif raw_code is not None:
        code = str(raw_code)
    vendor_type = text_or_none(inner.get("type"))
    text = text_or_none(inner.get("message")) or STREAM_ERROR_TEXT
    return _build(
        f"provider {provider!r} reported an error: {text}",
        status=status,
        code=code,
        vendor_type=vendor_type,
        provider=provider,
        model=model,
        request_id=None,
        retry_after=None,
        cause=None,
    )


def map_openai_error(error: BaseException, *, provider: str, model: str | None) -> ProviderError:
    """Translate an exception the ``openai`` SDK raised (S42); anything else is passed through.

    Returns a :class:`~robota.ProviderError` (or subclass) keeping the HTTP status, the vendor's
    error type (its ``type``, else its ``code``), the request id and ``retry-after``.
    """
    import openai  # noqa: PLC0415 - only reached once the SDK is loaded

    if isinstance(error, ProviderError):
        return error
    if isinstance(error, openai.APITimeoutError):
        return timeout_error(
            provider=provider, model=model, switchable=SWITCHABLE["timeout"], cause=error
        )
    if isinstance(error, openai.APIConnectionError):
        return unreachable_error(
            error.message + (f" ({error.__cause__!r})" if error.__cause__ is not None else ""),
            provider=provider,
            model=model,
            switchable=SWITCHABLE["connection"],
            cause=error,
        )
    if isinstance(error, openai.APIStatusError):
        headers = dict(error.response.headers)
        code = text_or_none(error.code)
        if code is not None and code.isdigit():
            # Some compatible servers (OpenRouter) put the HTTP status in ``code`` (the SDK
            # makes it text): that is the status again, not the vendor's error type or code.
            code = None
        vendor_type = text_or_none(error.type)
        detail = error.message
        return _build(
            f"provider {provider!r} answered HTTP {error.status_code}: {detail}",
            status=error.status_code,
            code=code,
            vendor_type=vendor_type,
            provider=provider,
            model=model,
            request_id=text_or_none(error.request_id),
            retry_after=retry_after_seconds(headers),
            cause=error,
        )
    if isinstance(error, openai.APIError):
        # No HTTP status: an error event inside a 200 stream, or a response the SDK could not
        # validate. The body says what the server meant.
        body = error.body
        if isinstance(body, Mapping):
            mapped = from_error_payload(body, provider=provider, model=model)
            mapped.__cause__ = error
            return mapped
        return _build(
            f"provider {provider!r} failed: {error.message}",
            status=None,
            code=text_or_none(error.code),
            vendor_type=text_or_none(error.type),
            provider=provider,
            model=model,
            request_id=None,
            retry_after=None,
            cause=error,
        )
    if isinstance(error, openai.OpenAIError):
        return _build(
            f"provider {provider!r} failed: {type(error).__name__}: {error}",
            status=None,
            code=None,
            vendor_type=type(error).__name__,
            provider=provider,
            model=model,
            request_id=None,
            retry_after=None,
            cause=error,
        )
    raise TypeError(f"not an openai SDK exception: {error!r}")
