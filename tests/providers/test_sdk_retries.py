"""``Provider.disable_sdk_retries``: a host that owns retries (robota.temporal) turns the SDK's off.

Under the real OpenAI, Anthropic and google-genai SDKs, a 503 answered by an in-memory transport
is retried by the SDK as built (``max_retries=1`` here, or Gemini's ``retry_options``, to keep
the test short) and sent exactly once after ``disable_sdk_retries()``; the new SDK client still
goes through the caller's ``http_client``.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx2
import pytest

import robota
from robota.providers.anthropic import AnthropicProvider
from robota.providers.gemini import GeminiProvider
from robota.providers.openai import OpenAIProvider


def _counting() -> tuple[list[str], httpx2.AsyncClient]:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(503, json={"error": {"message": "overloaded", "type": "overloaded"}})

    return seen, httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def _openai(client: httpx2.AsyncClient) -> robota.Provider:
    return OpenAIProvider(
        api_key="k", base_url="http://vendor.test/v1", http_client=client, max_retries=1
    )


def _anthropic(client: httpx2.AsyncClient) -> robota.Provider:
    return AnthropicProvider(
        api_key="k", base_url="http://vendor.test", http_client=client, max_retries=1
    )


@pytest.mark.parametrize("build", [_openai, _anthropic], ids=["openai", "anthropic"])
async def test_disable_sdk_retries_sends_a_failing_request_once(
    build: Callable[[httpx2.AsyncClient], robota.Provider],
) -> None:
    seen, client = _counting()
    provider = build(client)
    with pytest.raises(robota.ProviderError):
        await robota.Agent(provider=provider, model="gpt-4o").run("x")
    assert len(seen) == 2  # the SDK as built: the request and one retry
    seen.clear()
    provider.disable_sdk_retries()
    with pytest.raises(robota.ProviderError) as caught:
        await robota.Agent(provider=provider, model="gpt-4o").run("x")
    assert len(seen) == 1
    assert caught.value.status == 503
    await provider.aclose()
    await client.aclose()


async def test_gemini_disable_sdk_retries_drops_its_retry_options() -> None:
    """google-genai retries only under ``retry_options``; a provider built with them retries
    until ``disable_sdk_retries()``, after which the caller's ``httpx_async_client`` still
    carries the single attempt and stays open after ``aclose()``."""
    seen, client = _counting()
    retry = {"attempts": 2, "initial_delay": 0.01, "max_delay": 0.01, "jitter": 0.0}
    provider = GeminiProvider(
        api_key="k",
        http_options={
            "base_url": "http://vendor.test/",
            "httpx_async_client": client,
            "retry_options": retry,
        },
        streaming=False,
    )
    with pytest.raises(robota.ProviderError):
        await robota.Agent(provider=provider, model="gemini-2.5-flash").run("x")
    assert len(seen) == 2  # the SDK as built: the request and one retry
    seen.clear()
    provider.disable_sdk_retries()
    provider.disable_sdk_retries()  # idempotent
    with pytest.raises(robota.ProviderError) as caught:
        await robota.Agent(provider=provider, model="gemini-2.5-flash").run("x")
    assert len(seen) == 1
    assert caught.value.status == 503
    await provider.aclose()
    assert not client.is_closed  # the caller's client stays the caller's
    await client.aclose()
