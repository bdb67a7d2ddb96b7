"""S09 children's sessions: one process-wide decision, isolated groups, killed at exit."""

from __future__ import annotations

import asyncio
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest

import robota
from childproc import alive
from robota.host import children_isolated, signal_group, spawn


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_s09_while_the_decision_is_off_options_pass_through_untouched() -> None:
    result = _run(
        """
        import asyncio, os
        from robota.host import children_isolated, spawn
        async def main():
            assert not children_isolated()
            child = await spawn("sh", "-c", "echo $$ $(ps -o sid= -p $$)", stdin=None)
            out, _ = await child.communicate()
            pid, sid = out.split()
            print("same-session" if int(sid) == os.getsid(0) else "own-session")
        asyncio.run(main())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "same-session"


def test_s09_once_on_each_child_leads_its_own_session() -> None:
    result = _run(
        """
        import asyncio, os
        from robota.host import isolate_children, children_isolated, spawn
        async def main():
            isolate_children()
            isolate_children()
            assert children_isolated()
            child = await spawn("sh", "-c", "echo $$")
            out, _ = await child.communicate()
            pid = int(out)
            print("leader" if os.getpgid(0) != pid else "shared")
        asyncio.run(main())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "leader"


@pytest.mark.parametrize("stream", ["None", "sys.stdin", "0", "sys.stderr"])
def test_s09_a_terminal_descriptor_is_refused(stream: str) -> None:
    result = _run(
        f"""
        import asyncio, sys
        from robota import ConfigurationError
        from robota.host import isolate_children, spawn
        async def main():
            isolate_children()
            try:
                await spawn("true", stdin={stream} if "{stream}" in ("None", "sys.stdin", "0") else -3, stderr={stream} if "{stream}" == "sys.stderr" else -1)
            except ConfigurationError as error:
                print("refused:", error)
        asyncio.run(main())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("refused:")
    assert "terminal descriptor" in result.stdout


def test_s09_the_childs_group_is_killed_when_the_process_ends(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "grandchild.pid"
    result = _run(
        """
        import asyncio, sys
        from robota.host import isolate_children, spawn
        async def main():
            isolate_children()
            await spawn("sh", "-c", f"sleep 300 & echo $! > {sys.argv[1]}; wait")
            for _ in range(200):
                try:
                    if open(sys.argv[1]).read().strip():
                        break
                except FileNotFoundError:
                    pass
                await asyncio.sleep(0.02)
        asyncio.run(main())
        """,
        str(marker),
    )
    assert result.returncode == 0, result.stderr
    grandchild = int(marker.read_text())
    for _ in range(100):
        if not alive(grandchild):
            break
        time.sleep(0.05)
    assert not alive(grandchild)


async def test_s09_a_signal_reaches_the_group_only_while_the_leader_lives(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The decision never turns off; the test process takes it only for this test.
    monkeypatch.setattr(sys, "_robota_children_isolated", False, raising=False)
    robota.host.isolate_children()
    assert children_isolated()
    marker = tmp_path / "pid"
    child = await spawn("sh", "-c", f"sleep 300 & echo $! > {marker}; wait")
    for _ in range(200):
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.02)
    grandchild = int(marker.read_text())
    assert signal_group(child)
    await asyncio.wait_for(child.wait(), 10)
    for _ in range(100):
        if not alive(grandchild):
            break
        await asyncio.sleep(0.05)
    assert not alive(grandchild)  # the whole group got it, not only the leader
    await asyncio.sleep(0)
    assert not signal_group(child)  # the leader is reaped: nothing is sent for its old pid
    assert os.getpgid(0) != child.pid
