"""Credential stores on the host (S11): an owner-only JSON file, and the OS keychain.

Both implement core's :class:`~robota.CredentialStore`. Neither reports a secret
absent because it could not look: an unreadable store raises :class:`CredentialStoreError`.

The file store keeps S07's owner-only rules for the one file it owns: the file is created 0600
from the start (never created wide and tightened), a file another account can read or that this
account does not own is refused rather than repaired, and every write replaces the file durably
(temp file flushed, renamed, directory flushed), so a crash leaves the old secrets or the new,
never an empty file. It builds on the owner-only store's file primitives (:mod:`._store`) but is
stricter than :class:`~robota.host.OwnerOnlyStore` about a single file: a mode the umask narrowed
is refused rather than completed, and the parent directory may be any directory of the user's.
The helpers below are also how the sealer's key files are written and read.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from typing import TYPE_CHECKING, Final, final

from robota.core import (
    ConfigurationError,
    CredentialStore,
    CredentialStoreError,
    check_credential_key,
    install_command,
)
from robota.host.store._regular_file import read_regular_file
from robota.host.store._store import (
    FILE_MODE,
    fsync_directory,
    open_new_file,
    temp_path_for,
    write_all,
)

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = ["FileCredentialStore", "KeyringCredentialStore"]

_FILE_FORMAT_VERSION: Final = 1


# --------------------------------------------------------------------------------------------
# Owner-only file helpers (S07 subset)
# --------------------------------------------------------------------------------------------


def _check_owner_only(info: os.stat_result, path: str) -> None:
    """Refuse a file that is not a regular file owned by us with no group or other bits."""
    if not stat.S_ISREG(info.st_mode):
        raise CredentialStoreError(f"{path} is not a regular file; refusing to use it")
    if info.st_uid != os.geteuid():
        raise CredentialStoreError(
            f"{path} is owned by another account (uid {info.st_uid}); refusing to trust it — "
            "move it away and let this account create a new one"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        # S07: refused, never chmod-ed: a wide file may already have been read or replaced.
        raise CredentialStoreError(
            f"{path} has mode {mode:04o}, readable or writable by other accounts; refusing to use "
            "it — treat its secrets as exposed, rotate them, and remove the file"
        )


def read_owner_only_file(path: str) -> bytes | None:
    """The content of the owner-only file at ``path``, or ``None`` when nothing is there.

    Read through the host's one reader (:func:`._regular_file.read_regular_file`): a FIFO, socket,
    device or directory there is refused at once, never waited on (S07, S11).

    Raises:
        CredentialStoreError: the path is a link, not a regular file, not ours, wider than 0600,
            or cannot be read.
    """
    try:
        return read_regular_file(path, check=lambda info: _check_owner_only(info, path))
    except OSError as exc:
        # S11: a store that cannot be read raises; it never reports the secret absent.
        raise CredentialStoreError(f"{path} cannot be read: {exc.strerror}") from exc


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` 0600 (failing if anything is there), write and flush ``data``."""
    fd = open_new_file(path)
    try:
        # S07: verify, don't assume — a filesystem may accept a mode and ignore it. Never chmod
        # afterwards: a mode that did not take is reported, not masked.
        info = os.fstat(fd)
        _check_owner_only(info, path)
        mode = stat.S_IMODE(info.st_mode)
        if mode != FILE_MODE:
            raise CredentialStoreError(
                f"{path} was created with mode {mode:04o}, not 0600; the process umask removes "
                "the owner's own permissions — use a umask such as 0077"
            )
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def create_owner_only_file(path: str, data: bytes) -> None:
    """Create the owner-only file ``path`` holding ``data``; refuse if anything is there.

    The file has mode 0600 from its creation (S07), its content and directory entry are flushed.

    Raises:
        CredentialStoreError: something is already at ``path``, or the write failed.
    """
    try:
        _write_new(path, data)
        fsync_directory(os.path.dirname(os.path.abspath(path)))
    except FileExistsError as exc:
        raise CredentialStoreError(f"{path} already exists; refusing to overwrite it") from exc
    except OSError as exc:
        raise CredentialStoreError(f"{path} cannot be written: {exc.strerror}") from exc


