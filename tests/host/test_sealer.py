"""S11 artifact sealer port (core) and its host implementation, on real keys and real files."""

from __future__ import annotations

import base64
import os
import pathlib
import pickle
import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from robota.core import (
    SEALED_FRAMING_VERSION,
    SEALED_MAGIC,
    ArtifactKind,
    ArtifactSealer,
    ConfigurationError,
    CorruptError,
    CredentialStoreError,
    LockedError,
    RobotaError,
    SealingGrant,
    is_sealed,
    sealed_framing_version,
)
from robota.host import Sealer, create_key_files, load_sealer
from special_files import PLANTABLE_KINDS, finishes, plant, planted_fifos

PLAINTEXT = b'{"record": "TOP-SECRET-PLAINTEXT"}'
OWNER = "user/alice/session-1"
PREFIX = len(SEALED_MAGIC) + 2
EPHEMERAL = slice(PREFIX, PREFIX + 32)
BULK_KEY_HEADER = slice(0, PREFIX + 32 + 12 + 48)


def raw_private(sealer_key: X25519PrivateKey) -> bytes:
    return sealer_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def locked_twin(private: X25519PrivateKey) -> Sealer:
    return Sealer(private.public_key())


# -- the port -------------------------------------------------------------------------------


def test_s11_sealer_implements_the_port() -> None:
    sealer = Sealer.generate()
    assert isinstance(sealer, ArtifactSealer)
    assert is_sealed(sealer.seal(PLAINTEXT, kind=ArtifactKind.SESSION_RECORD, owner=OWNER))


def test_s11_every_kind_is_classified_whole_or_bulk() -> None:
    assert {kind: kind.sealing for kind in ArtifactKind} == {
        ArtifactKind.SESSION_RECORD: "whole",
        ArtifactKind.CHECKPOINT: "whole",
        ArtifactKind.LOG_LINE: "bulk",
    }


def test_s11_an_unclassified_kind_is_refused() -> None:
    sealer = Sealer.generate()
    with pytest.raises(ConfigurationError, match="not an artifact kind"):
        sealer.seal(PLAINTEXT, kind="audit-trail", owner=OWNER)
    with pytest.raises(ConfigurationError):
        sealer.open(b"", kind="audit-trail", owner=OWNER)


def test_s11_a_kind_may_be_named_by_its_string() -> None:
    sealer = Sealer.generate()
    sealed = sealer.seal(PLAINTEXT, kind="log-line", owner=OWNER)
    assert sealer.open(sealed, kind=ArtifactKind.LOG_LINE, owner=OWNER) == PLAINTEXT


@pytest.mark.parametrize("owner", ["", None, 7])
def test_s11_an_artifact_needs_an_owner(owner: object) -> None:
    sealer = Sealer.generate()
    with pytest.raises(ConfigurationError, match="owner"):
        sealer.seal(PLAINTEXT, kind=ArtifactKind.CHECKPOINT, owner=owner)  # type: ignore[arg-type]


# -- the framing ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(256))
def test_s11_every_framing_version_counts_as_sealed(version: int) -> None:
    data = SEALED_MAGIC + bytes([version]) + os.urandom(40)
    assert is_sealed(data)
    assert sealed_framing_version(data) == version
    if version != SEALED_FRAMING_VERSION:
        with pytest.raises(CorruptError) as info:
            Sealer.generate().open(data, kind=ArtifactKind.SESSION_RECORD, owner=OWNER)
        assert info.value.reason == "unsupported_framing"


@pytest.mark.parametrize(
    "data",
    [b"", SEALED_MAGIC, b'{"plain": "json"}', b"a log line\n", SEALED_MAGIC[1:] + b"\x01"],
)
def test_s11_plaintext_and_bare_magic_are_not_sealed(data: bytes) -> None:
    assert not is_sealed(data)
    assert sealed_framing_version(data) is None
    with pytest.raises(CorruptError) as info:
        Sealer.generate().open(data, kind=ArtifactKind.SESSION_RECORD, owner=OWNER)
    assert info.value.reason == "not_sealed"


