"""The scenario on LangGraph (its prebuilt ReAct agent over a fake chat model)."""

from __future__ import annotations

import warnings
from importlib.metadata import version
from typing import Any

from common import SCRIPT, run_scenario
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

warnings.filterwarnings("ignore")  # create_react_agent's move notice
from langgraph.prebuilt import create_react_agent  # noqa: E402


class ZeroLatency(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


def _responses() -> list[AIMessage]:
    out = []
    for calls in SCRIPT:
        if calls:
            out.append(
                AIMessage(
                    content="",
                    tool_calls=[{"id": c, "name": "echo", "args": dict(a)} for c, a in calls],
                )
            )
        else:
            out.append(AIMessage(content="done"))
    return out


def build() -> Any:
    return create_react_agent(ZeroLatency(responses=_responses()), [echo])


async def run(agent: Any) -> None:
    result = await agent.ainvoke({"messages": [("user", "go")]})
    assert result["messages"][-1].content == "done", result


if __name__ == "__main__":
    run_scenario("langgraph", version("langgraph"), build, run)
