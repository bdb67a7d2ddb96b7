"""``robota.testing``: the offline test kit.

Public and meant for users' own test suites:

* :class:`ScriptedProvider` answers from a script (text, tool calls, errors, or
  :class:`ScriptedTurn` for usage, delays, models) and records every request.
* :class:`CassetteProvider` records any provider's exchanges to a JSON file and replays them,
  refusing a request that differs from the recording.
* :class:`InMemoryJournal` — an :class:`~robota.ExecutionJournal` in memory (S40), for tests
  and examples.
* :class:`InMemorySessionStore` — a :class:`~robota.sessions.SessionStore` in memory, and
  :func:`run_session_store_conformance`, which holds any session store to the port's contract
  (:data:`SESSION_STORE_CHECKS`). ``robota.testing`` sits above ``robota.sessions`` for these.
* :func:`loopback_allowance` lets named test hosts resolve to loopback under the egress policy.
* :func:`run_provider_conformance` runs the provider conformance kit against any
  :class:`~robota.Provider` — ours or a third party's: a :data:`ProviderFactory` builds a
  :class:`ConformanceTarget` per :data:`ConformanceScenario` (see
  :data:`CONFORMANCE_SCENARIOS`), and the :class:`ConformanceReport` lists each
  :class:`ScenarioResult` as passed, failed (with the reason) or not run.
* :func:`run_journal_conformance` holds any :class:`~robota.ExecutionJournal` to the journal
  port's contract (S40): a :data:`JournalFactory` returns handles on one store, and the
  :class:`JournalConformanceReport` lists each :class:`JournalCheckResult` (see
  :data:`JOURNAL_CONFORMANCE_CHECKS`).
"""

from robota.lowlevel import InMemoryJournal, loopback_allowance
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
from robota.testing._journal_conformance import (
    JOURNAL_CONFORMANCE_CHECKS,
    JournalCheck,
    JournalCheckResult,
    JournalConformanceReport,
    JournalFactory,
    run_journal_conformance,
)
from robota.testing._scripted import ScriptedProvider, ScriptedTurn, ScriptExhaustedError, TurnLike
from robota.testing._session_conformance import (
    SESSION_STORE_CHECKS,
    SessionStoreCheck,
    SessionStoreCheckResult,
    SessionStoreConformanceReport,
    SessionStoreFactory,
    run_session_store_conformance,
)
from robota.testing._session_store import InMemorySessionStore

__all__ = [
    "CONFORMANCE_SCENARIOS",
    "DEFAULT_OUTPUT_SCHEMA",
    "DEFAULT_TOOL",
    "JOURNAL_CONFORMANCE_CHECKS",
    "SESSION_STORE_CHECKS",
    "CassetteMismatchError",
    "CassetteMode",
    "CassetteProvider",
    "ConformanceReport",
    "ConformanceScenario",
    "ConformanceTarget",
    "InMemoryJournal",
    "InMemorySessionStore",
    "JournalCheck",
    "JournalCheckResult",
    "JournalConformanceReport",
    "JournalFactory",
    "ProviderFactory",
    "ScenarioResult",
    "ScenarioStatus",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "ScriptedTurn",
    "SessionStoreCheck",
    "SessionStoreCheckResult",
    "SessionStoreConformanceReport",
    "SessionStoreFactory",
    "TurnLike",
    "loopback_allowance",
    "run_journal_conformance",
    "run_provider_conformance",
    "run_session_store_conformance",
]
