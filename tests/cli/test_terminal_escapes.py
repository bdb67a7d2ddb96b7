"""Model- and page-controlled text never reaches the terminal as control sequences (issue 30).

A tool result (a fetched page), a diff, a question, a permission prompt's arguments or the
streamed answer could otherwise carry ESC / CSI / OSC sequences: clear the screen, rewrite the
prompt line so a dangerous call reads as a harmless one, set the clipboard (OSC 52) or the
window title. They are shown as visible escapes instead.
"""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

import robota
import robota.tools
from robota.cli._output import Printer, RunRenderer, printable
from robota.cli._terminal import LineReader, TerminalApprover

_EVIL = "ls\x1b[2K\x1b[1G\x1b]52;c;cm0gLXJmIH4=\x07\x9b2J\x07\x08\u202egnp.exe\x7f"


def _shown(printer_output: str) -> None:
    for bad in ("\x1b", "\x9b", "\x07", "\x08", "\x7f", "\u202e"):
        assert bad not in printer_output, repr(bad)


def _printer() -> tuple[Printer, io.StringIO]:
    shown = io.StringIO()
    return Printer(Console(file=shown, force_terminal=False, width=400)), shown


def test_printable_makes_control_characters_visible_and_keeps_text() -> None:
    assert printable("plain\ttext\nnext line ü 日本") == "plain\ttext\nnext line ü 日本"
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("\x9b\u202e\x7f") == "\\x9b\\u202e\\x7f"
    assert printable("a\r\nb\rc") == "a\r\nb\\x0dc"


def test_a_tool_result_a_diff_and_a_note_print_no_control_sequence() -> None:
    printer, shown = _printer()
    call = robota.ToolCall("1", "WebFetch", "{}")
    printer.tool_result(
        robota.ToolCallFinished(call=call, status="completed", content=_EVIL, is_error=False)
    )
    printer.diff(f"--- a/{_EVIL}\n+++ b/{_EVIL}\n@@ -1 +1 @@\n-{_EVIL}\n+{_EVIL}\n")
    printer.note(_EVIL)
    printer.tool_call("Bash", _EVIL)  # arguments that are not a JSON object, printed raw
    _shown(shown.getvalue())
    assert "\\x1b[2K" in shown.getvalue()


async def test_a_permission_prompt_and_a_question_print_no_control_sequence() -> None:
    printer, shown = _printer()
    approver = TerminalApprover(LineReader(io.StringIO("\n7\n")), printer)
    await approver.answer(robota.tools.Question(_EVIL, (_EVIL, "b")))
    _shown(shown.getvalue())


def test_streamed_text_to_a_terminal_prints_no_control_sequence() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    renderer = RunRenderer(out, None)
    renderer.event(robota.TextDelta(_EVIL))
    _shown(out.getvalue())
    piped = io.StringIO()
    RunRenderer(piped, None).event(robota.TextDelta(_EVIL))
    assert piped.getvalue() == _EVIL  # a pipe gets the answer exactly


def test_a_huge_diff_line_or_question_does_not_flood_the_terminal() -> None:
    printer, shown = _printer()
    printer.diff("--- a/x.min.js\n+++ b/x.min.js\n@@ -1 +1 @@\n-" + "a" * 1_000_000 + "\n+b\n")
    assert len(shown.getvalue()) < 5_000
    assert "(+" in shown.getvalue()  # says how much was left out


async def test_a_huge_question_is_shown_cut_and_still_answered() -> None:
    printer, shown = _printer()
    approver = TerminalApprover(LineReader(io.StringIO("1\n")), printer)
    question = robota.tools.Question("q" * 1_000_000, ("c" * 1_000_000, "b"))
    assert await approver.answer(question) == "c" * 1_000_000
    assert len(shown.getvalue()) < 20_000


async def test_concurrent_asks_are_asked_one_at_a_time_each_with_its_own_answer() -> None:
    # Two calls of one response run at once and may both ask: one typed line must answer one
    # question, never both (a "y" meant for a harmless call must not approve the other).
    printer, shown = _printer()
    approver = TerminalApprover(LineReader(io.StringIO("y\nn\n")), printer)

    def request(command: str) -> robota.ApprovalRequest:
        return robota.ApprovalRequest(
            robota.tools.shell(workspace="."), {"command": command}, "ask"
        )

    first, second = await asyncio.gather(
        approver(request("echo harmless")), approver(request("rm -rf build"))
    )
    assert (first.approved, second.approved) == (True, False)
    prompts = [line for line in shown.getvalue().split("allow ") if line]
    assert len(prompts) == 2
    assert "harmless" in prompts[0]  # the second prompt is shown only after the first answer
