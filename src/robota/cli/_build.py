"""Build the agent ``robota run`` and ``robota chat`` drive, from their shared flags.

Model strings (``--model``) are resolved by :func:`robota.provider_for_model`, the registry
``robota.Agent("prefix:model")`` uses, so a string means the same provider in both. The flags
become its options: ``--base-url`` is ``base_url=``, the variable ``--api-key-env`` names is
``api_key=``, ``--api`` is ``options={"api": …}`` (``openai:`` only). Without them each adapter
finds its own settings by the library's rules: the key from its environment variable, else the
key ``robota auth set PREFIX`` stored (:func:`robota.host.find_api_key`); the
``openai-compatible:`` server's root from ``$OPENAI_COMPATIBLE_BASE_URL``.

* ``openai:MODEL``, ``anthropic:MODEL``, ``gemini:MODEL`` — the vendors' adapters (with
  ``--base-url``, a gateway speaking the vendor's API);
* ``openai-compatible:MODEL`` — :class:`~robota.providers.openai_compatible.
  OpenAICompatibleProvider` at ``--base-url`` (or ``$OPENAI_COMPATIBLE_BASE_URL``); with
  ``--base-url`` any model string naming no registered provider is sent to that server
  unchanged (``llama3:8b`` keeps its colon);
* any other ``prefix:MODEL`` — the provider a package registered for ``prefix`` in the
  ``robota.providers`` entry-point group.

``--tools module:attribute`` imports ``module`` (the current directory first on ``sys.path``)
and registers the attribute: a :class:`~robota.Tool`, a function, or a list or tuple of them.
``--tools builtin`` (a reserved value) registers :func:`robota.tools.builtin` bound to
``--workspace DIR`` (default: the current directory; ``--workspace`` alone is an error), gates
every call in ``default`` mode unless a mode is given — read-only tools and read-only commands
run, writes and other commands ask — and judges path rules from that root
(:func:`robota.host.permission_context`).

Settings files (``.robota/settings.json``, ``.robota/settings.local.json`` in the workspace,
``~/.robota/settings.json``; see :mod:`robota.cli._settings`) add allow/deny/ask rules, a
``defaultMode`` and hooks; any rule or mode in them gates tool calls.

``--hooks FILE`` reads a JSON settings file in the Claude Code settings format and runs the
command hooks of its ``"hooks"`` object (S22; other keys are not read), after the settings
files' hooks. ``UserPromptSubmit`` and
``Stop`` hooks are the agent's own; ``PreToolUse``, ``PostToolUse`` and ``Notification`` hooks
need the permission gate, so naming one of them without ``--permission-mode``/``--ask`` gates
tool calls in ``bypass`` mode — hooks only: every call is allowed except the few that always
reach a person (S21), and those are asked y/N on the terminal. A prompt a hook blocks ends the
run with exit code 1 and one ``error: a UserPromptSubmit hook blocked the prompt: …`` line.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, final
from urllib.parse import urlsplit

import robota
from robota import (
    ConfigurationError,
    CredentialStoreError,
    EffortSelection,
    PermissionMode,
    Provider,
    ToolLike,
)
from robota.cli._errors import CliError, one_line
from robota.cli._keys import explicit_key, missing_key
from robota.cli._settings import Settings, check_hooks, load_settings, merge_hooks

__all__ = [
    "BUILTIN_TOOLS",
    "AgentFlags",
    "Built",
    "build_agent",
    "check_base_url",
    "check_text_flag",
    "load_hooks",
    "load_tools",
]

BUILTIN_TOOLS: Final = "builtin"
"""The reserved ``--tools`` value: :func:`robota.tools.builtin` bound to the workspace."""

_COMPATIBLE: Final = "openai-compatible"
COMPATIBLE_BASE_URL: Final = "OPENAI_COMPATIBLE_BASE_URL"
"""Where ``openai-compatible:MODEL`` finds the server without ``--base-url`` (its adapter reads
it; ``robota.providers.openai_compatible.BASE_URL_VARIABLE``, pinned by a test)."""


@final
@dataclass(frozen=True, slots=True)
class AgentFlags:
    """The flags ``run`` and ``chat`` share (see ``robota run --help``)."""

    model: str
    system: str | None = None
    max_rounds: int | None = None
    effort: EffortSelection = "auto"
    temperature: float | None = None
    max_output_tokens: int | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    retries: int | None = None
    fallback: Sequence[str] = ()
    tools: Sequence[str] = ()
    base_url: str | None = None
    context_window: int | None = None
    api: Literal["responses", "chat"] | None = None
    api_key_env: str | None = None
    permission_mode: PermissionMode | None = None
    ask: bool = False
    hooks: str | None = None
    workspace: str | None = None


@final
@dataclass(frozen=True, slots=True)
class Built:
    """The agent and where its provider sends requests (for "cannot reach …" messages)."""

    agent: robota.Agent
    endpoint: str | None
    workspace: str | None = None
    """The root of ``--tools builtin`` (what ``/undo`` undoes in), else ``None``."""
    settings: Settings = field(default_factory=Settings)
    """What the settings files said (the chat shows what they grant)."""


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


_VENDOR_ENDPOINTS: Final = {
    "openai": "OpenAI's API",
    "anthropic": "anthropic's API",
    "gemini": "gemini's API",
}


def _spec(flags: AgentFlags) -> tuple[str, str]:
    """The model string to resolve and its prefix (``--base-url`` routing applied)."""
    prefix, sep, rest = flags.model.partition(":")
    if flags.api is not None and prefix != "openai":
        raise CliError("--api applies only to openai:MODEL")
    named = bool(sep and prefix and rest)
    if sep and not rest.strip() and prefix in _registered():
        # Never routed to --base-url as a model name: the prefix is known, the model is missing.
        raise CliError(
            f"--model {flags.model!r} names no model after the prefix {prefix!r}: "
            f"write {prefix}:MODEL"
        )
    if flags.base_url is not None and not (named and prefix in _registered()):
        # With --base-url a model string naming no registered provider goes to an
        # OpenAI-compatible server unchanged (`llama3:8b` keeps its colon).
        return f"{_COMPATIBLE}:{flags.model}", _COMPATIBLE
    if not named:
        raise CliError(
            f"model {flags.model!r} names no provider: write PREFIX:MODEL (registered "
            f"prefixes: {', '.join(_registered()) or 'none installed'}), or "
            f"{_COMPATIBLE}:MODEL with --base-url URL"
        )
    return flags.model, prefix


def check_base_url(url: str) -> None:
    """Refuse a ``--base-url`` that is not an ``http(s)://host…`` URL.

    A usage error, never reported as "cannot reach".

    Raises:
        CliError: exit code 2, saying how to write it.
    """
    if not url.strip():
        return  # an empty --base-url is reported as empty where the provider is built
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


def _registered() -> tuple[str, ...]:
    return robota.registered_provider_prefixes()


def _spending(flags: AgentFlags, provider: Provider) -> dict[str, Any]:
    """``--max-cost``, ``--max-tokens``, ``--retries`` and ``--fallback`` as Agent options."""
    options: dict[str, Any] = {}
    if flags.max_cost is not None or flags.max_tokens is not None:
        options["limits"] = robota.UsageLimits(
            cost_usd=flags.max_cost, total_tokens=flags.max_tokens
        )
    if flags.retries is not None:
        options["retry"] = robota.RetryPolicy(attempts=flags.retries + 1)
        # One owner of retries (issue 28): the CLI built this provider, so it turns the SDK's
        # own retries off, as the agent does for providers it builds from model strings.
        provider.disable_sdk_retries()
    for model in flags.fallback:
        check_text_flag(model, "--fallback")
    if flags.fallback:
        options["fallback"] = list(flags.fallback)
    return options


def _provider(flags: AgentFlags) -> tuple[Provider, str, str | None]:
    """The provider, model and endpoint: resolved by the registry ``robota.Agent`` uses."""
    check_text_flag(flags.model, "--model")
    if flags.system is not None:
        check_text_flag(flags.system, "--system")
    if flags.base_url is not None:
        check_base_url(flags.base_url)
    spec, prefix = _spec(flags)
    api_key = explicit_key(prefix, flags.api_key_env)
    try:
        provider, model = robota.provider_for_model(
            spec,
            api_key=api_key,
            base_url=flags.base_url,
            options={"api": flags.api} if flags.api is not None else None,
        )
    except CredentialStoreError as error:
        raise CliError(one_line(error.message)) from None
    endpoint = flags.base_url or _VENDOR_ENDPOINTS.get(prefix)
    if endpoint is None and prefix == _COMPATIBLE:
        endpoint = os.environ.get(COMPATIBLE_BASE_URL)
    return provider, model, endpoint


def _setup_error(error: ConfigurationError, flags: AgentFlags) -> CliError:
    """The one line for a setup error, naming only fixes the user has not already made."""
    missing = missing_key(error)
    if missing is not None:
        return missing
    if error.code == "missing_base_url":
        variable = str(error.context.get("variable", COMPATIBLE_BASE_URL))
        if flags.base_url is not None:
            return CliError(
                f"--base-url {flags.base_url!r} is empty: give the server's API root, e.g. "
                "http://127.0.0.1:8080/v1"
            )
        if variable in os.environ:
            return CliError(
                f"{flags.model}: ${variable} is set but empty; set it to the server's API root "
                "or pass --base-url URL"
            )
        return CliError(
            f"{flags.model} needs the server's API root: pass --base-url URL (e.g. "
            f"http://127.0.0.1:8080/v1) or set {variable}"
        )
    options = error.context.get("options")
    if isinstance(options, tuple) and "prefix" in error.context:
        flag_names = ", ".join(_FLAGS.get(str(name), str(name)) for name in options)
        return CliError(
            f"the provider registered for {error.context['prefix']!r} does not take {flag_names}"
        )
    message = error.message
    prefix, sep, _ = flags.model.partition(":")
    if sep and flags.base_url is None and prefix not in _registered():
        server = os.environ.get(COMPATIBLE_BASE_URL)
        if server:
            message += f" (for the server at ${COMPATIBLE_BASE_URL}: --model {_COMPATIBLE}:MODEL)"
        else:
            message += (
                f" (any OpenAI-compatible server: --model {_COMPATIBLE}:MODEL --base-url URL)"
            )
    return CliError(one_line(message))


_FLAGS: Final = {"api_key": "--api-key-env", "base_url": "--base-url", "api": "--api"}


_GATE_EVENTS: Final = ("PreToolUse", "PostToolUse", "Notification")
"""The hook events only a permission gate fires (S22)."""


def _hooks_file(path: str) -> dict[str, list[Any]] | None:
    """The checked ``"hooks"`` object of the ``--hooks`` file; ``None`` when it disables hooks."""
    where = f"--hooks {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"{where}: cannot read it: {one_line(str(error))}") from None
    try:
        settings = json.loads(text)
    except ValueError as error:
        raise CliError(f"{where}: not JSON: {one_line(str(error))}") from None
    disabled = settings.get("disableAllHooks", False) if isinstance(settings, dict) else False
    if not isinstance(disabled, bool):
        raise CliError(f"{where}: disableAllHooks must be true or false, got {disabled!r}")
    if disabled:
        return None
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks"), dict):
        raise CliError(
            f'{where}: expected a settings object with a "hooks" object, e.g. '
            '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": '
            '"./check.sh"}]}]}}'
        )
    return check_hooks(settings["hooks"], where)


def _runner(hooks: Mapping[str, list[Any]]) -> robota.HookRunner:
    from robota.host import CommandHookExecutor  # noqa: PLC0415 - only with hooks

    return robota.HookRunner(
        robota.HookConfig.from_dict(dict(hooks)), {"command": CommandHookExecutor()}
    )


def load_hooks(path: str) -> robota.HookRunner | None:
    """The command hooks of the ``"hooks"`` object in the JSON settings file at ``path``.

    ``None`` when the file sets ``"disableAllHooks": true``, as Claude Code's settings format
    turns every hook off.

    Raises:
        CliError: exit code 2 — the file cannot be read, is not a JSON object, has no
            ``"hooks"`` object, names an unknown event or a malformed entry, or a hook type
            other than ``command``.
    """
    hooks = _hooks_file(path)
    return None if hooks is None else _runner(hooks)


def _all_hooks(flags: AgentFlags, settings: Settings) -> robota.HookRunner | None:
    """The settings files' hooks merged with ``--hooks FILE``'s (the flag's run last)."""
    extra = _hooks_file(flags.hooks) if flags.hooks is not None else None
    if extra is None and not settings.hooks:
        return None
    return _runner(merge_hooks(settings.hooks, extra or {}))


def _gate(
    flags: AgentFlags,
    approver: robota.Approver,
    hooks: robota.HookRunner | None,
    *,
    settings: Settings,
    root: str,
    builtin: bool,
) -> robota.PermissionGate | None:
    # A flag wins over the files' defaultMode (local project > project > user).
    mode = flags.permission_mode or settings.default_mode
    gated = mode is not None or flags.ask or builtin or settings.has_permissions
    if not gated and not (hooks is not None and any(map(hooks.configured, _GATE_EVENTS))):
        return None
    from robota.host import permission_context  # noqa: PLC0415 - only with a gate

    # Builtin tools and rules from settings files gate in default mode: read-only calls run,
    # writes and non-read-only commands ask (S21). Hooks alone gate in bypass mode: the hooks
    # run, the rules add nothing (S21 still asks about the few calls that always reach a
    # person).
    chosen: PermissionMode = mode or ("default" if gated else "bypass")
    try:
        policy = robota.PermissionPolicy(
            mode=chosen,
            allow=settings.allow,
            deny=settings.deny,  # S21: a deny from any file wins, whatever the mode
            ask=settings.ask,
            ask_everything=flags.ask,
        )
    except ConfigurationError as error:
        raise CliError(one_line(error.message)) from None
    return robota.PermissionGate(policy, permission_context(root), approver=approver, hooks=hooks)


def _workspace(flags: AgentFlags) -> tuple[str, bool]:
    """The root rules, settings files and builtin tools use, and whether builtin tools are on."""
    builtin = BUILTIN_TOOLS in flags.tools
    if flags.workspace is None:
        return os.getcwd(), builtin
    if not builtin:
        raise CliError(
            "--workspace sets the root of the built-in tools; add --tools builtin (or drop "
            "--workspace)"
        )
    check_text_flag(flags.workspace, "--workspace")
    root = os.path.abspath(os.path.expanduser(flags.workspace))
    if not os.path.isdir(root):
        raise CliError(f"--workspace {flags.workspace!r} is not an existing directory")
    return root, builtin


def _tools(flags: AgentFlags, root: str) -> list[ToolLike]:
    tools: list[ToolLike] = []
    for spec in flags.tools:
        if spec == BUILTIN_TOOLS:
            import robota.tools  # noqa: PLC0415 - only with --tools builtin

            tools.extend(robota.tools.builtin(workspace=root))
        else:
            tools.extend(_load_one(spec))
    return tools


def build_agent(flags: AgentFlags, *, approver: robota.Approver) -> Built:
    """The agent the flags describe; it owns (and closes) its provider.

    Args:
        flags: The parsed flags.
        approver: Answers the permission gate's asks (with ``--permission-mode``/``--ask``,
            ``--tools builtin``, rules in settings files, or hooks that need the gate).

    Raises:
        CliError: with exit code 2 for every way the flags cannot work — a missing key, an
            unknown prefix (the message lists the registered ones), a bad ``--tools`` spec,
            ``--workspace`` without ``--tools builtin``, a bad settings file, any
            :class:`~robota.ConfigurationError` the agent or provider raised.
    """
    root, builtin = _workspace(flags)
    settings = load_settings(root)
    tools = _tools(flags, root)
    try:
        # Checked before the provider exists, so a bad tool never leaves an open client behind.
        robota.ToolRegistry(tools)
        hooks = _all_hooks(flags, settings)
        gate = _gate(flags, approver, hooks, settings=settings, root=root, builtin=builtin)
        provider, model, endpoint = _provider(flags)
        agent = robota.Agent(
            model=model,
            provider=provider,
            owns_providers=True,
            system_prompt=flags.system,
            tools=tools,
            effort=flags.effort,
            settings=robota.ModelSettings(
                temperature=flags.temperature, max_output_tokens=flags.max_output_tokens
            ),
            tool_gate=gate,
            hooks=hooks,
            context_window=flags.context_window,
            name="robota-cli",
            max_rounds=robota.DEFAULT_MAX_ROUNDS if flags.max_rounds is None else flags.max_rounds,
            **_spending(flags, provider),
        )
    except ConfigurationError as error:
        raise _setup_error(error, flags) from None
    return Built(agent, endpoint, root if builtin else None, settings)
