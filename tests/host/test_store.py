"""S07 owner-only store, on the real filesystem and real processes."""

from __future__ import annotations

import errno
import os
import pathlib
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from robota.core import ConfigurationError, StorageError
from robota.host import (
    EntryExistsError,
    InsecureModeError,
    ModeNotEnforcedError,
    OwnerOnlyStore,
    StagingStateError,
    StoreError,
    UnconfirmedWriteError,
)
from robota.host.store import _store
from special_files import PLANTABLE_KINDS, finishes, plant, planted_fifos


def mode_of(path: str | pathlib.Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def temp_files(directory: str | pathlib.Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


@pytest.fixture
def store(tmp_path: pathlib.Path) -> OwnerOnlyStore:
    return OwnerOnlyStore(tmp_path / "state")


def run_child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# --- directories -------------------------------------------------------------------------------


def test_s07_a_missing_root_and_its_missing_parents_are_created_0700(
    tmp_path: pathlib.Path, umask_zero: None
) -> None:
    root = tmp_path / "a" / "b" / "state"
    store = OwnerOnlyStore(root)
    assert store.root == str(root)
    for path in (tmp_path / "a", tmp_path / "a" / "b", root):
        assert mode_of(path) == 0o700


def test_s07_a_root_precreated_at_0777_is_caught_and_the_error_lists_the_mode(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    os.chmod(root, 0o777)  # noqa: S103 - the wide mode under test
    with pytest.raises(InsecureModeError) as caught:
        OwnerOnlyStore(root)
    assert caught.value.mode == 0o777
    assert "0o777" in str(caught.value)
    assert "repair=True" in str(caught.value)
    assert isinstance(caught.value, StorageError)
    assert mode_of(root) == 0o777  # reported, not silently adopted or changed


def test_s07_repair_tightens_a_wide_root_only_when_asked(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    os.chmod(root, 0o755)  # noqa: S103 - the wide mode under test
    (root / "old.json").write_text("{}")
    OwnerOnlyStore(root, repair=True)
    assert mode_of(root) == 0o700
    assert (root / "old.json").read_text() == "{}"


@pytest.mark.parametrize("shared", [0o1777, 0o1770, 0o1703], ids=oct)
def test_s07_a_shared_sticky_directory_is_never_tightened_even_with_repair(
    tmp_path: pathlib.Path, shared: int
) -> None:
    # Like /tmp (which root owns, so a root process's repair used to chmod it 0700): other
    # accounts keep their files there by design. It is refused, never taken from them.
    root = tmp_path / "drop"
    root.mkdir()
    os.chmod(root, shared)
    for repair in (False, True):
        with pytest.raises(InsecureModeError, match="shared") as caught:
            OwnerOnlyStore(root, repair=repair)
        assert caught.value.mode == shared
    assert mode_of(root) == shared
    os.chmod(root, 0o1700)  # sticky, but nobody else can write: simply tightened
    OwnerOnlyStore(root, repair=True)
    assert mode_of(root) == 0o700


def test_s07_a_wide_subdirectory_is_caught_on_the_way_to_a_name(
    store: OwnerOnlyStore,
) -> None:
    sub = pathlib.Path(store.root) / "sessions"
    sub.mkdir()
    os.chmod(sub, 0o755)  # noqa: S103 - the wide mode under test
    with pytest.raises(InsecureModeError) as caught:
        store.write("sessions/one.json", b"{}")
    assert caught.value.mode == 0o755
    assert not (sub / "one.json").exists()
    OwnerOnlyStore(store.root, repair=True).write("sessions/one.json", b"{}")
    assert mode_of(sub) == 0o700


def test_s07_subdirectories_the_store_creates_are_0700(
    store: OwnerOnlyStore, umask_zero: None
) -> None:
    store.write("a/b/c.json", b"x")
    assert mode_of(pathlib.Path(store.root) / "a") == 0o700
    assert mode_of(pathlib.Path(store.root) / "a" / "b") == 0o700
    assert store.make_directory("spill") == os.path.join(store.root, "spill")
    assert mode_of(pathlib.Path(store.root) / "spill") == 0o700


def test_s07_an_exclusive_directory_refuses_an_existing_one(store: OwnerOnlyStore) -> None:
    store.make_directory("one", exclusive=True)
    with pytest.raises(EntryExistsError):
        store.make_directory("one", exclusive=True)


def test_s07_a_root_that_is_a_file_is_refused(tmp_path: pathlib.Path) -> None:
    (tmp_path / "state").write_text("not a directory")
    with pytest.raises(StoreError, match="not a real directory"):
        OwnerOnlyStore(tmp_path / "state")


def test_s07_a_symlinked_directory_inside_the_root_is_not_followed(
    store: OwnerOnlyStore, tmp_path: pathlib.Path
) -> None:
    inside = pathlib.Path(store.root) / "inside"
    inside.mkdir(mode=0o700)
    (pathlib.Path(store.root) / "link").symlink_to(inside)
    with pytest.raises(StoreError, match="not a real directory"):
        store.write("link/x.json", b"x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (pathlib.Path(store.root) / "escape").symlink_to(outside)
    with pytest.raises(ConfigurationError, match="leaves the store root"):
        store.write("escape/x.json", b"x")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../x", "a/../../x", "a//b", "./x"])
def test_s07_names_must_be_plain_relative_paths(store: OwnerOnlyStore, name: str) -> None:
    with pytest.raises(ConfigurationError):
        store.write(name, b"x")


def test_s07_the_store_reports_the_posix_mode_guarantee(store: OwnerOnlyStore) -> None:
    assert store.guarantee == "posix-mode"


# --- file modes --------------------------------------------------------------------------------


def test_s07_a_written_file_has_mode_0600_and_umask_0_does_not_widen_it(
    store: OwnerOnlyStore, umask_zero: None
) -> None:
    store.write("record.json", b"secret")
    assert mode_of(os.path.join(store.root, "record.json")) == 0o600
    store.create_only("created.json", b"secret")
    assert mode_of(os.path.join(store.root, "created.json")) == 0o600


def test_s07_a_staged_file_is_0600_from_its_creation_before_any_rename(
    store: OwnerOnlyStore, umask_zero: None
) -> None:
    batch = store.stage()
    batch.add("record.json", b"secret")
    (staged,) = batch.staged.values()
    assert mode_of(staged) == 0o600
    assert pathlib.Path(staged).read_bytes() == b"secret"
    batch.discard()


def test_s07_a_narrowing_umask_does_not_narrow_the_final_mode(
    store: OwnerOnlyStore,
) -> None:
    previous = os.umask(0o377)
    try:
        store.write("record.json", b"x")
        store.make_directory("sub")
    finally:
        os.umask(previous)
    assert mode_of(os.path.join(store.root, "record.json")) == 0o600
    assert mode_of(os.path.join(store.root, "sub")) == 0o700


def test_s07_a_record_an_older_version_left_at_0644_is_0600_after_the_next_save(
    store: OwnerOnlyStore,
) -> None:
    path = pathlib.Path(store.root) / "settings.json"
    path.write_text("old")
    os.chmod(path, 0o644)
    store.write("settings.json", b"new")
    assert mode_of(path) == 0o600
    assert path.read_bytes() == b"new"


def test_s07_a_filesystem_that_ignores_the_file_mode_is_caught_not_masked(
    store: OwnerOnlyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stand-in for a filesystem that accepts the mode and hands out 0644 regardless: the only
    # fake in this module, at the one place a real such filesystem would differ.
    def ignoring_open(path: str) -> int:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.fchmod(fd, 0o644)
        return fd

    monkeypatch.setattr(_store, "open_new_file", ignoring_open)
    with pytest.raises(ModeNotEnforcedError) as caught:
        store.write("record.json", b"secret")
    assert caught.value.mode == 0o644
    assert os.listdir(store.root) == []  # neither the record nor its temp file is left


def test_s07_a_filesystem_that_ignores_the_directory_mode_is_caught(
    store: OwnerOnlyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def ignoring_mkdir(path: str, mode: int = 0o777) -> None:
        real_mkdir(path, mode)
        os.chmod(path, 0o755)  # noqa: S103 - what the filesystem under test does

    monkeypatch.setattr(os, "mkdir", ignoring_mkdir)
    with pytest.raises(ModeNotEnforcedError) as caught:
        store.write("sub/record.json", b"secret")
    monkeypatch.undo()
    assert caught.value.mode == 0o755
    assert os.listdir(store.root) == []


# --- atomic and durable replace ----------------------------------------------------------------


def test_s07_write_replaces_the_whole_content_and_leaves_no_temp_file(
    store: OwnerOnlyStore,
) -> None:
    store.write("record.json", b"first")
    store.write("record.json", b"second", durable=True)
    assert store.read("record.json") == b"second"
    assert temp_files(store.root) == []


def test_s07_read_reports_absent_as_none_and_refuses_to_follow_a_link(
    store: OwnerOnlyStore, tmp_path: pathlib.Path
) -> None:
    assert store.read("missing.json") is None
    target = tmp_path / "elsewhere"
    target.write_text("not yours")
    (pathlib.Path(store.root) / "link.json").symlink_to(target)
    with pytest.raises(StoreError, match="cannot read"):
        store.read("link.json")


@pytest.mark.parametrize("kind", PLANTABLE_KINDS)
def test_s07_a_special_file_at_a_store_name_is_refused_without_hanging(
    store: OwnerOnlyStore, kind: str
) -> None:
    # S07: a FIFO planted at a record's path made read() wait for a writer for ever.
    path = pathlib.Path(store.root) / "record.json"
    plant(path, kind)
    with pytest.raises(StoreError, match="not a regular file") as info:
        finishes(lambda: store.read("record.json"), fifos=planted_fifos(path, kind))
    assert info.value.path == str(path)


def test_s07_a_durable_replace_killed_midway_leaves_the_old_or_the_new_content(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "state"
    old, new = b"A" * 200_000, b"B" * 200_000
    OwnerOnlyStore(root).write("key.bin", old, durable=True)
    for attempt in range(5):
        child = run_child(
            """
            import sys
            from robota.host import OwnerOnlyStore
            store = OwnerOnlyStore(sys.argv[1])
            contents = (b"A" * 200_000, b"B" * 200_000)
            print("ready", flush=True)
            i = 0
            while True:
                store.write("key.bin", contents[i % 2], durable=True)
                i += 1
            """,
            str(root),
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.01 * (attempt + 1))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL
        content = (root / "key.bin").read_bytes()
        assert content in (old, new)
        assert mode_of(root / "key.bin") == 0o600


def test_s07_a_failure_after_the_content_is_in_place_is_reported_unconfirmed(
    store: OwnerOnlyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write("key.bin", b"old")

    def failing_flush(directory: str) -> None:
        raise OSError(errno.EIO, "I/O error", directory)

    monkeypatch.setattr(_store, "fsync_directory", failing_flush)
    with pytest.raises(UnconfirmedWriteError) as caught:
        store.write("key.bin", b"new", durable=True)
    assert caught.value.in_place == ("key.bin",)
    assert "is in place" in str(caught.value)
    assert store.read("key.bin") == b"new"


# --- create-only -------------------------------------------------------------------------------


def test_s07_create_only_refuses_anything_already_at_the_path(
    store: OwnerOnlyStore,
) -> None:
    store.create_only("claim", b"first")
    with pytest.raises(EntryExistsError) as caught:
        store.create_only("claim", b"second")
    assert isinstance(caught.value, FileExistsError)
    assert store.read("claim") == b"first"
    os.mkdir(os.path.join(store.root, "dir"), 0o700)
    with pytest.raises(EntryExistsError):
        store.create_only("dir", b"x")
    os.symlink("/nonexistent/target", os.path.join(store.root, "dangling"))
    with pytest.raises(EntryExistsError):
        store.create_only("dangling", b"x")
    assert temp_files(store.root) == []


def test_s07_of_racing_create_only_writers_exactly_one_wins(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "state"
    OwnerOnlyStore(root)
    go = tmp_path / "go"
    children = [
        run_child(
            """
            import os, sys, time
            from robota.host import EntryExistsError, OwnerOnlyStore
            store = OwnerOnlyStore(sys.argv[1])
            print("ready", flush=True)
            while not os.path.exists(sys.argv[2]):
                time.sleep(0.001)
            try:
                store.create_only("claim", sys.argv[3].encode())
            except EntryExistsError:
                print("lost", flush=True)
            else:
                print("won", flush=True)
            """,
            str(root),
            str(go),
            f"writer-{index}",
        )
        for index in range(8)
    ]
    for child in children:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
    go.touch()
    outcomes = [child.communicate(timeout=60)[0].strip() for child in children]
    assert sorted(outcomes) == ["lost"] * 7 + ["won"]
    winner = outcomes.index("won")
    assert (root / "claim").read_text() == f"writer-{winner}"
    assert temp_files(root) == []


# --- staged replace ----------------------------------------------------------------------------


def test_s07_staged_files_are_flushed_beside_their_targets_before_any_rename(
    store: OwnerOnlyStore,
) -> None:
    store.write("a.json", b"old a")
    store.write("sub/b.json", b"old b")
    batch = store.stage()
    batch.add("a.json", b"new a")
    batch.add("sub/b.json", b"new b")
    staged = batch.staged
    assert os.path.dirname(staged["a.json"]) == store.root
    assert os.path.dirname(staged["sub/b.json"]) == os.path.join(store.root, "sub")
    assert pathlib.Path(staged["a.json"]).read_bytes() == b"new a"
    assert pathlib.Path(staged["sub/b.json"]).read_bytes() == b"new b"
    assert store.read("a.json") == b"old a"  # nothing renamed yet
    assert store.read("sub/b.json") == b"old b"
    batch.commit()
    assert batch.state == "committed"
    assert store.read("a.json") == b"new a"
    assert store.read("sub/b.json") == b"new b"
    assert temp_files(store.root) == []
    assert temp_files(os.path.join(store.root, "sub")) == []


def test_s07_a_staged_replace_that_raises_is_discarded(store: OwnerOnlyStore) -> None:
    store.write("a.json", b"old")
    batch = store.stage()

    def stage_then_fail() -> None:
        with batch:
            batch.add("a.json", b"new")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        stage_then_fail()
    assert batch.state == "discarded"
    assert store.read("a.json") == b"old"
    assert temp_files(store.root) == []
    with pytest.raises(StagingStateError):
        batch.add("a.json", b"again")


def test_s07_a_staged_replace_commits_when_its_block_ends(store: OwnerOnlyStore) -> None:
    with store.stage() as batch:
        batch.add("a.json", b"1")
        batch.add("a.json", b"2")  # staging a name again replaces its staged content
        batch.add("b.json", b"3")
    assert (store.read("a.json"), store.read("b.json")) == (b"2", b"3")
    assert temp_files(store.root) == []
    with pytest.raises(StagingStateError):
        batch.commit()


def test_s07_a_staged_rename_failing_midway_reports_what_is_in_place(
    store: OwnerOnlyStore,
) -> None:
    store.write("a.json", b"old a")
    batch = store.stage()
    batch.add("a.json", b"new a")
    batch.add("b.json", b"new b")
    batch.add("c.json", b"new c")
    blocker = pathlib.Path(store.root) / "b.json"
    blocker.mkdir()  # a non-empty directory cannot be replaced by a file
    (blocker / "inside").write_text("x")
    with pytest.raises(UnconfirmedWriteError) as caught:
        batch.commit()
    assert caught.value.in_place == ("a.json",)
    assert caught.value.not_written == ("b.json", "c.json")
    assert store.read("a.json") == b"new a"
    assert store.read("c.json") is None
    assert temp_files(store.root) == []


def test_s07_a_staged_replace_whose_first_rename_fails_reports_not_written(
    store: OwnerOnlyStore,
) -> None:
    batch = store.stage()
    batch.add("a.json", b"new a")
    batch.add("b.json", b"new b")
    blocker = pathlib.Path(store.root) / "a.json"
    blocker.mkdir()
    (blocker / "inside").write_text("x")
    with pytest.raises(StoreError) as caught:
        batch.commit()
    assert not isinstance(caught.value, UnconfirmedWriteError)
    assert store.read("b.json") is None
    assert temp_files(store.root) == []