def test_s11_current_artifacts_carry_the_current_framing_version() -> None:
    sealer = Sealer.generate()
    for kind in ArtifactKind:
        sealed = sealer.seal(PLAINTEXT, kind=kind, owner=OWNER)
        assert sealed_framing_version(sealed) == SEALED_FRAMING_VERSION
        assert PLAINTEXT not in sealed


# -- binding --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(ArtifactKind))
def test_s11_round_trip_for_every_kind(kind: ArtifactKind) -> None:
    sealer = Sealer.generate()
    for plaintext in (b"", PLAINTEXT, os.urandom(70_000)):
        sealed = sealer.seal(plaintext, kind=kind, owner=OWNER)
        assert sealer.open(sealed, kind=kind, owner=OWNER) == plaintext


@pytest.mark.parametrize("kind", list(ArtifactKind))
def test_s11_sealed_file_moved_to_another_owner_does_not_open(
    tmp_path: pathlib.Path, kind: ArtifactKind
) -> None:
    sealer = Sealer.generate()
    alice = tmp_path / "alice" / "artifact"
    bob = tmp_path / "bob" / "artifact"
    alice.parent.mkdir()
    bob.parent.mkdir()
    alice.write_bytes(sealer.seal(PLAINTEXT, kind=kind, owner=str(alice.parent)))
    alice.rename(bob)
    with pytest.raises(CorruptError) as info:
        sealer.open(bob.read_bytes(), kind=kind, owner=str(bob.parent))
    assert info.value.reason == "damaged"
    # Still intact for its real owner: the refusal is the binding, not damage from the move.
    assert sealer.open(bob.read_bytes(), kind=kind, owner=str(alice.parent)) == PLAINTEXT


