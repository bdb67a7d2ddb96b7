"""Named sessions on the command line: ``--session NAME`` and ``robota sessions …`` (issue 27).

``robota chat --session NAME`` and ``robota run --session NAME`` open the session ``NAME`` of
the session store, creating it when new, and run each turn through
:meth:`robota.sessions.Session.run_stream`: the conversation is loaded before the turn and the
turn saved when it ends (interrupted ones too), so a later command — in this process or another
— continues it. ``robota sessions list|show|fork|rm`` read and change the same store.

Where sessions are kept, first match wins:

* ``--sessions-db PATH`` — an SQLite file (its directory must exist), or a
  ``postgresql://`` DSN for a :class:`~robota.sessions.PostgresSessionStore`;
* ``$ROBOTA_SESSIONS_DB`` — the same forms;
* ``$XDG_STATE_HOME/robota/sessions.db`` (``~/.local/state/robota/sessions.db`` by default); the
  ``robota`` directory is created owner-only (``0700``) and the file ``0600`` (S07).

One writer per session (S10): a turn takes the session's lease for as long as it runs, so a
second command running a turn of the session or deleting it meanwhile fails at once with
``another robota process is using session NAME`` (exit code 1); forking only reads (it copies
the turns saved so far). Between turns the session is free: two chats on one name take turns,
each turn seeing every earlier one.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, Final, TextIO

import robota
from robota import ConfigurationError, Message, RobotaError
from robota.cli._errors import FAILURE, USAGE, CliError, describe, one_line
from robota.cli._output import format_arguments, shorten
from robota.sessions import (
    PostgresSessionStore,
    Session,
    SessionBusyError,
    SessionNotFoundError,
    SessionStore,
    SQLiteSessionStore,
    Turn,
    check_session_id,
    list_sessions,
)

__all__ = [
    "SESSIONS_DB_VARIABLE",
    "busy_message",
    "check_name",
    "default_sessions_db",
    "fork_command",
    "list_command",
    "open_session",
    "open_store",
    "remove_command",
    "session_error",
    "show_command",
    "show_recent",
    "title_after_first_turn",
    "turn_error",
]

SESSIONS_DB_VARIABLE: Final = "ROBOTA_SESSIONS_DB"
"""The environment variable naming the session store (an SQLite path or a PostgreSQL DSN)."""

_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
_RECENT_TURNS: Final = 3
_TITLE_LIMIT: Final = 60


def default_sessions_db() -> str:
    """``$XDG_STATE_HOME/robota/sessions.db`` (``~/.local/state/robota/sessions.db``)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "robota", "sessions.db")


def open_store(where: str | None) -> tuple[SessionStore, str]:
    """The session store ``where`` (or ``$ROBOTA_SESSIONS_DB``, or the default) names.

    Returns the store and a description of it for messages (a DSN is never shown: it may hold
    a password).

    Raises:
        CliError: exit code 2 — a path whose directory is missing, a directory open to other
            accounts (S07), PostgreSQL without psycopg, a malformed DSN.
    """
    given = where if where is not None else os.environ.get(SESSIONS_DB_VARIABLE) or None
    flag = "--sessions-db" if where is not None else f"${SESSIONS_DB_VARIABLE}"
    try:
        if given is not None and given.startswith(_POSTGRES_SCHEMES):
            return PostgresSessionStore(given), "the PostgreSQL session store"
        if given is None:
            path = default_sessions_db()
            from robota.host import OwnerOnlyStore  # noqa: PLC0415 - only for the default

            OwnerOnlyStore(os.path.dirname(path))  # created 0700, or checked (S07)
        elif not given.strip():
            raise CliError(f"{flag} is empty: give an SQLite file path or a postgresql:// DSN")
        else:
            path = given
        return SQLiteSessionStore(path), path
    except RobotaError as error:
        raise CliError(one_line(error.message)) from None


def check_name(name: str, flag: str = "--session") -> str:
    """``name`` as a session id, or a one-line :class:`CliError` (exit code 2)."""
    try:
        return check_session_id(name)
    except ConfigurationError:
        raise CliError(
            f"{flag} {name[:60]!r}: a session name is 1 to 180 characters, without control "
            "characters or '/'"
        ) from None


