"""Build the agent ``robota run`` and ``robota chat`` drive, from their shared flags.

Model strings (``--model``):

* ``openai:MODEL`` — :class:`~robota.providers.openai.OpenAIProvider` with the key from
  :func:`~robota.cli._keys.find_key`, ``--api`` and ``--base-url`` (a gateway speaking OpenAI's
  API) passed through;
* ``anthropic:MODEL`` and ``gemini:MODEL`` — the Anthropic and Gemini providers, with the key
  found the same way (``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``) and ``--base-url`` passed on;
* ``openai-compatible:MODEL --base-url URL`` — :class:`~robota.providers.openai_compatible.
  OpenAICompatibleProvider` at ``URL``; with ``--base-url`` any other model string is sent to
  that server unchanged (``llama3:8b`` keeps its colon);
* any other ``prefix:MODEL`` — the provider a package registered for ``prefix`` in the
  ``robota.providers`` entry-point group, built with no arguments (it reads its own settings).

``--tools module:attribute`` imports ``module`` (the current directory first on ``sys.path``)
and registers the attribute: a :class:`~robota.Tool`, a function, or a list or tuple of them.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, final
from urllib.parse import urlsplit

import robota
from robota import ConfigurationError, EffortSelection, PermissionMode, Provider, ToolLike
from robota.cli._errors import CliError, one_line
from robota.cli._keys import KEY_VARIABLES, find_key

__all__ = ["AgentFlags", "Built", "build_agent", "check_base_url", "check_text_flag", "load_tools"]

_COMPATIBLE: Final = "openai-compatible"


@final
@dataclass(frozen=True, slots=True)
class AgentFlags:
    """The flags ``run`` and ``chat`` share (see ``robota run --help``)."""

    model: str
    system: str | None = None
    max_rounds: int | None = None
    effort: EffortSelection = "auto"
    tools: Sequence[str] = ()
    base_url: str | None = None
    context_window: int | None = None
    api: Literal["responses", "chat"] | None = None
    api_key_env: str | None = None
    permission_mode: PermissionMode | None = None
    ask: bool = False


@final
@dataclass(frozen=True, slots=True)
class Built:
    """The agent and where its provider sends requests (for "cannot reach …" messages)."""

    agent: robota.Agent
    endpoint: str | None


def _load_one(spec: str) -> list[ToolLike]:
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise CliError(f"--tools {spec!r} must be module:attribute (e.g. mytools:get_weather)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - a user module can raise anything on import
        raise CliError(
            one_line(
                f"--tools {spec!r}: cannot import {module_name}: {type(error).__name__}: {error}"
            )
        ) from None
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CliError(
                f"--tools {spec!r}: {module_name} has no attribute {attribute!r}"
            ) from None
    items = list(value) if isinstance(value, list | tuple) else [value]
    tools: list[ToolLike] = []
    for item in items:
        if not isinstance(item, robota.Tool) and not callable(item):
            raise CliError(
                f"--tools {spec!r}: {type(item).__name__} is not a tool, a function, or a list "
                "of them"
            )
        tools.append(item)
    return tools


def load_tools(specs: Sequence[str]) -> list[ToolLike]:
    """The tools every ``--tools`` spec names, in order.

    Raises:
        CliError: for a malformed spec, a module that fails to import, a missing attribute, or
            a value that is not a tool, a function or a list of them.
    """
    return [tool for spec in specs for tool in _load_one(spec)]


def _missing_key(provider: str, variable: str | None) -> CliError:
    if variable is not None:
        return CliError(
            f"no API key for {provider}: ${variable} (named by --api-key-env) is not set"
        )
    usual = KEY_VARIABLES.get(provider)
    where = f"set {usual} or " if usual else ""
    return CliError(f"no API key for {provider}: {where}run `robota auth set {provider}`")


def _vendor(prefix: str, model: str, flags: AgentFlags) -> tuple[Provider, str, str]:
    """A vendor's own provider (``openai:``, ``anthropic:``, ``gemini:``), key found here."""
    found = find_key(prefix, variable=flags.api_key_env)
    if found is None:
        raise _missing_key(prefix, flags.api_key_env)
    endpoint = flags.base_url or f"{prefix}'s API"
    # Imported only when used: `robota --help` loads no provider.
    if prefix == "openai":
        from robota.providers.openai import OpenAIProvider  # noqa: PLC0415

        provider: Provider = OpenAIProvider(
            api_key=found.key, base_url=flags.base_url, api=flags.api or "responses"
        )
        return provider, model, flags.base_url or "OpenAI's API"
    if prefix == "anthropic":
        from robota.providers.anthropic import AnthropicProvider  # noqa: PLC0415

        return AnthropicProvider(api_key=found.key, base_url=flags.base_url), model, endpoint
    from robota.providers.gemini import GeminiProvider  # noqa: PLC0415

    options = {"base_url": flags.base_url} if flags.base_url else None
    return GeminiProvider(api_key=found.key, http_options=options), model, endpoint