def test_s11_artifact_read_as_another_kind_does_not_open() -> None:
    sealer = Sealer.generate()
    record = sealer.seal(PLAINTEXT, kind=ArtifactKind.SESSION_RECORD, owner=OWNER)
    with pytest.raises(CorruptError) as same_class:
        sealer.open(record, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    assert same_class.value.reason == "damaged"
    with pytest.raises(CorruptError) as other_class:
        sealer.open(record, kind=ArtifactKind.LOG_LINE, owner=OWNER)
    assert other_class.value.reason == "wrong_kind"


def test_s11_bulk_line_moved_to_another_owner_does_not_open_even_with_a_cached_key() -> None:
    sealer = Sealer.generate()
    line = sealer.seal(PLAINTEXT, kind=ArtifactKind.LOG_LINE, owner="alice")
    assert sealer.open(line, kind=ArtifactKind.LOG_LINE, owner="alice") == PLAINTEXT  # cached
    with pytest.raises(CorruptError):
        sealer.open(line, kind=ArtifactKind.LOG_LINE, owner="bob")


def test_s11_an_artifact_sealed_to_another_key_does_not_open() -> None:
    sealed = Sealer.generate().seal(PLAINTEXT, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    with pytest.raises(CorruptError):
        Sealer.generate().open(sealed, kind=ArtifactKind.CHECKPOINT, owner=OWNER)


@pytest.mark.parametrize("kind", list(ArtifactKind))
def test_s11_any_changed_byte_makes_the_artifact_corrupt(kind: ArtifactKind) -> None:
    sealer = Sealer.generate()
    sealed = sealer.seal(b"short", kind=kind, owner=OWNER)
    for index in range(len(SEALED_MAGIC) + 1, len(sealed)):
        changed = bytearray(sealed)
        changed[index] ^= 0x01
        with pytest.raises(CorruptError):
            sealer.open(bytes(changed), kind=kind, owner=OWNER)


@pytest.mark.parametrize("kind", list(ArtifactKind))
def test_s11_a_truncated_artifact_is_corrupt(kind: ArtifactKind) -> None:
    sealer = Sealer.generate()
    sealed = sealer.seal(PLAINTEXT, kind=kind, owner=OWNER)
    for length in range(len(SEALED_MAGIC) + 1, len(sealed)):
        with pytest.raises(CorruptError):
            sealer.open(sealed[:length], kind=kind, owner=OWNER)


# -- whole and bulk keys --------------------------------------------------------------------


def _shares_a_window(a: bytes, b: bytes, width: int = 8) -> bool:
    windows = {a[i : i + width] for i in range(len(a) - width + 1)}
    return any(b[i : i + width] in windows for i in range(len(b) - width + 1))


@pytest.mark.parametrize("kind", [ArtifactKind.SESSION_RECORD, ArtifactKind.CHECKPOINT])
def test_s11_whole_artifacts_get_their_own_key(kind: ArtifactKind) -> None:
    sealer = Sealer.generate()
    first = sealer.seal(PLAINTEXT, kind=kind, owner=OWNER)
    second = sealer.seal(PLAINTEXT, kind=kind, owner=OWNER)
    # Nothing on disk links two whole artifacts: past the fixed framing prefix they share no
    # byte run at all — not an ephemeral key, not a nonce, not a ciphertext block.
    assert first[:PREFIX] == second[:PREFIX]
    assert first[EPHEMERAL] != second[EPHEMERAL]
    assert not _shares_a_window(first[PREFIX:], second[PREFIX:])


def test_s11_bulk_kind_shares_one_data_key_per_writer() -> None:
    private = X25519PrivateKey.generate()
    writer = Sealer(private.public_key(), private_key=private)
    lines = [writer.seal(b"line %d" % i, kind=ArtifactKind.LOG_LINE, owner=OWNER) for i in range(5)]
    assert len({line[BULK_KEY_HEADER] for line in lines}) == 1
    # Distinct nonces and ciphertexts per line even though the key is shared.
    assert len({line[BULK_KEY_HEADER.stop :] for line in lines}) == 5
    other_writer = Sealer(private.public_key())
    other = other_writer.seal(b"line 0", kind=ArtifactKind.LOG_LINE, owner=OWNER)
    assert other[BULK_KEY_HEADER] != lines[0][BULK_KEY_HEADER]
    # And a writer's key for one owner is not the key for another owner's lines.
    elsewhere = writer.seal(b"line 0", kind=ArtifactKind.LOG_LINE, owner="another-owner")
    assert elsewhere[BULK_KEY_HEADER] != lines[0][BULK_KEY_HEADER]


def test_s11_each_bulk_line_opens_on_its_own() -> None:
    private = X25519PrivateKey.generate()
    writer = Sealer(private.public_key())
    lines = [writer.seal(b"line %d" % i, kind=ArtifactKind.LOG_LINE, owner=OWNER) for i in range(4)]
    for index in (3, 1, 0, 2):
        reader = Sealer(private.public_key(), private_key=private)  # a fresh reader each time
        assert reader.open(lines[index], kind=ArtifactKind.LOG_LINE, owner=OWNER) == b"line %d" % (
            index
        )


# -- locked and corrupt ---------------------------------------------------------------------


def test_s11_locked_sealer_still_seals() -> None:
    private = X25519PrivateKey.generate()
    locked = locked_twin(private)
    assert not locked.unlocked
    owner_side = Sealer(private.public_key(), private_key=private)
    for kind in ArtifactKind:
        sealed = locked.seal(PLAINTEXT, kind=kind, owner=OWNER)
        with pytest.raises(LockedError):
            locked.open(sealed, kind=kind, owner=OWNER)
        assert owner_side.open(sealed, kind=kind, owner=OWNER) == PLAINTEXT


def test_s11_locked_sealer_still_reports_an_unreadable_framing_as_corrupt() -> None:
    locked = locked_twin(X25519PrivateKey.generate())
    with pytest.raises(CorruptError):
        locked.open(b"plaintext", kind=ArtifactKind.SESSION_RECORD, owner=OWNER)
    with pytest.raises(CorruptError):
        locked.open(SEALED_MAGIC + b"\x09" + bytes(80), kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    with pytest.raises(CorruptError):
        locked.open(
            SEALED_MAGIC + b"\x01\x01" + bytes(10), kind=ArtifactKind.CHECKPOINT, owner=OWNER
        )


def test_s11_locked_and_corrupt_are_distinct_errors_without_plaintext_key_or_path(
    tmp_path: pathlib.Path,
) -> None:
    private = X25519PrivateKey.generate()
    path = tmp_path / "sessions" / "alice.record"
    path.parent.mkdir()
    owner = str(path)
    unlocked = Sealer(private.public_key(), private_key=private)
    path.write_bytes(unlocked.seal(PLAINTEXT, kind=ArtifactKind.SESSION_RECORD, owner=owner))

    with pytest.raises(LockedError) as locked:
        locked_twin(private).open(path.read_bytes(), kind=ArtifactKind.SESSION_RECORD, owner=owner)
    damaged = bytearray(path.read_bytes())
    damaged[-1] ^= 0xFF
    with pytest.raises(CorruptError) as corrupt:
        unlocked.open(bytes(damaged), kind=ArtifactKind.SESSION_RECORD, owner=owner)

    assert not issubclass(LockedError, CorruptError)
    assert not issubclass(CorruptError, LockedError)
    assert type(locked.value) is LockedError
    assert type(corrupt.value) is CorruptError
    assert isinstance(locked.value, RobotaError)
    assert isinstance(corrupt.value, RobotaError)
    assert locked.value.code != corrupt.value.code
    assert locked.value.recoverable
    assert not corrupt.value.recoverable

    secret = raw_private(private)
    forbidden = [
        PLAINTEXT.decode(),
        "TOP-SECRET",
        secret.hex(),
        base64.b64encode(secret).decode(),
        str(path),
        str(tmp_path),
        "alice.record",
    ]
    for error in (locked.value, corrupt.value):
        chain: list[BaseException] = []
        current: BaseException | None = error
        while current is not None:
            chain.append(current)
            current = current.__cause__ or current.__context__
        rendered = " ".join(
            text
            for item in chain
            for text in (str(item), repr(item), repr(item.args), repr(vars(item)))
        )
        for fragment in forbidden:
            assert fragment not in rendered


def test_s11_locked_and_corrupt_errors_survive_pickling_with_their_reason() -> None:
    for error in (LockedError("no_secret"), CorruptError("wrong_kind")):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert copy.reason == error.reason
        assert str(copy) == str(error)


def test_s11_lock_drops_the_keys_and_unlock_restores_them() -> None:
    private = X25519PrivateKey.generate()
    sealer = Sealer(private.public_key(), private_key=private)
    line = sealer.seal(PLAINTEXT, kind=ArtifactKind.LOG_LINE, owner=OWNER)
    assert sealer.open(line, kind=ArtifactKind.LOG_LINE, owner=OWNER) == PLAINTEXT
    sealer.lock()
    assert not sealer.unlocked
    assert not sealer.can_author
    with pytest.raises(LockedError) as info:
        sealer.open(line, kind=ArtifactKind.LOG_LINE, owner=OWNER)  # the cached key is gone too
    assert info.value.reason == "keys_locked"
    sealer.unlock(private)
    assert sealer.open(line, kind=ArtifactKind.LOG_LINE, owner=OWNER) == PLAINTEXT


def test_s11_unlock_refuses_a_key_that_is_not_the_pair() -> None:
    sealer = locked_twin(X25519PrivateKey.generate())
    with pytest.raises(ConfigurationError, match="does not belong"):
        sealer.unlock(X25519PrivateKey.generate())
    assert not sealer.unlocked


def test_s11_repr_shows_no_secret() -> None:
    private = X25519PrivateKey.generate()
    text = repr(Sealer(private.public_key(), private_key=private))
    assert raw_private(private).hex()[:16] not in text
    assert "unlocked" in text


# -- authorship -----------------------------------------------------------------------------


def test_s11_authorship_tag_only_with_unlocked_keys() -> None:
    private = X25519PrivateKey.generate()
    locked = locked_twin(private)
    sealed = locked.seal(PLAINTEXT, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    assert not locked.can_author
    with pytest.raises(LockedError):
        locked.author_tag(sealed, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    with pytest.raises(LockedError):
        locked.check_author_tag(sealed, b"\x01" + bytes(32), kind="checkpoint", owner=OWNER)

    unlocked = Sealer(private.public_key(), private_key=private)
    assert unlocked.can_author
    tag = unlocked.author_tag(sealed, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    assert unlocked.check_author_tag(sealed, tag, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    # The tag covers the bytes, the kind and the owner.
    changed = sealed[:-1] + bytes([sealed[-1] ^ 1])
    assert not unlocked.check_author_tag(changed, tag, kind="checkpoint", owner=OWNER)
    assert not unlocked.check_author_tag(sealed, tag, kind="session-record", owner=OWNER)
    assert not unlocked.check_author_tag(sealed, tag, kind="checkpoint", owner="mallory")
    assert not unlocked.check_author_tag(sealed, tag[:-1], kind="checkpoint", owner=OWNER)
    # Another key holder neither makes nor accepts this holder's tag.
    stranger = Sealer.generate()
    assert not stranger.check_author_tag(sealed, tag, kind="checkpoint", owner=OWNER)
    assert stranger.author_tag(sealed, kind="checkpoint", owner=OWNER) != tag


def test_s11_unlock_is_announced_so_a_writer_can_tag_what_it_wrote_locked() -> None:
    private = X25519PrivateKey.generate()
    sealer = locked_twin(private)
    written = [sealer.seal(b"line %d" % i, kind="log-line", owner=OWNER) for i in range(3)]
    tags: list[bytes] = []
    calls: list[str] = []

    def tag_backlog() -> None:
        tags.extend(sealer.author_tag(line, kind="log-line", owner=OWNER) for line in written)

    sealer.on_unlock(tag_backlog)
    remove = sealer.on_unlock(lambda: calls.append("removed listener ran"))
    remove()
    remove()  # removing twice is harmless
    sealer.unlock(private)
    sealer.unlock(private)  # already unlocked: not announced again
    assert len(tags) == 3
    assert calls == []
    assert all(
        sealer.check_author_tag(line, tag, kind="log-line", owner=OWNER)
        for line, tag in zip(written, tags, strict=True)
    )


# -- grants ---------------------------------------------------------------------------------


def test_s11_only_a_durable_key_offers_a_grant_and_it_carries_no_secret(
    tmp_path: pathlib.Path,
) -> None:
    assert Sealer.generate().sealing_grant() is None
    sealer = create_key_files(
        private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub"
    )
    grant = sealer.sealing_grant()
    assert isinstance(grant, SealingGrant)
    assert grant.scheme == Sealer.scheme
    private_pem = (tmp_path / "key").read_bytes()
    private = serialization.load_pem_private_key(private_pem, password=None)
    assert isinstance(private, X25519PrivateKey)
    assert raw_private(private) not in pickle.dumps(grant)

    grantee = Sealer.from_grant(grant)
    assert not grantee.unlocked
    assert not grantee.can_author
    sealed = grantee.seal(PLAINTEXT, kind=ArtifactKind.SESSION_RECORD, owner=OWNER)
    with pytest.raises(LockedError) as info:
        grantee.open(sealed, kind=ArtifactKind.SESSION_RECORD, owner=OWNER)
    assert info.value.reason == "no_secret"
    assert sealer.open(sealed, kind=ArtifactKind.SESSION_RECORD, owner=OWNER) == PLAINTEXT


def test_s11_a_grant_for_another_scheme_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="scheme"):
        Sealer.from_grant(SealingGrant(scheme="rsa-oaep/1", recipient=bytes(32)))


# -- key files ------------------------------------------------------------------------------


@pytest.mark.usefixtures("umask_zero")
def test_s07_key_files_are_created_0600(tmp_path: pathlib.Path) -> None:
    create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    for name in ("key", "key.pub"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_s07_key_files_never_overwrite(tmp_path: pathlib.Path) -> None:
    (tmp_path / "key").write_bytes(b"precious")
    with pytest.raises(CredentialStoreError, match="already exists"):
        create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    assert (tmp_path / "key").read_bytes() == b"precious"
    assert not (tmp_path / "key.pub").exists()


def test_s07_no_half_made_key_pair_is_left_behind(tmp_path: pathlib.Path) -> None:
    (tmp_path / "key.pub").write_bytes(b"in the way")
    with pytest.raises(CredentialStoreError):
        create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    assert not (tmp_path / "key").exists()


def test_s11_key_files_load_locked_or_unlocked(tmp_path: pathlib.Path) -> None:
    create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    locked = load_sealer(tmp_path / "key.pub")
    sealed = locked.seal(PLAINTEXT, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    with pytest.raises(LockedError) as info:
        locked.open(sealed, kind=ArtifactKind.CHECKPOINT, owner=OWNER)
    assert info.value.reason == "keys_locked"
    assert locked.sealing_grant() is not None
    locked.unlock_from_key_file(tmp_path / "key")
    assert locked.open(sealed, kind=ArtifactKind.CHECKPOINT, owner=OWNER) == PLAINTEXT
    unlocked = load_sealer(tmp_path / "key.pub", private_key_path=tmp_path / "key")
    assert unlocked.open(sealed, kind=ArtifactKind.CHECKPOINT, owner=OWNER) == PLAINTEXT


def test_s11_password_protected_key_needs_its_password(tmp_path: pathlib.Path) -> None:
    create_key_files(
        private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub", password=b"pw-1"
    )
    assert b"ENCRYPTED" in (tmp_path / "key").read_bytes()
    for password in (None, b"wrong"):
        with pytest.raises(CredentialStoreError, match="password") as info:
            load_sealer(tmp_path / "key.pub", private_key_path=tmp_path / "key", password=password)
        assert info.value.__cause__ is None
    sealer = load_sealer(tmp_path / "key.pub", private_key_path=tmp_path / "key", password=b"pw-1")
    assert sealer.unlocked


def test_s07_a_key_file_readable_by_others_is_refused(tmp_path: pathlib.Path) -> None:
    create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    (tmp_path / "key").chmod(0o644)
    with pytest.raises(CredentialStoreError, match="0644"):
        load_sealer(tmp_path / "key.pub", private_key_path=tmp_path / "key")
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o644  # refused, not repaired


def test_s07_a_public_key_file_writable_by_others_is_refused(tmp_path: pathlib.Path) -> None:
    create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    (tmp_path / "key.pub").chmod(0o622)
    with pytest.raises(CredentialStoreError, match="other accounts"):
        load_sealer(tmp_path / "key.pub")


def test_s11_missing_or_foreign_key_files_raise(tmp_path: pathlib.Path) -> None:
    with pytest.raises(CredentialStoreError, match="no public key file"):
        load_sealer(tmp_path / "absent.pub")
    create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    with pytest.raises(CredentialStoreError, match="no private key file"):
        load_sealer(tmp_path / "key.pub", private_key_path=tmp_path / "absent")
    fd = os.open(tmp_path / "junk", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"-----BEGIN NONSENSE-----\n")
    os.close(fd)
    with pytest.raises(CredentialStoreError, match="X25519"):
        load_sealer(tmp_path / "junk")
    with pytest.raises(CredentialStoreError, match="not valid"):
        load_sealer(tmp_path / "key.pub", private_key_path=tmp_path / "junk")


def test_s11_a_key_file_of_another_pair_does_not_unlock(tmp_path: pathlib.Path) -> None:
    create_key_files(private_key_path=tmp_path / "a", public_key_path=tmp_path / "a.pub")
    create_key_files(private_key_path=tmp_path / "b", public_key_path=tmp_path / "b.pub")
    with pytest.raises(ConfigurationError, match="does not belong"):
        load_sealer(tmp_path / "a.pub", private_key_path=tmp_path / "b")


@pytest.mark.parametrize("kind", PLANTABLE_KINDS)
@pytest.mark.parametrize("which", ["public", "private"])
def test_s11_a_special_file_at_a_key_path_raises_without_hanging(
    tmp_path: pathlib.Path, kind: str, which: str
) -> None:
    # S07, S11: a FIFO at a key path made load_sealer wait for a writer for ever.
    create_key_files(private_key_path=tmp_path / "key", public_key_path=tmp_path / "key.pub")
    planted = tmp_path / f"planted-{which}"
    plant(planted, kind)
    public, private = tmp_path / "key.pub", tmp_path / "key"
    if which == "public":
        public = planted
    else:
        private = planted
    fifos = planted_fifos(planted, kind)
    with pytest.raises(CredentialStoreError, match="not a regular file"):
        finishes(lambda: load_sealer(public, private_key_path=private), fifos=fifos)
    if which == "private":
        locked = load_sealer(public)
        with pytest.raises(CredentialStoreError, match="not a regular file"):
            finishes(lambda: locked.unlock_from_key_file(planted), fifos=fifos)


def test_s11_a_device_as_a_key_file_raises_without_reading_it(tmp_path: pathlib.Path) -> None:
    with pytest.raises(CredentialStoreError, match="not a regular file"):
        finishes(lambda: load_sealer("/dev/zero"))
