"""``AskUserQuestion`` (issue 30): a question to the person through the run's approver."""

from __future__ import annotations

from typing import Any

import robota
import robota.tools
from robota.testing import ScriptedProvider
from robota.tools import Question


class Person:
    """An approver that also answers questions (``robota.tools.QuestionApprover``)."""

    def __init__(self, answer: str | None) -> None:
        self.questions: list[Question] = []
        self.asks: list[robota.ApprovalRequest] = []
        self._answer = answer

    async def __call__(self, request: robota.ApprovalRequest) -> robota.Approval:
        self.asks.append(request)
        return robota.Approval(True)

    async def answer(self, question: Question) -> str | None:
        self.questions.append(question)
        return self._answer


async def _ask(
    args: dict[str, Any], *, approver: Any = None, tool: robota.Tool | None = None
) -> str:
    """Run one ``AskUserQuestion`` call through a real agent; the result the model read."""
    agent = robota.Agent(
        provider=ScriptedProvider([[("AskUserQuestion", args)], "done"]),
        model="m",
        tools=[tool or robota.tools.ask_user()],
        tool_gate=robota.PermissionGate(robota.PermissionPolicy(), approver=approver),
    )
    await agent.run("go")
    (result,) = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    return result


async def test_the_persons_answer_is_the_tools_result() -> None:
    person = Person("blue, please")
    result = await _ask({"question": "Which colour?", "choices": ["red", "blue"]}, approver=person)
    assert result == "blue, please"
    assert person.questions == [Question("Which colour?", ("red", "blue"), "AskUserQuestion")]
    assert person.asks == []  # S21: inspect-class, so asking needs no permission ask first


async def test_a_person_who_declines_is_reported_as_declining() -> None:
    result = await _ask({"question": "Deploy now?"}, approver=Person(None))
    assert result.startswith("The person declined to answer.")


async def test_with_no_one_to_ask_the_model_is_told_so() -> None:
    result = await _ask({"question": "Deploy now?"})
    assert result.startswith("No one to ask: this run has no person attached")


async def test_an_approver_that_answers_only_permission_asks_is_not_guessed_at() -> None:
    async def permissions_only(request: robota.ApprovalRequest) -> robota.Approval:
        return robota.Approval(True)

    result = await _ask({"question": "Deploy now?"}, approver=permissions_only)
    assert result.startswith("No one to ask: the approver attached to this run answers")


async def test_an_ask_callable_answers_instead_of_the_approver() -> None:
    asked: list[Question] = []

    async def ask(question: Question) -> str | None:
        asked.append(question)
        return "from the callable"

    tool = robota.tools.ask_user(name="Ask", ask=ask)
    agent = robota.Agent(
        provider=ScriptedProvider([[("Ask", {"question": "q?"})], "done"]),
        model="m",
        tools=[tool],
    )
    await agent.run("go")
    (result,) = [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]
    assert result == "from the callable"
    assert asked == [Question("q?", (), "Ask")]


async def test_a_bad_argument_is_an_error_result_the_model_reads() -> None:
    result = await _ask({"question": "q?", "choices": "not a list"}, approver=Person("x"))
    assert "choices" in result
    assert "Traceback" not in result


async def test_s12_a_deny_rule_naming_the_tool_withholds_it() -> None:
    person = Person("x")
    provider = ScriptedProvider([[("AskUserQuestion", {"question": "q?"})], "done"])
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=[robota.tools.ask_user()],
        tool_gate=robota.PermissionGate(
            robota.PermissionPolicy(deny=["AskUserQuestion"]), approver=person
        ),
    )
    await agent.run("go")
    assert [spec.name for spec in provider.requests[0].tools] == []
    assert person.questions == []
