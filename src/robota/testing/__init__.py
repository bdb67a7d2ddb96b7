"""``robota.testing``: the offline test kit.

Public and meant for users' own test suites:

* :class:`ScriptedProvider` answers from a script (text, tool calls, errors, or
  :class:`ScriptedTurn` for usage, delays, models) and records every request.
* :class:`CassetteProvider` records any provider's exchanges to a JSON file and replays them,
  refusing a request that differs from the recording.
* :func:`loopback_allowance` lets named test hosts resolve to loopback under the egress policy.
"""

from robota.testing._cassette import (
    CassetteMismatchError,
    CassetteMode,
    CassetteProvider,
)
from robota.testing._egress import loopback_allowance
from robota.testing._scripted import ScriptedProvider, ScriptedTurn, ScriptExhaustedError, TurnLike

__all__ = [
    "CassetteMismatchError",
    "CassetteMode",
    "CassetteProvider",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "ScriptedTurn",
    "TurnLike",
    "loopback_allowance",
]
