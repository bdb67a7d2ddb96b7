"""Settings files for ``robota run`` and ``robota chat``, in the Claude Code settings format.

Three files are read, when they exist, lowest precedence first:

1. ``~/.robota/settings.json`` — the user's (``$HOME`` honoured);
2. ``WORKSPACE/.robota/settings.json`` — the project's, checked in;
3. ``WORKSPACE/.robota/settings.local.json`` — the project's, personal (not checked in).

``WORKSPACE`` is ``--workspace DIR`` with ``--tools builtin``, else the current directory. Each
file is a JSON object; the keys read are::

    {
        "permissions": {
            "allow": ["Read(src/**)"],
            "deny": ["Read(.env)"],
            "ask": ["Bash(git push)"],
            "defaultMode": "default",
        },
        "hooks": {"PreToolUse": [...]},
        "disableAllHooks": false,
    }

Other keys (Claude Code has many) are ignored. Precedence follows that format:

* permission rules from every file merge; a deny rule wins wherever it is written (the
  evaluation order checks deny first, S21), so no file can allow what another denies;
* a scalar setting (``defaultMode``, ``disableAllHooks``) comes from the highest file that sets
  it: local project over project over user;
* hooks from every file merge (an event's matchers are concatenated, user's first);
* a command-line flag wins over every file (``--permission-mode`` over ``defaultMode``).

``defaultMode`` takes Claude Code's spellings (``default``, ``plan``, ``acceptEdits``,
``bypassPermissions``) and robota's (``accept_edits``, ``bypass``).

A settings file must be a regular file (a symlink to one is followed) of at most
:data:`MAX_SETTINGS_BYTES`: a checked-in link to ``/dev/zero``, a FIFO or a terminal is refused
before it is read, never a hang. A file that cannot be read, is not JSON, or has the wrong
shape (a rule that is not a string, an unknown mode, a malformed rule or hook) is a
:class:`~robota.cli._errors.CliError` naming the file and what is wrong — exit code 2 before
anything runs, never a traceback.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, final

import robota
from robota import ConfigurationError, PermissionMode
from robota.cli._errors import CliError, one_line

__all__ = [
    "MAX_SETTINGS_BYTES",
    "Settings",
    "check_hooks",
    "describe_settings",
    "load_settings",
    "merge_hooks",
    "settings_files",
]

#: The largest settings file read (Claude Code's are a few kilobytes).
MAX_SETTINGS_BYTES: Final = 1024 * 1024

_MODES: Final[Mapping[str, PermissionMode]] = {
    "default": "default",
    "plan": "plan",
    "acceptEdits": "accept_edits",
    "accept_edits": "accept_edits",
    "bypassPermissions": "bypass",
    "bypass": "bypass",
}


@final
@dataclass(frozen=True, slots=True)
class Settings:
    """What the settings files say, merged by the format's precedence.

    Attributes:
        allow: Allow rules of every file, user's first.
        deny: Deny rules of every file.
        ask: Ask rules of every file.
        default_mode: The permission mode of the highest file that sets one, else ``None``.
        hooks: The merged ``"hooks"`` object (raw, validated), empty when no file has hooks or
            the highest file setting ``disableAllHooks`` sets it true.
        files: The files that were read, lowest precedence first.
        mode_file: The file ``default_mode`` comes from, else ``None``.
    """

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    default_mode: PermissionMode | None = None
    hooks: Mapping[str, list[Any]] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    mode_file: str | None = None

    @property
    def has_permissions(self) -> bool:
        """Whether any file sets a rule or a mode (then tool calls are gated)."""
        return bool(self.allow or self.deny or self.ask or self.default_mode)


def settings_files(workspace: str | os.PathLike[str], *, home: str | None = None) -> list[Path]:
    """The settings files of ``workspace`` and ``home`` (default ``~``), lowest first.

    A path is listed once even when the workspace is the home directory.
    """
    user_home = Path(os.path.expanduser("~") if home is None else home)
    root = Path(workspace)
    candidates = [
        user_home / ".robota" / "settings.json",
        root / ".robota" / "settings.json",
        root / ".robota" / "settings.local.json",
    ]
    seen: set[str] = set()
    unique: list[Path] = []
    for path in candidates:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def _read_small_file(path: Path) -> str | None:
    """``path``'s text, when it is a regular file of at most :data:`MAX_SETTINGS_BYTES`.

    Opened without blocking (a FIFO opens at once) and checked on the open descriptor, so what
    is read is what was checked; ``None`` when there is no file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CliError(f"{path}: cannot read it: {one_line(str(error))}") from None
    with os.fdopen(fd, "rb") as file:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise CliError(f"{path}: not a regular file (a settings file must be JSON text)")
            data = file.read(MAX_SETTINGS_BYTES + 1)
        except OSError as error:
            raise CliError(f"{path}: cannot read it: {one_line(str(error))}") from None
    if len(data) > MAX_SETTINGS_BYTES:
        raise CliError(f"{path}: larger than {MAX_SETTINGS_BYTES} bytes; not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CliError(f"{path}: cannot read it: {one_line(str(error))}") from None


def _read(path: Path) -> dict[str, Any] | None:
    text = _read_small_file(path)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise CliError(f"{path}: not JSON: {one_line(str(error))}") from None
    if not isinstance(value, dict):
        raise CliError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


def _rules(permissions: Mapping[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = permissions.get(key, [])
    if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
        raise CliError(
            f'{path}: "permissions.{key}" must be a list of rule strings, e.g. ["Read(src/**)"]'
        )
    return tuple(value)


def check_hooks(hooks: object, where: str) -> dict[str, list[Any]]:
    """``hooks`` (a settings file's ``"hooks"`` value), checked as the command line runs them.

    Raises:
        CliError: exit code 2 — not an object, an unknown event or a malformed entry, or a hook
            type other than ``command``; the message starts with ``where``.
    """
    if not isinstance(hooks, dict):
        raise CliError(
            f'{where}: "hooks" must be an object, e.g. {{"UserPromptSubmit": [{{"hooks": '
            '[{"type": "command", "command": "./check.sh"}]}]}'
        )
    try:
        config = robota.HookConfig.from_dict(hooks)
    except ConfigurationError as error:
        raise CliError(f"{where}: {one_line(error.message)}") from None
    for event in robota.HOOK_EVENTS:
        for hook in config.hooks_for(event):
            if hook.type != "command":
                raise CliError(
                    f"{where}: {event} has a {hook.type!r} hook; the command line runs only "
                    '"type": "command" hooks (use the Python API for other types)'
                )
    return {str(event): list(entries) for event, entries in hooks.items()}


def merge_hooks(*objects: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """Hooks objects merged: each event's matcher entries concatenated, in argument order."""
    merged: dict[str, list[Any]] = {}
    for hooks in objects:
        for event, entries in hooks.items():
            merged.setdefault(event, []).extend(entries)
    return merged


def _disable(value: object, path: Path) -> bool:
    if not isinstance(value, bool):
        raise CliError(f"{path}: disableAllHooks must be true or false, got {value!r}")
    return value


def load_settings(workspace: str | os.PathLike[str], *, home: str | None = None) -> Settings:
    """The merged settings of ``workspace``'s project files and the user's file.

    Args:
        workspace: The root ``.robota/`` is looked for in.
        home: The user's home (default: ``~``, that is ``$HOME``).

    Raises:
        CliError: exit code 2, naming the file: it cannot be read, is not a JSON object, or a
            setting has the wrong shape (see the module docstring).
    """
    allow: list[str] = []
    deny: list[str] = []
    ask: list[str] = []
    mode: PermissionMode | None = None
    mode_file: str | None = None
    disabled = False
    hooks: list[dict[str, list[Any]]] = []
    read: list[str] = []
    for path in settings_files(workspace, home=home):
        settings = _read(path)
        if settings is None:
            continue
        read.append(str(path))
        permissions = settings.get("permissions", {})
        if not isinstance(permissions, dict):
            raise CliError(f'{path}: "permissions" must be an object with allow/deny/ask lists')
        rules = {key: _rules(permissions, key, path) for key in ("allow", "deny", "ask")}
        try:  # each file's rules are checked on their own, so the error names the file
            robota.PermissionPolicy(allow=rules["allow"], deny=rules["deny"], ask=rules["ask"])
        except ConfigurationError as error:
            raise CliError(f"{path}: {one_line(error.message)}") from None
        allow += rules["allow"]
        deny += rules["deny"]
        ask += rules["ask"]
        if "defaultMode" in permissions:  # a later (higher) file wins
            value = permissions["defaultMode"]
            if not isinstance(value, str) or value not in _MODES:
                raise CliError(
                    f"{path}: permissions.defaultMode must be one of "
                    f"{', '.join(sorted(_MODES))}; got {value!r}"
                )
            mode, mode_file = _MODES[value], str(path)
        if "disableAllHooks" in settings:
            disabled = _disable(settings["disableAllHooks"], path)
        if "hooks" in settings:
            hooks.append(check_hooks(settings["hooks"], str(path)))
    return Settings(
        allow=tuple(allow),
        deny=tuple(deny),
        ask=tuple(ask),
        default_mode=mode,
        hooks={} if disabled else merge_hooks(*hooks),
        files=tuple(read),
        mode_file=mode_file,
    )


def describe_settings(settings: Settings, *, mode_flag: bool) -> list[str]:
    """Lines telling the person what the settings files grant, before anything runs.

    A repository's checked-in file can turn asking off or run commands at each prompt; the chat
    shows the files read, a mode they set (unless ``mode_flag``: a flag overrides it) and every
    hook command, so the person sees them before typing anything.
    """
    lines = [f"settings: {path}" for path in settings.files]
    if settings.default_mode is not None and not mode_flag:
        lines.append(f"permission mode {settings.default_mode} (from {settings.mode_file})")
        if settings.default_mode == "bypass":
            lines.append(
                "  bypass: tool calls run without asking (--permission-mode default to ask)"
            )
    for event, entries in settings.hooks.items():
        for entry in entries:
            hooks = entry.get("hooks", []) if isinstance(entry, Mapping) else []
            for hook in hooks if isinstance(hooks, list) else []:
                command = hook.get("command") if isinstance(hook, Mapping) else None
                if isinstance(command, str):
                    lines.append(f"hook {event} runs: {command}")
    return lines
