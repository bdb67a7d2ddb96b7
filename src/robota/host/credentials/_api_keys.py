"""API keys: the one lookup order the library and the ``robota`` command share (S11).

A provider's API key is the first of, in this order:

1. **the key passed explicitly** — ``api_key=`` to a provider or to ``robota.Agent`` (on the
   command line, ``--api-key-env VAR`` names the variable to take it from);
2. **the provider's environment variable** — ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
   ``GEMINI_API_KEY`` (then ``GOOGLE_API_KEY``); none for ``openai-compatible``, so an OpenAI
   key is never sent to another server by accident. A variable set to the empty string counts as
   unset;
3. **the stored credential** — what ``robota auth set PROVIDER`` wrote: service ``PROVIDER``,
   account ``api-key``, in the store :func:`default_credential_store` selects.

The store is read only when the first two give nothing, so a key in the environment never
touches the keychain. The store is chosen by ``$ROBOTA_CREDENTIAL_STORE``:

* ``keyring`` — the OS keychain (:class:`~robota.host.KeyringCredentialStore`, entries named
  ``robota:<provider>``); needs the ``keyring`` package and a working backend;
* ``file`` — :class:`~robota.host.FileCredentialStore` at
  ``$XDG_CONFIG_HOME/robota/credentials.json`` (``~/.config/robota/…`` by default), created
  0600 in a 0700 directory;
* ``auto`` or unset — the keychain when ``keyring`` is installed and has a real backend, else the
  file.

A store that cannot be read raises :class:`~robota.CredentialStoreError`; it is never taken to
hold no key (S11). No key anywhere raises a :class:`~robota.ConfigurationError` with code
``"missing_api_key"`` whose message names the ways the caller has not tried yet.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias, final

from robota.core import (
    ConfigurationError,
    CredentialStore,
    CredentialStoreError,
    install_command,
)
from robota.host.credentials._credential_file import FileCredentialStore, KeyringCredentialStore

__all__ = [
    "API_KEY_ACCOUNT",
    "CREDENTIAL_STORE_VARIABLE",
    "MISSING_API_KEY",
    "ApiKey",
    "CredentialStoreChoice",
    "api_key_hint",
    "credential_file_path",
    "default_credential_store",
    "find_api_key",
    "require_api_key",
]

CREDENTIAL_STORE_VARIABLE: Final = "ROBOTA_CREDENTIAL_STORE"
"""The environment variable that selects the credential store: ``auto``, ``keyring`` or ``file``."""

API_KEY_ACCOUNT: Final = "api-key"
"""The account name API keys are stored under; the service is the provider's prefix."""

MISSING_API_KEY: Final = "missing_api_key"
"""The :attr:`~robota.RobotaError.code` of the error :func:`require_api_key` raises."""

StoreKind: TypeAlias = Literal["keyring", "file"]


@final
@dataclass(frozen=True, slots=True)
class CredentialStoreChoice:
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
class ApiKey:
    """An API key and where it came from; its ``repr`` never shows the key.

    Attributes:
        key: The key.
        source: ``"api_key="``, ``"$OPENAI_API_KEY"``, ``"the file credential store"`` …
    """

    key: str
    source: str

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source!r})"


def credential_file_path() -> Path:
    """Where the file store keeps credentials: ``$XDG_CONFIG_HOME/robota/credentials.json``."""
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


def default_credential_store() -> CredentialStoreChoice:
    """The credential store ``$ROBOTA_CREDENTIAL_STORE`` selects (see the module docstring).

    ``robota auth`` writes to this store and :func:`find_api_key` reads from it, so a key stored
    on the command line is the key the library finds.

    Raises:
        ConfigurationError: for an unknown value, or ``keyring`` asked for and unusable.
    """
    wanted = os.environ.get(CREDENTIAL_STORE_VARIABLE, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "keyring", "file"):
        raise ConfigurationError(
            f"${CREDENTIAL_STORE_VARIABLE} must be auto, keyring or file; got {wanted!r}"
        )
    if wanted != "file":
        backend = _usable_keyring()
        if backend is not None:
            return CredentialStoreChoice(
                KeyringCredentialStore(service_prefix="robota"), "keyring", backend
            )
        if wanted == "keyring":
            raise ConfigurationError(
                f"${CREDENTIAL_STORE_VARIABLE}=keyring, but no OS keychain is usable: install "
                f"the keyring extra ({install_command('keyring')}) and a keyring backend, or set "
                f"{CREDENTIAL_STORE_VARIABLE}=file"
            )
    path = credential_file_path()
    return CredentialStoreChoice(FileCredentialStore(path), "file", str(path))


