"""How the ``robota`` command fails: one line on stderr and an exit code, never a traceback.

* :data:`USAGE` (2) — the command cannot start as written: a bad flag or ``--tools`` spec, an
  unknown model prefix, a missing API key, any :class:`~robota.ConfigurationError` met while the
  agent is built.
* :data:`FAILURE` (1) — the run started and failed: the server could not be reached
  (:class:`~robota.NetworkError`), the provider refused, any other :class:`~robota.RobotaError`.
* :data:`NO_ANSWER` (3) — the run ended without an answer because a guard stopped it: the
  request would not fit the model's context window (S39), so nothing was sent. The reason is
  printed as one ``error: …`` line; never exit 0 with empty output.
* :data:`INTERRUPTED` (130) — ``robota run`` was cancelled with Ctrl-C (the shell's convention).
"""

from __future__ import annotations

from typing import Final

from robota import NetworkError, RobotaError

__all__ = ["FAILURE", "INTERRUPTED", "NO_ANSWER", "USAGE", "CliError", "describe", "one_line"]

USAGE: Final = 2
FAILURE: Final = 1
NO_ANSWER: Final = 3
INTERRUPTED: Final = 130


class CliError(Exception):
    """A failure the command reports as ``error: <message>`` with ``exit_code``.

    Args:
        message: What went wrong and, where there is one, how to fix it.
        exit_code: :data:`USAGE` (default) or :data:`FAILURE`.
    """

    def __init__(self, message: str, *, exit_code: int = USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space."""
    return " ".join(text.split())


def describe(error: RobotaError, *, endpoint: str | None = None) -> str:
    """The one-line message for a run failure.

    Args:
        error: What the run raised.
        endpoint: Where the provider was sent (its base URL), named when it cannot be reached.
    """
    if isinstance(error, NetworkError):
        where = endpoint or (f"provider {error.provider!r}" if error.provider else "the provider")
        return one_line(f"cannot reach {where}: {error.message}")
    return one_line(error.message)
