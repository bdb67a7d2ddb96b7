"""``robota.testing``: the offline test kit.

Public and meant for users' own test suites:

* :class:`ScriptedProvider` answers from a script (text, tool calls, errors, or
  :class:`ScriptedTurn` for usage, delays, models) and records every request.
* :class:`CassetteProvider` records any provider's exchanges to a JSON file and replays them,
  refusing a request that differs from the recording.
* :func:`loopback_allowance` lets named test hosts resolve to loopback under the egress policy.
* :func:`run_provider_conformance` runs the provider conformance kit against any
  :class:`~robota.Provider` — ours or a third party's: a :data:`ProviderFactory` builds a
  :class:`ConformanceTarget` per :data:`ConformanceScenario` (see
  :data:`CONFORMANCE_SCENARIOS`), and the :class:`ConformanceReport` lists each
  :class:`ScenarioResult` as passed, failed (with the reason) or not run.
"""

from robota.testing._cassette import (
    CassetteMismatchError,
    CassetteMode,
    CassetteProvider,
)
from robota.testing._conformance import (
    ConformanceReport,
    ProviderFactory,
    ScenarioResult,
    ScenarioStatus,
    run_provider_conformance,
)
from robota.testing._conformance_target import (
    CONFORMANCE_SCENARIOS,
    DEFAULT_OUTPUT_SCHEMA,
    DEFAULT_TOOL,
    ConformanceScenario,
    ConformanceTarget,
)
from robota.testing._egress import loopback_allowance
from robota.testing._scripted import ScriptedProvider, ScriptedTurn, ScriptExhaustedError, TurnLike

__all__ = [
    "CONFORMANCE_SCENARIOS",
    "DEFAULT_OUTPUT_SCHEMA",
    "DEFAULT_TOOL",
    "CassetteMismatchError",
    "CassetteMode",
    "CassetteProvider",
    "ConformanceReport",
    "ConformanceScenario",
    "ConformanceTarget",
    "ProviderFactory",
    "ScenarioResult",
    "ScenarioStatus",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "ScriptedTurn",
    "TurnLike",
    "loopback_allowance",
    "run_provider_conformance",
]