_VENDORS: Final = frozenset({"openai", "anthropic", "gemini"})


def check_base_url(url: str) -> None:
    """Refuse a ``--base-url`` that is not an ``http(s)://host…`` URL.

    A usage error, never reported as "cannot reach".

    Raises:
        CliError: exit code 2, saying how to write it.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise CliError(
            f"--base-url {url!r} is not a URL: write the server's API root with http:// or "
            "https://, e.g. --base-url http://127.0.0.1:8080/v1"
        )


def check_text_flag(value: str, what: str) -> None:
    """Refuse text that is not valid Unicode.

    argv bytes that were not UTF-8 arrive as lone surrogates (``surrogateescape``) and would
    fail deep inside a provider's encoder.

    Raises:
        CliError: exit code 2, naming the flag and the first bad byte.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        byte = ord(value[error.start]) - 0xDC00
        shown = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else repr(value[error.start])
        raise CliError(
            f"{what} is not UTF-8 text ({shown} at character {error.start}); convert it to "
            "UTF-8 first (e.g. with iconv -t UTF-8)"
        ) from None


def _provider(flags: AgentFlags) -> tuple[Provider | None, str, str | None]:
    """The provider to pass (``None``: resolve through the entry points), model and endpoint."""
    check_text_flag(flags.model, "--model")
    if flags.system is not None:
        check_text_flag(flags.system, "--system")
    if flags.base_url is not None:
        check_base_url(flags.base_url)
    prefix, sep, rest = flags.model.partition(":")
    if flags.api is not None and prefix != "openai":
        raise CliError("--api applies only to openai:MODEL")
    if sep and prefix in _VENDORS and rest:
        return _vendor(prefix, rest, flags)
    if flags.base_url is not None:
        from robota.providers.openai_compatible import (  # noqa: PLC0415 - only when used
            OpenAICompatibleProvider,
        )

        found = find_key(_COMPATIBLE, variable=flags.api_key_env)
        if found is None and flags.api_key_env is not None:
            raise _missing_key(_COMPATIBLE, flags.api_key_env)
        model = rest if sep and prefix == _COMPATIBLE and rest else flags.model
        compatible = OpenAICompatibleProvider(
            base_url=flags.base_url, api_key=None if found is None else found.key
        )
        return compatible, model, flags.base_url
    if sep and prefix == _COMPATIBLE:
        raise CliError(f"{_COMPATIBLE}:MODEL needs --base-url, the server's API root")
    if not sep or not prefix or not rest:
        registered = ", ".join(robota.registered_provider_prefixes()) or "none installed"
        raise CliError(
            f"model {flags.model!r} names no provider: write PREFIX:MODEL (registered "
            f"prefixes: {registered}), or {_COMPATIBLE}:MODEL with --base-url URL"
        )
    return None, flags.model, None


def _gate(flags: AgentFlags, approver: robota.Approver) -> robota.PermissionGate | None:
    if flags.permission_mode is None and not flags.ask:
        return None
    from robota.host import permission_context  # noqa: PLC0415 - only with a gate

    policy = robota.PermissionPolicy(
        mode=flags.permission_mode or "default", ask_everything=flags.ask
    )
    return robota.PermissionGate(policy, permission_context(os.getcwd()), approver=approver)


def build_agent(flags: AgentFlags, *, approver: robota.Approver) -> Built:
    """The agent the flags describe; it owns (and closes) its provider.

    Args:
        flags: The parsed flags.
        approver: Answers the permission gate's asks (only with ``--permission-mode``/``--ask``).

    Raises:
        CliError: with exit code 2 for every way the flags cannot work — a missing key, an
            unknown prefix (the message lists the registered ones), a bad ``--tools`` spec, any
            :class:`~robota.ConfigurationError` the agent or provider raised.
    """
    tools = load_tools(flags.tools)
    try:
        # Checked before the provider exists, so a bad tool never leaves an open client behind.
        robota.ToolRegistry(tools)
        gate = _gate(flags, approver)
        provider, model, endpoint = _provider(flags)
        agent = robota.Agent(
            model=model,
            provider=provider,
            owns_providers=True,
            system_prompt=flags.system,
            tools=tools,
            effort=flags.effort,
            tool_gate=gate,
            context_window=flags.context_window,
            name="robota-cli",
            max_rounds=robota.DEFAULT_MAX_ROUNDS if flags.max_rounds is None else flags.max_rounds,
        )
    except ConfigurationError as error:
        message = error.message
        prefix, sep, _ = flags.model.partition(":")
        if sep and prefix not in robota.registered_provider_prefixes():
            message += (
                f" (any OpenAI-compatible server: --model {_COMPATIBLE}:MODEL --base-url URL)"
            )
        raise CliError(one_line(message)) from None
    return Built(agent, endpoint)
