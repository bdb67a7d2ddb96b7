"""Wrong types and values at the public entry points (issue 25, item 8).

Every case feeds ``Agent(...)``, ``run``/``run_sync``/``run_stream`` or the tool constructors a
wrong argument and expects a typed :class:`robota.ConfigurationError` — never a raw
``TypeError`` or a codec error from deep inside — whose message names the fix.
"""

from __future__ import annotations

from typing import Any

import pytest

import robota
from robota.testing import ScriptedProvider

LONE_SURROGATE = "caf\udce9"  # b"caf\xe9" (Latin-1) decoded as UTF-8 with surrogateescape


def get_weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


class _Plugin(robota.Plugin):
    """A plugin passed where a list of them belongs."""


def _agent(**options: Any) -> robota.Agent:
    options.setdefault("provider", ScriptedProvider(["ok"]))
    options.setdefault("model", "scripted-model")
    return robota.Agent(**options)


AGENT_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("tools is one function", {"tools": get_weather}, "tools=[get_weather]"),
    ("tools is a tool", {"tools": robota.tool(get_weather)}, "tools=[get_weather]"),
    ("tools is a string", {"tools": "get_weather"}, "put each tool in a list"),
    ("system_prompt is a number", {"system_prompt": 5}, 'system_prompt="Be brief."'),
    ("system_prompt is not Unicode", {"system_prompt": LONE_SURROGATE}, "errors='replace'"),
    ("provider is a string", {"provider": "openai"}, "model='prefix:model'"),
    ("model is a number", {"model": 5}, "'openai:gpt-5-mini'"),
    ("model is empty", {"model": " "}, "'openai:gpt-5-mini'"),
    (
        "providers is one provider",
        {"provider": None, "providers": ScriptedProvider([])},
        "provider=...",
    ),
    ("plugins is one plugin", {"plugins": _Plugin()}, "plugins=[MyPlugin()]"),
    ("name is a number", {"name": 7}, 'name="researcher"'),
    ("tool_concurrency is zero", {"tool_concurrency": 0}, "tool_concurrency=4"),
    ("owns_providers is a string", {"owns_providers": "yes"}, "True or False"),
    ("texts is a dict", {"texts": {"summary_fallback": "x"}}, "texts=robota.ModelTexts("),
    ("context_window is zero", {"context_window": 0}, "context_window=8192"),
    ("context_window is a string", {"context_window": "4096"}, "context_window=8192"),
]


@pytest.mark.parametrize(
    ("options", "fix"), [case[1:] for case in AGENT_CASES], ids=[case[0] for case in AGENT_CASES]
)
def test_agent_refuses_a_wrong_argument_with_a_typed_error_naming_the_fix(
    options: dict[str, Any], fix: str
) -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        _agent(**options)
    assert fix in caught.value.message


RUN_CASES: list[tuple[str, object, dict[str, Any], str]] = [
    ("input is a number", 5, {}, '("What is 2+2?")'),
    ("input is bytes", b"hello", {}, '("What is 2+2?")'),
    ("input is a list", ["hello"], {}, '("What is 2+2?")'),
    ("input is not Unicode", LONE_SURROGATE, {}, "errors='replace'"),
    ("signal is a string", "hi", {"signal": "stop"}, "robota.AbortController()"),
    ("on_event is not callable", "hi", {"on_event": 5}, "a function taking one AgentEvent"),
    ("max_rounds is negative", "hi", {"max_rounds": -1}, "0 disables the cap"),
]
_RUN_IDS = [case[0] for case in RUN_CASES]
_RUN_PARAMS = [case[1:] for case in RUN_CASES]


@pytest.mark.parametrize(("value", "options", "fix"), _RUN_PARAMS, ids=_RUN_IDS)
async def test_run_refuses_a_wrong_input_before_touching_the_provider(
    value: object, options: dict[str, Any], fix: str
) -> None:
    provider = ScriptedProvider(["ok"])
    agent = _agent(provider=provider)
    with pytest.raises(robota.ConfigurationError) as caught:
        await agent.run(value, **options)  # type: ignore[arg-type]
    assert fix in caught.value.message
    assert provider.requests == []
    assert len(agent.history) == 0


