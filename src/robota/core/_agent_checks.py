"""Argument checks at the public entry points (issue 25).

A wrong type or value is a typed error that names the fix, never a raw ``TypeError`` from deep
inside.

:func:`check_agent_arguments` runs first in ``Agent.__init__``; :func:`check_run_input` at the
top of ``run``/``run_sync``/``run_stream``. Both raise :class:`~robota.ConfigurationError`
(a ``ValueError``). :func:`check_text` refuses text that is not valid Unicode — a ``str`` holding
lone surrogates, which is what bytes decoded with ``errors="surrogateescape"`` become — up front,
instead of letting a codec error surface from a provider's serializer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from robota.core._errors import ConfigurationError
from robota.core._text_check import check_text

__all__ = ["check_agent_arguments", "check_run_input", "check_text", "unknown_run_options"]


def _kind(value: object) -> str:
    if callable(value) and hasattr(value, "__name__"):
        return f"{type(value).__name__} {getattr(value, '__name__', '')!r}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _optional_text(value: object, where: str, example: str) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ConfigurationError(
            f"{where} must be a string or None ({example}), got {_kind(value)}"
        )
    check_text(value, where)


def _collection(value: object, where: str, example: str, single: str) -> None:
    # A single item where a list belongs is the common slip (tools=fn); a str or a mapping is
    # iterable but never what is meant.
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise ConfigurationError(
            f"{where} must be a list ({example}), got {_kind(value)}; {single}"
        )


def check_agent_arguments(options: Mapping[str, Any]) -> None:
    """Check the types and values of ``Agent(...)``'s arguments (``options``: name → value).

    Only what the constructor does not check further down is checked here; each message says
    what to write instead.

    Raises:
        ConfigurationError: for the first argument of a wrong type or value.
    """
    from robota.core._plugins import Module, Plugin  # noqa: PLC0415 - avoids an import cycle
    from robota.core.providers._contract import Provider  # noqa: PLC0415
    from robota.core.tools._source import ToolSource  # noqa: PLC0415
    from robota.core.tools._tool import Tool  # noqa: PLC0415

    model = options.get("model")
    if not isinstance(model, str) or not model.strip():
        raise ConfigurationError(
            f"model must be a non-empty string such as 'openai:gpt-5-mini', got {_kind(model)}"
        )
    provider = options.get("provider")
    if provider is not None and not isinstance(provider, Provider):
        raise ConfigurationError(
            f"provider must be a robota.Provider (e.g. OpenAIProvider(...)), got "
            f"{_kind(provider)}; to let the model string choose one, write "
            "model='prefix:model' and leave provider out"
        )
    providers = options.get("providers", ())
    if isinstance(providers, Provider):
        raise ConfigurationError(
            "providers must be a list of providers (providers=[a, b]); for one provider write "
            "provider=..."
        )
    _collection(providers, "providers", "providers=[a, b]", "for one provider write provider=...")
    _optional_text(options.get("system_prompt"), "system_prompt", 'system_prompt="Be brief."')
    _optional_text(options.get("name"), "name", 'name="researcher"')
    tools = options.get("tools", ())
    if isinstance(tools, Tool | ToolSource) or callable(tools):
        shown = getattr(tools, "name", None) or getattr(tools, "__name__", None) or "my_tool"
        raise ConfigurationError(
            f"tools must be a list (tools=[{shown}]), got {_kind(tools)}; put the tool in a list"
        )
    _collection(tools, "tools", "tools=[get_weather]", "put each tool in a list")
    for field, base, example in (
        ("plugins", Plugin, "plugins=[MyPlugin()]"),
        ("modules", Module, "modules=[MyModule()]"),
    ):
        value = options.get(field, ())
        if isinstance(value, base):
            raise ConfigurationError(f"{field} must be a list ({example}), got one {_kind(value)}")
        _collection(value, field, example, "put each one in a list")
    _collection(options.get("history", ()), "history", "history=agent.history", "pass messages")
    for field in ("owns_providers", "allow_tool_only_completion"):
        value = options.get(field)
        if not isinstance(value, bool):
            raise ConfigurationError(f"{field} must be True or False, got {_kind(value)}")
    concurrency = options.get("tool_concurrency")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigurationError(
            f"tool_concurrency must be a positive integer (e.g. tool_concurrency=4), got "
            f"{_kind(concurrency)}"
        )


def check_run_input(input: object, method: str, options: Mapping[str, Any]) -> None:
    """Check a run's input and the options not checked later (``signal``, ``on_event``).

    Raises:
        ConfigurationError: naming the argument and what to pass.
    """
    from robota.core._abort import AbortSignal  # noqa: PLC0415 - keeps this module's edges few

    if isinstance(input, str):
        check_text(input, f"the input of agent.{method}()")
    elif isinstance(input, (list, tuple)) and input:
        from robota.core._parts import TextPart, user_content  # noqa: PLC0415 - parts runs only

        for part in user_content(input, f"agent.{method}()"):
            if isinstance(part, TextPart):
                check_text(part.text, f"a TextPart in the input of agent.{method}()")
    else:
        raise ConfigurationError(
            f"agent.{method}() takes the user's message as a string, e.g. "
            f'agent.{method}("What is 2+2?"), or a list of parts (robota.TextPart, ImagePart, '
            f"DocumentPart, AudioPart), got {_kind(input)}"
        )
    signal = options.get("signal")
    if signal is not None and not isinstance(signal, AbortSignal):
        raise ConfigurationError(
            f"signal must be a robota.AbortSignal (controller = robota.AbortController(); "
            f"signal=controller.signal), got {_kind(signal)}"
        )
    on_event: Callable[..., object] | object = options.get("on_event")
    if on_event is not None and not callable(on_event):
        raise ConfigurationError(
            f"on_event must be a function taking one AgentEvent, got {_kind(on_event)}"
        )


def unknown_run_options(options: Mapping[str, Any], known: Iterable[str]) -> TypeError:
    """The error for run options ``known`` does not hold (a ``TypeError``, as Python's own).

    A model setting passed as a run option (``temperature=0.2``, the spelling other SDKs take)
    is named with its fix: ``settings=robota.ModelSettings(temperature=0.2)`` (S28).
    """
    from robota.core.providers._settings import SETTING_NAMES  # noqa: PLC0415 - one-way edges

    unknown = set(options) - set(known)
    message = (
        f"unknown run option(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
    )
    settings = [name for name in SETTING_NAMES if name in unknown]
    if settings:
        given = ", ".join(f"{name}={options[name]!r}" for name in settings)
        what = "model settings" if len(settings) > 1 else "a model setting"
        message += f"; {', '.join(settings)} is {what}: pass settings=robota.ModelSettings({given})"
    elif "model_settings" in unknown:
        message += "; model settings go in settings=robota.ModelSettings(...)"
    return TypeError(message)
