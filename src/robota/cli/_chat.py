"""``robota chat``: an interactive session with one agent, history kept across turns.

Each line typed is a turn; ``/exit``, ``/quit`` or end of input (Ctrl-D) leaves. Other lines
starting with ``/`` are commands (``/help``, ``/cost``, ``/undo``; see
:mod:`robota.cli._slash`), never sent to the model. Ctrl-C during
a turn cancels *that turn* — its run's :class:`~robota.AbortController` aborts, the partial reply
stays in history marked interrupted (the next turn's request carries it) — and the prompt comes
back. A tool already running is waited for (stderr names it); a second Ctrl-C in the same turn
stops waiting — the tool's result is recorded as interrupted — and the prompt comes back. Ctrl-C
at the prompt leaves the session (exit code 0). A turn that fails (server down, provider error)
prints its one-line error and the session goes on.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

import robota
from robota import RobotaError
from robota.cli._build import AgentFlags, build_agent
from robota.cli._errors import describe
from robota.cli._output import Printer, RunRenderer, no_answer_reason, unknown_window_note
from robota.cli._settings import describe_settings
from robota.cli._slash import LEAVE, ChatCommands
from robota.cli._terminal import Interrupts, LineReader, TerminalApprover, first_line_or_signal

if TYPE_CHECKING:
    from robota.sessions import Session, SessionStore

__all__ = ["chat_command"]

PROMPT = "you> "


async def _turn(
    agent: robota.Agent,
    text: str,
    *,
    interrupts: Interrupts,
    out: TextIO,
    printer: Printer,
    endpoint: str | None,
    session: Session | None,
    commands: ChatCommands,
) -> None:
    controller = interrupts.begin_turn()
    renderer = RunRenderer(out, printer)
    try:
        start = agent.run_stream if session is None else session.run_stream
        stream = start(text, signal=controller.signal)
        async for event in stream:
            interrupts.observe(event)
            renderer.event(event)
        result = await stream.result()
    except RobotaError as error:
        renderer.finish()
        if session is not None:
            from robota.cli._sessions import turn_error  # noqa: PLC0415

            printer.error(turn_error(error, session.id, endpoint))
        else:
            printer.error(describe(error, endpoint=endpoint))
        return
    finally:
        interrupts.end_turn()
    renderer.finish()
    commands.record(result)
    if session is not None:
        from robota.cli._sessions import title_after_first_turn  # noqa: PLC0415

        await title_after_first_turn(session, text)
    note = unknown_window_note(result, agent.get_model().model)
    if note is not None:
        printer.note(note)
    reason = no_answer_reason(result)
    if reason is not None:
        printer.error(reason)
    if result.status == "interrupted":
        printer.note("[interrupted] the turn was cancelled; its partial reply stays in history")
    printer.footer(result)


async def _chat(
    flags: AgentFlags,
    *,
    out: TextIO,
    stdin: TextIO,
    session_name: str | None,
    sessions_db: str | None,
) -> int:
    printer = Printer()
    reader = LineReader(stdin)
    store: SessionStore | None = None
    session: Session | None = None
    where = ""
    if session_name is not None:
        from robota.cli._sessions import check_name, open_store  # noqa: PLC0415

        check_name(session_name)
        store, where = open_store(sessions_db)
    try:
        with Interrupts(printer) as interrupts:
            built = build_agent(flags, approver=TerminalApprover(reader, printer, interrupts))
            async with built.agent as agent:
                selected = agent.get_model()
                printer.note(
                    f"robota chat with {selected.model} ({selected.provider}). /exit or Ctrl-D "
                    "leaves; Ctrl-C cancels a turn (twice: stop waiting for a running tool); "
                    "/help lists commands."
                )
                if built.workspace is not None:
                    printer.note(f"workspace: {built.workspace}")
                # A checked-in settings file may turn asking off or run commands: say so first.
                for line in describe_settings(
                    built.settings, mode_flag=flags.permission_mode is not None
                ):
                    printer.note(line)
                commands = ChatCommands(printer, built.workspace)
                if store is not None and session_name is not None:
                    session = await _resume(agent, store, session_name, where, out, printer)
                try:
                    await _loop(
                        agent, session, reader, interrupts, out, printer, built.endpoint, commands
                    )
                finally:
                    if session is not None:
                        await session.aclose()
    finally:
        if store is not None:
            await store.aclose()
    out.flush()
    return 0


async def _resume(
    agent: robota.Agent,
    store: SessionStore,
    name: str,
    where: str,
    out: TextIO,
    printer: Printer,
) -> Session:
    from robota.cli._sessions import open_session, show_recent  # noqa: PLC0415

    session = await open_session(agent, store, name, where)
    count = len(session.turns)
    if count:
        printer.note(f"resumed session {name!r}: {count} turns; the last ones were:")
        show_recent(session, out, prompt=PROMPT)
    else:
        printer.note(f"new session {name!r} (kept in {where})")
    return session


async def _loop(
    agent: robota.Agent,
    session: Session | None,
    reader: LineReader,
    interrupts: Interrupts,
    out: TextIO,
    printer: Printer,
    endpoint: str | None,
    commands: ChatCommands,
) -> None:
    while True:
        out.write(PROMPT)
        out.flush()
        stopped, line = await first_line_or_signal(reader, interrupts.quit)
        if stopped or line is None:
            out.write("\n")
            break
        text = line.strip()
        if text.lower() in LEAVE:
            break
        if text.startswith("/"):
            await commands.run(text)
        elif text:
            await _turn(
                agent,
                text,
                interrupts=interrupts,
                out=out,
                printer=printer,
                endpoint=endpoint,
                session=session,
                commands=commands,
            )


def chat_command(
    flags: AgentFlags,
    *,
    out: TextIO | None = None,
    stdin: TextIO | None = None,
    session: str | None = None,
    sessions_db: str | None = None,
) -> int:
    """Run an interactive session; returns the exit code (0 when the user leaves).

    With ``session``, the conversation is the named session of the store ``sessions_db`` (see
    :mod:`robota.cli._sessions`): resumed — its last turns shown — or created, each turn saved.

    Raises:
        CliError: the agent cannot be built (exit code 2); failures of single turns are
            printed and the session goes on.
    """
    import asyncio  # noqa: PLC0415 - keep `robota --help` fast

    return asyncio.run(
        _chat(
            flags,
            out=sys.stdout if out is None else out,
            stdin=sys.stdin if stdin is None else stdin,
            session_name=session,
            sessions_db=sessions_db,
        )
    )