@pytest.mark.parametrize(("value", "options", "fix"), _RUN_PARAMS, ids=_RUN_IDS)
def test_run_sync_refuses_a_wrong_input(value: object, options: dict[str, Any], fix: str) -> None:
    agent = _agent()
    with pytest.raises(robota.ConfigurationError) as caught:
        agent.run_sync(value, **options)  # type: ignore[arg-type]
    assert fix in caught.value.message


@pytest.mark.parametrize(("value", "options", "fix"), _RUN_PARAMS, ids=_RUN_IDS)
def test_run_stream_refuses_a_wrong_input_when_called(
    value: object, options: dict[str, Any], fix: str
) -> None:
    agent = _agent()
    with pytest.raises(robota.ConfigurationError) as caught:
        agent.run_stream(value, **options)  # type: ignore[arg-type]
    assert fix in caught.value.message


def test_update_system_prompt_refuses_text_that_is_not_unicode() -> None:
    agent = _agent()
    with pytest.raises(robota.ConfigurationError, match="not valid Unicode"):
        agent.update_system_prompt(LONE_SURROGATE)
    assert agent.system_prompt is None


def test_a_valid_agent_and_run_still_work() -> None:
    agent = _agent(tools=[get_weather], system_prompt="Be brief.", context_window=8192)
    result = agent.run_sync("hi")
    assert result.output == "ok"
    assert result.context_window == robota.ContextWindow(8192, "caller")


def _untyped(city):  # type: ignore[no-untyped-def]
    return city


class _Described(robota.Tool):
    name = "described"
    parameters = {"type": "object", "properties": {}}  # noqa: RUF012

    async def execute(self, arguments: Any, ctx: robota.ToolContext) -> str:
        return ""


TOOL_CASES: list[tuple[str, Any, str]] = [
    ("tool of a number", lambda: robota.tool(5), "robota.tool(my_function)"),  # type: ignore[call-overload]
    ("risk is not a class", lambda: robota.tool(get_weather, risk="read"), 'risk="inspect"'),  # type: ignore[arg-type]
    ("description is a number", lambda: _Described(description=5), "description must be a string"),  # type: ignore[arg-type]
    ("untyped parameter", lambda: robota.tool(_untyped), "(e.g. `city: str`)"),
    ("tool name is a number", lambda: robota.tool(get_weather, name=5), "a tool name must be"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("build", "fix"), [case[1:] for case in TOOL_CASES], ids=[case[0] for case in TOOL_CASES]
)
def test_tool_constructors_refuse_a_wrong_argument_naming_the_fix(build: Any, fix: str) -> None:
    with pytest.raises(robota.ConfigurationError) as caught:
        build()
    assert fix in caught.value.message
    assert "{" not in caught.value.message  # never a literal, unformatted placeholder


_VENDOR_BASE_URLS: list[tuple[str, object, str]] = [
    ("openai:gpt-5-mini", "not-a-url", "'not-a-url' is not a URL"),
    ("openai:gpt-5-mini", 5, "base_url must be"),
    ("anthropic:claude-sonnet-4-5", "ftp://example.com", "'ftp://example.com' is not a URL"),
    ("gemini:gemini-2.5-flash", 5, "base_url must be"),
]


@pytest.mark.parametrize(("model", "base_url", "said"), _VENDOR_BASE_URLS)
def test_a_vendor_base_url_that_is_not_a_url_is_refused_when_the_agent_is_built(
    model: str, base_url: object, said: str
) -> None:
    """Review of issue 25: `base_url="not-a-url"` ended as "could not be reached" at the first
    run, and `base_url=5` as a raw TypeError from the HTTP client."""
    with pytest.raises(robota.ConfigurationError) as caught:
        robota.Agent(model, api_key="sk-not-a-real-key", base_url=base_url)  # type: ignore[arg-type]
    assert said in caught.value.message
    assert "http://" in caught.value.message  # says how to write one
