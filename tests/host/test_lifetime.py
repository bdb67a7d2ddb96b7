"""S08 owner records, the exit registry and process-scoped directories, on real processes.

Children are real ``sys.executable`` processes; kills are real signals. In this sandbox PID 1
does not reap orphans, so a killed process may linger as a zombie: ``owner_state`` counts a
zombie as gone (it has exited and can never run again), which one test pins directly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import signal
import stat
import subprocess
import time

import pytest

from childproc import finish, first_line, spawn
from robota.core import ConfigurationError
from robota.host import (
    OWNER_RECORD_NAME,
    InsecureModeError,
    OwnerRecord,
    OwnerRecordError,
    ProcessScopedDirectory,
    owner_state,
    register_at_exit,
)
from special_files import PLANTABLE_KINDS, finishes, plant

LIFETIME_SOURCE = pathlib.Path(__file__).resolve().parents[2] / "src/robota/host/store/_lifetime.py"


def child_record(reaped: list[subprocess.Popen[str]]) -> tuple[subprocess.Popen[str], OwnerRecord]:
    child = spawn(
        """
        import sys, time
        from robota.host import OwnerRecord
        print(OwnerRecord.current().to_json().decode(), flush=True)
        sys.stdin.read()
        """
    )
    reaped.append(child)
    return child, OwnerRecord.from_json(first_line(child).encode())


def write_scoped(root: pathlib.Path, name: str, record: bytes | None) -> pathlib.Path:
    directory = root / name
    directory.mkdir(mode=0o700)
    if record is not None:
        (directory / OWNER_RECORD_NAME).write_bytes(record)
    return directory


def scoped_name(prefix: str, pid: int) -> str:
    return f"{prefix}-{pid}-{os.urandom(8).hex()}"


# --- owner records -----------------------------------------------------------------------------


def test_s08_the_record_carries_machine_pid_start_time_boot_and_namespace() -> None:
    record = OwnerRecord.current()
    assert record.pid == os.getpid()
    assert record.host == os.uname().nodename
    stat_fields = pathlib.Path("/proc/self/stat").read_text().rpartition(")")[2].split()
    assert record.start_time == int(stat_fields[19])  # field 22
    assert record.boot_id == pathlib.Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert record.pid_namespace == os.readlink("/proc/self/ns/pid")
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        if os.access(path, os.R_OK):
            assert record.machine_id == pathlib.Path(path).read_text().strip()
            break
    else:
        assert record.machine_id is None


def test_s08_a_record_round_trips_through_json() -> None:
    record = OwnerRecord.current()
    assert OwnerRecord.from_json(record.to_json()) == record
    assert json.loads(record.to_json())["format"] == "robota.owner/1"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b"\xff\xfe",
        b"[]",
        b'{"format": "other/1", "pid": 1}',
        b'{"format": "robota.owner/1", "pid": 0}',
        b'{"format": "robota.owner/1", "pid": true}',
        b'{"format": "robota.owner/1", "pid": 5, "start_time": -1}',
        b'{"format": "robota.owner/1", "pid": 5, "host": 7}',
        b'{"format": "robota.owner/1", "pid": 5, "boot_id": ""}',
    ],
)
def test_s08_a_malformed_record_is_refused(data: bytes) -> None:
    with pytest.raises(OwnerRecordError):
        OwnerRecord.from_json(data)


# --- the three-valued owner state --------------------------------------------------------------


def test_s08_this_process_is_alive() -> None:
    assert owner_state(OwnerRecord.current()) == "alive"


def test_s08_this_machine_and_an_earlier_boot_is_gone() -> None:
    record = dataclasses.replace(OwnerRecord.current(), boot_id="00000000-0000-0000-0000-0")
    assert owner_state(record) == "gone"


@pytest.mark.parametrize(
    "change",
    [
        {"host": "another-host"},
        {"machine_id": "0" * 32},
        {"machine_id": None},  # a part only one side could read may be another machine's
        {"host": None, "machine_id": None},  # the record does not name its machine
        {"pid_namespace": "pid:[4026530000]"},  # may be live in another container
        {"pid_namespace": None},
        {"boot_id": None},
        {"start_time": None},  # a live pid without a start time to compare
    ],
)
def test_s08_an_owner_not_provably_gone_nor_provably_alive_is_unknown(
    change: dict[str, object],
) -> None:
    record = dataclasses.replace(OwnerRecord.current(), **change)  # type: ignore[arg-type]
    assert owner_state(record) == "unknown"


def test_s08_another_machine_is_unknown_even_from_an_earlier_boot_with_a_dead_pid() -> None:
    record = dataclasses.replace(
        OwnerRecord.current(), host="elsewhere", boot_id="other", pid=2**22 - 1
    )
    assert owner_state(record) == "unknown"


def test_s08_a_pid_that_is_gone_on_this_machine_boot_and_namespace_is_gone(
    reaped: list[subprocess.Popen[str]],
) -> None:
    child, record = child_record(reaped)
    assert owner_state(record) == "alive"
    child.communicate("", timeout=30)  # it exits and is reaped
    assert owner_state(record) == "gone"


def test_s08_a_live_pid_started_at_another_time_is_gone() -> None:
    record = dataclasses.replace(OwnerRecord.current(), start_time=1)
    assert owner_state(record) == "gone"


def test_s08_a_killed_but_unreaped_zombie_counts_as_gone(
    reaped: list[subprocess.Popen[str]],
) -> None:
    child, record = child_record(reaped)
    child.send_signal(signal.SIGKILL)
    stat_path = pathlib.Path(f"/proc/{child.pid}/stat")
    for _ in range(3000):
        if stat_path.read_text().rpartition(")")[2].split()[0] == "Z":
            break
        time.sleep(0.01)
    else:
        pytest.fail("the killed child never became a zombie")
    os.kill(child.pid, 0)  # the pid still exists: only its state says it cannot run again
    assert owner_state(record) == "gone"


# --- process-scoped directories ----------------------------------------------------------------


def test_s08_a_scoped_directory_is_owner_only_named_for_its_owner_with_its_record_first(
    tmp_path: pathlib.Path,
) -> None:
    with ProcessScopedDirectory.create(tmp_path / "state", "spill") as scoped:
        assert re.fullmatch(rf"spill-{os.getpid()}-[0-9a-f]{{16}}", scoped.name)
        assert stat.S_IMODE(os.stat(scoped.path).st_mode) == 0o700
        assert os.listdir(scoped.path) == [OWNER_RECORD_NAME]
        record_path = os.path.join(scoped.path, OWNER_RECORD_NAME)
        assert stat.S_IMODE(os.stat(record_path).st_mode) == 0o600
        assert OwnerRecord.from_json(pathlib.Path(record_path).read_bytes()) == scoped.record
        assert scoped.record == OwnerRecord.current()
        (pathlib.Path(scoped.path) / "result.txt").write_text("spilled")
        (pathlib.Path(scoped.path) / "nested").mkdir()
        (pathlib.Path(scoped.path) / "nested" / "deep.txt").write_text("x")
    assert scoped.removed
    assert not os.path.exists(scoped.path)
    scoped.remove()  # idempotent


def test_s08_a_scoped_directory_builds_on_the_owner_only_store(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)  # noqa: S103 - the wide mode under test
    with pytest.raises(InsecureModeError):
        ProcessScopedDirectory.create(root, "spill")


@pytest.mark.parametrize("prefix", ["", "-x", "a/b", "a b", "..", "x*"])
def test_s08_a_prefix_must_be_a_plain_word(tmp_path: pathlib.Path, prefix: str) -> None:
    with pytest.raises(ConfigurationError):
        ProcessScopedDirectory.create(tmp_path, prefix)
    with pytest.raises(ConfigurationError):
        ProcessScopedDirectory.sweep(tmp_path, prefix)


def test_s08_a_scoped_directory_is_removed_when_its_process_exits_normally(
    tmp_path: pathlib.Path,
) -> None:
    child = spawn(
        """
        import sys
        from robota.host import ProcessScopedDirectory
        scoped = ProcessScopedDirectory.create(sys.argv[1], "spill")
        open(scoped.path + "/work.txt", "w").write("x")
        print(scoped.path, flush=True)
        """,
        str(tmp_path / "state"),
    )
    code, out, err = finish(child)
    assert code == 0, err
    assert not os.path.exists(out.strip())
    assert os.listdir(tmp_path / "state") == []


def test_s08_sweep_removes_a_kill_9_owners_directory_and_keeps_everything_not_provably_gone(
    tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    root = tmp_path / "state"
    child = spawn(
        """
        import sys, time
        from robota.host import ProcessScopedDirectory
        scoped = ProcessScopedDirectory.create(sys.argv[1], "scratch")
        open(scoped.path + "/spilled.txt", "w").write("x")
        print(scoped.path, flush=True)
        time.sleep(600)
        """,
        str(root),
    )
    reaped.append(child)
    killed = pathlib.Path(first_line(child))
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert killed.is_dir()  # SIGKILL runs no cleanup: the directory is left behind

    here = OwnerRecord.current()
    other_namespace = dataclasses.replace(here, pid_namespace="pid:[4026530000]")
    live_elsewhere = write_scoped(root, scoped_name("scratch", here.pid), other_namespace.to_json())
    no_record = write_scoped(root, scoped_name("scratch", 4242), None)
    unreadable = write_scoped(root, scoped_name("scratch", 4243), b"\x00garbage")
    earlier_boot = dataclasses.replace(here, boot_id="an-earlier-boot", pid=4244)
    from_earlier_boot = write_scoped(root, scoped_name("scratch", 4244), earlier_boot.to_json())
    mismatched = write_scoped(root, scoped_name("scratch", 4245), earlier_boot.to_json())
    other_machine = dataclasses.replace(earlier_boot, host="elsewhere", machine_id="f" * 32)
    from_other_machine = write_scoped(root, scoped_name("scratch", 4244), other_machine.to_json())
    wrong_form = write_scoped(root, f"scratch-4244-{'A' * 16}", earlier_boot.to_json())
    other_prefix = write_scoped(root, scoped_name("other", 4244), earlier_boot.to_json())
    outside = write_scoped(tmp_path, "outside", earlier_boot.to_json())
    link = root / scoped_name("scratch", 4244)
    link.symlink_to(outside)
    a_file = root / scoped_name("scratch", 4244)
    a_file.write_text("not a directory")
    mine = ProcessScopedDirectory.create(root, "scratch")

    reports = {
        pathlib.Path(r.path): r.state for r in ProcessScopedDirectory.inspect(root, "scratch")
    }
    assert reports == {
        killed: "gone",
        live_elsewhere: "unknown",
        no_record: "unknown",
        unreadable: "unknown",
        from_earlier_boot: "gone",
        mismatched: "unknown",  # the record's pid is not the one in the name
        from_other_machine: "unknown",
        pathlib.Path(mine.path): "alive",
    }
    assert killed.is_dir()  # inspection removes nothing

    result = ProcessScopedDirectory.sweep(root, "scratch")
    assert {pathlib.Path(r.path) for r in result.removed} == {killed, from_earlier_boot}
    assert result.failed == ()
    assert len(result.kept) == 6
    assert not killed.exists()
    assert not from_earlier_boot.exists()
    for kept in (live_elsewhere, no_record, unreadable, mismatched, from_other_machine):
        assert kept.is_dir()
    assert wrong_form.is_dir()
    assert other_prefix.is_dir()
    assert link.is_symlink()
    assert (outside / OWNER_RECORD_NAME).exists()
    assert a_file.is_file()
    assert os.path.isdir(mine.path)
    mine.remove()


def test_s08_sweep_of_a_missing_state_root_does_nothing(tmp_path: pathlib.Path) -> None:
    result = ProcessScopedDirectory.sweep(tmp_path / "missing", "scratch")
    assert result.removed == ()
    assert result.kept == ()
    assert result.failed == ()


# --- the exit registry -------------------------------------------------------------------------

SCOPED_THEN_WAIT = """
import signal, sys, time
from robota.host import ProcessScopedDirectory
{setup}
scoped = ProcessScopedDirectory.create(sys.argv[1], "scratch")
print(scoped.path, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_s08_a_default_action_signal_runs_the_cleanups_then_kills_by_that_signal(
    tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]], number: int
) -> None:
    child = spawn(SCOPED_THEN_WAIT.format(setup=""), str(tmp_path / "state"))
    reaped.append(child)
    path = first_line(child)
    assert os.path.isdir(path)
    child.send_signal(number)
    code, _, err = finish(child)
    assert code == -number, err
    assert not os.path.exists(path)


