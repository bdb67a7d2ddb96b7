"""The context window of a model behind an OpenAI-compatible server (issue 25, S13, S39).

Nothing is assumed: the window is the caller's, else what the server reports (``GET /v1/models``
— llama.cpp's ``meta.n_ctx_train``, vLLM's ``max_model_len`` — and llama.cpp's ``GET /props``
``default_generation_settings.n_ctx``), else the registered table, else unknown — and an unknown
window is stated by the run. A real HTTP server on 127.0.0.1 (the replay server, with routes for
the two questions) answers the real ``openai`` SDK.
"""

from __future__ import annotations

from typing import Any

import robota
from providers.openai._wire import compatible_provider, restreamed
from providers.replay import Exchange, ReplayServer
from robota import ContextWindow, EventNames, ModelMetadata
from robota.providers.openai_compatible._window import window_from_models, window_from_props

MODEL = "tiny"
BIG_PROMPT = "word " * 20_000  # about 25,000 estimated tokens: far past a 4096 window


def _llama_models(n_ctx_train: int, model_id: str = "tiny") -> dict[str, Any]:
    """``GET /v1/models`` as llama.cpp's server answers it (one model, ``meta`` attached)."""
    return {
        "object": "list",
        "data": [
            {
                "id": model_id,
                "object": "model",
                "created": 1,
                "owned_by": "llamacpp",
                "meta": {"vocab_type": 1, "n_vocab": 370, "n_ctx_train": n_ctx_train},
            }
        ],
    }


def _llama_props(n_ctx: int) -> dict[str, Any]:
    """``GET /props`` as llama.cpp's server answers it (the parts read here)."""
    return {
        "default_generation_settings": {"n_ctx": n_ctx, "params": {}},
        "total_slots": 1,
        "model_alias": MODEL,
    }


def _routes(models: object = None, props: object = None) -> dict[tuple[str, str], Exchange]:
    routes: dict[tuple[str, str], Exchange] = {}
    if models is not None:
        routes["GET", "/v1/models"] = Exchange.json(200, models)
    if props is not None:
        routes["GET", "/props"] = Exchange.json(200, props)
    return routes


def _reply(text: str = "ok") -> Exchange:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
    return restreamed(Exchange.json(200, body))


async def test_s39_a_prompt_past_the_window_the_server_reports_is_refused_before_sending() -> None:
    routes = _routes(models=_llama_models(4096))
    async with ReplayServer([], routes=routes) as server:
        provider = compatible_provider(server)
        agent = robota.Agent(provider=provider, model=MODEL, owns_providers=True)
        async with agent:
            result = await agent.run(BIG_PROMPT)
    assert server.requests == []  # the chat request was never sent
    assert result.stop_reason == "context_limit"
    assert result.context_window == ContextWindow(4096, "server")
    assert "4,096-token context window" in result.text
    assert "not sent" in result.text
    server.assert_all_served()


async def test_s39_llama_props_slot_window_wins_over_the_larger_training_length() -> None:
    # -c 4096 on a model trained for 32k: /props states the slot's 4096, which the server
    # enforces; the smaller of the two answers is the window.
    routes = _routes(models=_llama_models(32_768), props=_llama_props(4096))
    async with ReplayServer([], routes=routes) as server:
        agent = robota.Agent(provider=compatible_provider(server), model=MODEL, owns_providers=True)
        async with agent:
            result = await agent.run(BIG_PROMPT)
    assert result.context_window == ContextWindow(4096, "server")
    assert result.stop_reason == "context_limit"
    assert [q.path for q in server.questions] == ["/v1/models", "/props"]


async def test_s13_the_server_is_asked_once_per_provider_instance() -> None:
    routes = _routes(models=_llama_models(4096))
    async with ReplayServer([_reply("one"), _reply("two")], routes=routes) as server:
        provider = compatible_provider(server)
        agent = robota.Agent(provider=provider, model=MODEL, owns_providers=True)
        async with agent:
            first = await agent.run("hi")
            second = await agent.run("again")
            assert agent.context_usage().window == 4096
    assert (first.output, second.output) == ("one", "two")
    assert second.context_window == ContextWindow(4096, "server")
    assert [q.path for q in server.questions] == ["/v1/models", "/props"]
    server.assert_all_served()


