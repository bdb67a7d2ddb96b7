"""Where the command finds API keys, and the credential store ``robota auth`` writes (S11).

A provider's key is looked up in this order, first hit wins:

1. the environment variable ``--api-key-env`` names, when given (and nothing else);
2. the vendor's usual variable (``OPENAI_API_KEY`` for ``openai``, ``ANTHROPIC_API_KEY`` for
   ``anthropic``, ``GEMINI_API_KEY`` for ``gemini``; none for ``openai-compatible``, so an
   OpenAI key is never sent to another server by accident);
3. the credential store, under service ``<provider>`` and account ``api-key``.

The store is chosen by ``$ROBOTA_CREDENTIAL_STORE``:

* ``keyring`` — the OS keychain (:class:`~robota.host.KeyringCredentialStore`, entries named
  ``robota:<provider>``); needs the ``keyring`` extra and a working backend;
* ``file`` — :class:`~robota.host.FileCredentialStore` at
  ``$XDG_CONFIG_HOME/robota/credentials.json`` (``~/.config/robota/…`` by default), created
  0600 in a 0700 directory;
* ``auto`` or unset — the keychain when ``keyring`` is installed and has a real backend, else the
  file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, final

from robota import CredentialStore, CredentialStoreError
from robota.cli._errors import CliError, one_line
from robota.core._install import install_command

__all__ = [
    "ACCOUNT",
    "KEY_VARIABLES",
    "STORE_VARIABLE",
    "KeyFound",
    "StoreChoice",
    "credential_file",
    "ensure_store_directory",
    "find_key",
    "open_store",
]

STORE_VARIABLE: Final = "ROBOTA_CREDENTIAL_STORE"
ACCOUNT: Final = "api-key"

KEY_VARIABLES: Final[Mapping[str, str | None]] = MappingProxyType(
    {
        "openai": "OPENAI_API_KEY",
        "anthropic": "ANTHROPIC_API_KEY",
        "gemini": "GEMINI_API_KEY",
        "openai-compatible": None,
    }
)
"""The providers ``robota auth`` stores keys for, with the environment variable read first."""

StoreKind: TypeAlias = Literal["keyring", "file"]


@final
@dataclass(frozen=True, slots=True)
class StoreChoice:
    """The credential store in use and how to name it to a person.

    Attributes:
        store: The store.
        kind: ``"keyring"`` or ``"file"``.
        where: The file's path, or the keyring backend's name.
    """

    store: CredentialStore
    kind: StoreKind
    where: str


@final
@dataclass(frozen=True, slots=True)
class KeyFound:
    """A key and where it came from (``"$OPENAI_API_KEY"``, ``"the file credential store"``).

    Its ``repr`` never shows the key.
    """

    key: str
    source: str

    def __repr__(self) -> str:
        return f"KeyFound(source={self.source!r})"


def credential_file() -> Path:
    """Where the file store keeps its credentials (see the module docstring)."""
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "robota" / "credentials.json"


def _usable_keyring() -> str | None:
    """The name of keyring's backend, or ``None`` when keyring is missing or has none."""
    try:
        import keyring  # noqa: PLC0415 - optional dependency, only for the store choice
        from keyring.backends import fail, null  # noqa: PLC0415
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # noqa: BLE001 - any backend-detection failure means "no usable keyring"
        return None
    if isinstance(backend, fail.Keyring | null.Keyring):
        return None
    return type(backend).__module__ + "." + type(backend).__name__


def open_store() -> StoreChoice:
    """The credential store ``$ROBOTA_CREDENTIAL_STORE`` selects.

    Raises:
        CliError: for an unknown value, or ``keyring`` asked for and unusable.
    """
    from robota.host import FileCredentialStore, KeyringCredentialStore  # noqa: PLC0415

    wanted = os.environ.get(STORE_VARIABLE, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "keyring", "file"):
        raise CliError(f"${STORE_VARIABLE} must be auto, keyring or file; got {wanted!r}")
    if wanted != "file":
        backend = _usable_keyring()
        if backend is not None:
            return StoreChoice(KeyringCredentialStore(service_prefix="robota"), "keyring", backend)
        if wanted == "keyring":
            raise CliError(
                f"${STORE_VARIABLE}=keyring, but no OS keychain is usable: install "
                f"the keyring extra ({install_command('keyring')}) and a keyring backend, or set "
                f"{STORE_VARIABLE}=file"
            )
    path = credential_file()
    return StoreChoice(FileCredentialStore(path), "file", str(path))


def ensure_store_directory(choice: StoreChoice) -> None:
    """Create the file store's directory (0700) before its first write; a no-op for keyring.

    Raises:
        CliError: the directory cannot be created.
    """
    if choice.kind != "file":
        return
    try:
        os.makedirs(os.path.dirname(choice.where), mode=0o700, exist_ok=True)
    except OSError as error:
        raise CliError(f"cannot create {os.path.dirname(choice.where)}: {error.strerror}") from None


def find_key(provider: str, *, variable: str | None = None) -> KeyFound | None:
    """The API key for ``provider`` by the lookup order in the module docstring, or ``None``.

    Args:
        provider: ``"openai"`` or ``"openai-compatible"``.
        variable: The environment variable ``--api-key-env`` named; when given, only it is read.

    Raises:
        CliError: the credential store could not be read (it never reports a key absent
            because it could not look).
    """
    if variable is not None:
        value = os.environ.get(variable)
        return KeyFound(value, f"${variable}") if value else None
    default = KEY_VARIABLES.get(provider)
    if default is not None:
        value = os.environ.get(default)
        if value:
            return KeyFound(value, f"${default}")
    choice = open_store()
    try:
        stored = choice.store.get(provider, ACCOUNT)
    except CredentialStoreError as error:
        raise CliError(one_line(f"cannot read the credential store: {error.message}")) from None
    if stored:
        return KeyFound(stored, f"the {choice.kind} credential store")
    return None