def test_s08_sigint_is_taken_only_when_its_handler_is_the_default_action(
    tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    child = spawn(
        SCOPED_THEN_WAIT.format(setup="signal.signal(signal.SIGINT, signal.SIG_DFL)"),
        str(tmp_path / "state"),
    )
    reaped.append(child)
    path = first_line(child)
    child.send_signal(signal.SIGINT)
    code, _, err = finish(child)
    assert code == -signal.SIGINT, err
    assert not os.path.exists(path)


def test_s08_pythons_own_sigint_handler_is_left_in_place(tmp_path: pathlib.Path) -> None:
    child = spawn(
        """
        import signal, sys
        from robota.host import ProcessScopedDirectory
        scoped = ProcessScopedDirectory.create(sys.argv[1], "scratch")
        print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
        print(scoped.path, flush=True)
        """,
        str(tmp_path / "state"),
    )
    code, out, err = finish(child)
    assert code == 0, err
    untouched, path = out.split()
    assert untouched == "True"
    assert not os.path.exists(path)


def test_s08_a_process_with_its_own_handler_ends_as_it_decides_and_its_exit_runs_the_registry(
    tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    setup = "signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))"
    child = spawn(SCOPED_THEN_WAIT.format(setup=setup), str(tmp_path / "state"))
    reaped.append(child)
    path = first_line(child)
    child.send_signal(signal.SIGTERM)
    code, _, err = finish(child)
    assert code == 7, err
    assert not os.path.exists(path)


def test_s08_an_ignored_signal_stays_ignored(
    tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    setup = "signal.signal(signal.SIGTERM, signal.SIG_IGN)"
    child = spawn(SCOPED_THEN_WAIT.format(setup=setup), str(tmp_path / "state"))
    reaped.append(child)
    path = first_line(child)
    child.send_signal(signal.SIGTERM)
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(timeout=1)
    assert os.path.isdir(path)


def test_s08_every_copy_of_the_module_shares_one_registry(
    tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    child = spawn(
        """
        import importlib.util, signal, sys, time
        from robota.host.store import _lifetime as first
        spec = importlib.util.spec_from_file_location("robota_lifetime_copy", sys.argv[2])
        second = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = second
        spec.loader.exec_module(second)
        assert first is not second and first._ExitRegistry is not second._ExitRegistry
        assert first._registry() is second._registry()
        one = first.ProcessScopedDirectory.create(sys.argv[1], "scratch")
        two = second.ProcessScopedDirectory.create(sys.argv[1], "scratch")
        handler = signal.getsignal(signal.SIGTERM)
        assert handler.__self__ is first._registry(), handler
        print(one.path, two.path, flush=True)
        time.sleep(600)
        """,
        str(tmp_path / "state"),
        str(LIFETIME_SOURCE),
    )
    reaped.append(child)
    paths = first_line(child).split()
    child.send_signal(signal.SIGTERM)
    code, _, err = finish(child)
    assert code == -signal.SIGTERM, err
    assert [os.path.exists(path) for path in paths] == [False, False]


def test_s08_a_forked_child_does_not_run_its_parents_cleanups(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "cleanups.log"
    child = spawn(
        """
        import os, sys
        from robota.host import register_at_exit
        def note():
            with open(sys.argv[1], "a") as log:
                log.write(f"{os.getpid()}\\n")
        register_at_exit(note)
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # a normal exit of the forked child: runs atexit
        os.waitpid(pid, 0)
        print(os.getpid(), flush=True)
        """,
        str(log),
    )
    code, out, err = finish(child)
    assert code == 0, err
    assert log.read_text().split() == [out.strip()]


def test_s08_a_failing_cleanup_is_reported_and_the_others_still_run(
    tmp_path: pathlib.Path,
) -> None:
    program = """
        import logging, sys
        import robota
        from robota.host import register_at_exit
        if sys.argv[2] == "sink":
            logging.basicConfig(level=logging.INFO)
            robota.set_global_logger_sink(robota.StdlibLoggingSink())
        register_at_exit(lambda: open(sys.argv[1], "a").write("first\\n"))
        register_at_exit(lambda: 1 / 0)
        released = register_at_exit(lambda: open(sys.argv[1], "a").write("released\\n"))
        released.release()
        """
    for mode in ("sink", "silent"):
        log = tmp_path / f"cleanups-{mode}.log"
        code, _, err = finish(spawn(program, str(log), mode))
        assert code == 0
        assert log.read_text() == "first\n"
        if mode == "sink":
            # S14: the failure reaches the installed diagnostic sink.
            assert "exit cleanup failed" in err
            assert "ZeroDivisionError" in err
        else:
            # S14: with no sink installed the library writes nothing to the console.
            assert err == ""


def test_s08_a_registration_released_in_process_never_runs() -> None:
    ran: list[str] = []
    registration = register_at_exit(lambda: ran.append("ran"))
    active = [registration.active]
    registration.release()
    registration.release()  # idempotent
    active.append(registration.active)
    assert active == [True, False]
    assert ran == []


@pytest.mark.parametrize("kind", PLANTABLE_KINDS)
def test_s08_a_special_file_as_the_owner_record_is_unknown_without_hanging(
    tmp_path: pathlib.Path, kind: str
) -> None:
    # S07, S08: a FIFO planted as a directory's owner record made every sweep wait for ever.
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    directory = write_scoped(root, scoped_name("scratch", 4246), None)
    record = directory / OWNER_RECORD_NAME
    plant(record, kind)
    fifos = (record,) if kind == "fifo" else ()
    reports = finishes(lambda: ProcessScopedDirectory.inspect(root, "scratch"), fifos=fifos)
    assert [(pathlib.Path(r.path), r.record, r.state) for r in reports] == [
        (directory, None, "unknown")
    ]
    result = finishes(lambda: ProcessScopedDirectory.sweep(root, "scratch"), fifos=fifos)
    assert result.removed == ()
    assert directory.is_dir()
