"""The credential store and artifact sealer ports, and the sealed framing (S11).

Two contracts a package takes without depending on the host that implements them:

* :class:`CredentialStore` — a string secret by a ``(service, account)`` key: read, written,
  removed, nothing more. An OS keychain and an owner-only file are interchangeable behind it. A
  store that cannot be read **raises** :class:`CredentialStoreError`; it never reports a secret
  absent because it could not look. Coordination between readers (one refresh or one creator at
  a time) is the caller's: a keychain has no atomic create, and one lock must serve every backend.
* :class:`ArtifactSealer` — seals and opens a stored artifact (a session record, a log line, a
  checkpoint) bound to its :class:`ArtifactKind` and its owner's id. Opening proves that binding
  and that nothing changed since sealing — not who sealed: sealing needs only the public key.
  Who wrote an artifact is what an *authorship tag* says, which only unlocked keys make and check.

Opening fails in two ways on purpose, as two errors: :class:`LockedError` (the artifact is intact
and this process cannot open it now) and :class:`CorruptError` (it does not open here). Neither
carries plaintext, a key or a path: their messages come from fixed tables keyed by ``reason``.

The framing is readable without any sealer (:func:`is_sealed`), so a reader holding no keys can
still tell a sealed file it cannot read from a damaged or plaintext one; every framing version
counts as sealed, so an older reader never mistakes a newer build's artifact for plaintext.

The errors (:class:`CredentialStoreError`, :class:`LockedError`, :class:`CorruptError`) live
with the rest of the taxonomy in :mod:`robota.core._errors`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import ClassVar, Final, Literal, TypeAlias, final

from robota.core._errors import (
    ConfigurationError,
)

__all__ = [
    "SEALED_FRAMING_VERSION",
    "SEALED_MAGIC",
    "ArtifactKind",
    "ArtifactSealer",
    "CredentialStore",
    "Sealing",
    "SealingGrant",
    "UnlockListener",
    "check_artifact_owner",
    "check_credential_key",
    "is_sealed",
    "sealed_framing_version",
]

# --------------------------------------------------------------------------------------------
# Framing
# --------------------------------------------------------------------------------------------

SEALED_MAGIC: Final = b"\x00RBSEAL"
"""The prefix of every sealed artifact, any framing version.

It starts with a NUL byte so no text artifact (JSON, a log line) can begin with it by accident.
"""

SEALED_FRAMING_VERSION: Final = 1
"""The framing version this build writes. The byte after :data:`SEALED_MAGIC` carries it."""


def is_sealed(data: bytes) -> bool:
    """Whether ``data`` is a sealed artifact in *any* framing version, readable or not (S11).

    Needs no sealer and no key: a reader holding none must still tell a sealed file it cannot read
    from plaintext. A framing version this build does not read still counts as sealed, so an
    older reader never mistakes a newer build's artifact for plaintext. ``True`` says nothing about
    whether the artifact is intact; only opening proves that.
    """
    return len(data) > len(SEALED_MAGIC) and data.startswith(SEALED_MAGIC)


def sealed_framing_version(data: bytes) -> int | None:
    """The framing version byte of a sealed artifact, or ``None`` when ``data`` is not sealed."""
    if not is_sealed(data):
        return None
    return data[len(SEALED_MAGIC)]


# --------------------------------------------------------------------------------------------
# Artifact kinds
# --------------------------------------------------------------------------------------------

Sealing: TypeAlias = Literal["whole", "bulk"]
"""How a kind is sealed.

