"""The web console (issue 31, item 4) in a real browser: Debian's chromium driven by Playwright.

A real uvicorn on 127.0.0.1 serves ``create_app(..., console=True)`` with a scripted agent
whose tool asks permission under a ``PermissionGate``; the page sends a message, shows the
streamed answer, approves the tool call from its button, shows the tool's result and the turn's
usage and cost. Screenshots go under the test's tmp dir (printed). A missing chromium or
Playwright fails the test (``.ci/run`` installs chromium; Playwright is in the dev group).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import robota
from robota.serve import create_app
from robota.testing import InMemoryJournal, ScriptedProvider, ScriptedTurn
from serve.support import client, running

CHROMIUM = "/usr/bin/chromium"
MODEL = "web-console-test-model"
HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


def shout(text: str) -> str:
    """Shout the text back."""
    return text.upper()


def _gated(approver: robota.Approver) -> robota.Agent:
    provider = ScriptedProvider(
        [
            ScriptedTurn(text="Thinking about " + HOSTILE, tool_calls=[("shout", {"text": "hey"})]),
            "All done: the tool said HEY",
            [("shout", {"text": "again"})],
            "Understood, no shouting",
            [("shout", {"text": "never"})],
        ],
        chunk_delay=0.01,
    )
    # S21: the default mode asks before a tool the policy names under ask=.
    gate = robota.PermissionGate(robota.PermissionPolicy(ask=["shout"]), approver=approver)
    return robota.Agent(MODEL, provider=provider, tools=[shout], tool_gate=gate)


def _journaled() -> InMemoryJournal:
    """A journal holding execution ``exec-1``: one tool call (S40 records) and a final answer."""
    journal = InMemoryJournal()
    provider = ScriptedProvider([[("shout", {"text": "logged"})], "Journaled answer"])
    agent = robota.Agent(MODEL, provider=provider, tools=[shout], journal=journal)
    asyncio.run(agent.run("journal this", execution_id="exec-1"))
    return journal


@pytest.fixture
def priced() -> Iterator[None]:
    robota.core.register_model_pricing(MODEL, input_per_million=1.0, output_per_million=2.0)
    try:
        yield
    finally:
        robota.core.unregister_model_pricing(MODEL)


def _browser(playwright: Any) -> Any:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium "
            "chromium-driver`, as .ci/run does)"
        )
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )


def test_console_page_has_a_strict_csp_and_no_inline_script() -> None:
    with running(create_app({"a": _gated}, console=True)) as url, client(url) as http:
        page = http.get("/")
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "default-src 'self'" in csp
        assert "'unsafe-inline'" not in csp
        assert "<script>" not in page.text  # only <script src=...>
        assert http.get("/console/console.js").headers["content-type"].startswith("text/javascript")
        assert http.get("/console/agents").json() == {"agents": ["a"], "journal": False}
        assert http.get("/console/executions/exec-1").status_code == 404  # no journal given
        assert http.get("/agents/a/sessions").json() == {"sessions": []}
        assert http.get("/agents/nope/sessions").status_code == 404
    with running(create_app({"a": _gated})) as url, client(url) as http:
        assert http.get("/").status_code == 404  # no console unless asked for


def test_console_inspector_lists_an_executions_records_and_refuses_bad_ids() -> None:
    app = create_app({"a": _gated}, console=True, journal=_journaled())
    with running(app) as url, client(url) as http:
        assert http.get("/console/agents").json()["journal"] is True
        body = http.get("/console/executions/exec-1").json()
        kinds = [r["kind"] for r in body["records"]]
        assert kinds[0] == "execution_started"
        assert kinds[-1] == "checkpoint"
        assert {
            "model_call_started",
            "model_call_settled",
            "effect_started",
            "effect_settled",
        } <= set(kinds)
        summaries = "\n".join(r["summary"] for r in body["records"])
        assert 'shout {"text": "logged"}' in summaries
        assert "settled: completed: LOGGED" in summaries
        missing = http.get("/console/executions/exec-nope")
        assert (missing.status_code, missing.json()["error"]["code"]) == (404, "unknown_execution")
        bad = http.get("/console/executions/a%0Ab")
        assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_execution_id")


def test_console_chats_approves_a_tool_call_and_shows_the_cost(
    tmp_path: Path, priced: None
) -> None:
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: install the dev group (pip install playwright)")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"web console screenshots: {shots}")
    app = create_app({"gated": _gated}, console=True, journal=_journaled())
    with running(app) as url, sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on(
                "console",
                lambda m: errors.append(m.text) if m.type == "error" else None,
            )
            page.on(
                "response",
                lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None,
            )
            page.goto(url + "/")
            expect(page.locator("#agent")).to_have_value("gated")
            expect(page.locator("#status")).to_have_text("Ready.")
            page.fill("#input", "please shout hey")
            page.click("#send")
            expect(page.locator(".msg.user")).to_have_text("please shout hey")
            expect(page.locator(".msg.assistant").first).to_contain_text("Thinking about")
            ask = page.locator(".permission")
            expect(ask).to_contain_text("Permission requested: shout")
            expect(ask).to_contain_text('"text": "hey"')
            page.screenshot(path=str(shots / "1-permission-ask.png"), full_page=True)
            ask.locator("button.approve").click()
            expect(ask.locator(".verdict")).to_have_text("Approved")
            expect(page.locator(".tool .output")).to_have_text("result: HEY")
            expect(page.locator(".msg.assistant").last).to_have_text("All done: the tool said HEY")
            # the streamed answer, shown as text: the model's markup is not interpreted
            shown = "".join(page.locator(".msg.assistant").all_text_contents())
            assert "Thinking about " + HOSTILE in shown
            assert page.locator("#log img").count() == 0
            usage = page.locator(".usage")
            expect(usage).to_contain_text("Turn complete ")
            expect(usage).to_contain_text("model " + MODEL)
            expect(usage).to_contain_text("$0.0")
            expect(page.locator("#status")).to_have_text("Ready.")
            session = page.locator("#session-id").text_content()
            expect(page.locator("#sessions li")).to_have_text([session or "?"])
            page.screenshot(path=str(shots / "2-answered.png"), full_page=True)
            # a second turn in the same session: deny the ask; the refusal shows as a tool error
            page.fill("#input", "shout again")
            page.keyboard.press("Control+Enter")
            second = page.locator(".permission").nth(1)
            expect(second).to_contain_text('"text": "again"')
            second.locator("button.deny").click()
            expect(second.locator(".verdict")).to_have_text("Denied")
            expect(page.locator(".tool.error .output")).to_contain_text("error: ")
            expect(page.locator(".msg.assistant").last).to_have_text("Understood, no shouting")
            expect(page.locator(".usage")).to_have_count(2)
            expect(page.locator("#status")).to_have_text("Ready.")
            page.screenshot(path=str(shots / "3-denied.png"), full_page=True)
            # S23: Cancel while an ask waits refuses it and ends the turn interrupted
            page.fill("#input", "shout forever")
            page.click("#send")
            expect(page.locator(".permission")).to_have_count(3)
            page.click("#cancel")
            expect(page.locator(".usage").last).to_contain_text("Turn interrupted")
            expect(page.locator("#cancel")).to_be_disabled()
            # the journal inspector: an execution's model calls, effects and settlements
            page.fill("#execution-id", "exec-1")
            page.click("#inspect-go")
            records = page.locator("#records li")
            expect(records.first).to_have_attribute("data-kind", "execution_started")
            expect(page.locator("#records li[data-kind=effect_started]")).to_contain_text(
                'shout {"text": "logged"}'
            )
            expect(page.locator("#records li[data-kind=effect_settled]")).to_contain_text("LOGGED")
            expect(records.last).to_contain_text("checkpoint: complete")
            expect(page.locator("#composer")).to_be_hidden()
            page.screenshot(path=str(shots / "4-execution.png"), full_page=True)
            page.click("#execution-close")
            expect(page.locator("#composer")).to_be_visible()
            assert page.title() == "Robota console"
            assert errors == []
        finally:
            browser.close()
    assert sorted(f.name for f in shots.iterdir()) == [
        "1-permission-ask.png",
        "2-answered.png",
        "3-denied.png",
        "4-execution.png",
    ]
