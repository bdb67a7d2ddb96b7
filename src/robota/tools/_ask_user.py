"""``AskUserQuestion``: the model asks the person a question and reads the answer (issue 30).

The question goes through the same channel as permission asks: the approver that would answer
this call's permission ask (:attr:`robota.ToolContext.approver` — the gate's for a model-driven
call, the caller's for a direct invocation). An approver answers questions when it has an
``answer`` method (see :class:`QuestionApprover`); the CLI's terminal approver does. A caller
can instead hand the tool its own ``ask`` callable. No one to ask, or an approver that cannot
answer, is an error result the model reads — never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, final, runtime_checkable

import robota.core

__all__ = ["AskUserTool", "Question", "QuestionApprover", "QuestionAsker"]

_MAX_CHOICES: Final = 20


@final
@dataclass(frozen=True, slots=True)
class Question:
    """What the model asks the person.

    Attributes:
        text: The question, as the model wrote it.
        choices: Answers the model suggests (the person may answer otherwise); may be empty.
        tool: The asking tool's name.
    """

    text: str
    choices: tuple[str, ...] = ()
    tool: str = "AskUserQuestion"


class QuestionAsker(Protocol):
    """``ask=`` for :func:`robota.tools.ask_user`: the answer's text, or ``None`` if declined."""

    async def __call__(self, question: Question) -> str | None:
        """Ask ``question``; return the answer, or ``None`` when the person declines."""
        ...


@runtime_checkable
class QuestionApprover(Protocol):
    """An :class:`~robota.Approver` that can also answer a model's question.

    Give the approver you pass for permission asks an ``answer`` method and
    :func:`robota.tools.ask_user` asks it too; return the answer's text, or ``None`` when the
    person declines to answer.
    """

    async def answer(self, question: Question) -> str | None:
        """Ask ``question``; return the answer, or ``None`` when the person declines."""
        ...


_DESCRIPTION = """\
Ask the person you are working for a question and wait for their answer.

Use it when you cannot go on without a decision or a fact only they have; do not use it for
things you can find out yourself. Ask one clear question. Offer choices when the likely answers
are few; the person may still answer in their own words."""

_PARAMETERS: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "minLength": 1, "description": "The question to ask."},
        "choices": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "maxItems": _MAX_CHOICES,
            "description": "Suggested answers, if the likely answers are few.",
        },
    },
    "required": ["question"],
    "additionalProperties": False,
}


class AskUserTool(robota.core.Tool):
    """The ``AskUserQuestion`` tool (risk ``inspect``: it changes nothing, the person answers)."""

    def __init__(self, *, name: str | None = None, ask: QuestionAsker | None = None) -> None:
        if ask is not None and not callable(ask):
            raise TypeError(f"ask= must be an async callable, got {type(ask).__name__}")
        super().__init__(
            name or "AskUserQuestion",
            _DESCRIPTION,
            _PARAMETERS,
            # S21: asking changes nothing; the person's answer is the only effect.
            risk="inspect",
            source="robota.tools",
        )
        self.ask = ask

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        question = Question(
            text=str(args["question"]).strip(),
            choices=tuple(str(choice) for choice in args.get("choices") or ()),
            tool=self.name,
        )
        if not question.text:
            return robota.core.ToolResult("The question is empty: ask something.", is_error=True)
        ask = self.ask
        if ask is None:
            approver = ctx.approver
            if approver is None:
                return robota.core.ToolResult(
                    "No one to ask: this run has no person attached to answer questions."
                    " Decide yourself, or stop and say what you need.",
                    is_error=True,
                )
            if not isinstance(approver, QuestionApprover):
                return robota.core.ToolResult(
                    "No one to ask: the approver attached to this run answers permission asks"
                    " only, not questions. Decide yourself, or stop and say what you need.",
                    is_error=True,
                )
            ask = approver.answer
        answer = await ask(question)
        ctx.signal.throw_if_aborted()  # S23: an answer that arrives after the abort is not used
        if answer is None:
            return robota.core.ToolResult(
                "The person declined to answer. Do not ask again; go on without it or stop.",
            )
        if not isinstance(answer, str):
            raise TypeError(f"an answer must be a str or None, got {type(answer).__name__}")
        return robota.core.ToolResult(
            answer if answer.strip() else "(The person gave an empty answer.)"
        )

    def __repr__(self) -> str:
        return f"<AskUserTool {self.name!r}>"
