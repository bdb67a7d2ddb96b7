"""``robota auth``: store, remove and report API keys in the credential store.

``robota auth set openai`` reads the key without echoing it (``getpass``) when stdin is a
terminal, or as one line from stdin otherwise (``printf %s "$KEY" | robota auth set openai``).
The key is never printed, logged or placed on a command line. Which store is used — the OS
keychain or an owner-only file — is :func:`robota.host.default_credential_store`'s choice, the
same store the library reads (:func:`robota.host.find_api_key`).
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import TextIO

from robota import CredentialStoreError
from robota.cli._errors import CliError, one_line
from robota.cli._keys import (
    ACCOUNT,
    KEY_VARIABLES,
    ensure_store_directory,
    open_store,
    stored_key,
)

__all__ = ["auth_delete", "auth_set", "auth_status"]


def _read_secret(provider: str, stdin: TextIO) -> str:
    if stdin.isatty():
        try:
            secret = getpass.getpass(f"API key for {provider} (input hidden): ")
        except EOFError:
            secret = ""
    else:
        secret = stdin.readline()
    secret = secret.strip()
    if not secret:
        raise CliError(f"no API key given for {provider}; nothing was stored")
    return secret


def auth_set(provider: str, *, out: TextIO, stdin: TextIO | None = None) -> int:
    """Read a key and store it for ``provider``; returns the exit code.

    Raises:
        CliError: no key was given, or the store cannot be written.
    """
    secret = _read_secret(provider, sys.stdin if stdin is None else stdin)
    choice = open_store()
    ensure_store_directory(choice)
    try:
        choice.store.set(provider, ACCOUNT, secret)
    except CredentialStoreError as error:
        raise CliError(one_line(f"cannot store the key: {error.message}")) from None
    out.write(f"stored the API key for {provider} in the {choice.kind} store ({choice.where})\n")
    return 0


def auth_delete(provider: str, *, out: TextIO) -> int:
    """Remove ``provider``'s stored key; returns the exit code (1 when there was none).

    Raises:
        CliError: the store cannot be read or written.
    """
    choice = open_store()
    try:
        removed = choice.store.delete(provider, ACCOUNT)
    except CredentialStoreError as error:
        raise CliError(one_line(f"cannot remove the key: {error.message}")) from None
    if removed:
        out.write(f"removed the API key for {provider} from the {choice.kind} store\n")
        return 0
    out.write(f"no API key for {provider} is stored in the {choice.kind} store\n")
    return 1


def auth_status(*, out: TextIO) -> int:
    """Report the store in use and, per provider, where its key would come from; never the key.

    Raises:
        CliError: the store cannot be read.
    """
    choice = open_store()
    out.write(f"credential store: {choice.kind} ({choice.where})\n")
    for provider, variables in KEY_VARIABLES.items():
        stored = stored_key(choice, provider)
        # The lookup order (robota.host.find_api_key): the first non-empty variable, then the
        # stored key.
        in_env = next((name for name in variables if os.environ.get(name)), None)
        if in_env is not None:
            used = f"${in_env}"
        elif stored:
            used = "the stored key"
        else:
            used = "none"
        env_part = (
            ", ".join(
                f"${name} {'set' if os.environ.get(name) else 'not set'}" for name in variables
            )
            or "no env var"
        )
        out.write(
            f"{provider}: {env_part}; stored key: {'yes' if stored else 'no'}; uses: {used}\n"
        )
    return 0
