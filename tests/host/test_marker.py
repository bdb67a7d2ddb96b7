"""S10 process markers, on the real filesystem and real processes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pathlib
import signal
import stat
import subprocess
import threading

import pytest

import special_files
from childproc import first_line, spawn
from robota.core import ConfigurationError
from robota.host import (
    InsecureModeError,
    LeaseRefusedError,
    LockTimeoutError,
    MarkerError,
    MarkerHeldError,
    MarkerLostError,
    OperationLock,
    OwnerRecord,
    ProcessMarker,
    StoreError,
)


@pytest.fixture
def markers(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "markers"


def plant(markers: pathlib.Path, name: str, owner: OwnerRecord, claim: str = "planted") -> None:
    """Write a marker file by hand, as another process (or another version) would have."""
    markers.mkdir(mode=0o700, exist_ok=True)
    body = {"format": "robota.marker/1", "owner": owner.as_dict(), "claim": claim, "lease": None}
    (markers / f"{name}.marker").write_text(json.dumps(body))


HOLD_MARKER = """
import sys
from robota.host import ProcessMarker
marker = ProcessMarker.publish(sys.argv[1], sys.argv[2])
print(marker.owner.pid, flush=True)
sys.stdin.read()
"""


# --- publishing --------------------------------------------------------------------------------


def test_s10_a_published_marker_names_its_owner_and_is_owner_only(
    markers: pathlib.Path,
) -> None:
    states = []
    with ProcessMarker.publish(markers, "session") as marker:
        states.append(marker.state)
        assert stat.S_IMODE(os.stat(markers).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(marker.path).st_mode) == 0o600
        content = json.loads(pathlib.Path(marker.path).read_text())
        assert OwnerRecord.from_dict(content["owner"]) == OwnerRecord.current()
        assert marker.owner == OwnerRecord.current()
        assert marker.holds()
    states.append(marker.state)
    assert states == ["held", "released"]
    assert not os.path.exists(marker.path)
    assert sorted(os.listdir(markers)) == ["session.lock"]  # the lock file is never removed


def test_s10_a_second_publisher_is_refused_with_the_owner(markers: pathlib.Path) -> None:
    with ProcessMarker.publish(markers, "session") as first:
        with pytest.raises(MarkerHeldError) as caught:
            ProcessMarker.publish(markers, "session")
        assert caught.value.owner == first.owner
        assert caught.value.state == "alive"
        assert f"pid {os.getpid()}" in str(caught.value)
        assert first.holds()


def test_s10_of_processes_racing_to_publish_one_marker_exactly_one_wins(
    markers: pathlib.Path, tmp_path: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    go = tmp_path / "go"
    reaped.extend(
        spawn(
            """
                import os, sys, time
                from robota.host import MarkerHeldError, ProcessMarker
                print("ready", flush=True)
                while not os.path.exists(sys.argv[2]):
                    time.sleep(0.001)
                try:
                    marker = ProcessMarker.publish(sys.argv[1], "session")
                except MarkerHeldError as exc:
                    print("lost", exc.owner.pid, flush=True)
                else:
                    print("won", os.getpid(), flush=True)
                sys.stdin.read()  # hold on until every racer has tried
                """,
            str(markers),
            str(go),
        )
        for _ in range(8)
    )
    for child in reaped:
        assert first_line(child) == "ready"
    go.touch()
    outcomes = [first_line(child).split() for child in reaped]
    winners = [int(pid) for verdict, pid in outcomes if verdict == "won"]
    assert len(winners) == 1
    assert all(int(pid) == winners[0] for verdict, pid in outcomes if verdict == "lost")
    for child in reaped:
        child.communicate("", timeout=60)
    assert not (markers / "session.marker").exists()  # the winner released it at exit


def test_s10_a_marker_whose_owner_was_killed_can_be_broken_a_live_one_cannot(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    child = spawn(HOLD_MARKER, str(markers), "session")
    reaped.append(child)
    pid = int(first_line(child))
    with pytest.raises(MarkerHeldError) as caught:
        ProcessMarker.break_stale(markers, "session")
    assert caught.value.state == "alive"
    assert caught.value.owner is not None
    assert caught.value.owner.pid == pid
    with pytest.raises(MarkerHeldError):
        ProcessMarker.publish(markers, "session")
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    report = ProcessMarker.inspect(markers, "session")
    assert report is not None
    assert report.state == "gone"
    assert not report.mine
    assert ProcessMarker.break_stale(markers, "session") is True
    assert ProcessMarker.break_stale(markers, "session") is False  # nothing left to break
    with ProcessMarker.publish(markers, "session") as marker:
        assert marker.holds()


@pytest.mark.parametrize(
    "change",
    [{"pid_namespace": "pid:[4026530000]"}, {"host": "elsewhere"}, {"machine_id": None}],
)
def test_s10_a_marker_whose_owner_is_unknown_stands(
    markers: pathlib.Path, change: dict[str, object]
) -> None:
    owner = dataclasses.replace(OwnerRecord.current(), pid=2**22 - 1, **change)  # type: ignore[arg-type]
    plant(markers, "session", owner)
    with pytest.raises(MarkerHeldError) as caught:
        ProcessMarker.break_stale(markers, "session")
    assert caught.value.state == "unknown"
    with pytest.raises(MarkerHeldError):
        ProcessMarker.publish(markers, "session")
    assert (markers / "session.marker").exists()


def test_s10_an_unreadable_marker_stands_with_an_unknown_owner(markers: pathlib.Path) -> None:
    markers.mkdir(mode=0o700)
    (markers / "session.marker").write_bytes(b"\x00 not a marker")
    with pytest.raises(MarkerHeldError) as caught:
        ProcessMarker.publish(markers, "session")
    assert caught.value.owner is None
    assert caught.value.state == "unknown"
    with pytest.raises(MarkerHeldError):
        ProcessMarker.break_stale(markers, "session")
    report = ProcessMarker.inspect(markers, "session")
    assert report is not None
    assert report.owner is None
    assert report.state == "unknown"


def test_s10_markers_live_in_an_owner_only_directory(markers: pathlib.Path) -> None:
    markers.mkdir()
    os.chmod(markers, 0o755)  # noqa: S103 - the wide mode under test
    with pytest.raises(InsecureModeError):
        ProcessMarker.publish(markers, "session")


@pytest.mark.parametrize("name", ["", "../x", "a/b", "-x", "a b"])
def test_s10_a_marker_name_must_be_a_plain_word(markers: pathlib.Path, name: str) -> None:
    with pytest.raises(ConfigurationError):
        ProcessMarker.publish(markers, name)


# --- recognising one's own markers -------------------------------------------------------------


def test_s10_a_process_recognises_its_markers_from_memory_not_liveness(
    markers: pathlib.Path,
) -> None:
    with ProcessMarker.publish(markers, "mine") as marker:
        report = ProcessMarker.inspect(markers, "mine")
        assert report is not None
        assert report.mine
        assert report.state == "alive"
        assert marker.holds()
    # The same live owner record, but a claim this process never published: alive, not mine.
    plant(markers, "copied", OwnerRecord.current())
    report = ProcessMarker.inspect(markers, "copied")
    assert report is not None
    assert report.state == "alive"
    assert not report.mine
    assert ProcessMarker.inspect(markers, "absent") is None


def test_s10_this_process_never_breaks_its_own_marker(markers: pathlib.Path) -> None:
    with ProcessMarker.publish(markers, "mine") as marker:
        # Even a record that reads as gone (say, an unreadable start time) is not broken while
        # this process remembers publishing it.
        content = json.loads(pathlib.Path(marker.path).read_text())
        content["owner"]["boot_id"] = "an-earlier-boot"
        pathlib.Path(marker.path).write_text(json.dumps(content))
        with pytest.raises(MarkerHeldError):
            ProcessMarker.break_stale(markers, "mine")
        assert marker.holds()


# --- the operation lock and guarded mutations --------------------------------------------------


def test_s10_a_guarded_mutation_runs_only_while_the_marker_is_verified_ours(
    markers: pathlib.Path,
) -> None:
    ran: list[str] = []
    marker = ProcessMarker.publish(markers, "session")
    with marker.guard():
        ran.append("first")
    os.unlink(marker.path)  # a forced release by another cooperating process
    with pytest.raises(MarkerLostError), marker.guard():
        ran.append("second")
    assert ran == ["first"]
    assert marker.state == "lost"
    marker.release()  # removes nothing: it is not ours any more
    assert marker.state == "lost"


def test_s10_a_writer_whose_marker_was_replaced_fails_closed(markers: pathlib.Path) -> None:
    marker = ProcessMarker.publish(markers, "session")
    plant(markers, "session", OwnerRecord.current(), claim="someone-else")
    with pytest.raises(MarkerLostError), marker.guard():
        pytest.fail("the mutation must not run")
    assert not marker.holds()
    marker.release()
    assert (markers / "session.marker").exists()  # the other claim is left in place


def test_s10_a_breaker_cannot_cross_a_guarded_write_and_the_lock_is_not_stolen_by_time(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    marker = ProcessMarker.publish(markers, "session")
    with marker.guard():
        child = spawn(
            """
            import sys
            from robota.host import LockTimeoutError, ProcessMarker
            try:
                ProcessMarker.break_stale(sys.argv[1], "session", lock_timeout=0.5)
            except LockTimeoutError:
                print("waited", flush=True)
            """,
            str(markers),
        )
        reaped.append(child)
        out, err = child.communicate(timeout=60)
        assert out.strip() == "waited", err
    assert marker.holds()
    marker.release()


def test_s10_the_operation_lock_is_released_when_its_holder_is_killed(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    markers.mkdir(mode=0o700)
    lock_path = markers / "session.lock"
    child = spawn(
        """
        import sys
        from robota.host import OperationLock
        with OperationLock(sys.argv[1]).held():
            print("holding", flush=True)
            sys.stdin.read()
        """,
        str(lock_path),
    )
    reaped.append(child)
    assert first_line(child) == "holding"
    lock = OperationLock(lock_path)
    with pytest.raises(LockTimeoutError), lock.held(timeout=0.2):
        pytest.fail("acquired a lock a live process holds")
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    with lock.held(timeout=30):
        pass


def test_s10_two_handles_in_one_process_exclude_each_other(markers: pathlib.Path) -> None:
    markers.mkdir(mode=0o700)
    lock = OperationLock(markers / "x.lock")
    entered = threading.Event()
    release = threading.Event()
    outcome: list[str] = []

    def hold() -> None:
        with lock.held():
            entered.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    assert entered.wait(30)
    try:
        with OperationLock(markers / "x.lock").held(timeout=0.2):
            outcome.append("acquired")
    except LockTimeoutError:
        outcome.append("refused")
    release.set()
    thread.join(30)
    assert outcome == ["refused"]


# --- release at exit ---------------------------------------------------------------------------


def test_s10_a_marker_is_released_when_its_process_exits(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    child = spawn(HOLD_MARKER, str(markers), "session")
    reaped.append(child)
    first_line(child)
    assert (markers / "session.marker").exists()
    child.communicate("", timeout=60)
    assert child.returncode == 0
    assert not (markers / "session.marker").exists()


def test_s10_a_marker_is_released_when_sigterm_ends_its_process(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    child = spawn(HOLD_MARKER, str(markers), "session")
    reaped.append(child)
    first_line(child)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGTERM, err
    assert not (markers / "session.marker").exists()


# --- lending -----------------------------------------------------------------------------------


def test_s10_a_lent_marker_carries_the_nonce_digest_and_the_nonce_takes_it_over(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    lender = ProcessMarker.publish(markers, "session")
    nonce = lender.lend()
    assert lender.state == "lent"
    text = pathlib.Path(lender.path).read_text()
    assert nonce not in text
    assert json.loads(text)["lease"]["digest"] == hashlib.sha256(nonce.encode()).hexdigest()
    with pytest.raises(MarkerLostError), lender.guard():
        pytest.fail("a lender does not write while the marker is lent")
    with pytest.raises(LeaseRefusedError):
        ProcessMarker.take_over(markers, "session", "a guessed nonce")

    borrower = spawn(
        """
        import sys
        from robota.host import MarkerLostError, ProcessMarker
        marker = ProcessMarker.take_over(sys.argv[1], "session", sys.stdin.readline().strip())
        with marker.guard():
            print("wrote", marker.owner.pid, flush=True)
        sys.stdin.readline()
        try:
            with marker.guard():
                print("wrote again", flush=True)
        except MarkerLostError:
            print("lost", flush=True)
        """,
        str(markers),
    )
    reaped.append(borrower)
    assert borrower.stdin is not None
    borrower.stdin.write(nonce + "\n")
    borrower.stdin.flush()
    assert first_line(borrower) == f"wrote {borrower.pid}"
    report = ProcessMarker.inspect(markers, "session")
    assert report is not None
    assert report.owner is not None
    assert report.owner.pid == borrower.pid
    assert report.lent

    lender.end_lease()  # the lender ends the lease whoever holds it by then
    assert lender.holds()
    with lender.guard():
        pass
    borrower.stdin.write("\n")
    borrower.stdin.flush()
    assert first_line(borrower) == "lost"
    borrower.communicate(timeout=60)
    lender.release()
    assert not os.path.exists(lender.path)


def test_s10_a_borrowers_release_hands_the_marker_back_to_its_lender(
    markers: pathlib.Path,
) -> None:
    lender = ProcessMarker.publish(markers, "session")
    borrower = ProcessMarker.take_over(markers, "session", lender.lend())
    with borrower.guard():
        pass
    borrower.release()
    assert borrower.state == "released"
    report = ProcessMarker.inspect(markers, "session")
    assert report is not None
    assert report.mine
    assert not report.lent
    lender.end_lease()
    with lender.guard():
        pass
    lender.release()
    assert ProcessMarker.inspect(markers, "session") is None


def test_s10_a_lenders_release_removes_the_marker_whoever_holds_it(
    markers: pathlib.Path,
) -> None:
    lender = ProcessMarker.publish(markers, "session")
    borrower = ProcessMarker.take_over(markers, "session", lender.lend())
    lender.release()
    assert ProcessMarker.inspect(markers, "session") is None
    with pytest.raises(MarkerLostError), borrower.guard():
        pytest.fail("the borrower's lease was ended")


def test_s10_ending_a_lease_that_was_never_lent_is_misuse(markers: pathlib.Path) -> None:
    with ProcessMarker.publish(markers, "session") as marker:
        with pytest.raises(MarkerError, match="not lent"):
            marker.end_lease()
        assert marker.state == "held"


def test_s10_a_lent_marker_is_broken_only_when_its_lender_is_gone_too(
    markers: pathlib.Path, reaped: list[subprocess.Popen[str]]
) -> None:
    lender = ProcessMarker.publish(markers, "session")
    nonce = lender.lend()
    borrower = spawn(
        """
        import sys
        from robota.host import ProcessMarker
        marker = ProcessMarker.take_over(sys.argv[1], "session", sys.argv[2])
        print("taken", flush=True)
        sys.stdin.read()
        """,
        str(markers),
        nonce,
    )
    reaped.append(borrower)
    assert first_line(borrower) == "taken"
    borrower.send_signal(signal.SIGKILL)
    borrower.communicate(timeout=30)
    report = ProcessMarker.inspect(markers, "session")
    assert report is not None
    assert report.state == "gone"
    with pytest.raises(MarkerHeldError):
        ProcessMarker.break_stale(markers, "session")  # the lender still lives
    lender.end_lease()
    assert lender.holds()
    lender.release()


@pytest.mark.parametrize("kind", special_files.PLANTABLE_KINDS)
def test_s10_a_special_file_planted_as_a_marker_is_refused_without_hanging(
    markers: pathlib.Path, kind: str
) -> None:
    # S07, S10: a planted marker is a denial of service, but one that answers: a FIFO made every
    # read of the marker wait for a writer for ever.
    markers.mkdir(mode=0o700)
    path = markers / "session.marker"
    special_files.plant(path, kind)
    fifos = special_files.planted_fifos(path, kind)
    for operation in (
        lambda: ProcessMarker.publish(markers, "session"),
        lambda: ProcessMarker.inspect(markers, "session"),
        lambda: ProcessMarker.break_stale(markers, "session"),
    ):
        with pytest.raises(StoreError, match="not a regular file"):
            special_files.finishes(operation, fifos=fifos)