async def test_s13_a_server_that_reports_nothing_leaves_the_window_unknown_and_says_so() -> None:
    events: list[robota.AgentEvent] = []
    async with ReplayServer([_reply("sent anyway")]) as server:  # /v1/models and /props: 404
        agent = robota.Agent(
            provider=compatible_provider(server), model="unlisted-model", owns_providers=True
        )
        async with agent:
            result = await agent.run(BIG_PROMPT, on_event=events.append)
    # No window is assumed: the large prompt goes out (no guard can judge it) and the run
    # records that its window was unknown.
    assert result.output == "sent anyway"
    assert result.context_window == ContextWindow(None, "unknown")
    assert len(server.requests) == 1
    unknown = [e for e in events if e.name == EventNames.CONTEXT_WINDOW_UNKNOWN]
    assert len(unknown) == 1
    assert unknown[0].data["model"] == "unlisted-model"
    assert agent.context_usage().window is None


async def test_s13_the_callers_window_wins_and_the_server_is_not_asked() -> None:
    routes = _routes(models=_llama_models(4096))
    async with ReplayServer([_reply()], routes=routes) as server:
        agent = robota.Agent(
            provider=compatible_provider(server),
            model=MODEL,
            context_window=1_000_000,
            owns_providers=True,
        )
        async with agent:
            result = await agent.run(BIG_PROMPT)
    assert result.context_window == ContextWindow(1_000_000, "caller")
    assert result.output == "ok"
    assert server.questions == []


async def test_s13_a_model_declared_with_models_is_not_asked_about() -> None:
    routes = _routes(models=_llama_models(4096))
    async with ReplayServer([], routes=routes) as server:
        provider = compatible_provider(
            server, name="declared-server", models=[ModelMetadata(MODEL, context_window=2048)]
        )
        agent = robota.Agent(provider=provider, model=MODEL, owns_providers=True)
        async with agent:
            result = await agent.run(BIG_PROMPT)
    assert result.context_window == ContextWindow(2048, "registry")
    assert result.stop_reason == "context_limit"
    assert server.questions == []
    robota.unregister_model_metadata(MODEL, provider="declared-server")


async def test_s13_a_server_that_does_not_answer_in_time_fails_nothing() -> None:
    routes = {("GET", "/v1/models"): Exchange.hang(30)}
    async with ReplayServer([_reply("answered")], routes=routes) as server:
        provider = compatible_provider(server)
        provider._probe._timeout = 0.2  # the 3 s default, shortened for the test
        agent = robota.Agent(provider=provider, model=MODEL, owns_providers=True)
        async with agent:
            result = await agent.run("hi")
    assert result.output == "answered"
    assert result.context_window == ContextWindow(None, "unknown")


def test_the_window_fields_of_known_servers_are_read() -> None:
    assert window_from_models(_llama_models(4096, model_id="anything.gguf"), "tiny") == 4096
    vllm = {"data": [{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 4096}]}
    assert window_from_models(vllm, "b") == 4096
    assert window_from_models(vllm, "c") is None  # several models, none of that name
    assert window_from_models({"data": [{"id": MODEL, "context_length": 131_072}]}, MODEL) == (
        131_072
    )
    assert window_from_models({"data": [{"id": MODEL}]}, MODEL) is None
    assert window_from_models({"data": "nonsense"}, MODEL) is None
    assert window_from_models({"data": [{"id": MODEL, "max_model_len": True}]}, MODEL) is None
    assert window_from_props(_llama_props(4096)) == 4096
    assert window_from_props({"default_generation_settings": {"n_ctx": 0}}) is None
    assert window_from_props([]) is None
