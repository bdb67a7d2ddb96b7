"""Awkward model text on the wire (issue 31): both streams stay valid SSE and valid JSON.

A model (or a provider decoding ``"\\ud800"`` from JSON) can produce a lone surrogate, which
UTF-8 cannot encode; control characters, U+2028 and NEL must not break an SSE line either.
Every event must still reach the client, parse (AG-UI: into the package's own models) and give
back the text (a lone surrogate, which UTF-8 cannot carry, as U+FFFD).
"""

from __future__ import annotations

import json

import robota
from robota.serve import create_app
from robota.testing import ScriptedProvider, ScriptedTurn
from serve.support import agui, agui_input, chat_input, client, running, sse_events, ui_stream

AWKWARD = 'a\ud800b\udfffc\u2028d\u2029e\x85f\r\ng\x00h\x1b[31mi"j\\k'
SHOWN = AWKWARD.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")  # UTF-8 has no lone one


def echo(text: str) -> str:
    """Echo the text."""
    return text


def _agent() -> robota.Agent:
    provider = ScriptedProvider(
        [ScriptedTurn(text=AWKWARD, tool_calls=[("echo", {"text": AWKWARD})]), AWKWARD]
    )
    return robota.Agent("m", provider=provider, tools=[echo])


def _lines(text: str) -> list[str]:
    return text.split("\n")  # SSE lines end at CR/LF only (not U+2028 or NEL)


def test_a_lone_surrogate_and_control_characters_stream_as_valid_agui_events() -> None:
    with running(create_app({"a": _agent})) as url, client(url) as http:
        response = http.post("/agents/a/agui", json=agui_input("t-awk", "hi"))
        assert response.status_code == 200
        events = agui(sse_events(_lines(response.text)))
        kinds = [e.type.value for e in events]
        assert kinds[-1] == "RUN_FINISHED", kinds
        text = "".join(getattr(e, "delta", "") for e in events if e.type.value.startswith("TEXT"))
        assert text == SHOWN + SHOWN
        args = "".join(e.delta for e in events if e.type.value == "TOOL_CALL_ARGS")  # type: ignore[attr-defined]
        assert json.loads(args) == {"text": AWKWARD}  # the JSON text keeps its escapes


def test_a_lone_surrogate_and_control_characters_stream_as_a_valid_ui_message_stream() -> None:
    with running(create_app({"a": _agent})) as url, client(url) as http:
        response = http.post("/agents/a/chat", json=chat_input("c-awk", "hi"))
        assert response.status_code == 200
        message = ui_stream([e.data for e in sse_events(_lines(response.text))])
        assert message.error is None
        assert message.text == SHOWN + SHOWN


def test_a_malformed_last_event_id_is_a_404_never_a_500() -> None:
    with running(create_app({"a": _agent})) as url, client(url) as http:
        response = http.post("/agents/a/chat", json=chat_input("c-resume", "hi"))
        run_id = next(e.id for e in sse_events(_lines(response.text))).rpartition(":")[0]
        stream = "/agents/a/sessions/c-resume/stream"
        # "²" passes str.isdigit() but not int(); 5,000 digits pass it too but int() refuses.
        for number in ("\u00b2", "1" * 5000, "-1", "1e3"):
            last = f"{run_id}:{number}".encode("latin-1")
            refused = http.get(stream, headers={"last-event-id": last})  # type: ignore[dict-item]
            assert refused.status_code == 404, (number[:5], refused.status_code)
            assert refused.json()["error"]["code"] == "unknown_event"
        resumed = http.get(stream, headers={"last-event-id": f"{run_id}:1"})
        assert resumed.status_code == 200


def test_an_agui_run_id_cannot_be_reused_within_a_session() -> None:
    # The run id names the stream's events (Last-Event-ID "runId:n"): a second run under the
    # same id would let a reconnect meant for the first skip the second's first events.
    with running(create_app({"a": _agent})) as url, client(url) as http:
        first = http.post("/agents/a/agui", json=agui_input("t-reuse", "hi", run_id="r-1"))
        assert first.status_code == 200
        again = http.post("/agents/a/agui", json=agui_input("t-reuse", "hi", run_id="r-1"))
        assert again.status_code == 409, again.text
        assert again.json()["error"]["code"] == "run_id_reused"
        fresh = http.post("/agents/a/agui", json=agui_input("t-reuse", "hi", run_id="r-2"))
        assert fresh.status_code == 200