def replace_owner_only_file(path: str, data: bytes) -> None:
    """Replace the owner-only file ``path`` with ``data`` durably (S07).

    A 0600 temp file beside the target is written and flushed, renamed over the target, then the
    directory is flushed: a crash leaves the old content or the new, never an empty file.

    Raises:
        CredentialStoreError: the write failed (the old content is still in place), or the new
            content is in place but its durability could not be confirmed — the message says which.
    """
    directory = os.path.dirname(os.path.abspath(path))
    temp = temp_path_for(os.path.abspath(path))
    try:
        _write_new(temp, data)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise CredentialStoreError(
            f"{path} cannot be written ({exc.strerror}); its previous content is unchanged"
        ) from exc
    try:
        fsync_directory(directory)
    except OSError as exc:
        # S07: in place but unconfirmed — never reported as not written.
        raise CredentialStoreError(
            f"{path} holds the new content, but flushing its directory failed ({exc.strerror}); "
            "it may not survive a crash",
            code="credential_store_unconfirmed",
        ) from exc


def _check_secret(secret: str) -> None:
    given: object = secret  # typed callers cannot get it wrong; configuration files can
    if not isinstance(given, str):
        raise ConfigurationError("a credential secret must be a string")


# --------------------------------------------------------------------------------------------
# The owner-only file store
# --------------------------------------------------------------------------------------------

_Secrets = dict[str, dict[str, str]]
_UNREADABLE: Final = object()


def _decode(path: str, content: bytes) -> _Secrets:
    try:
        document: object = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        # The decoder's exception keeps the whole document (secrets) on `.doc`; it must not ride
        # along as this error's context, so the raise happens outside the handler.
        document = _UNREADABLE
    if document is _UNREADABLE:
        raise CredentialStoreError(f"{path} is not valid JSON; the credential file is corrupt")
    if (
        not isinstance(document, dict)
        or document.get("version") != _FILE_FORMAT_VERSION
        or not isinstance(document.get("credentials"), dict)
    ):
        raise CredentialStoreError(f"{path} is not a credential file this build reads")
    entries: _Secrets = {}
    for service, accounts in document["credentials"].items():
        if not isinstance(accounts, dict) or not all(
            isinstance(account, str) and isinstance(secret, str)
            for account, secret in accounts.items()
        ):
            raise CredentialStoreError(f"{path} is not a credential file this build reads")
        entries[service] = dict(accounts)
    return entries


def _encode(entries: _Secrets) -> bytes:
    document = {"version": _FILE_FORMAT_VERSION, "credentials": entries}
    return json.dumps(document, indent=2, sort_keys=True).encode("utf-8") + b"\n"


@final
class FileCredentialStore(CredentialStore):
    """A :class:`~robota.CredentialStore` in one owner-only JSON file (S11, S07).

    The file is created 0600 on the first :meth:`set`; until then every :meth:`get` answers
    ``None``. Its directory must exist: making it owner-only is the owner-only store's job.

    Args:
        path: Where the file lives. Must not be a symbolic link.

    Misuse: the store does not lock across processes (S11: coordination is the caller's); two
    processes writing at once can lose one update. Within one process the instance serialises
    its own writes. Every call reads the file again, so another process's committed write is seen.
    """

    __slots__ = ("_lock", "_path")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.path.abspath(os.fspath(path))
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        """The absolute path of the credential file."""
        return self._path

    def _load(self) -> _Secrets:
        content = read_owner_only_file(self._path)
        return {} if content is None else _decode(self._path, content)

    def get(self, service: str, account: str) -> str | None:
        """The secret under ``(service, account)``, or ``None`` when the file holds none.

        Raises:
            CredentialStoreError: the file cannot be read, is corrupt, or is not owner-only.
        """
        check_credential_key(service, account)
        return self._load().get(service, {}).get(account)

    def set(self, service: str, account: str, secret: str) -> None:
        """Store ``secret`` under ``(service, account)``, replacing the file durably.

        Raises:
            CredentialStoreError: the file cannot be read or written.
            ConfigurationError: ``secret`` is not a string, or the key is empty.
        """
        check_credential_key(service, account)
        _check_secret(secret)
        with self._lock:
            entries = self._load()
            entries.setdefault(service, {})[account] = secret
            replace_owner_only_file(self._path, _encode(entries))

    def delete(self, service: str, account: str) -> bool:
        """Remove the secret under ``(service, account)``; whether there was one.

        Raises:
            CredentialStoreError: the file cannot be read or written.
        """
        check_credential_key(service, account)
        with self._lock:
            entries = self._load()
            accounts = entries.get(service)
            if accounts is None or account not in accounts:
                return False
            del accounts[account]
            if not accounts:
                del entries[service]
            replace_owner_only_file(self._path, _encode(entries))
            return True

    def __repr__(self) -> str:
        return f"FileCredentialStore({self._path!r})"


