"""The one Unicode check for text core accepts (issue 25).

:func:`check_text` lives below both :mod:`robota.core._agent_checks` (the entry-point argument
checks, which re-export it) and :mod:`robota.core._texts` (``ModelTexts``), so the texts module
does not import the argument checks, whose deferred imports reach the whole runtime (issue 32:
no import cycle).
"""

from __future__ import annotations

from robota.core._errors import ConfigurationError

__all__ = ["check_text"]


def check_text(value: str, where: str) -> None:
    """Refuse ``value`` when it is not valid Unicode (lone surrogates cannot be encoded).

    Raises:
        ConfigurationError: naming where the bad character is and how to decode such input.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = value[error.start]
        raise ConfigurationError(
            f"{where} is not valid Unicode text: it holds the lone surrogate {bad!r} at index "
            f"{error.start} (bytes decoded with errors='surrogateescape', or with the wrong "
            "encoding); decode the input with its real encoding, or with errors='replace'"
        ) from None
