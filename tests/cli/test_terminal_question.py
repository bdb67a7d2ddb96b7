"""The terminal approver answers a model's question too (``robota.tools.ask_user``, issue 30)."""

from __future__ import annotations

import io

from rich.console import Console

import robota
import robota.tools
from robota.cli._output import Printer
from robota.cli._terminal import LineReader, TerminalApprover
from robota.testing import ScriptedProvider


def _approver(typed: str) -> tuple[TerminalApprover, io.StringIO]:
    shown = io.StringIO()
    printer = Printer(Console(file=shown, force_terminal=False, width=200))
    return TerminalApprover(LineReader(io.StringIO(typed)), printer), shown


async def test_the_terminal_approver_is_a_question_approver() -> None:
    approver, _ = _approver("")
    assert isinstance(approver, robota.tools.QuestionApprover)


async def test_a_number_picks_a_choice_and_other_text_is_the_answer() -> None:
    question = robota.tools.Question("Which colour?", ("red", "blue"))
    picked, shown = _approver("2\n")
    assert await picked.answer(question) == "blue"
    assert "the model asks: Which colour?" in shown.getvalue()
    assert "  2. blue" in shown.getvalue()
    typed, _ = _approver("  green, actually \n")
    assert await typed.answer(question) == "green, actually"
    out_of_range, _ = _approver("7\n")
    assert await out_of_range.answer(question) == "7"


async def test_an_empty_line_or_end_of_input_declines() -> None:
    question = robota.tools.Question("Deploy?")
    empty, shown = _approver("\n")
    assert await empty.answer(question) is None
    assert "no answer" in shown.getvalue()
    ended, _ = _approver("")
    assert await ended.answer(question) is None


async def test_a_question_from_a_run_is_answered_at_the_terminal() -> None:
    approver, _ = _approver("yes, go ahead\n")
    agent = robota.Agent(
        provider=ScriptedProvider([[("AskUserQuestion", {"question": "Deploy?"})], "done"]),
        model="m",
        tools=[robota.tools.ask_user()],
        tool_gate=robota.PermissionGate(robota.PermissionPolicy(), approver=approver),
    )
    await agent.run("go")
    (result,) = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert result == "yes, go ahead"
