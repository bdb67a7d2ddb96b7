"""S12: a ``\\xNN`` spelling of a valid UTF-8 name must not slip past a rule naming that name.

``display`` escapes only the bytes of a name that are not UTF-8, so the tools read a ``\\xNN``
spelling back only when it is that display form. ``caf\\xc3\\xa9.txt`` spells ``café.txt`` in
bytes the gate judges literally (a file that does not exist), so decoding it would open a file
a rule names behind the rule's back.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest

import robota
import robota.host
import robota.tools
from robota.testing import ScriptedProvider

from .conftest import Call


@pytest.fixture
def project(workspace: pathlib.Path) -> pathlib.Path:
    (workspace / "données").mkdir()
    (workspace / "données" / "clé.txt").write_text("sk-live-123\n")
    (workspace / "café.txt").write_text("sk-live-456\n")
    return workspace


async def _run(project: pathlib.Path, deny: list[str], calls: list[Any]) -> list[str]:
    agent = robota.Agent(
        provider=ScriptedProvider([calls, "done"]),
        model="m",
        tools=robota.tools.builtin(workspace=project),
        tool_gate=robota.PermissionGate(
            robota.PermissionPolicy(deny=deny, mode="accept_edits"),
            robota.host.permission_context(project),
        ),
    )
    await agent.run("go")
    return [m.content for m in agent.history if isinstance(m, robota.ToolMessage)]


RULED = ("café.txt", "données/**")
UTF8_SPELLED = [
    "caf\\xc3\\xa9.txt",
    "caf\\xC3\\xA9.txt",
    "donn\\xc3\\xa9es/cl\\xc3\\xa9.txt",
    "données/cl\\xc3\\xa9.txt",
]


@pytest.mark.parametrize("path", UTF8_SPELLED)
async def test_s12_a_utf8_name_spelled_in_escapes_does_not_slip_past_a_deny_rule(
    project: pathlib.Path, path: str
) -> None:
    deny = [f"{tool}({name})" for tool in ("Read", "Edit", "Write") for name in RULED]
    calls = [
        ("Read", {"path": path}),
        ("Edit", {"path": path, "old_string": "sk-live", "new_string": "PWNED"}),
        ("Write", {"path": path, "content": "PWNED\n"}),
    ]
    read, edited, written = await _run(project, deny, calls)
    assert not written.startswith("Wrote")
    assert "sk-live" not in read
    assert not edited.startswith("Edited")
    assert "PWNED" not in (project / "café.txt").read_text()
    assert "PWNED" not in (project / "données" / "clé.txt").read_text()


def test_a_name_that_is_not_utf8_is_still_reached_by_its_display_spelling(
    workspace: pathlib.Path, call: Call
) -> None:
    with open(os.fsencode(str(workspace)) + b"/caf\xe9 \xc3\xa9.txt", "wb") as handle:
        handle.write(b"one\n")
    edit = robota.tools.edit_file(workspace=workspace)
    # Read shows it as `caf\xe9 é.txt`: only the byte that is not UTF-8 is escaped.
    result = call(edit, path="caf\\xe9 é.txt", old_string="one", new_string="two")
    assert not result.is_error, result.content
    assert result.content.startswith("Edited caf\\xe9 é.txt")
    # Upper-case hex is the same spelling.
    result = call(edit, path="caf\\xE9 é.txt", old_string="two", new_string="three")
    assert not result.is_error, result.content
    # Escaping the UTF-8 bytes as well is not how the name is shown: it is read literally.
    result = call(edit, path="caf\\xe9 \\xc3\\xa9.txt", old_string="three", new_string="x")
    assert result.is_error
    assert "does not exist" in result.content
