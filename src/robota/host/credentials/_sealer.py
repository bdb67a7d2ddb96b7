"""The host's artifact sealer (S11): X25519 + HKDF-SHA256 + AES-256-GCM.

A :class:`Sealer` seals to one recipient key pair. Sealing needs only the public key; opening
and authorship tags need the private key, which the sealer may hold from the start, receive later
(:meth:`Sealer.unlock`), or never hold.

Framing, version 1 (after :data:`~robota.SEALED_MAGIC` and the version byte)::

    whole  mode=1 | ephemeral public key (32) | nonce (12) | ciphertext + tag
    bulk   mode=2 | ephemeral public key (32) | wrap nonce (12) | wrapped data key (48)
                  | nonce (12) | ciphertext + tag

A *whole* artifact's key comes from a fresh ephemeral X25519 agreement with the recipient, so
nothing on disk links two whole artifacts. A *bulk* artifact (a log line) is sealed with a data
key the writer shares across its lines of one kind and owner; the data key is wrapped once to the
recipient and the wrapped form travels with every line, so each line still opens on its own and
a reader unwraps each writer's key once. Every AEAD operation's associated data is the framing
header plus the artifact's kind and owner id, so an artifact moved to another owner's path, or
read as another kind, does not open (:class:`CorruptError`).

Authorship tags are HMAC-SHA256 under a key derived from the private key: only the key holder
makes or checks them, which is what S11 asks of a tag.

Key files are PEM (PKCS#8 private, SubjectPublicKeyInfo public), created owner-only 0600 and
refused when another account could read or replace them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from collections.abc import Callable
from typing import ClassVar, Final, final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from robota.core import (
    SEALED_FRAMING_VERSION,
    SEALED_MAGIC,
    ArtifactKind,
    ArtifactSealer,
    ConfigurationError,
    CorruptError,
    CredentialStoreError,
    LockedError,
    LockedReason,
    SealingGrant,
    UnlockListener,
    check_artifact_owner,
    is_sealed,
)
from robota.host.credentials._credential_file import create_owner_only_file, read_owner_only_file

__all__ = ["Sealer", "create_key_files", "load_sealer"]

_SCHEME: Final = "x25519-hkdf-sha256-aes256gcm/1"
_MODE_WHOLE: Final = 1
_MODE_BULK: Final = 2
_KEY_SIZE: Final = 32
_NONCE_SIZE: Final = 12
_TAG_SIZE: Final = 16
_PREFIX_SIZE: Final = len(SEALED_MAGIC) + 2  # magic, version, mode
_WRAPPED_SIZE: Final = _KEY_SIZE + _TAG_SIZE
_BULK_KEY_HEADER_SIZE: Final = _KEY_SIZE + _NONCE_SIZE + _WRAPPED_SIZE
_AUTHOR_TAG_VERSION: Final = b"\x01"

# A writer's bulk data key seals at most this many lines before a new one is made: random 96-bit
# nonces stay far below the AES-GCM collision bound (2**32 messages per key).
_BULK_LINES_PER_KEY: Final = 1 << 24
# Bounds on the per-process caches of data keys (a new key is made or unwrapped past them).
_WRITER_KEYS_LIMIT: Final = 1024
_READER_KEYS_LIMIT: Final = 1024


def _binding(kind: ArtifactKind, owner: str) -> bytes:
    """The kind and owner every AEAD operation is bound to, unambiguously length-prefixed."""
    kind_bytes = kind.value.encode("utf-8")
    owner_bytes = owner.encode("utf-8")
    return (
        len(kind_bytes).to_bytes(4, "big")
        + kind_bytes
        + len(owner_bytes).to_bytes(4, "big")
        + owner_bytes
    )


def _derive(shared: bytes, salt: bytes, label: bytes) -> bytes:
    return HKDF(
        algorithm=hashes.SHA256(), length=_KEY_SIZE, salt=salt, info=b"robota-seal/1 " + label
    ).derive(shared)


def _raw_public(key: X25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


class _WriterKey:
    """A bulk writer's data key: its wrapped header and how many lines it has sealed."""

    __slots__ = ("aead", "header", "lines")

    def __init__(self, aead: AESGCM, header: bytes) -> None:
        self.aead = aead
        self.header = header
        self.lines = 0