def busy_message(name: str) -> str:
    """What a command says when another writer holds session ``name``."""
    return (
        f"another robota process is using session {name!r} (a turn is running there); try "
        "again when it ends"
    )


def session_error(error: RobotaError, name: str, where: str) -> CliError:
    """The one line for a session failure, with its exit code."""
    if isinstance(error, SessionBusyError):
        return CliError(busy_message(name), exit_code=FAILURE)
    if isinstance(error, SessionNotFoundError):
        return CliError(
            f"no session named {name!r} in {where}; `robota sessions list` shows the sessions"
        )
    return CliError(
        one_line(error.message),
        exit_code=USAGE if isinstance(error, ConfigurationError) else FAILURE,
    )


def turn_error(error: RobotaError, name: str, endpoint: str | None) -> str:
    """The one line for a failed turn of session ``name`` (a busy session named as such)."""
    if isinstance(error, SessionBusyError):
        return busy_message(name)
    return describe(error, endpoint=endpoint)


async def open_session(agent: robota.Agent, store: SessionStore, name: str, where: str) -> Session:
    """Open (or create) session ``name`` for ``agent``.

    Raises:
        CliError: the session cannot be opened (see :func:`session_error`).
    """
    try:
        return await Session.open(agent, store, name)
    except RobotaError as error:
        raise session_error(error, name, where) from None


async def title_after_first_turn(session: Session, text: str) -> None:
    """Title an untitled session with its first prompt, for ``robota sessions list``."""
    metadata = session.metadata
    if metadata.title is not None:
        return
    try:
        await session.set_metadata(
            title=shorten(one_line(text), limit=_TITLE_LIMIT, lines=1),
            user_id=metadata.user_id,
            tags=metadata.tags,
        )
    except SessionBusyError:
        return  # another process's turn holds it; the title can wait for the next turn


# ---------------------------------------------------------------------------- rendering


def _content(message: Message) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(getattr(part, "text", f"[{part.kind}]") for part in content)


def _render_turn(turn: Turn, write: Callable[[str], object], *, prompt: str) -> None:
    for message in turn.messages:
        if message.kind == "user":
            write(f"{prompt}{_content(message)}\n")
        elif message.kind == "assistant":
            if message.content:
                write(f"{message.content}\n")
            for call in message.tool_calls:
                write(f"  [tool {call.name}({format_arguments(call.arguments)})]\n")
        elif message.kind == "tool":
            mark = " (error)" if message.is_error else ""
            write(f"  [{message.tool_name}{mark} -> {shorten(message.content, lines=1)}]\n")
    if turn.status != "complete":
        write(f"  [{turn.status}]\n")


def show_recent(session: Session, out: TextIO, *, prompt: str) -> int:
    """Print the last few turns of a resumed session as the chat showed them; their count."""
    turns = session.turns
    if turns:
        shown = turns[-_RECENT_TURNS:]
        for turn in shown:
            _render_turn(turn, out.write, prompt=prompt)
        out.flush()
    return len(turns)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


# ---------------------------------------------------------------------------- commands


def _placeholder_agent() -> robota.Agent:
    # Session.open binds an agent; showing and forking make no model call, so a provider that
    # answers nothing serves (one that was asked would fail loudly, never reach a network).
    from robota.testing import ScriptedProvider  # noqa: PLC0415

    return robota.Agent("none", provider=ScriptedProvider([]), name="robota-cli-sessions")


async def _existing(store: SessionStore, name: str, where: str) -> Session:
    try:
        await store.load(name)  # Session.open would create a missing one
    except RobotaError as error:
        raise session_error(error, name, where) from None
    return await open_session(_placeholder_agent(), store, name, where)


def _run(where: str | None, body: Callable[[SessionStore, str], Any]) -> int:
    import asyncio  # noqa: PLC0415 - keep `robota --help` fast

    async def main() -> int:
        store, description = open_store(where)
        async with store:
            code: int = await body(store, description)
            return code

    return asyncio.run(main())