def find_api_key(
    service: str,
    *,
    api_key: str | None = None,
    variables: Sequence[str] = (),
    store: CredentialStore | None = None,
) -> ApiKey | None:
    """The API key for ``service``, or ``None``: the one lookup order of the library and command.

    The first of: ``api_key`` when given; the first of ``variables`` set to a non-empty value;
    the key stored under ``(service, "api-key")`` — what ``robota auth set SERVICE`` wrote — in
    ``store`` or the store ``$ROBOTA_CREDENTIAL_STORE`` selects. Every provider adapter and the
    ``robota`` command look keys up here, so they cannot disagree.

    Args:
        service: The provider's prefix (``"openai"``); also the credential store's service name.
        api_key: A key passed explicitly; when not ``None`` it is the answer and nothing else is
            read.
        variables: The environment variables to read, in order; empty ones are skipped.
        store: The store to read last; by default :func:`default_credential_store`'s (opened
            only when the explicit key and the variables give nothing).

    Raises:
        ConfigurationError: ``api_key`` is not a string, or is the empty string (a key that was
            meant but is missing, e.g. ``os.environ.get("X", "")``), or the store selection is
            invalid.
        CredentialStoreError: the store could not be read (never reported as "no key").
    """
    if api_key is not None:
        if not isinstance(api_key, str):  # never echoed: it may be a key in the wrong type
            raise ConfigurationError(
                f'api_key= must be the key as a string (api_key="sk-..."), got '
                f"{type(api_key).__name__}",
                context={"service": service},
            )
        if not api_key:
            raise ConfigurationError(
                f"api_key= is empty for {service}: pass the key itself, or leave api_key= out "
                f"and {_ways(service, variables, explicit=None)}",
                code=MISSING_API_KEY,
                context={"service": service, "variables": tuple(variables)},
            )
        return ApiKey(api_key, "api_key=")
    for variable in variables:
        value = os.environ.get(variable)
        if value:
            return ApiKey(value, f"${variable}")
    kind = "given"
    if store is None:
        choice = default_credential_store()
        store, kind = choice.store, choice.kind
    try:
        stored = store.get(service, API_KEY_ACCOUNT)
    except CredentialStoreError as error:
        raise CredentialStoreError(
            f"cannot read the credential store: {error.message}",
            context={"service": service},
            cause=error,
        ) from error
    if stored:
        return ApiKey(stored, f"the {kind} credential store")
    return None


def api_key_hint(
    service: str,
    *,
    variables: Sequence[str] = (),
    explicit: str | None,
    explicit_last: bool = False,
) -> str:
    """The ways to give ``service`` a key that the caller has not tried, joined for a message.

    A variable that is set but empty is reported as such rather than suggested again.

    Args:
        service: The provider's prefix, as ``robota auth set`` takes it.
        variables: The provider's environment variables, in lookup order.
        explicit: How to pass a key explicitly in the caller's interface (``"pass api_key="``,
            ``"pass --api-key-env VAR"``), or ``None`` when that was already tried.
        explicit_last: Name the explicit way last rather than first (where it is the rarer
            choice, as on the command line).
    """
    return _ways(service, variables, explicit=explicit, explicit_last=explicit_last)


def _ways(
    service: str,
    variables: Sequence[str],
    *,
    explicit: str | None,
    explicit_last: bool = False,
    also: str | None = None,
) -> str:
    empty = [name for name in variables if name in os.environ and not os.environ[name]]
    ways: list[str] = []
    if variables and not empty:
        first, *others = variables
        alternatives = f" (or {', '.join(others)})" if others else ""
        ways.append(f"set {first}{alternatives}")
    ways.append(f"run `robota auth set {service}`")
    if explicit is not None:
        ways.insert(len(ways) if explicit_last else 0, explicit)
    if also is not None:
        ways.append(also)
    said = " or ".join(ways) if len(ways) < 3 else f"{', '.join(ways[:-1])}, or {ways[-1]}"
    if empty:
        names = " and ".join(f"${name}" for name in empty)
        verb = "is" if len(empty) == 1 else "are"
        return f"{names} {verb} set but empty; {said}"
    return said


def require_api_key(
    service: str,
    *,
    who: str,
    api_key: str | None = None,
    variables: Sequence[str] = (),
    store: CredentialStore | None = None,
    also: str | None = None,
) -> ApiKey:
    """:func:`find_api_key`, or a :class:`~robota.ConfigurationError` when there is no key.

    Args:
        service: The provider's prefix (``"openai"``).
        who: What needs the key, for the message (``"OpenAIProvider"``).
        api_key: A key passed explicitly.
        variables: The environment variables to read, in order.
        store: The store to read last (default: :func:`default_credential_store`'s).
        also: One more way, appended to the message (``"use vertexai=True …"``).

    Raises:
        ConfigurationError: no key anywhere (code ``"missing_api_key"``; ``context`` holds the
            ``service`` and its ``variables``, so a front end can word its own hint with
            :func:`api_key_hint`), or ``api_key`` is empty.
        CredentialStoreError: the store could not be read.
    """
    found = find_api_key(service, api_key=api_key, variables=variables, store=store)
    if found is not None:
        return found
    hint = _ways(service, variables, explicit="pass api_key=", also=also)
    raise ConfigurationError(
        f"{who} needs an API key for {service}: {hint}",
        code=MISSING_API_KEY,
        context={"service": service, "variables": tuple(variables)},
    )