``whole``: each artifact gets its own key, so nothing on disk links two of them. ``bulk``:
appended and read back line by line; a writer's lines may share one data key, because a
public-key operation per line is too slow to read back. Either way each artifact opens on its own.
"""


class ArtifactKind(StrEnum):
    """Every kind of artifact a sealer seals, each classified as ``whole`` or ``bulk`` (S11).

    The set is closed on purpose: a new kind is added here *and* in the classification below,
    and this module refuses to import if any member is unclassified, so a kind cannot be added
    unclassified. The value is the kind's stable name, which is bound into every sealed artifact.
    """

    SESSION_RECORD = "session-record"
    CHECKPOINT = "checkpoint"
    LOG_LINE = "log-line"

    @property
    def sealing(self) -> Sealing:
        """``"whole"`` or ``"bulk"``: whether artifacts of this kind get their own key."""
        return _SEALING[self]

    @classmethod
    def parse(cls, value: ArtifactKind | str) -> ArtifactKind:
        """The kind named ``value``.

        Raises:
            ConfigurationError: when ``value`` names no classified kind.
        """
        if isinstance(value, ArtifactKind):
            return value
        try:
            return cls(value)
        except ValueError:
            known = ", ".join(sorted(kind.value for kind in cls))
            raise ConfigurationError(
                f"{value!r} is not an artifact kind; use one of {known} (a new kind must be added "
                "to ArtifactKind with its sealing class)"
            ) from None


# S11: the port classifies every kind. Whole artifacts are each sealed to their own key; bulk
# kinds are appended and read back in bulk and may share a data key per writer.
_SEALING: Final[Mapping[ArtifactKind, Sealing]] = MappingProxyType(
    {
        ArtifactKind.SESSION_RECORD: "whole",
        ArtifactKind.CHECKPOINT: "whole",
        ArtifactKind.LOG_LINE: "bulk",
    }
)

_unclassified = [kind.name for kind in ArtifactKind if kind not in _SEALING]
if _unclassified:  # pragma: no cover - an edit that breaks this fails at import, in every test
    raise TypeError(f"artifact kinds without a sealing class: {', '.join(_unclassified)}")
del _unclassified


# --------------------------------------------------------------------------------------------
# Ports
# --------------------------------------------------------------------------------------------


def check_credential_key(service: str, account: str) -> None:
    """Refuse a credential key that no store can hold unambiguously.

    Raises:
        ConfigurationError: when ``service`` or ``account`` is not a non-empty string.
    """
    # Typed callers cannot get these wrong; untyped ones (configuration files) can.
    for label, value in (("service", service), ("account", account)):
        given: object = value
        if not isinstance(given, str) or not given:
            raise ConfigurationError(f"a credential {label} must be a non-empty string")


def check_artifact_owner(owner: str) -> None:
    """Refuse an owner id a sealed artifact cannot be bound to.

    Raises:
        ConfigurationError: when ``owner`` is not a non-empty string.
    """
    given: object = owner
    if not isinstance(given, str) or not given:
        raise ConfigurationError("an artifact owner must be a non-empty string (the owner's id)")


class CredentialStore(ABC):
    """The port for a host's secrets: a string by ``(service, account)`` (S11).

    Implementations: ``robota.host.FileCredentialStore`` (an owner-only file),
    ``robota.host.KeyringCredentialStore`` (the OS keychain), or the caller's own. The methods are
    synchronous and may block on I/O; call them through ``asyncio.to_thread`` from a running loop.

    Contract:
        * :meth:`get` answers ``None`` only when the store was read and holds no such secret. A
          store that cannot be read raises :class:`CredentialStoreError`.
        * Keys are checked with :func:`check_credential_key`; misuse raises
          :class:`~robota.ConfigurationError`.
        * No coordination between processes is promised: one refresh or one creator at a time is
          the caller's lock, because a keychain offers no atomic create.
        * Secrets never appear in a ``repr``, a message or a log line.
    """

    @abstractmethod
    def get(self, service: str, account: str) -> str | None:
        """The secret stored under ``(service, account)``, or ``None`` when there is none.

        Raises:
            CredentialStoreError: the store could not be read.
        """

    @abstractmethod
    def set(self, service: str, account: str, secret: str) -> None:
        """Store ``secret`` under ``(service, account)``, replacing any previous one.

        Raises:
            CredentialStoreError: the store could not be written.
        """

    @abstractmethod
    def delete(self, service: str, account: str) -> bool:
        """Remove the secret under ``(service, account)``; whether there was one.

        Raises:
            CredentialStoreError: the store could not be read or written.
        """


UnlockListener: TypeAlias = Callable[[], None]
"""Called when a sealer's keys go from locked to unlocked."""


