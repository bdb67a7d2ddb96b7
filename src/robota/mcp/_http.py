"""``MCPServerHTTP``: an MCP server over streamable HTTP, reached only through the egress policy.

Every request the SDK makes — each POST, the event stream, the closing DELETE and every redirect
hop it follows — goes through :class:`robota.host.EgressTransport` (S06): a private, loopback,
link-local or cloud-metadata destination is refused unless this one server was given an explicit
allowance, and connections go only to the addresses the policy validated.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any, final

from robota.core import ConfigurationError, origin_of
from robota.host import EgressTransport, LoopbackAllowance, Resolver
from robota.mcp._results import check_string_map, default_server_name
from robota.mcp._server import DEFAULT_START_TIMEOUT, MCPServerBase

__all__ = ["MCPServerHTTP"]

_RESERVED = frozenset({"host", "content-length", "transfer-encoding", "connection"})


@final
class MCPServerHTTP(MCPServerBase):
    """An MCP server at a streamable-HTTP URL, its tools usable as ``mcp__<name>__<tool>``.

    Pass it in ``Agent(tools=[...])``; its lifecycle is the agent's, as for
    :class:`~robota.mcp.MCPServerStdio` (the HTTP session is closed by ``agent.aclose()``).

    Args:
        url: The server's endpoint, e.g. ``"https://mcp.example.com/mcp"``.
        headers: Headers sent with every request (an ``Authorization`` token, say).
        name: The ``<server>`` of its tool names; default: made from the URL's host.
        allow_private_network: The explicit allowance for this one server to be on your own
            network (private, loopback, shared or unique-local addresses). Link-local and cloud
            metadata addresses stay refused.
        allowance: Test-only loopback allowance (:func:`robota.testing.loopback_allowance`).
        resolver: ``async (host) -> [ip, ...]``; default: the system resolver.
        timeout: Seconds for connecting and writing; reads wait up to ten times as long.
        verify: TLS verification (``True``, an ``ssl.SSLContext``, or ``False``).
        start_timeout: Seconds the whole start may take: handshake and tool listing.
        defer: Make the server's tools deferred (S19), as for ``MCPServerStdio``.

    Raises:
        ConfigurationError: for a URL that is not http(s), bad headers, or the ``mcp`` SDK not
            installed (the message says how to install the ``mcp`` extra).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        allow_private_network: bool = False,
        allowance: LoopbackAllowance | None = None,
        resolver: Resolver | None = None,
        timeout: float = 30.0,
        verify: Any = True,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        defer: bool = False,
    ) -> None:
        given: object = url
        origin = origin_of(url) if isinstance(given, str) else None
        if origin is None:
            raise ConfigurationError(f"url must be an http(s) URL, got {url!r}")
        checked = check_string_map(headers, "headers")
        reserved = sorted(k for k in checked if k.lower() in _RESERVED)
        if reserved:
            raise ConfigurationError(f"headers may not set {', '.join(reserved)}")
        flag: object = allow_private_network
        if not isinstance(flag, bool):
            raise ConfigurationError("allow_private_network must be True or False")
        seconds: object = timeout
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ConfigurationError(f"timeout must be a positive number, got {timeout!r}")
        self._url = url
        self._headers = checked
        self._private = allow_private_network
        self._allowance = allowance
        self._resolver = resolver
        self._timeout = timeout
        self._verify = verify
        host = origin.split("://", 1)[1].split(":")[0].strip("[]")
        super().__init__(
            name if name is not None else default_server_name(host),
            start_timeout=start_timeout,
            defer=defer,
        )

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        return self._connection_streams()

    @contextlib.asynccontextmanager
    async def _connection_streams(self) -> AsyncIterator[Any]:
        import httpx2  # noqa: PLC0415 - loaded with the SDK
        from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

        transport = EgressTransport(
            resolver=self._resolver,
            allowance=self._allowance,
            private_network=self._private,
            verify=self._verify,
        )
        client = httpx2.AsyncClient(
            transport=transport,
            headers=self._headers,
            trust_env=False,  # no ambient proxy, no .netrc (S06)
            follow_redirects=False,  # the SDK follows same-origin hops itself, through us
            timeout=httpx2.Timeout(self._timeout, read=self._timeout * 10),
        )
        async with client, streamable_http_client(self._url, http_client=client) as streams:
            yield streams[0], streams[1]
