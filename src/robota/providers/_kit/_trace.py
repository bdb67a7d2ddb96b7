"""Trace headers on SDK calls, to the listed origin only (S27), and exact request bodies (S28)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from contextvars import ContextVar
from typing import Any, Final

from robota.core import (
    origin_of,
)
from robota.core.providers import (
    ChatRequest,
)


def trace_headers(request: ChatRequest, url: str | None) -> dict[str, str]:
    """The trace headers of ``request`` for a call to ``url`` (S27): none unless listed."""
    trace = request.trace
    return trace.headers_for(url) if trace is not None else {}


_TRACE_ORIGIN: ContextVar[str | None] = ContextVar("robota_trace_origin", default=None)
_TRACE_HEADERS: Final = ("traceparent", "tracestate")


def traced_call(
    create: Callable[..., Awaitable[Any]],
    request: ChatRequest,
    url: str | None,
    params: Mapping[str, Any],
    **extra: Any,
) -> Callable[[], Awaitable[Any]]:
    """The SDK call ``create(**params, **extra)``, sending ``request``'s trace headers (S27).

    The headers go to the SDK call only (``extra_headers``), never into the captured native
    request, and only when ``url``'s origin is listed. While the call runs, the origin they were
    issued for is known to :func:`guard_trace_redirects`, so a redirect hop to any other origin
    carries neither header.
    """
    headers = trace_headers(request, url)
    if not headers:
        return lambda: create(**params, **extra)
    issued_for = origin_of(url or "")

    async def call() -> Any:
        token = _TRACE_ORIGIN.set(issued_for)
        try:
            return await create(**params, **extra, extra_headers=headers)
        finally:
            with suppress(ValueError):  # closed by the collector in another context (S40)
                _TRACE_ORIGIN.reset(token)

    return call


@functools.cache
def _keywords(function: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(function).parameters)


def sdk_call(
    create: Callable[..., Awaitable[Any]],
    request: ChatRequest,
    url: str | None,
    params: Mapping[str, Any],
) -> Callable[[], Awaitable[Any]]:
    """:func:`traced_call` sending ``params`` as the request body exactly (S28).

    For an SDK method with ``extra_body`` and ``timeout`` keywords (OpenAI's, Anthropic's): the
    body fields the method takes as keywords go as keywords, any other (a settings ``extra``
    field the SDK does not know yet) through ``extra_body``; ``request.settings.timeout`` is the
    SDK's per-request timeout.
    """
    options: dict[str, Any] = {}
    timeout = request.settings.timeout
    if timeout is not None:
        options["timeout"] = timeout
    known = _keywords(getattr(create, "__func__", create))
    unknown = {key: value for key, value in params.items() if key not in known}
    if unknown:
        params = {key: value for key, value in params.items() if key in known}
        options["extra_body"] = unknown
    return traced_call(create, request, url, params, **options)


async def _strip_trace_off_origin(request: Any) -> None:
    # An httpx2 request hook: it runs before every hop, redirects included (S27: the header
    # discloses trace identifiers, so it goes only to the origin it was issued for).
    headers = request.headers
    if not any(name in headers for name in _TRACE_HEADERS):
        return
    issued_for = _TRACE_ORIGIN.get()
    if issued_for is None or origin_of(str(request.url)) != issued_for:
        for name in _TRACE_HEADERS:
            if name in headers:
                del headers[name]


def guard_trace_redirects(http_client: Any) -> None:
    """Install the S27 redirect guard on an SDK's ``httpx2.AsyncClient`` (once)."""
    hooks = getattr(http_client, "event_hooks", None)
    if not isinstance(hooks, Mapping):
        return
    request_hooks = list(hooks.get("request", ()))
    if _strip_trace_off_origin not in request_hooks:
        request_hooks.append(_strip_trace_off_origin)
        http_client.event_hooks = {**hooks, "request": request_hooks}
