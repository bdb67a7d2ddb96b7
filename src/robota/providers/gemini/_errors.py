"""The one place ``google-genai`` SDK exceptions become :class:`~robota.ProviderError` (S42).

The SDK raises :class:`google.genai.errors.APIError` (``ClientError`` for 4xx, ``ServerError``
for 5xx) carrying the HTTP ``code`` and Google's canonical ``status`` from the error body
(``{"error": {"code", "message", "status"}}``). ``switchable`` — whether another model could
serve the same request — is decided by :data:`SWITCHABLE`, one row per kind of failure, each with
a test (``test_s42_<row>``):

=================================  ==========  ==============================================
failure                            switchable  why
=================================  ==========  ==============================================
400 ``INVALID_ARGUMENT``           no          the request itself is wrong on any model
401 / 403 ``PERMISSION_DENIED``    no          the key is refused for every model behind it
                                               (:class:`~robota.AuthenticationError`)
404 ``NOT_FOUND``                  yes         the model does not exist here; another can serve
429 ``RESOURCE_EXHAUSTED``         yes         quotas are per model
                                               (:class:`~robota.RateLimitError`; its
                                               ``retry_after`` from the body's
                                               ``google.rpc.RetryInfo``, else the
                                               ``Retry-After`` header)
500 ``INTERNAL``                   yes         the vendor failed; another model may not
503 ``UNAVAILABLE``                yes         the model is overloaded or down
504 ``DEADLINE_EXCEEDED``          yes         the model did not finish in time
other 5xx                          yes         a vendor-side failure, like 500
timeout (no answer in time)        yes         a slower model; another may answer
connection error                   no          the cause is between us and the vendor
unknown cause                      no          S42: never switch on an unknown cause
=================================  ==========  ==============================================

The row is chosen by HTTP code first and, when the code is missing (an error the SDK built
from a body alone), by the ``status`` string.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from robota.core import ProviderError
from robota.providers._kit import classified_error, map_transport_error, retry_after_seconds

__all__ = ["SWITCHABLE", "map_error", "map_genai_error"]

SWITCHABLE: Final[Mapping[str, bool]] = {
    "invalid_argument": False,
    "permission_denied": False,
    "not_found": True,
    "resource_exhausted": True,
    "internal": True,
    "unavailable": True,
    "deadline_exceeded": True,
    "server_error": True,
    "timeout": True,
    "connection": False,
    "unknown": False,
}
"""Row name → switchable; see the module docstring for each row's reason."""

_BY_CODE: Final[Mapping[int, str]] = {
    400: "invalid_argument",
    401: "permission_denied",
    403: "permission_denied",
    404: "not_found",
    429: "resource_exhausted",
    500: "internal",
    503: "unavailable",
    504: "deadline_exceeded",
}
_BY_STATUS: Final[Mapping[str, str]] = {
    "INVALID_ARGUMENT": "invalid_argument",
    "FAILED_PRECONDITION": "invalid_argument",
    "UNAUTHENTICATED": "permission_denied",
    "PERMISSION_DENIED": "permission_denied",
    "NOT_FOUND": "not_found",
    "RESOURCE_EXHAUSTED": "resource_exhausted",
    "INTERNAL": "internal",
    "UNAVAILABLE": "unavailable",
    "DEADLINE_EXCEEDED": "deadline_exceeded",
}


def _row(code: int | None, status: str | None) -> str:
    if code is not None:
        row = _BY_CODE.get(code)
        if row is not None:
            return row
        if 500 <= code < 600:
            return "server_error"
    return _BY_STATUS.get(status or "", "unknown")


_RETRY_INFO: Final = "type.googleapis.com/google.rpc.RetryInfo"


def _duration_seconds(value: object) -> float | None:
    """A protobuf ``Duration`` in its JSON form (``"37s"``, ``"1.5s"``) as seconds."""
    if not isinstance(value, str) or not value.endswith("s"):
        return None
    try:
        seconds = float(value[:-1])
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _retry_after(error: Any) -> float | None:
    """How long Gemini asked the caller to wait: its ``RetryInfo`` detail, else the header.

    Google APIs name a 429's wait in ``error.details`` as a ``google.rpc.RetryInfo`` whose
    ``retryDelay`` is a Duration; a front end may send ``Retry-After`` instead.
    """
    body = getattr(error, "details", None)
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    details = inner.get("details") if isinstance(inner, Mapping) else None
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, Mapping) and detail.get("@type") == _RETRY_INFO:
            return _duration_seconds(detail.get("retryDelay"))
    headers = getattr(getattr(error, "response", None), "headers", None)
    items = getattr(headers, "items", None)  # httpx2 headers, or a plain mapping
    if not callable(items):
        return None
    return retry_after_seconds({str(k).lower(): str(v) for k, v in items()})


def _code(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def map_genai_error(error: Any, *, provider: str, model: str | None) -> ProviderError:
    """An SDK ``APIError`` as a :class:`~robota.ProviderError` keeping code and status."""
    code = _code(getattr(error, "code", None))
    raw_status = getattr(error, "status", None)
    status = str(raw_status) if raw_status else None
    message = getattr(error, "message", None) or str(error)
    row = _row(code, status)
    common: dict[str, Any] = {
        "status": code,
        "vendor_type": status,
        "provider": provider,
        "model": model,
        "switchable": SWITCHABLE[row],
        "cause": error,
        "retry_after": _retry_after(error),  # a 503 may say how long to wait too
    }
    text = f"provider {provider!r} answered HTTP {code} {status or ''}: {message}".replace(
        "  ", " "
    )
    return classified_error(
        text,
        row,
        authentication=("permission_denied",),
        rate_limited=("resource_exhausted",),
        **common,
    )


def map_error(error: BaseException, *, provider: str, model: str | None) -> BaseException:
    """An exception from the SDK or its transport as the error to raise (the kit's mapper)."""
    from google.genai import errors  # noqa: PLC0415 - loaded by now; the adapter imports lazily

    if isinstance(error, ProviderError):
        return error
    if isinstance(error, errors.APIError):
        return map_genai_error(error, provider=provider, model=model)
    return map_transport_error(error, provider=provider, model=model)