@final
class Sealer(ArtifactSealer):
    """Seals artifacts to one X25519 recipient key; opens them while holding its private key.

    Args:
        public_key: The recipient key every artifact is sealed to.
        private_key: Its private half, or ``None`` for a locked sealer (seals, cannot open).
        durable: Whether the key pair outlives this process (it is kept in files or a keychain).
            Only a durable sealer offers a :class:`~robota.SealingGrant`.

    Build one with :meth:`generate`, :func:`load_sealer`, :func:`create_key_files` or
    :meth:`from_grant`. Thread-safe. Python cannot wipe memory, so :meth:`lock` drops the
    references to secret material but does not erase it.
    """

    scheme: ClassVar[str] = _SCHEME

    __slots__ = (
        "_author_key",
        "_durable",
        "_listeners",
        "_lock",
        "_locked_reason",
        "_private",
        "_public",
        "_public_raw",
        "_reader_keys",
        "_writer_keys",
    )

    def __init__(
        self,
        public_key: X25519PublicKey,
        *,
        private_key: X25519PrivateKey | None = None,
        durable: bool = False,
    ) -> None:
        self._public = public_key
        self._public_raw = _raw_public(public_key)
        self._durable = durable
        self._lock = threading.Lock()
        self._listeners: list[UnlockListener] = []
        self._writer_keys: dict[bytes, _WriterKey] = {}
        self._reader_keys: dict[bytes, AESGCM] = {}
        self._private: X25519PrivateKey | None = None
        self._author_key: bytes | None = None
        self._locked_reason: LockedReason = "keys_locked"
        if private_key is not None:
            self._install(private_key)

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def generate(cls) -> Sealer:
        """An unlocked sealer with a fresh key pair kept only in memory (offers no grant)."""
        private = X25519PrivateKey.generate()
        return cls(private.public_key(), private_key=private)

    @classmethod
    def from_grant(cls, grant: SealingGrant) -> Sealer:
        """A locked sealer that seals to the key a grant names (S11).

        Raises:
            ConfigurationError: the grant is for another scheme or its key is malformed.
        """
        if grant.scheme != _SCHEME or len(grant.recipient) != _KEY_SIZE:
            raise ConfigurationError(
                f"this sealing grant is for scheme {grant.scheme!r}; this sealer reads {_SCHEME!r}"
            )
        sealer = cls(X25519PublicKey.from_public_bytes(grant.recipient), durable=True)
        # S11: a grantee holds no secret; only the owner's process opens what it seals.
        sealer._locked_reason = "no_secret"
        return sealer

    def _install(self, private_key: X25519PrivateKey) -> None:
        if _raw_public(private_key.public_key()) != self._public_raw:
            raise ConfigurationError(
                "this private key does not belong to the sealer's public key; load the matching "
                "key file"
            )
        secret = private_key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        self._private = private_key
        self._author_key = _derive(secret, self._public_raw, b"author")

    # -- lock state ---------------------------------------------------------------------------

    @property
    def public_key(self) -> X25519PublicKey:
        """The recipient key artifacts are sealed to."""
        return self._public

    @property
    def unlocked(self) -> bool:
        """Whether this sealer holds its private key and so can open artifacts."""
        return self._private is not None

    @property
    def can_author(self) -> bool:
        """Whether authorship tags can be made and checked now (only with the private key)."""
        return self._author_key is not None

    def unlock(self, private_key: X25519PrivateKey) -> None:
        """Hand the sealer its private key; announces the unlock to :meth:`on_unlock` listeners.

        Unlocking an unlocked sealer is a no-op.

        Raises:
            ConfigurationError: ``private_key`` is not the private half of :attr:`public_key`.
        """
        with self._lock:
            if self._private is not None:
                return
            self._install(private_key)
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def unlock_from_key_file(
        self, path: str | os.PathLike[str], *, password: bytes | None = None
    ) -> None:
        """:meth:`unlock` with the private key kept in an owner-only key file.

        Raises:
            CredentialStoreError: the file is missing, unreadable, not owner-only, not an X25519
                private key, or ``password`` does not decrypt it.
            ConfigurationError: the key does not belong to this sealer.
        """
        self.unlock(_load_private_key(os.fspath(path), password))

    def lock(self) -> None:
        """Drop the private key and every cached data key; opening raises :class:`LockedError`."""
        with self._lock:
            self._private = None
            self._author_key = None
            self._reader_keys.clear()

    def on_unlock(self, listener: UnlockListener) -> Callable[[], None]:
        """Call ``listener`` each time the keys go from locked to unlocked; returns a remover.

        Listeners run on the thread that unlocks, after the sealer is unlocked; an exception from
        one propagates out of :meth:`unlock` and the remaining listeners are not called.
        """
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def sealing_grant(self) -> SealingGrant | None:
        """The public key as a grant when the key pair is durable; ``None`` otherwise (S11)."""
        if not self._durable:
            return None
        return SealingGrant(scheme=_SCHEME, recipient=self._public_raw)

    # -- sealing ------------------------------------------------------------------------------

    def seal(self, plaintext: bytes, *, kind: ArtifactKind | str, owner: str) -> bytes:
        """Seal ``plaintext`` as ``kind`` for ``owner``; needs only the public key.

        Raises:
            ConfigurationError: ``kind`` is not an :class:`ArtifactKind` or ``owner`` is empty.
        """
        resolved = ArtifactKind.parse(kind)
        check_artifact_owner(owner)
        binding = _binding(resolved, owner)
        if resolved.sealing == "whole":
            return self._seal_whole(bytes(plaintext), binding)
        return self._seal_bulk(bytes(plaintext), binding)

    def _seal_whole(self, plaintext: bytes, binding: bytes) -> bytes:
        # S11: a whole artifact gets its own key — a fresh ephemeral agreement per artifact.
        ephemeral = X25519PrivateKey.generate()
        ephemeral_raw = _raw_public(ephemeral.public_key())
        key = _derive(ephemeral.exchange(self._public), ephemeral_raw + self._public_raw, b"whole")
        nonce = os.urandom(_NONCE_SIZE)
        header = _prefix(_MODE_WHOLE) + ephemeral_raw + nonce
        return header + AESGCM(key).encrypt(nonce, plaintext, header + binding)

    def _seal_bulk(self, plaintext: bytes, binding: bytes) -> bytes:
        with self._lock:
            writer = self._writer_keys.get(binding)
            if writer is None or writer.lines >= _BULK_LINES_PER_KEY:
                writer = self._new_writer_key(binding)
            writer.lines += 1
        nonce = os.urandom(_NONCE_SIZE)
        header = writer.header + nonce
        return header + writer.aead.encrypt(nonce, plaintext, header + binding)

    def _new_writer_key(self, binding: bytes) -> _WriterKey:
        # S11: bulk kinds share one data key per writer (here: per sealer, kind and owner),
        # wrapped once to the recipient; the wrapped key travels with every line.
        data_key = AESGCM.generate_key(bit_length=256)
        ephemeral = X25519PrivateKey.generate()
        ephemeral_raw = _raw_public(ephemeral.public_key())
        wrapping = _derive(
            ephemeral.exchange(self._public), ephemeral_raw + self._public_raw, b"bulk-wrap"
        )
        wrap_nonce = os.urandom(_NONCE_SIZE)
        prefix = _prefix(_MODE_BULK) + ephemeral_raw + wrap_nonce
        wrapped = AESGCM(wrapping).encrypt(wrap_nonce, data_key, prefix + binding)
        if len(self._writer_keys) >= _WRITER_KEYS_LIMIT:
            del self._writer_keys[next(iter(self._writer_keys))]
        writer = _WriterKey(AESGCM(data_key), prefix + wrapped)
        self._writer_keys[binding] = writer
        return writer

    # -- opening ------------------------------------------------------------------------------

    def open(self, sealed: bytes, *, kind: ArtifactKind | str, owner: str) -> bytes:
        """The plaintext of ``sealed``, proven bound to ``kind`` and ``owner`` and unchanged.

        The framing is checked before the lock state: an artifact whose framing this build
        cannot read is :class:`CorruptError` even for a locked sealer, while one with a readable
        framing is :class:`LockedError` for it (intact as far as a sealer without keys can
        tell).

        Raises:
            LockedError: the framing is intact but this sealer holds no private key now.
            CorruptError: not sealed, an unread framing version, sealed as another kind, or
                changed/bound to another owner, kind or key.
            ConfigurationError: ``kind`` is not an :class:`ArtifactKind` or ``owner`` is empty.
        """
        resolved = ArtifactKind.parse(kind)
        check_artifact_owner(owner)
        data = bytes(sealed)
        mode = _read_mode(data)
        expected = _MODE_WHOLE if resolved.sealing == "whole" else _MODE_BULK
        if mode != expected:
            raise CorruptError("wrong_kind")
        minimum = _PREFIX_SIZE + _NONCE_SIZE + _TAG_SIZE + _KEY_SIZE
        if mode == _MODE_BULK:
            minimum += _BULK_KEY_HEADER_SIZE - _KEY_SIZE
        if len(data) < minimum:
            raise CorruptError("damaged")
        private = self._private
        if private is None:
            raise LockedError(self._locked_reason)
        binding = _binding(resolved, owner)
        try:
            if mode == _MODE_WHOLE:
                return self._open_whole(private, data, binding)
            return self._open_bulk(private, data, binding)
        except InvalidTag:
            raise CorruptError("damaged") from None

    def _open_whole(self, private: X25519PrivateKey, data: bytes, binding: bytes) -> bytes:
        ephemeral_raw = data[_PREFIX_SIZE : _PREFIX_SIZE + _KEY_SIZE]
        nonce_end = _PREFIX_SIZE + _KEY_SIZE + _NONCE_SIZE
        nonce = data[_PREFIX_SIZE + _KEY_SIZE : nonce_end]
        key = _derive(_exchange(private, ephemeral_raw), ephemeral_raw + self._public_raw, b"whole")
        return AESGCM(key).decrypt(nonce, data[nonce_end:], data[:nonce_end] + binding)

    def _open_bulk(self, private: X25519PrivateKey, data: bytes, binding: bytes) -> bytes:
        key_header_end = _PREFIX_SIZE + _BULK_KEY_HEADER_SIZE
        key_header = data[:key_header_end]
        cache_key = key_header + binding
        with self._lock:
            aead = self._reader_keys.get(cache_key)
        if aead is None:
            aead = self._unwrap(private, key_header, binding)
            with self._lock:
                if len(self._reader_keys) >= _READER_KEYS_LIMIT:
                    del self._reader_keys[next(iter(self._reader_keys))]
                self._reader_keys[cache_key] = aead
        nonce_end = key_header_end + _NONCE_SIZE
        nonce = data[key_header_end:nonce_end]
        return aead.decrypt(nonce, data[nonce_end:], data[:nonce_end] + binding)

    def _unwrap(self, private: X25519PrivateKey, key_header: bytes, binding: bytes) -> AESGCM:
        ephemeral_raw = key_header[_PREFIX_SIZE : _PREFIX_SIZE + _KEY_SIZE]
        wrap_nonce_end = _PREFIX_SIZE + _KEY_SIZE + _NONCE_SIZE
        wrap_nonce = key_header[_PREFIX_SIZE + _KEY_SIZE : wrap_nonce_end]
        wrapping = _derive(
            _exchange(private, ephemeral_raw), ephemeral_raw + self._public_raw, b"bulk-wrap"
        )
        data_key = AESGCM(wrapping).decrypt(
            wrap_nonce, key_header[wrap_nonce_end:], key_header[:wrap_nonce_end] + binding
        )
        return AESGCM(data_key)

    # -- authorship ---------------------------------------------------------------------------

    def _require_author_key(self) -> bytes:
        author_key = self._author_key
        if author_key is None:
            raise LockedError(self._locked_reason)
        return author_key

    def author_tag(self, sealed: bytes, *, kind: ArtifactKind | str, owner: str) -> bytes:
        """An HMAC-SHA256 tag over ``sealed``, its kind and owner, under the private key.

        Raises:
            LockedError: the sealer holds no private key now.
        """
        resolved = ArtifactKind.parse(kind)
        check_artifact_owner(owner)
        author_key = self._require_author_key()
        return _AUTHOR_TAG_VERSION + _mac(author_key, bytes(sealed), _binding(resolved, owner))

    def check_author_tag(
        self, sealed: bytes, tag: bytes, *, kind: ArtifactKind | str, owner: str
    ) -> bool:
        """Whether ``tag`` is this key holder's tag on ``sealed`` as ``kind`` for ``owner``.

        Raises:
            LockedError: the sealer holds no private key now.
        """
        expected = self.author_tag(sealed, kind=kind, owner=owner)
        return hmac.compare_digest(expected, bytes(tag))

    def __repr__(self) -> str:
        state = "unlocked" if self.unlocked else "locked"
        return f"Sealer(recipient={self._public_raw[:8].hex()}…, {state})"


