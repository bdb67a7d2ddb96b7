"""S11 credential store port and its host stores: an owner-only file (S07) and the OS keychain.

The file store runs on the real filesystem; the keychain store runs against real ``keyring``
backend objects defined here (an in-memory keychain and keychains that fail), not mocks.
"""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import stat
from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyring.compat import properties
from keyring.errors import KeyringLocked, PasswordDeleteError

from robota.core import ConfigurationError, CredentialStore, CredentialStoreError, RobotaError
from robota.host import FileCredentialStore, KeyringCredentialStore
from special_files import PLANTABLE_KINDS, finishes, plant, planted_fifos

SECRET = "sk-live-TOP-SECRET-0123456789"  # noqa: S105 — a made-up secret to look for in output


# -- real keyring backends ------------------------------------------------------------------


class MemoryKeyring(KeyringBackend):
    """A keychain held in a dict: a real backend, as a keychain service would implement one."""

    # keyring registers every backend class for auto-detection; a priority that raises keeps
    # these test backends from ever being chosen outside the tests that pass them.
    @properties.classproperty
    def priority(cls) -> float:
        raise RuntimeError("test backend; never auto-selected")

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("no such password")


class LockedKeyring(MemoryKeyring):
    """A keychain that is locked: every operation raises, as a locked Secret Service does."""

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("the collection is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("the collection is locked")


class VanishingKeyring(MemoryKeyring):
    """Another process deletes the entry between our read and our delete."""

    def delete_password(self, service: str, username: str) -> None:
        raise PasswordDeleteError("already gone")


class BrokenDeleteKeyring(MemoryKeyring):
    def delete_password(self, service: str, username: str) -> None:
        raise OSError("D-Bus connection lost")


@pytest.fixture
def installed_keyring() -> Iterator[MemoryKeyring]:
    """Install an in-memory keychain as keyring's process backend for one test, then restore."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


# -- the port -------------------------------------------------------------------------------


def test_s11_both_stores_implement_the_port(tmp_path: pathlib.Path) -> None:
    assert isinstance(FileCredentialStore(tmp_path / "credentials.json"), CredentialStore)
    assert isinstance(KeyringCredentialStore(backend=MemoryKeyring()), CredentialStore)


@pytest.fixture(params=["file", "keyring"])
def store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> CredentialStore:
    if request.param == "file":
        return FileCredentialStore(tmp_path / "credentials.json")
    return KeyringCredentialStore(backend=MemoryKeyring())


def test_s11_read_write_remove_by_service_and_account(store: CredentialStore) -> None:
    assert store.get("openai", "default") is None
    store.set("openai", "default", SECRET)
    store.set("openai", "work", "other")
    store.set("anthropic", "default", "third")
    assert store.get("openai", "default") == SECRET
    assert store.get("openai", "work") == "other"
    assert store.get("anthropic", "default") == "third"
    store.set("openai", "default", "rotated")
    assert store.get("openai", "default") == "rotated"
    assert store.delete("openai", "default") is True
    assert store.delete("openai", "default") is False
    assert store.get("openai", "default") is None
    assert store.get("openai", "work") == "other"


@pytest.mark.parametrize(("service", "account"), [("", "a"), ("s", ""), (None, "a"), ("s", 3)])
def test_s11_an_empty_or_non_string_key_is_misuse(
    store: CredentialStore, service: object, account: object
) -> None:
    with pytest.raises(ConfigurationError):
        store.get(service, account)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        store.set(service, account, SECRET)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        store.delete(service, account)  # type: ignore[arg-type]


def test_s11_a_non_string_secret_is_misuse(store: CredentialStore) -> None:
    with pytest.raises(ConfigurationError, match="string"):
        store.set("svc", "acct", b"bytes")  # type: ignore[arg-type]
    assert store.get("svc", "acct") is None


def test_s11_repr_shows_no_secret(store: CredentialStore) -> None:
    store.set("svc", "acct", SECRET)
    assert SECRET not in repr(store)


def test_s11_credential_store_error_is_a_robota_error_and_pickles() -> None:
    error = CredentialStoreError("the store cannot be read")
    assert isinstance(error, RobotaError)
    assert error.code == "credential_store"
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


# -- the owner-only file --------------------------------------------------------------------


def _mode(path: pathlib.Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _write(path: pathlib.Path, content: str, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    os.write(fd, content.encode())
    os.close(fd)
    os.chmod(path, mode)  # the test's own setup: exactly `mode`, whatever the umask


@pytest.mark.usefixtures("umask_zero")
def test_s07_credential_file_created_0600(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "credentials.json"
    FileCredentialStore(path).set("svc", "acct", SECRET)
    assert _mode(path) == 0o600
    assert path.stat().st_uid == os.geteuid()
    assert json.loads(path.read_text()) == {
        "version": 1,
        "credentials": {"svc": {"acct": SECRET}},
    }


@pytest.mark.usefixtures("umask_zero")
def test_s07_credential_file_stays_0600_through_every_save(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "credentials.json"
    store = FileCredentialStore(path)
    for index in range(3):
        store.set("svc", f"acct-{index}", SECRET)
        assert _mode(path) == 0o600
    store.delete("svc", "acct-0")
    assert _mode(path) == 0o600


def test_s07_credential_file_write_replaces_by_rename_and_leaves_no_temp(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "credentials.json"
    store = FileCredentialStore(path)
    store.set("svc", "acct", "first")
    inode = path.stat().st_ino
    store.set("svc", "acct", "second")
    # A new inode: the old file was replaced whole, never truncated and rewritten in place.
    assert path.stat().st_ino != inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["credentials.json"]


def test_s07_a_mode_that_did_not_take_is_reported_not_masked(tmp_path: pathlib.Path) -> None:
    # A umask that strips the owner's own write bit: the file would come out 0400, not 0600.
    path = tmp_path / "credentials.json"
    previous = os.umask(0o277)
    try:
        with pytest.raises(CredentialStoreError, match="umask"):
            FileCredentialStore(path).set("svc", "acct", SECRET)
    finally:
        os.umask(previous)
    assert list(tmp_path.iterdir()) == []  # neither the target nor a temp file is left


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o666])
def test_s07_a_credential_file_wider_than_0600_is_refused(
    tmp_path: pathlib.Path, mode: int
) -> None:
    path = tmp_path / "credentials.json"
    content = json.dumps({"version": 1, "credentials": {"svc": {"acct": SECRET}}})
    _write(path, content, mode)
    store = FileCredentialStore(path)
    with pytest.raises(CredentialStoreError, match=f"{mode:04o}") as info:
        store.get("svc", "acct")
    assert SECRET not in str(info.value)
    with pytest.raises(CredentialStoreError):
        store.set("svc", "acct", "new")
    with pytest.raises(CredentialStoreError):
        store.delete("svc", "acct")
    # Refused, never repaired: the mode and the content are as they were.
    assert _mode(path) == mode
    assert path.read_text() == content


def test_s07_a_credential_file_owned_by_another_account_is_refused(
    tmp_path: pathlib.Path,
) -> None:
    # Needs root to give a file away; the test environment runs as root.
    path = tmp_path / "credentials.json"
    _write(path, json.dumps({"version": 1, "credentials": {}}), 0o600)
    os.chown(path, os.geteuid() + 4242, -1)
    with pytest.raises(CredentialStoreError, match="owned by another account"):
        FileCredentialStore(path).get("svc", "acct")


def test_s07_a_symlinked_credential_file_is_refused(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "elsewhere.json"
    _write(target, json.dumps({"version": 1, "credentials": {"svc": {"acct": SECRET}}}), 0o600)
    link = tmp_path / "credentials.json"
    link.symlink_to(target)
    with pytest.raises(CredentialStoreError):
        FileCredentialStore(link).get("svc", "acct")


def test_s11_missing_file_is_empty_not_an_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "credentials.json"
    store = FileCredentialStore(path)
    assert store.get("svc", "acct") is None
    assert store.delete("svc", "acct") is False
    assert not path.exists()  # neither read nor delete creates the file


@pytest.mark.parametrize(
    "content",
    [
        '{"version": 1, "credentials": {"svc": {"acct": "sk-live-TOP-SECRET-0123',  # truncated
        "",
        "\udcff",
        "[]",
        '{"version": 2, "credentials": {}}',
        '{"version": 1}',
        '{"version": 1, "credentials": {"svc": "sk-live-TOP-SECRET-0123456789"}}',
        '{"version": 1, "credentials": {"svc": {"acct": 42}}}',
    ],
    ids=[
        "truncated",
        "empty",
        "not-utf8",
        "array",
        "newer-version",
        "no-credentials",
        "service-not-a-mapping",
        "secret-not-a-string",
    ],
)
def test_s11_unreadable_store_raises_not_absent(tmp_path: pathlib.Path, content: str) -> None:
    path = tmp_path / "credentials.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, content.encode("utf-8", "surrogateescape"))
    os.close(fd)
    store = FileCredentialStore(path)
    with pytest.raises(CredentialStoreError) as info:
        store.get("svc", "acct")
    # The decoder's error keeps the document (the secrets); it must not ride along.
    assert info.value.__cause__ is None
    assert info.value.__context__ is None
    assert "TOP-SECRET" not in str(info.value)
    with pytest.raises(CredentialStoreError):
        store.set("svc", "other", "value")  # a corrupt file is not silently overwritten
    assert path.read_bytes() == content.encode("utf-8", "surrogateescape")


def test_s11_a_directory_in_place_of_the_file_raises(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "credentials.json"
    path.mkdir()
    with pytest.raises(CredentialStoreError):
        FileCredentialStore(path).get("svc", "acct")


@pytest.mark.parametrize("kind", PLANTABLE_KINDS)
def test_s11_a_special_file_at_the_credential_path_raises_without_hanging(
    tmp_path: pathlib.Path, kind: str
) -> None:
    # S07, S11: a FIFO made open() wait for a writer for ever; every non-regular file is refused
    # at once, and every operation raises rather than reporting the secret absent.
    path = tmp_path / "credentials.json"
    plant(path, kind)
    store = FileCredentialStore(path)
    fifos = planted_fifos(path, kind)
    for operation in (
        lambda: store.get("svc", "acct"),
        lambda: store.set("svc", "acct", SECRET),
        lambda: store.delete("svc", "acct"),
    ):
        with pytest.raises(CredentialStoreError, match="not a regular file"):
            finishes(operation, fifos=fifos)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_s11_a_device_as_the_credential_file_raises_without_reading_it(device: str) -> None:
    # /dev/zero never ends: reading it would fill memory. Refused from the open descriptor's type.
    with pytest.raises(CredentialStoreError, match="not a regular file"):
        finishes(lambda: FileCredentialStore(device).get("svc", "acct"))


def test_s11_a_missing_directory_raises_on_write_and_creates_nothing(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "absent" / "credentials.json"
    with pytest.raises(CredentialStoreError, match="previous content is unchanged"):
        FileCredentialStore(path).set("svc", "acct", SECRET)
    assert not path.parent.exists()


def test_s11_a_second_store_on_the_same_file_sees_committed_writes(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "credentials.json"
    FileCredentialStore(path).set("svc", "acct", SECRET)
    assert FileCredentialStore(path).get("svc", "acct") == SECRET
    assert FileCredentialStore(path).delete("svc", "acct") is True
    assert json.loads(path.read_text()) == {"version": 1, "credentials": {}}


# -- the OS keychain ------------------------------------------------------------------------


def test_s11_keyring_store_uses_the_installed_backend(installed_keyring: MemoryKeyring) -> None:
    store = KeyringCredentialStore()
    store.set("openai", "default", SECRET)
    assert installed_keyring.entries == {("robota:openai", "default"): SECRET}
    assert store.get("openai", "default") == SECRET
    assert KeyringCredentialStore(service_prefix="other-app").get("openai", "default") is None


def test_s11_keyring_store_without_prefix_uses_the_service_as_given() -> None:
    backend = MemoryKeyring()
    KeyringCredentialStore(service_prefix="", backend=backend).set("svc", "acct", SECRET)
    assert backend.entries == {("svc", "acct"): SECRET}


@pytest.mark.parametrize("backend", [LockedKeyring(), fail.Keyring()], ids=["locked", "no-backend"])
def test_s11_unreadable_keyring_raises_not_absent(backend: KeyringBackend) -> None:
    store = KeyringCredentialStore(backend=backend)
    with pytest.raises(CredentialStoreError, match="could not be read") as info:
        store.get("svc", "acct")
    assert isinstance(info.value.__cause__, keyring.errors.KeyringError)
    with pytest.raises(CredentialStoreError):
        store.set("svc", "acct", SECRET)
    with pytest.raises(CredentialStoreError):
        store.delete("svc", "acct")


def test_s11_keyring_null_backend_is_refused_because_it_reports_everything_absent() -> None:
    store = KeyringCredentialStore(backend=null.Keyring())
    with pytest.raises(CredentialStoreError, match="null backend"):
        store.get("svc", "acct")
    with pytest.raises(CredentialStoreError, match="null backend"):
        store.set("svc", "acct", SECRET)


def test_s11_keyring_delete_of_an_entry_removed_meanwhile_is_false() -> None:
    backend = VanishingKeyring()
    backend.entries[("robota:svc", "acct")] = SECRET
    assert KeyringCredentialStore(backend=backend).delete("svc", "acct") is False


def test_s11_keyring_delete_failure_raises() -> None:
    backend = BrokenDeleteKeyring()
    backend.entries[("robota:svc", "acct")] = SECRET
    with pytest.raises(CredentialStoreError, match="could not be removed") as info:
        KeyringCredentialStore(backend=backend).delete("svc", "acct")
    assert SECRET not in str(info.value)
