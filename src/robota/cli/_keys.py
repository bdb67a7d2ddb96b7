"""The credential store ``robota auth`` writes, and the command's words for a missing key (S11).

Which store is used and the order a key is looked up in are not decided here: both belong to
:mod:`robota.host` (:func:`~robota.host.default_credential_store`,
:func:`~robota.host.find_api_key`), which the providers use too, so the key ``robota auth set
openai`` stores is the key ``robota.Agent("openai:…")`` finds. That order is: the key passed
explicitly (here, from the variable ``--api-key-env`` names), then the provider's environment
variable, then the stored credential; ``$ROBOTA_CREDENTIAL_STORE`` (``auto``, ``keyring``,
``file``) picks the store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from robota import ConfigurationError, CredentialStoreError
from robota.cli._errors import CliError, one_line

if TYPE_CHECKING:
    from robota.host import CredentialStoreChoice

__all__ = [
    "ACCOUNT",
    "KEY_VARIABLES",
    "ensure_store_directory",
    "explicit_key",
    "missing_key",
    "open_store",
    "stored_key",
]

ACCOUNT: Final = "api-key"
"""The account API keys are stored under (:data:`robota.host.API_KEY_ACCOUNT`)."""

KEY_VARIABLES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "openai": ("OPENAI_API_KEY",),
        "anthropic": ("ANTHROPIC_API_KEY",),
        "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "openai-compatible": (),
    }
)
"""The providers ``robota auth`` stores keys for, with the environment variables their adapters
read before the store (a test pins this table to the adapters)."""

_EXPLICIT: Final = "pass --api-key-env VAR"


def open_store() -> CredentialStoreChoice:
    """The credential store ``$ROBOTA_CREDENTIAL_STORE`` selects.

    Raises:
        CliError: for an unknown value, or ``keyring`` asked for and unusable.
    """
    from robota.host import default_credential_store  # noqa: PLC0415 - only when used

    try:
        return default_credential_store()
    except ConfigurationError as error:
        raise CliError(one_line(error.message)) from None


def ensure_store_directory(choice: CredentialStoreChoice) -> None:
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


def stored_key(choice: CredentialStoreChoice, provider: str) -> bool:
    """Whether ``choice``'s store holds a key for ``provider``.

    Raises:
        CliError: the store cannot be read.
    """
    try:
        return choice.store.get(provider, ACCOUNT) is not None
    except CredentialStoreError as error:
        raise CliError(one_line(f"cannot read the credential store: {error.message}")) from None


def explicit_key(provider: str, variable: str | None) -> str | None:
    """The key in the variable ``--api-key-env`` named (``None`` when the flag is absent).

    Raises:
        CliError: the flag names a variable that is not set (nothing else is then read).
    """
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        raise CliError(
            f"no API key for {provider}: ${variable} (named by --api-key-env) is not set"
        )
    return value


def missing_key(error: ConfigurationError) -> CliError | None:
    """The command's one line for an adapter's missing-key error, or ``None`` for another error.

    The adapter's own message says ``pass api_key=``; on the command line the explicit way is
    ``--api-key-env``, and only the ways not tried yet are named.
    """
    from robota.host import MISSING_API_KEY, api_key_hint  # noqa: PLC0415 - only when used

    if error.code != MISSING_API_KEY:
        return None
    service = str(error.context.get("service", ""))
    raw = error.context.get("variables", ())
    variables = tuple(str(name) for name in raw) if isinstance(raw, tuple) else ()
    hint = api_key_hint(service, variables=variables, explicit=_EXPLICIT, explicit_last=True)
    return CliError(f"no API key for {service}: {hint}")
