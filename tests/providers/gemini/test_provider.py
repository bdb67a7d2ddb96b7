"""GeminiProvider's construction, ownership, registry entries and lazy SDK import."""

from __future__ import annotations

import subprocess
import sys

import httpx2
import pytest

import robota
from providers.gemini._replay import body, recorded, serve
from robota.core._install import install_command
from robota.providers.gemini import GeminiProvider


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )


def test_importing_the_provider_package_does_not_load_the_sdk() -> None:
    done = _python(
        "import sys, robota, robota.providers.gemini; "
        "print(any(m == 'google.genai' or m.startswith('google.genai.') for m in sys.modules))"
    )
    assert done.stdout.strip() == "False", done.stderr


def test_a_missing_sdk_says_the_exact_install_command() -> None:
    done = _python(
        "import sys; sys.modules['google.genai'] = None\n"
        "from robota.providers.gemini import GeminiProvider\n"
        "try:\n    GeminiProvider(api_key='k')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    assert "ConfigurationError" in done.stdout
    assert install_command("gemini") in done.stdout


def test_a_missing_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(robota.ConfigurationError, match="GEMINI_API_KEY"):
        GeminiProvider()
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google-env")
    assert GeminiProvider().name == "gemini"


def test_s30_only_google_search_can_be_enabled() -> None:
    with pytest.raises(robota.ConfigurationError, match="not supported"):
        GeminiProvider(api_key="k", native_tools=["web_search"])
    capabilities = GeminiProvider(api_key="k", native_tools=["google_search"]).capabilities()
    assert capabilities.native_tools_supported == frozenset({"google_search"})
    assert capabilities.native_tools_enabled == frozenset({"google_search"})


def test_s18_endpoint_provenance_and_the_capability_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    assert GeminiProvider(api_key="k").endpoint_provenance() == "vendor_default"
    custom = GeminiProvider(api_key="k", http_options={"base_url": "http://gw.test/"})
    assert custom.endpoint_provenance() == "custom"
    capabilities = GeminiProvider(api_key="k").capabilities()
    assert capabilities.models["gemini-2.5-flash"].reasoning is True
    assert capabilities.models["gemini-2.0-flash"].reasoning is False
    assert capabilities.models["gemini-3-pro-preview"].structured_output == "json_schema"
    assert "gemini-unknown" not in capabilities.models  # silence, not denial (S30)


def test_s13_the_model_table_is_registered_and_source_dated() -> None:
    import robota.providers.gemini._models as table

    assert robota.get_model_context_window("gemini-2.5-flash", provider="gemini") == 1_048_576
    metadata = robota.get_model_metadata("gemini-2.0-flash", provider="gemini")
    assert metadata is not None
    assert metadata.max_output_tokens == 8_192
    pricing = robota.get_model_pricing("gemini-2.5-pro", provider="gemini")
    assert pricing is not None
    assert (pricing.input_per_million, pricing.output_per_million) == (1.25, 10.0)
    assert "read 2025-12" in (table.__doc__ or "")
    assert "verify them against the live pages before a release" in (table.__doc__ or "")


async def test_the_callers_httpx_async_client_is_used_and_never_closed() -> None:
    reply = body(recorded("test_google_model_instructions")[0])
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200, json=reply)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    provider = GeminiProvider(
        api_key="k",
        http_options={"base_url": "http://vendor.test/", "httpx_async_client": client},
        streaming=False,
    )
    result = await robota.Agent(provider=provider, model="gemini-2.0-flash").run("x")
    await provider.aclose()
    assert result.output == "The capital of France is Paris.\n"
    assert seen == ["http://vendor.test/v1beta/models/gemini-2.0-flash:generateContent"]
    assert not client.is_closed
    await client.aclose()


async def test_model_strings_build_the_gemini_provider_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve("test_google_model_stream") as server:
        monkeypatch.setenv("GEMINI_API_KEY", "from-env")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url + "/")
        async with robota.Agent(model="gemini:gemini-2.5-flash") as agent:
            result = await agent.run("capital?")
    assert result.output == "The capital of France is Paris.\n"
    assert server.requests[0].headers["x-goog-api-key"] == "from-env"
    assert server.requests[0].path_only == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