def _prefix(mode: int) -> bytes:
    return SEALED_MAGIC + bytes((SEALED_FRAMING_VERSION, mode))


def _read_mode(data: bytes) -> int:
    """The mode byte of a version-1 framing; :class:`CorruptError` for anything else."""
    if not is_sealed(data):
        raise CorruptError("not_sealed")
    if data[len(SEALED_MAGIC)] != SEALED_FRAMING_VERSION:
        raise CorruptError("unsupported_framing")
    if len(data) < _PREFIX_SIZE or data[_PREFIX_SIZE - 1] not in (_MODE_WHOLE, _MODE_BULK):
        raise CorruptError("damaged")
    return data[_PREFIX_SIZE - 1]


def _exchange(private: X25519PrivateKey, peer_raw: bytes) -> bytes:
    try:
        return private.exchange(X25519PublicKey.from_public_bytes(peer_raw))
    except ValueError:
        # A low-order point yields an all-zero secret, which `exchange` refuses.
        raise CorruptError("damaged") from None


def _mac(key: bytes, sealed: bytes, binding: bytes) -> bytes:
    return hmac.new(key, b"robota-author/1" + binding + sealed, hashlib.sha256).digest()


# --------------------------------------------------------------------------------------------
# Key files
# --------------------------------------------------------------------------------------------


