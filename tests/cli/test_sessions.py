"""`--session NAME` and `robota sessions list|show|fork|rm` (issue 27), run as real commands.

Each test's sessions live in its own store: the default one under the test's
`$XDG_STATE_HOME`, or a file named with `--sessions-db` / `$ROBOTA_SESSIONS_DB`.
"""

from __future__ import annotations

import pathlib
import stat
import time

import pytest

from cli._support import Child, Terminal, Tmux, chat_sse, robota
from providers.replay import Exchange, ReplayServer


@pytest.fixture
def state_env(env: dict[str, str], tmp_path: pathlib.Path) -> dict[str, str]:
    """The sealed environment with a state directory of this test's own."""
    return {**env, "XDG_STATE_HOME": str(tmp_path / "state")}


def _model(server: ReplayServer) -> list[str]:
    return ["--model", "openai-compatible:m", "--base-url", server.base_url + "/v1"]


def _roles(request_body: dict[str, object]) -> list[tuple[object, object]]:
    messages = request_body["messages"]
    assert isinstance(messages, list)
    return [(m["role"], m["content"]) for m in messages]


def _run_turns(
    server: ReplayServer, env: dict[str, str], cwd: pathlib.Path, name: str, *prompts: str
) -> None:
    for prompt in prompts:
        result = robota(["run", prompt, *_model(server), "--session", name], env=env, cwd=cwd)
        assert result.returncode == 0, result.stderr