@final
@dataclass(frozen=True, slots=True)
class SealingGrant:
    """A sealer's sealing handed to another process: carries no secret (S11).

    Attributes:
        scheme: The sealer's scheme name; a sealer built from a grant refuses another scheme.
        recipient: The public key artifacts are sealed to, in the scheme's encoding.
    """

    scheme: str
    recipient: bytes


class ArtifactSealer(ABC):
    """The port that seals and opens stored artifacts bound to their kind and owner (S11).

    A package that writes session records, log lines or checkpoints takes this port without
    depending on the keyring behind it.

    Contract:
        * :meth:`seal` needs only the public key, so a locked sealer still seals (and so can any
          program that reads the public key). The result satisfies :func:`is_sealed`.
        * :meth:`open` proves the artifact is bound to ``kind`` and ``owner`` and unchanged since
          sealing — not who sealed it. It raises :class:`LockedError` when the artifact looks
          intact but this sealer cannot open it now, :class:`CorruptError` when it does not open
          here. A framing that cannot be read is corrupt even for a locked sealer.
        * Every artifact opens on its own, whatever its :attr:`ArtifactKind.sealing`.
        * Authorship tags are made and checked only with unlocked keys (:attr:`can_author`); a
          sealer holding no secret offers none and says so. :meth:`on_unlock` tells a writer when
          its keys unlock, so it can tag what it wrote while they were locked.
        * :meth:`sealing_grant` hands sealing to another process only when the grant carries no
          secret and the key it seals to outlives this process; otherwise it answers ``None``.
    """

    scheme: ClassVar[str]
    """The name of the sealing scheme, recorded in a :class:`SealingGrant`."""

    @abstractmethod
    def seal(self, plaintext: bytes, *, kind: ArtifactKind | str, owner: str) -> bytes:
        """Seal ``plaintext`` as an artifact of ``kind`` belonging to ``owner``.

        Raises:
            ConfigurationError: ``kind`` is not an :class:`ArtifactKind` or ``owner`` is empty.
        """

    @abstractmethod
    def open(self, sealed: bytes, *, kind: ArtifactKind | str, owner: str) -> bytes:
        """The plaintext of ``sealed``, proven bound to ``kind`` and ``owner`` and unchanged.

        Raises:
            LockedError: the artifact is intact but cannot be opened now.
            CorruptError: the artifact does not open here.
            ConfigurationError: ``kind`` is not an :class:`ArtifactKind` or ``owner`` is empty.
        """

    @property
    @abstractmethod
    def unlocked(self) -> bool:
        """Whether this sealer can open artifacts now."""

    @property
    @abstractmethod
    def can_author(self) -> bool:
        """Whether this sealer can make and check authorship tags now."""

    @abstractmethod
    def author_tag(self, sealed: bytes, *, kind: ArtifactKind | str, owner: str) -> bytes:
        """A tag saying this key holder wrote ``sealed`` as ``kind`` for ``owner``.

        Raises:
            LockedError: :attr:`can_author` is false.
        """

    @abstractmethod
    def check_author_tag(
        self, sealed: bytes, tag: bytes, *, kind: ArtifactKind | str, owner: str
    ) -> bool:
        """Whether ``tag`` is this key holder's tag on ``sealed`` as ``kind`` for ``owner``.

        Raises:
            LockedError: :attr:`can_author` is false; an unchecked tag is never reported valid.
        """

    @abstractmethod
    def on_unlock(self, listener: UnlockListener) -> Callable[[], None]:
        """Call ``listener`` each time the keys go from locked to unlocked; returns a remover.

        A sealer already unlocked does not call it at registration: read :attr:`can_author`
        first. A sealer that can never unlock never calls it.
        """

    def sealing_grant(self) -> SealingGrant | None:
        """A grant another process can seal with, or ``None`` when this sealer offers none."""
        return None