def _load_private_key(path: str, password: bytes | None) -> X25519PrivateKey:
    content = read_owner_only_file(path)
    if content is None:
        raise CredentialStoreError(f"no private key file at {path}")
    try:
        key = serialization.load_pem_private_key(content, password=password)
    except (ValueError, TypeError) as exc:
        # The library's message may describe the file's content; it is not chained.
        wrong_password = isinstance(exc, TypeError) or "password" in str(exc).lower()
        failure = "cannot be decrypted with this password" if wrong_password else "is not valid"
    else:
        if isinstance(key, X25519PrivateKey):
            return key
        failure = "does not hold an X25519 key"
    raise CredentialStoreError(f"the private key file {path} {failure}")


def _load_public_key(path: str) -> X25519PublicKey:
    content = read_owner_only_file(path)
    if content is None:
        raise CredentialStoreError(f"no public key file at {path}")
    key: object
    try:
        key = serialization.load_pem_public_key(content)
    except ValueError:
        key = None
    if not isinstance(key, X25519PublicKey):
        raise CredentialStoreError(f"the public key file {path} does not hold an X25519 key")
    return key


def create_key_files(
    *,
    private_key_path: str | os.PathLike[str],
    public_key_path: str | os.PathLike[str],
    password: bytes | None = None,
) -> Sealer:
    """Make a key pair, keep it in two new owner-only files, and return its unlocked sealer.

    Both files are created 0600 from the start and never overwrite anything already there. With
    ``password`` the private key is encrypted at rest, so reading it back needs the password.

    Raises:
        CredentialStoreError: a file already exists or cannot be written.
    """
    private = X25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password)
        if password
        else serialization.NoEncryption()
    )
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private_path = os.fspath(private_key_path)
    create_owner_only_file(private_path, private_pem)
    try:
        create_owner_only_file(os.fspath(public_key_path), public_pem)
    except CredentialStoreError:
        os.unlink(private_path)  # no half-made pair left behind
        raise
    return Sealer(private.public_key(), private_key=private, durable=True)


def load_sealer(
    public_key_path: str | os.PathLike[str],
    *,
    private_key_path: str | os.PathLike[str] | None = None,
    password: bytes | None = None,
) -> Sealer:
    """A durable sealer from key files: locked, or unlocked when ``private_key_path`` is given.

    Raises:
        CredentialStoreError: a file is missing, unreadable, not owner-only, not an X25519 key,
            or ``password`` does not decrypt the private key.
        ConfigurationError: the private key does not belong to the public key.
    """
    public = _load_public_key(os.fspath(public_key_path))
    private = (
        None
        if private_key_path is None
        else _load_private_key(os.fspath(private_key_path), password)
    )
    return Sealer(public, private_key=private, durable=True)
