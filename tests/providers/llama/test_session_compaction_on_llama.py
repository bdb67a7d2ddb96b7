"""S39 a session's compaction against a real ``llama-server`` running the deterministic model.

The tiny model calls the offered tool when no tool result is in its prompt and otherwise
answers in text; with no tools offered (the summary call: ``tool_choice="none"``) it answers its
plain reply, which becomes the summary. The agent plans against a 1,024-token window
(``context_window=``, below the server's 4,096), so a conversation stored at 20× that window —
counted in the server's own tokens (``/tokenize``) — has been compacted many times over real
HTTP, and every request still fit.
"""

from __future__ import annotations

import httpx2

import robota
from providers.llama._server import LlamaServer
from providers.llama._tiny_model import PLAIN_REPLY, REPLY_AFTER_TOOL
from robota.providers.openai_compatible import OpenAICompatibleProvider
from robota.sessions import (
    Compacted,
    CompactionPolicy,
    Session,
    Turn,
    TurnSaved,
    is_compaction_summary,
)
from robota.testing import InMemorySessionStore

WINDOW = 1_024
_WORDS = "from the tiny model " * 2


@robota.tool
def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}: {_WORDS}"


def _tokens(server: LlamaServer, turn: Turn) -> int:
    text = "\n".join(
        part
        for m in turn.messages
        for part in (
            m.content if isinstance(m.content, str) else "",
            *(c.arguments for c in getattr(m, "tool_calls", ())),
        )
    )
    reply = httpx2.post(f"{server.root_url}/tokenize", json={"content": text}, timeout=30)
    return len(reply.json()["tokens"])


def _pairs_intact(messages: tuple[robota.Message, ...]) -> bool:
    calls = {c.id for m in messages if isinstance(m, robota.AssistantMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if isinstance(m, robota.ToolMessage)}
    return calls == results


async def test_s39_a_session_twenty_times_the_window_continues_on_llama_server(
    llama_server: LlamaServer,
) -> None:
    provider = OpenAICompatibleProvider(base_url=llama_server.base_url, name="llama")
    agent = robota.Agent(
        provider=provider,
        model="tiny",
        tools=[lookup],
        context_window=WINDOW,
        owns_providers=True,
    )
    store = InMemorySessionStore()
    policy = CompactionPolicy(keep_recent_turns=1)
    async with agent, await Session.open(agent, store, compaction=policy) as session:
        stored = turns = 0
        while stored < 20 * WINDOW:
            result = await session.run(f"turn {turns} {_WORDS}")
            assert result.status == "complete"
            assert result.stop_reason == "end_turn"  # never the pre-send guard
            assert result.text in (PLAIN_REPLY, REPLY_AFTER_TOOL)
            turns += 1
            stored += _tokens(llama_server, session.turns[-1])
            if turns > 300:
                raise AssertionError(f"stored only {stored} tokens in {turns} turns")
        entries = (await store.load(session.id)).entries
        assert len([e for e in entries if isinstance(e, TurnSaved)]) == turns
        compactions = [e for e in entries if isinstance(e, Compacted)]
        assert len(compactions) >= 5
        assert all(c.summary == PLAIN_REPLY and c.source == "model" for c in compactions)
        assert all(c.usage.total_tokens > 0 for c in compactions)  # the server's own report
        history = session.history
        assert is_compaction_summary(history[0])
        assert _pairs_intact(history)
        # A compacted turn that called the tool kept the call with its result in the store.
        first = session.turns[0]
        assert first.compacted
        assert _pairs_intact(first.messages)
        assert any(isinstance(m, robota.ToolMessage) for m in first.messages)
