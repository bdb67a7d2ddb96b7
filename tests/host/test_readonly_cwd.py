"""S21: the read-only classifier follows ``cd`` as the shell does (issue 24).

``cd`` is logical in bash and dash: ``cd deep/..`` removes ``deep/..`` as text from ``$PWD``,
whatever ``deep`` points to, while the paths later commands read are resolved by the kernel from
the directory the shell is physically in. A command after ``&&`` runs only where the ``cd``
succeeded. Each test builds real directories and symlinks, and the generated ones ask a real
bash and dash where the shell ends up.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.host import read_only_reason

SHELLS = [shutil.which("bash") or "bash", shutil.which("dash") or "dash"]


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    """``base/ws`` is the workspace; ``base/secret.txt`` and ``base/outside`` are not in it."""
    base = tmp_path / "base"
    root = base / "ws"
    for directory in ("src", "tests", "docs", "a/b/c", "a/b/c2"):
        (root / directory).mkdir(parents=True)
    (base / "outside").mkdir()
    (base / "outside" / "secret").write_text("outside\n")
    (base / "secret.txt").write_text("outside\n")
    (root / "README.md").write_text("readme\n")
    (root / "x").write_text("ws/x\n")
    (root / "a" / "x").write_text("ws/a/x\n")
    (root / "src" / "a.py").write_text("foo = 1\n")
    (root / "tests" / "test_a.py").write_text("foo\n")
    (root / "deep").symlink_to("a/b/c")  # inside; its parent is a/b
    (root / "link").symlink_to("a/b")
    (root / "self").symlink_to(".")  # the workspace itself, whose parent is outside
    (root / "a" / "b" / "c2" / "out").symlink_to("../../../../outside")
    return root


def real(path: pathlib.Path) -> str:
    return os.path.realpath(path)


def read_only(command: str, root: pathlib.Path) -> bool:
    return read_only_reason(command, workspace=str(root)) is None


def where_the_shell_is(shell: str, line: str, root: pathlib.Path) -> str | None:
    """The physical directory ``shell`` is in after ``line`` (``None``: it did not get there)."""
    done = subprocess.run(
        [shell, "-c", f"{line} && pwd -P"],
        cwd=root,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None


# --------------------------------------------------------------------------- the findings


def test_s21_cd_is_logical_like_the_shell(tree: pathlib.Path) -> None:
    # `deep` leads to a/b/c, so a physical reading of `deep/../..` stays inside (at `a`); the
    # shell removes `deep/..` as text and climbs out of the workspace.
    for shell in SHELLS:
        assert where_the_shell_is(shell, "cd deep/../..", tree) == real(tree.parent)
    assert not read_only("cd deep/../.. && cat secret.txt", tree)
    assert not read_only("cd deep/../.. && ls", tree)
    # `deep/..` is the workspace itself to the shell, not a/b.
    for shell in SHELLS:
        assert where_the_shell_is(shell, "cd deep/..", tree) == real(tree)
    assert read_only("cd deep/.. && cat README.md", tree)
    assert not read_only("cd deep/.. && cat ../secret.txt", tree)


def test_s21_after_cd_and_the_start_directory_is_not_kept(tree: pathlib.Path) -> None:
    # `cat` runs only where `cd src` succeeded: ../README.md is the workspace's README.
    assert read_only("cd src && cat ../README.md", tree)
    assert read_only("cd a/b && cat ../../README.md ../x", tree)


# --------------------------------------------------------------------------- the model


def test_s21_cd_dash_p_is_physical_and_the_last_mode_wins(tree: pathlib.Path) -> None:
    for shell in SHELLS:
        assert where_the_shell_is(shell, "cd -P deep/..", tree) == real(tree / "a" / "b")
        assert where_the_shell_is(shell, "cd -LP deep/../../..", tree) == real(tree)
        assert where_the_shell_is(shell, "cd -P -L deep/..", tree) == real(tree)
    assert read_only("cd -P deep/../../.. && cat README.md", tree)
    assert read_only("cd -LP deep/../../.. && cat README.md", tree)
    assert not read_only("cd -PL deep/../../.. && cat README.md", tree)  # logical: above it
    assert read_only("cd -P deep/.. && cat ../x", tree)  # from a/b: a/x
    assert read_only("cd -- src && ls", tree)
    assert read_only("cd -P -- src && ls", tree)


def test_s21_a_path_after_cd_is_read_from_the_physical_directory(tree: pathlib.Path) -> None:
    # `link` leads to a/b: the kernel resolves ../x from a/b, so it reads a/x.
    for shell in SHELLS:
        done = subprocess.run(
            [shell, "-c", "cd link && cat ../x"],
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.stdout == "ws/a/x\n"
    assert read_only("cd link && cat ../x", tree)
    # `self` leads to the workspace itself: its physical parent is outside, although `cd ..`
    # from there is logical and comes back to the workspace.
    assert not read_only("cd self && cat ../secret.txt", tree)
    assert not read_only("cd self && ls ..", tree)
    assert read_only("cd self && cd .. && ls", tree)


def test_s21_bash_falls_back_to_the_physical_directory(tree: pathlib.Path) -> None:
    # ws/c2 does not exist, so dash's `cd deep/../c2` fails; bash then tries the path as the
    # kernel resolves it and ends up in a/b/c2, where `out` leads outside.
    assert where_the_shell_is("dash", "cd deep/../c2", tree) is None
    assert where_the_shell_is(SHELLS[0], "cd deep/../c2", tree) == real(tree / "a" / "b" / "c2")
    assert not read_only("cd deep/../c2 && cat out/secret", tree)
    assert read_only("cd deep/../c2 && ls", tree)


def test_s21_a_command_after_a_failing_cd_is_still_judged(tree: pathlib.Path) -> None:
    # `missing` does not exist, so `cd` fails and `&&` skips the rest; it is judged anyway, from
    # where the line was, so nothing is read-only only because a `cd` is expected to fail.
    assert not read_only("cd missing && cat /etc/passwd", tree)
    assert not read_only("cd missing && cat ../secret.txt", tree)
    assert read_only("cd missing && ls", tree)
    assert not read_only("cd src && cd missing && cat ../../secret.txt", tree)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # After `;` the command runs whether or not `cd` succeeded: from the start too.
        ("cd a; cat ../x", False),
        ("cd a; cat x", True),
        # After `||` it runs only where `cd` failed: from the start.
        ("cd a || cat ../x", False),
        ("cd a || cat x", True),
        # A pipeline's `cd` runs in a subshell and moves nobody.
        ("cd a | cat ../x", False),
        ("cd a | cat x", True),
        ("cd a | cat x && cat ../x", False),
        ("cd .. | ls", False),  # its target is still judged
        # Nested: each `&&` narrows where the next command runs.
        ("cd a && cd b && cat ../../x", True),
        ("cd a && cd b && cat ../../../secret.txt", False),
        ("cd a && cd b || cat ../x", False),  # from `a` (the second cd failed) or the start
        ("cd a && ls || cat ../x", False),
        ("cd a && cd b; cat x", True),
        ("cd a && cd b; cat ../x", False),
    ],
)
def test_s21_where_a_command_runs_follows_the_operators(
    tree: pathlib.Path, line: str, expected: bool
) -> None:
    assert read_only(line, tree) is expected, line


@pytest.mark.parametrize(
    "line",
    [
        "cd src && ls",
        "cd src && cat ../README.md",
        "cd tests && grep -rn foo .",
        "cd docs && ls ..",
        "cd src && cd .. && ls",
        "cd ./src/ && cat a.py",
        "cd a/b/c && cat ../../x",
        "cd deep && ls",
        "cd src && ls && cd .. && ls docs",
        "(cd src && ls) && ls",
    ],
)
def test_s21_ordinary_cd_lines_stay_read_only(tree: pathlib.Path, line: str) -> None:
    assert read_only_reason(line, workspace=str(tree)) is None


@pytest.mark.parametrize(
    "line",
    [
        "cd",  # home
        "cd -",  # the previous directory
        "cd -- -",
        "cd -x src",  # an option the shells do not take
        "cd src docs",
        "cd .. && ls",
        "cd /",
        "cd ~",
        "cd src/../.. && ls",
        # Climbing above the workspace and back: the shell's $PWD may spell the workspace
        # through a symlink, so where `../ws` leads is not known.
        "cd src/../../ws && ls",
        "cd missing/../src && ls",  # bash fails, dash goes to src; the `..` cannot be judged
        "cd src\nls\ncd ..\nls docs",  # if `cd src` failed, `cd ..` leaves the workspace
        "command cd .. && ls",
    ],
)
def test_s21_cd_the_classifier_cannot_follow_is_not_read_only(
    tree: pathlib.Path, line: str
) -> None:
    assert not read_only(line, tree), line


def test_s21_a_subshell_or_group_keeps_every_directory_possible(tree: pathlib.Path) -> None:
    # No straight-line shape: every directory an earlier `cd` may lead to stays possible.
    assert not read_only("(cd src) && cat ../README.md", tree)
    assert not read_only("{ cd src; } && cat ../README.md", tree)
    assert not read_only("(cd src && cat ../README.md)", tree)  # conservative
    assert read_only("(cd src && cat a.py) && cat README.md", tree)
    assert not read_only("(cd self && ls ..)", tree)
    assert not read_only("(cd deep/../.. && ls)", tree)


def test_s21_a_redirection_is_opened_where_its_command_runs(tree: pathlib.Path) -> None:
    assert read_only("cd src && cat < ../README.md", tree)
    assert not read_only("cd src && cat < ../../secret.txt", tree)
    assert not read_only("cd src; cat < ../README.md", tree)
    assert not read_only("(cd src && cat) < ../README.md", tree)  # opened before the subshell


# --------------------------------------------------------------------------- against real shells

_LINK_TARGETS = [None, "a/b", "a/b/c", ".", "..", "../..", "../outside", "d"]
_CD_TARGETS = [
    "a", "a/b", "l1", "l1/..", "l1/../..", "a/l2", "a/l2/..", "a/l2/../..", "..", "missing",
    "a/../d", ".", "a/b/c/l3/..", "l1/../a", "d/../a/b", "a/b/..", "l1/../../ws/a", "/",
]  # fmt: skip
_PLAIN = frozenset({"a", "a/b", "a/../d", ".", "d/../a/b", "a/b/.."})  # no symlink, none missing
_OPTIONS = ["", "-P ", "-L ", "-LP ", "-PL ", "-- "]
_SEPARATORS = [" && ", " ; ", " || ", " | "]
_READERS = [
    ("cat", "x"), ("cat", "../x"), ("cat", "../../x"), ("ls", ".."), ("ls", "."),
    ("cat", "l1/x"), ("cat", "a/l2/../x"), ("cat", "../outside/secret"),
]  # fmt: skip


def _build(base: pathlib.Path, links: list[str | None]) -> pathlib.Path:
    root = base / "ws"
    for directory in ("a/b/c", "d"):
        (root / directory).mkdir(parents=True)
    (base / "outside").mkdir()
    (base / "outside" / "secret").write_text("s\n")
    for file in ("x", "a/x", "a/b/x", "d/x"):
        (root / file).write_text("x\n")
    for slot, target in zip(("l1", "a/l2", "a/b/c/l3"), links, strict=True):
        if target is not None:
            (root / slot).symlink_to(target)
    return root


def _inside(root: pathlib.Path, path: str) -> bool:
    # An independent check: where the path lands, every existing symlink resolved.
    real_root = os.path.realpath(root)
    landed = os.path.realpath(path)
    return landed == real_root or landed.startswith(real_root + os.sep)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    links=st.lists(st.sampled_from(_LINK_TARGETS), min_size=3, max_size=3),
    steps=st.lists(
        st.tuples(
            st.sampled_from(_OPTIONS), st.sampled_from(_CD_TARGETS), st.sampled_from(_SEPARATORS)
        ),
        min_size=1,
        max_size=3,
    ),
    reader=st.sampled_from(_READERS),
)
def test_s21_a_line_called_read_only_reads_inside_wherever_a_real_shell_goes(
    links: list[str | None],
    steps: list[tuple[str, str, str]],
    reader: tuple[str, str],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = _build(pathlib.Path(scratch), links)
        prefix = "".join(f"cd {option}{target}{separator}" for option, target, separator in steps)
        program, operand = reader
        verdict = read_only_reason(f"{prefix}{program} {operand}", workspace=str(root))
        for shell in SHELLS:
            # Where the reader runs in the real shell (if it runs), and so what it reads.
            log = pathlib.Path(scratch) / "where"
            log.unlink(missing_ok=True)
            subprocess.run(
                [shell, "-c", f"{prefix}pwd -P > {log}"],
                cwd=root,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                capture_output=True,
                check=False,
            )
            if not log.exists():
                continue
            directory = log.read_text().strip()
            read = os.path.join(directory, operand)
            if verdict is None:
                assert _inside(root, directory), (shell, prefix, directory)
                assert _inside(root, read), (shell, prefix, reader, read)
            elif (
                all(target in _PLAIN for _, target, _ in steps)
                and not any(link in operand for link in ("l1", "l2", "l3"))
                and all(separator == " && " for *_, separator in steps)
                and _inside(root, read)
            ):
                # Both directions: through plain directories joined by `&&`, a line whose
                # reader the shell keeps inside is read-only.
                pytest.fail(f"{shell}: {prefix}{program} {operand}: {verdict}")
