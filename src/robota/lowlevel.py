"""The low-level API for integrations: what a host, engine or adapter needs below :mod:`robota`.

Robota's integrations — :mod:`robota.temporal`, :mod:`robota.testing`, the provider adapters in
:mod:`robota.providers` — are built from these names and from the public :mod:`robota` and
:mod:`robota.host` surfaces only; no module outside :mod:`robota.core` (or :mod:`robota.host`)
imports one of its private modules (issue 32, enforced by import-linter). Write your own engine
or adapter the same way. In the spirit of ``trio.lowlevel``: everything here is public, typed and
documented, but it sits closer to the runtime's internals than :mod:`robota`, so read the
stability note below before you depend on it.

Importing this module imports :mod:`robota.core` and :mod:`robota.host` only, never an
integration. See ``docs/lowlevel.md`` for a worked example.

Dispatch routing (an agent whose model calls and tool bodies run elsewhere — robota.temporal):

* :func:`route_dispatch` — replace an agent's providers, tools, guardrails and gate by routed
  stand-ins.
* :func:`agent_parts` / :class:`AgentParts` — a read-only view of what an agent was built from
  (tools by name, guardrails, every provider, journal, tool sources, hooks, gate, texts).
* :data:`Guardrail` — the union of the three guardrail kinds a routing callback receives.

Deterministic ids and clocks (workflow code that is replayed):

* :func:`deterministic` — a context inside which :func:`new_id` and :func:`now` read a
  replayable source instead of the operating system.
* :func:`new_id` — a fresh ``<prefix>_<24 hex digits>`` identifier.
* :func:`now` — wall-clock seconds (the replayable clock inside :func:`deterministic`).

Tool results (S39 budgeting, S35 texts):

* :func:`omitted_result_notice` — the notice that replaces a result the context budget has no
  room for (the budget itself is :data:`robota.TOOL_RESULT_BUDGET` of the model's window).
* :func:`tool_failure_text` — the error text the model reads when a tool body raised.

Abort (S23):

* :class:`AbortGuard` — cancels the current task at guarded awaits when a signal aborts (what an
  adapter wraps around an SDK stream). :func:`robota.is_abort` and
  :func:`robota.abort_error_from_reason` are the public abort helpers beside it.

Journals (S40):

* :class:`InMemoryJournal` — the in-process :class:`~robota.ExecutionJournal` (also exported by
  :mod:`robota.testing`). The record codec is public in :mod:`robota`:
  :func:`robota.encode_journal_record` / :func:`robota.decode_journal_record`.

Provider adapters (S06 egress):

* :class:`MediaFetcher`, :class:`FetchRule`, :data:`NO_FETCH` — fetch the URL media parts a
  vendor cannot fetch itself, through the egress client. The rest of the adapter kit lives in
  ``robota.providers._kit`` beside the adapters.
* :func:`loopback_allowance` — test-only: let named hosts resolve to loopback under the egress
  policy (also exported by :mod:`robota.testing`).

Stability: these names keep their meaning within a minor release; a minor release may change a
signature here when the runtime below it changes, and the changelog names every such change. The
names in :mod:`robota` and :mod:`robota.host` change only with a deprecation period.
"""

from __future__ import annotations

from robota.core.lowlevel import (
    AbortGuard,
    AgentParts,
    Guardrail,
    InMemoryJournal,
    agent_parts,
    deterministic,
    new_id,
    now,
    omitted_result_notice,
    route_dispatch,
    tool_failure_text,
)
from robota.host.lowlevel import NO_FETCH, FetchRule, MediaFetcher, loopback_allowance

__all__ = [
    "NO_FETCH",
    "AbortGuard",
    "AgentParts",
    "FetchRule",
    "Guardrail",
    "InMemoryJournal",
    "MediaFetcher",
    "agent_parts",
    "deterministic",
    "loopback_allowance",
    "new_id",
    "now",
    "omitted_result_notice",
    "route_dispatch",
    "tool_failure_text",
]
