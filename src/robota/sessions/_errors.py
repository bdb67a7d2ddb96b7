"""The errors of the session layer.

::

    RobotaError
    ├── SessionBusyError      another writer holds the session (raised at once, never after a wait)
    ├── SessionNotFoundError  no session with that id in the store (also a KeyError)
    └── SessionStateError     the session cannot do what was asked (a suspended turn, a closed
                              session, a bad fork or rewind point)

Bad arguments (a wrong type, an empty id) raise :class:`~robota.ConfigurationError`; a store that
fails raises :class:`~robota.StorageError`. Every message names the fix.
"""

from __future__ import annotations

from typing import Any

from robota.core import RobotaError

__all__ = ["SessionBusyError", "SessionNotFoundError", "SessionStateError"]


class SessionBusyError(RobotaError):
    """Another writer holds the session: a turn in another process, task or machine (S10).

    Raised at once, never after a wait (the one-writer choice of ``robota.sessions``): two turns
    never interleave in one history. Recoverable: once the holder's turn ends (or its process
    dies, which releases the lease), a later attempt succeeds.

    Attributes:
        session_id: The session.
    """

    default_code = "session_busy"
    default_category = "system"
    default_recoverable = True

    def __init__(self, message: str, *, session_id: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.session_id = session_id


class SessionNotFoundError(RobotaError, KeyError):
    """The store holds no session with this id.

    Attributes:
        session_id: The id that was asked for.
    """

    default_code = "session_not_found"
    default_category = "user"

    def __init__(self, message: str, *, session_id: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.session_id = session_id

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class SessionStateError(RobotaError):
    """The session is not in a state that allows the request (closed, suspended turn …)."""

    default_code = "session_state"
    default_category = "user"