def test_chat_session_resumes_in_tmux(
    workdir: pathlib.Path, state_env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    """Quit a `chat --session demo` in tmux, start it again: the exchange is shown and continued."""
    script = [
        Exchange.sse(chat_sse("Paris is the capital of France.")),
        Exchange.sse(chat_sse("Rome is the capital of Italy.")),
    ]
    args = ["chat", "--session", "demo"]
    with ReplayServer(script) as server:
        for run in ("first", "second"):
            (tmp_path / run).mkdir()
            pane = Tmux(
                [*args, *_model(server)], env=state_env, cwd=workdir, directory=tmp_path / run
            )
            try:
                if run == "first":
                    pane.wait_for("new session 'demo'")
                    pane.wait_for("you> ")
                    pane.type_line("Capital of France?")
                    pane.wait_for("Paris is the capital of France.")
                else:
                    screen = pane.wait_for("resumed session 'demo': 1 turns")
                    # The earlier exchange is restored on the screen before the new prompt.
                    assert "you> Capital of France?" in screen
                    assert "Paris is the capital of France." in screen
                    pane.type_line("And of Italy?")
                    pane.wait_for("Rome is the capital of Italy.")
                pane.wait_for("you> ", count=2 if run == "first" else 3)
                pane.type_line("/exit")
                pane.wait_exit()
            finally:
                pane.close()
        server.assert_all_served()
        second = server.requests[1].json()
    assert _roles(second) == [
        ("user", "Capital of France?"),
        ("assistant", "Paris is the capital of France."),
        ("user", "And of Italy?"),
    ]
    database = tmp_path / "state" / "robota" / "sessions.db"
    # S07: the default store is created owner-only.
    assert stat.S_IMODE(database.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(database.stat().st_mode) == 0o600


def test_run_session_continues_and_list_and_show_report_it(
    workdir: pathlib.Path, state_env: dict[str, str]
) -> None:
    script = [Exchange.sse(chat_sse("Four.")), Exchange.sse(chat_sse("Eight.", usage=(30, 7)))]
    with ReplayServer(script) as server:
        _run_turns(server, state_env, workdir, "math", "What is 2+2?", "Double it?")
        second = server.requests[1].json()
    assert _roles(second) == [
        ("user", "What is 2+2?"),
        ("assistant", "Four."),
        ("user", "Double it?"),
    ]
    listed = robota(["sessions", "list"], env=state_env, cwd=workdir)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split()[:5] == ["NAME", "TURNS", "UPDATED", "TOKENS", "COST"]
    assert row.split()[:2] == ["math", "2"]
    assert "52" in row.split()  # (10 + 5) + (30 + 7) tokens: both turns' usage
    assert row.endswith("What is 2+2?")  # titled after its first prompt
    shown = robota(["sessions", "show", "math"], env=state_env, cwd=workdir)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "--- turn 1 ---",
        "you> What is 2+2?",
        "Four.",
        "--- turn 2 ---",
        "you> Double it?",
        "Eight.",
    ]
    assert "session 'math': 2 turns" in shown.stderr


def test_fork_copies_the_first_turns_and_leaves_the_original(
    workdir: pathlib.Path, state_env: dict[str, str]
) -> None:
    script = [Exchange.sse(chat_sse("A1")), Exchange.sse(chat_sse("A2"))]
    with ReplayServer(script) as server:
        _run_turns(server, state_env, workdir, "base", "Q1", "Q2")
    forked = robota(
        ["sessions", "fork", "base", "--at", "1", "--as", "branch"], env=state_env, cwd=workdir
    )
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout == "branch\n"
    branch = robota(["sessions", "show", "branch"], env=state_env, cwd=workdir)
    assert branch.stdout.splitlines() == ["--- turn 1 ---", "you> Q1", "A1"]
    assert "forked from 'base' at turn 1" in branch.stderr
    base = robota(["sessions", "show", "base"], env=state_env, cwd=workdir)
    assert base.stdout.count("--- turn") == 2
    unnamed = robota(["sessions", "fork", "base"], env=state_env, cwd=workdir)
    assert unnamed.returncode == 0, unnamed.stderr
    assert unnamed.stdout.startswith("ses_")
    again = robota(["sessions", "fork", "base", "--as", "branch"], env=state_env, cwd=workdir)
    assert again.returncode == 2
    assert again.stderr == (
        "error: --as 'branch': a session with that name exists already; choose another name\n"
    )
    too_far = robota(["sessions", "fork", "base", "--at", "3"], env=state_env, cwd=workdir)
    assert too_far.returncode == 2
    assert too_far.stderr == "error: --at 3: session 'base' has 2 turns; give 0 to 2\n"


def test_rm_asks_on_a_terminal_and_needs_yes_elsewhere(
    workdir: pathlib.Path, state_env: dict[str, str]
) -> None:
    with ReplayServer([Exchange.sse(chat_sse("hi"))]) as server:
        _run_turns(server, state_env, workdir, "old", "hello")
    refused = robota(["sessions", "rm", "old"], env=state_env, cwd=workdir)
    assert refused.returncode == 2
    assert "pass --yes to delete it" in refused.stderr
    for answer, code in (("n", 1), ("y", 0)):
        terminal = Terminal(["sessions", "rm", "old"], env=state_env, cwd=workdir)
        try:
            terminal.wait_for("delete session 'old' (1 saved turns)? [y/N] ")
            terminal.type(answer + "\n")
            assert terminal.wait(timeout=30) == code
        finally:
            terminal.close()
        listed = robota(["sessions", "list"], env=state_env, cwd=workdir)
        assert ("old" in listed.stdout) is (answer == "n")
    gone = robota(["sessions", "rm", "old", "--yes"], env=state_env, cwd=workdir)
    assert gone.returncode == 2
    assert gone.stderr.startswith("error: no session named 'old' in ")
    with ReplayServer([Exchange.sse(chat_sse("hi"))]) as server:
        _run_turns(server, state_env, workdir, "scripted", "hello")
    deleted = robota(["sessions", "rm", "scripted", "--yes"], env=state_env, cwd=workdir)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stderr == "deleted session 'scripted'\n"


def test_a_session_busy_in_another_process_is_refused_in_one_line(
    workdir: pathlib.Path, state_env: dict[str, str]
) -> None:
    """While one chat's turn runs, another process cannot run a turn of it or delete it.

    Forking only reads: it copies the turns saved so far.
    """
    busy = "error: another robota process is using session 'shared' (a turn is running there)"
    with ReplayServer([Exchange.hang(120)]) as server:
        chat = Child(["chat", "--session", "shared", *_model(server)], env=state_env, cwd=workdir)
        try:
            chat.wait_for("you> ")
            chat.send("a long question")
            deadline = time.monotonic() + 30
            while not server.requests:  # the turn holds the session until its answer
                assert chat.process.poll() is None, chat.stderr
                assert time.monotonic() < deadline, chat.stderr
                time.sleep(0.02)
            run = robota(
                ["run", "hello", *_model(server), "--session", "shared"], env=state_env, cwd=workdir
            )
            assert run.returncode == 1
            assert run.stderr.startswith(busy), run.stderr
            assert "Traceback" not in run.stderr
            removed = robota(["sessions", "rm", "shared", "--yes"], env=state_env, cwd=workdir)
            assert removed.returncode == 1
            assert removed.stderr.startswith(busy), removed.stderr
            forked = robota(["sessions", "fork", "shared"], env=state_env, cwd=workdir)
            assert forked.returncode == 0, forked.stderr
        finally:
            chat.kill()
    # The killed holder's lease went with it (flock): the session is usable again.
    with ReplayServer([Exchange.sse(chat_sse("free again"))]) as server:
        _run_turns(server, state_env, workdir, "shared", "hello")


def test_bad_names_and_stores_are_one_line_usage_errors(
    workdir: pathlib.Path, state_env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    run = robota(
        [
            "run",
            "hi",
            "--model",
            "openai-compatible:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--session",
            "a/b",
        ],
        env=state_env,
        cwd=workdir,
    )
    assert run.returncode == 2
    assert run.stderr == (
        "error: --session 'a/b': a session name is 1 to 180 characters, without control "
        "characters or '/'\n"
    )
    alone = robota(
        ["chat", "--model", "openai-compatible:m", "--sessions-db", str(tmp_path / "s.db")],
        env=state_env,
        cwd=workdir,
    )
    assert alone.returncode == 2
    assert alone.stderr == (
        "error: --sessions-db names where sessions are kept; add --session NAME\n"
    )
    unknown = robota(["sessions", "show", "nope"], env=state_env, cwd=workdir)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: no session named 'nope' in ")
    assert "`robota sessions list`" in unknown.stderr
    missing_dir = tmp_path / "no-such-dir" / "s.db"
    for where in (["--sessions-db", str(missing_dir)],):
        bad = robota(["sessions", "list", *where], env=state_env, cwd=workdir)
        assert bad.returncode == 2
        assert bad.stderr.count("\n") == 1
        assert "does not exist; create it" in bad.stderr
    empty = robota(["sessions", "list", "--sessions-db", ""], env=state_env, cwd=workdir)
    assert empty.returncode == 2
    assert "--sessions-db is empty" in empty.stderr


def test_the_store_may_be_named_by_flag_or_environment(
    workdir: pathlib.Path, state_env: dict[str, str], tmp_path: pathlib.Path
) -> None:
    chosen = tmp_path / "mine.db"
    with ReplayServer([Exchange.sse(chat_sse("one"))]) as server:
        result = robota(
            ["run", "x", *_model(server), "--session", "s1", "--sessions-db", str(chosen)],
            env=state_env,
            cwd=workdir,
        )
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o600
    by_env = robota(
        ["sessions", "list"], env={**state_env, "ROBOTA_SESSIONS_DB": str(chosen)}, cwd=workdir
    )
    assert by_env.stdout.splitlines()[1].split()[:2] == ["s1", "1"]
    assert f"1 sessions in {chosen}" in by_env.stderr
    default = robota(["sessions", "list"], env=state_env, cwd=workdir)
    assert default.stdout == ""  # the default store is another one
    assert "0 sessions in " in default.stderr