# --------------------------------------------------------------------------------------------
# The OS keychain
# --------------------------------------------------------------------------------------------


@final
class KeyringCredentialStore(CredentialStore):
    """A :class:`~robota.CredentialStore` in the OS keychain, via ``keyring``.

    Needs the ``keyring`` package (the ``keyring`` extra). Each secret is kept under
    the keychain service ``"<service_prefix>:<service>"`` and the account name unchanged.

    Args:
        service_prefix: Namespaces this program's entries in a keychain shared with others;
            ``""`` uses the service name as given.
        backend: The keyring backend to use; by default the one ``keyring`` selects for this
            machine, looked up at each call.

    A backend that cannot be read raises :class:`CredentialStoreError`, and so does ``keyring``'s
    null backend, which answers "absent" to every read without looking.
    """

    __slots__ = ("_backend", "_prefix")

    def __init__(
        self, *, service_prefix: str = "robota", backend: KeyringBackend | None = None
    ) -> None:
        try:
            import keyring  # noqa: F401, PLC0415 — an optional dependency, checked at construction
        except ImportError as exc:
            raise ConfigurationError(
                f"KeyringCredentialStore needs the keyring package: {install_command('keyring')}"
            ) from exc
        self._prefix = service_prefix
        self._backend = backend

    def _keychain_service(self, service: str) -> str:
        return f"{self._prefix}:{service}" if self._prefix else service

    def _resolve_backend(self) -> KeyringBackend:
        import keyring  # noqa: PLC0415 — optional dependency; present (checked in __init__)
        from keyring.backends import null  # noqa: PLC0415

        try:
            backend = self._backend if self._backend is not None else keyring.get_keyring()
        except Exception as exc:  # any backend-detection failure means "unreadable"
            raise CredentialStoreError(
                f"the OS keychain cannot be reached: {type(exc).__name__}"
            ) from exc
        if isinstance(backend, null.Keyring):
            raise CredentialStoreError(
                "the keyring backend is keyring's null backend, which reports every secret "
                "absent without looking; configure a real keychain backend"
            )
        return backend

    def get(self, service: str, account: str) -> str | None:
        """The secret under ``(service, account)``, or ``None`` when the keychain holds none.

        Raises:
            CredentialStoreError: the keychain could not be read (locked, missing, failing).
        """
        check_credential_key(service, account)
        return self._read(self._resolve_backend(), service, account)

    def _read(self, backend: KeyringBackend, service: str, account: str) -> str | None:
        try:
            secret = backend.get_password(self._keychain_service(service), account)
        except Exception as exc:  # backends raise any type (D-Bus, Security.framework …)
            raise CredentialStoreError(
                f"the OS keychain could not be read: {type(exc).__name__}"
            ) from exc
        secret_value: object = secret
        if secret_value is not None and not isinstance(secret_value, str):
            raise CredentialStoreError("the keychain backend answered a non-string secret")
        return secret

    def set(self, service: str, account: str, secret: str) -> None:
        """Store ``secret`` under ``(service, account)`` in the keychain.

        Raises:
            CredentialStoreError: the keychain could not be written.
            ConfigurationError: ``secret`` is not a string, or the key is empty.
        """
        check_credential_key(service, account)
        _check_secret(secret)
        backend = self._resolve_backend()
        try:
            backend.set_password(self._keychain_service(service), account, secret)
        except Exception as exc:  # backends raise any type; one mapping place
            raise CredentialStoreError(
                f"the OS keychain could not be written: {type(exc).__name__}"
            ) from exc

    def delete(self, service: str, account: str) -> bool:
        """Remove the secret under ``(service, account)``; whether there was one.

        Raises:
            CredentialStoreError: the keychain could not be read or written.
        """
        from keyring.errors import PasswordDeleteError  # noqa: PLC0415 — optional dependency

        check_credential_key(service, account)
        backend = self._resolve_backend()
        if self._read(backend, service, account) is None:
            return False
        try:
            backend.delete_password(self._keychain_service(service), account)
        except PasswordDeleteError:
            return False  # removed by someone else between the read and the delete
        except Exception as exc:  # backends raise any type; one mapping place
            raise CredentialStoreError(
                f"the OS keychain entry could not be removed: {type(exc).__name__}"
            ) from exc
        return True

    def __repr__(self) -> str:
        return f"KeyringCredentialStore(service_prefix={self._prefix!r})"