def list_command(where: str | None, *, out: TextIO | None = None) -> int:
    """``robota sessions list``: one line per session, oldest first; returns the exit code."""
    out = sys.stdout if out is None else out

    async def body(store: SessionStore, description: str) -> int:
        try:
            infos = await list_sessions(store)
        except RobotaError as error:
            raise CliError(one_line(error.message), exit_code=FAILURE) from None
        sys.stderr.write(f"{len(infos)} sessions in {description}\n")
        if not infos:
            return 0
        width = max(4, *(len(info.id) for info in infos))
        out.write(f"{'NAME':<{width}}  TURNS  UPDATED           TOKENS   COST       TITLE\n")
        for info in infos:
            title = info.metadata.title or ""
            if info.parent_id is not None:
                title = f"{title} (fork of {info.parent_id} at {info.fork_at})".strip()
            if info.pending:
                title = f"{title} [pending turn]".strip()
            out.write(
                f"{info.id:<{width}}  {info.turns:>5}  {_when(info.updated_at)}  "
                f"{info.usage.total_tokens:>7}  {_cost(info.cost):<9}  {title}\n"
            )
        out.flush()
        return 0

    return _run(where, body)


def show_command(name: str, where: str | None, *, out: TextIO | None = None) -> int:
    """``robota sessions show NAME``: the conversation as text; returns the exit code."""
    out = sys.stdout if out is None else out
    check_name(name, "NAME")

    async def body(store: SessionStore, description: str) -> int:
        async with await _existing(store, name, description) as session:
            info = session.info
            origin = (
                f", forked from {info.parent_id!r} at turn {info.fork_at}"
                if info.parent_id is not None
                else ""
            )
            sys.stderr.write(
                f"session {name!r}: {info.turns} turns, {info.usage.total_tokens} tokens, cost "
                f"{_cost(info.cost)}, updated {_when(info.updated_at)}{origin}\n"
            )
            for turn in session.turns:
                out.write(f"--- turn {turn.position + 1} ---\n")
                _render_turn(turn, out.write, prompt="you> ")
            out.flush()
        return 0

    return _run(where, body)


def fork_command(
    name: str, where: str | None, *, at: int | None, new_name: str | None, out: TextIO | None = None
) -> int:
    """``robota sessions fork NAME [--at N] [--as NEW]``; returns the exit code."""
    out = sys.stdout if out is None else out
    check_name(name, "NAME")
    if new_name is not None:
        check_name(new_name, "--as")

    async def body(store: SessionStore, description: str) -> int:
        async with await _existing(store, name, description) as session:
            count = len(session.turns)
            if at is not None and not 0 <= at <= count:
                raise CliError(f"--at {at}: session {name!r} has {count} turns; give 0 to {count}")
            try:
                fork = await session.fork(at, session_id=new_name)
            except ConfigurationError as error:
                if error.code == "session_exists":
                    raise CliError(
                        f"--as {new_name!r}: a session with that name exists already; choose "
                        "another name"
                    ) from None
                raise session_error(error, name, description) from None
            except RobotaError as error:
                raise session_error(error, name, description) from None
            async with fork:
                kept = count if at is None else at
                sys.stderr.write(f"forked {name!r} after turn {kept} as:\n")
                out.write(f"{fork.id}\n")
                out.flush()
        return 0

    return _run(where, body)


def remove_command(name: str, where: str | None, *, yes: bool, stdin: TextIO | None = None) -> int:
    """``robota sessions rm NAME``: asks y/N on a terminal unless ``yes``; returns the exit code.

    Off a terminal without ``--yes`` nothing is deleted (exit code 2): a script must say so.
    """
    stdin = sys.stdin if stdin is None else stdin
    check_name(name, "NAME")

    async def body(store: SessionStore, description: str) -> int:
        try:
            stored = await store.load(name)
        except RobotaError as error:
            raise session_error(error, name, description) from None
        if not yes:
            if not stdin.isatty():
                raise CliError(
                    f"not deleting session {name!r} without a terminal to confirm on; pass "
                    "--yes to delete it"
                )
            turns = sum(1 for entry in stored.entries if entry.kind == "turn_saved")
            sys.stderr.write(f"delete session {name!r} ({turns} saved turns)? [y/N] ")
            sys.stderr.flush()
            answer = stdin.readline().strip().lower()
            if answer not in ("y", "yes"):
                sys.stderr.write("kept\n")
                return FAILURE
        try:
            await store.delete(name)
        except RobotaError as error:
            raise session_error(error, name, description) from None
        sys.stderr.write(f"deleted session {name!r}\n")
        return 0

    return _run(where, body)
