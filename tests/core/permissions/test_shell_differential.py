"""S12/S21: the parser is part of the security boundary, so it is checked against real shells.

Generated command lines run under ``bash`` and ``dash`` with a ``PATH`` of logging stubs: every
command a shell actually runs must be one :func:`analyze_command` listed — with the same words,
for a line it calls complete — so no construct can hide a command from a deny rule or the
catastrophic-removal check. (A line the analysis cannot read is unevaluable, which asks; such
lines are not compared.)
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.core.permissions import analyze_command

STUBS = ("cmda", "cmdb", "cmdc")
# Both are on every machine this project runs on (Debian's sh is dash); a missing one fails.
SHELLS = [shutil.which("bash") or "bash", shutil.which("dash") or "dash"]

# Each run writes its argv to a part file and renames it into place, so a run still going (a
# background job) is never read half-written.
_STUB = """#!/bin/sh
part=$(mktemp "$STUB_LOG/part.XXXXXX")
printf '%s\\0' "$(basename "$0")" "$@" > "$part"
mv "$part" "$STUB_LOG/run.${part##*.}"
"""


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("shell-differential")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name in STUBS:
        stub = bin_dir / name
        stub.write_text(_STUB)
        stub.chmod(0o755)
    for name in ("env", "nice", "nohup", "timeout", "xargs", "mktemp", "basename", "mv", "sh"):
        real = shutil.which(name)
        if real:
            (bin_dir / name).symlink_to(real)
    (root / "work").mkdir()
    return root


def run_in(shell: str, line: str, sandbox: pathlib.Path) -> set[tuple[str, ...]]:
    # A fresh log per run: a background job of an earlier line may still be writing.
    log = pathlib.Path(tempfile.mkdtemp(dir=sandbox, prefix="log-"))
    env = {"PATH": str(sandbox / "bin"), "STUB_LOG": str(log), "HOME": str(sandbox / "work")}
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(
            [shell, "-c", line],
            cwd=sandbox / "work",
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    runs: set[tuple[str, ...]] = set()
    for entry in log.glob("run.*"):
        fields = entry.read_bytes().split(b"\0")[:-1]
        runs.add(tuple(f.decode("utf-8", "replace") for f in fields))
    return runs


_NAMES = st.sampled_from(
    ["cmda", "cmdb", "cmdc", "c'md'a", "\\cmdb", '"cmdc"', "cm\\\nda", "X=1 cmda",
     "env cmdb", "env -i Y=2 cmdc", "nice -n 5 cmda", "command cmdb", "exec cmdc",
     "timeout 5 cmda", "nohup cmdb", "time cmdc", "{cmda,x}", "cmd{a,b}"]
)  # fmt: skip
_WORDS = st.sampled_from(
    ["x", "'a b'", '"c d"', "e\\ f", "g'h'i", '"$(cmdb in)"', "`cmdc q`", "$'t\\tu'",
     "{p,q}", "w{1..2}", "#c", "a#b", "\\#", "''", '""', "~", "~/z", "$X", "${X:-d}",
     "'$X'", '"\\$X"', "a=b", "-n", "--", "\\'", '"a\\"b"', "$((1+2))", "<(cmdb p)",
     "\\\n", "'multi\nline'", "$(cmdc $(cmda nested))", '"a"\'b\'c', "%s", "\\\\"]
)  # fmt: skip
_REDIRECTS = st.sampled_from(["", " >/dev/null", " 2>&1", " </dev/null", " 2>/dev/null"])
_SEPARATORS = st.sampled_from([" ; ", " && ", " || ", " | ", "\n", " & ", ";"])


@st.composite
def _command(draw: st.DrawFn) -> str:
    words = draw(st.lists(_WORDS, max_size=4))
    text = " ".join([draw(_NAMES), *words]) + draw(_REDIRECTS)
    wrap = draw(st.sampled_from(["", "()", "{}", "if", "heredoc", "quoted-heredoc", "subst"]))
    if wrap == "()":
        return f"( {text} )"
    if wrap == "{}":
        return f"{{ {text}; }}"
    if wrap == "if":
        return f"if {text}; then cmdc then; fi"
    if wrap == "heredoc":
        return f"{text} <<EOF\nbody $(cmdb here)\nEOF\n"
    if wrap == "quoted-heredoc":
        return f"{text} <<'EOF'\nbody $(cmdb not-run)\nEOF\n"
    if wrap == "subst":
        return f"cmda $( {text} )"
    return text


@st.composite
def _line(draw: st.DrawFn) -> str:
    commands = draw(st.lists(_command(), min_size=1, max_size=3))
    text = commands[0]
    for command in commands[1:]:
        separator = draw(_SEPARATORS)
        if text.endswith("\n") and separator.strip() in ("&&", "||", "|"):
            separator = separator.strip() + " "  # an operator cannot start a line
        text += separator + command
    return text


@pytest.mark.parametrize("shell", SHELLS)
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(line=_line())
def test_s12_every_command_a_real_shell_runs_is_one_the_analysis_listed(
    shell: str, sandbox: pathlib.Path, line: str
) -> None:
    analysis = analyze_command(line)
    if not analysis.parsed:
        return  # unevaluable: every deny or ask rule asks
    ran = run_in(shell, line, sandbox)
    listed = {c.name for c in analysis.commands}
    exact = {
        c.words[:1] and (os.path.basename(c.words[0]), *c.words[1:]) for c in analysis.commands
    }
    for argv in ran:
        # A command the analysis did not list is only allowed where the line says it hides
        # something (so deny rules ask and a removal asks).
        if argv[0] not in listed:
            assert not analysis.complete, (shell, line, argv, listed)
            assert analysis.hidden or analysis.opaque, (shell, line, argv, listed)
        if not analysis.complete:
            continue
        same_name = [c for c in analysis.commands if c.name == argv[0]]
        if any(c.opaque_arguments for c in same_name):
            continue  # its words are only known at run time; the name is what rules see
        assert argv in exact, (shell, line, argv, exact)


@pytest.mark.parametrize(
    "line",
    [
        "cmda 'a b' \"c d\" e\\ f g'h'i",
        "\\cmda x; c'md'b y && \"cmdc\" z",
        "cmda <<EOF\n$(cmdb inner)\nEOF\n",
        "cmda <<'EOF'\n$(cmdb never)\nEOF\n",
        "env -i A=1 nice -n 3 cmda x",
        "cmda a#b #comment $(cmdb hidden)",
        "cmda $'x' && cmdb",
        "cmd{a,b} arg",
        "X=1; cmda",
        # Found by review (issue 10): each once hid a command from the analysis.
        "cmda | cmda | cmda\ncmdb x 2>&1",
        "cmda ok\\\n#; cmdb",
        'cmda "$\\\n(cmdb x)"',
        "cmda ${x:-`cmdb x`}",
        "cmda `cmda \\`cmdb x\\``",
        "cmda <<EOF\n$(cmda)\n`cmdb x`\nEOF\n",
        "env - cmdb x",
        "timeout -- 5 cmdb x",
        "bash -c -- 'cmdb x'",
        "sh -c -x 'cmdb x'",
    ],
)
def test_s12_known_tricky_lines_agree_with_bash_and_dash(sandbox: pathlib.Path, line: str) -> None:
    analysis = analyze_command(line)
    assert analysis.parsed
    listed = {c.name for c in analysis.commands}
    for shell in SHELLS:
        for argv in run_in(shell, line, sandbox):
            if argv[0] not in listed:
                assert analysis.hidden or analysis.opaque, (shell, line, argv, listed)
