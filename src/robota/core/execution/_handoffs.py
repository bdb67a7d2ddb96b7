"""A run that changes hands (issue 29): what a handoff swaps, keeps and counts.

A model of an agent built with ``handoffs=`` calls a generated ``transfer_to_<name>`` tool
(:mod:`robota.core._handoff`); its body records a :class:`Transfer` on the run's
:class:`RunHandoffs`, and once the batch settled (every call answered, S34) the loop calls
:meth:`RunHandoffs.take`. From then on the same execution runs with the receiver's
configuration:

* swapped — the system head (S35: the receiver's prompt replaces it, for the rest of the run),
  tools and their gate, provider, model, retry policy and fallback chain, effort, model settings,
  texts, response cache; the owner path of events (S33: ``…/execution/<id>/agent/<receiver>``);
* kept, for the whole run across agents — the conversation (append-only, S34: an
  ``input_filter`` changes only what the receiver's model is sent), the abort signal (S23), the
  usage limits and round budget, the structured output requested (S18) and whether a turn may
  complete on tool results alone (S39), the lifecycle hooks and
  guardrails, the plugins, the trace (S27), the identical-input guard (S39) and the entry agent's
  gate, which stays the ceiling of every receiver's calls (S21).

When the run ends the entry agent's own prompt is its conversation's head again (S35: the agent's
configuration is the prompt's single owner). Usage is kept per agent of the chain
(``RunResult.usage_by_agent``): each segment of the run is charged to the agent that ran it.

A journaled run (S40) records the receivers' model calls and effects in the run's journal like
its own; nothing about a handoff needs a record of its own, since the history proves it (the
transfer's answer). A continuation starts on the entry agent and the loop's ``replay`` takes again
the handoffs its history proves before it picks the execution up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, final

from robota.core._emit import EventEmitter
from robota.core._errors import ConfigurationError
from robota.core._events import EventNames, EventService, OwnerRef
from robota.core._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from robota.core._plugins import RunInfo
from robota.core._pricing import estimate_cost
from robota.core._usage import Usage
from robota.core.execution._attempts import NO_USAGE, add_usage
from robota.core.execution._result import AgentUsage
from robota.core.execution._retry import ModelCalls, ModelCandidate
from robota.core.execution._settings import ExecutionSettings
from robota.core.execution._structured import choose_output_transport
from robota.core.execution._subagents import SubagentLedger
from robota.core.providers._settings import NO_SETTINGS

if TYPE_CHECKING:
    from robota.core._history import ConversationStore
    from robota.core.execution._journal import ModelCallSettled
    from robota.core.execution._state import ExecutionState
    from robota.core.tools._executor import ToolExecutionService, ToolGate

__all__ = ["InputFilter", "RunHandoffs", "Transfer"]

InputFilter = Callable[[tuple[Message, ...]], Sequence[Message]]
"""What a receiver's model is sent of the conversation before the handoff (no system head)."""


@final
@dataclass(frozen=True, slots=True)
class Transfer:
    """One accepted transfer, waiting for its batch to settle (internal).

    Attributes:
        name: The receiver's name.
        agent_id: The receiver's id (its level of the owner path, S33).
        settings: The receiver's own run settings (its model, provider, retry …).
        tools: The receiver's tool service.
        ceiling: The gate its calls pass for the rest of the run (S21), or ``None``: its own.
        system_prompt: The receiver's prompt, the conversation's head from now on (S35).
        service: The receiver's own event service, told of the run from now on.
        input_filter: Rewrites what the receiver's model is sent of the history so far.
        prepare: Readies the receiver before its first round (modules, tool sources: S03, S41).
    """

    name: str
    agent_id: str
    settings: ExecutionSettings
    tools: ToolExecutionService
    ceiling: ToolGate | None
    system_prompt: str | None
    service: EventService | None
    input_filter: InputFilter | None
    prepare: Callable[[], Awaitable[None]] | None


@final
class RunHandoffs:
    """The handoffs of one run: built by its first transfer (a run without any has none)."""

    __slots__ = (
        "_added_at",
        "_charges_at",
        "_view",
        "count",
        "entry_ceiling",
        "entry_emitter",
        "entry_prompt",
        "entry_tools",
        "requested",
        "segments",
    )

    def __init__(self, run: ExecutionState) -> None:
        self.count = 0  # transfers taken so far; every one counts, a cycle's too
        self.requested: Transfer | None = None  # the batch's accepted transfer, not yet taken
        # The entry agent's: its gate is every receiver's ceiling (S21); its prompt its head.
        self.entry_tools = run._tools
        self.entry_ceiling = run.ceiling
        self.entry_emitter = run.emitter
        self.entry_prompt = run._store.system_prompt
        # Finished segments: (agent name, its sub-agents' ledger); the current one is the run's.
        self.segments: list[tuple[str, SubagentLedger | None]] = []
        self._added_at: list[int] = []  # where each later segment starts in the run's messages
        self._charges_at: list[int] = []  # … and in its discarded attempts' charges
        # The filtered history a receiver's model is sent instead of what precedes the handoff:
        # (the messages it replaces, by identity; what is sent in their place; the replaced
        # messages themselves, held so no identity is reused while a trimmed history drops them).
        self._view: tuple[frozenset[int], tuple[Message, ...], tuple[Message, ...]] | None = None

    @property
    def entry_gate(self) -> ToolGate | None:
        """The gate every receiver's calls pass as a ceiling (S21): the entry run's own."""
        return self.entry_ceiling if self.entry_ceiling is not None else self.entry_tools.gate

    async def take(self, run: ExecutionState, at: int | None = None) -> bool:
        """Hand the run to the transfer its last batch accepted; ``False`` when there was none.

        ``at``: where the receiver's part of the run's messages begins, when a continuation
        takes again a handoff its history proves (S40; it is not announced again); else the
        messages so far.
        """
        transfer, self.requested = self.requested, None
        if transfer is None:
            return False
        self.count += 1
        old = run.settings
        self.segments.append((old.agent_name, run.subagents))
        run.subagents = None
        start = self._added_at[-1] if self._added_at else 0
        end = len(run._added) if at is None else at
        self._added_at.append(end)
        self._charges_at.append(len(run._charges))
        answered = dict(run._answered)  # each reply stays priced where it ran
        for message in run._added[start:end]:
            if isinstance(message, AssistantMessage) and message.id not in answered:
                answered[message.id] = old.provider.name
        run._answered = answered
        # What bounds and observes the run is the run's; what talks to the model the receiver's.
        new = replace(
            transfer.settings,
            max_rounds=old.max_rounds,
            tool_choice=old.tool_choice,
            max_same_tool_inputs=old.max_same_tool_inputs,
            allow_tool_only_completion=old.allow_tool_only_completion,  # S39, checked with S18
            context_floor=old.context_floor,
            structured=old.structured,
            trace=old.trace,
            hooks=old.hooks,
            limits=old.limits,
            guardrails=old.guardrails,
            max_handoffs=old.max_handoffs,
            runtime_state=None,
        )
        if at is None and run.emitter.enabled:
            run.emitter.emit(
                EventNames.HANDOFF,
                {"from_agent": old.agent_name, "to_agent": new.agent_name, "count": self.count},
            )
        run.settings = new
        run._info = RunInfo(run.run_id, new.agent_name, new.provider.name, new.model)
        run._tools = transfer.tools
        run.ceiling = transfer.ceiling
        run.emitter = self._emitter(transfer)
        run._calls = (
            ModelCalls(
                new.retry,
                (ModelCandidate(new.provider, new.model, new.context_window), *new.fallback),
            )
            if new.retry is not None or new.fallback
            else None
        )
        run._settings_set = new.model_settings is not NO_SETTINGS
        if new.structured is not None:  # S18: the run's output, in the receiver's transport
            run._transport = choose_output_transport(new.provider, new.model)
        run._unavailable_streak = 0
        store = run._store
        if transfer.input_filter is not None:
            # A continuation's history holds what followed the handoff too: left unfiltered.
            self._filter(store, transfer.input_filter, len(run._added) - end)
        store.set_system_prompt(transfer.system_prompt)  # S35: the receiver's prompt is the head
        if transfer.prepare is not None:
            await transfer.prepare()
        run._window = None
        await run._resolve_window()
        return True

    def before(self, run: ExecutionState, settled: ModelCallSettled) -> bool:
        """Whether a journaled model call was made by an agent the run has handed off from."""
        if not self._added_at:
            return False
        reply = settled.message
        return not any(m is reply for m in run._added[self._added_at[-1] :])

    def ledger_of(
        self, run: ExecutionState, reply: AssistantMessage | None
    ) -> SubagentLedger | None:
        """The sub-agent roll-up of the agent whose part of the run holds ``reply`` (S40).

        ``None``: the active agent's (``run.subagents``). A continuation lists each sub-agent
        call it charges again under the agent that made it.
        """
        if reply is None:
            return None
        bounds = [*self._added_at, len(run._added)]
        for index, message in enumerate(run._added):
            if message is reply:
                segment = next(i for i, end in enumerate(bounds) if index < end)
                if segment == len(self.segments):
                    return None
                name, ledger = self.segments[segment]
                if ledger is None:
                    ledger = SubagentLedger()
                    self.segments[segment] = (name, ledger)
                return ledger
        return None

    def note(self, run: ExecutionState, message: Message) -> None:
        """Let a receiver's tool catalog see what the run adds (S19: ``tool_search`` loads).

        The entry agent's own catalog observes its conversation itself; a receiver's would
        otherwise never learn what its ``tool_search`` found, since the run is not in its history.
        """
        tools = run._tools
        if tools is not self.entry_tools and tools.catalog is not None:
            tools.catalog.note(message)

    def _emitter(self, transfer: Transfer) -> EventEmitter:
        # S33: the run's services (the entry agent's, the caller's) hear the receiver's part too,
        # under the owner path nested in the run's; the receiver's own service joins them.
        base = self.entry_emitter
        if transfer.tools is self.entry_tools:
            return base  # back to the agent the run started on: its own path again
        services = list(base.services)
        if transfer.service is not None and transfer.service not in services:
            services.append(transfer.service)
        return EventEmitter(services, (*base.owner_path, OwnerRef("agent", transfer.agent_id)))

    def _filter(self, store: ConversationStore, input_filter: InputFilter, after: int) -> None:
        """Apply ``input_filter`` to what precedes this handoff, for the model only (S34).

        ``after``: how many of the history's last messages follow the handoff (a continuation's).
        """
        # What the model is sent (an interrupted reply is sent as an annotated copy), so the
        # filter reads that and :meth:`view` recognises, by identity, every message it replaced.
        sent = [m for m in store.provider_snapshot() if not isinstance(m, SystemMessage)]
        before = tuple(sent[: max(len(sent) - after, 0)])
        shown = self.view(before)  # an earlier handoff's filter stays applied under this one
        returned: object = input_filter(tuple(shown))  # a user's function: checked
        if isinstance(returned, str | bytes) or not isinstance(returned, Iterable):
            raise ConfigurationError(
                f"a handoff's input_filter must return a list of messages, got {returned!r}"
            )
        kept = tuple(returned)
        _check_filtered(kept)
        self._view = (frozenset(id(m) for m in before), kept, before)

    def view(self, messages: Sequence[Message]) -> Sequence[Message]:
        """What the active agent's model is sent: the filtered history, then what followed."""
        if self._view is None:
            return messages
        replaced, kept, _ = self._view
        head = [m for m in messages[:1] if isinstance(m, SystemMessage)]
        rest = [m for m in messages if id(m) not in replaced and not isinstance(m, SystemMessage)]
        return (*head, *kept, *rest)

    def settle(self, store: ConversationStore) -> None:
        """The run ended: the entry agent's own prompt is its conversation's head again (S35)."""
        if self.count and store.system_prompt != self.entry_prompt:
            store.set_system_prompt(self.entry_prompt)

    def roll_up(
        self, run: ExecutionState, usage: Usage, cost: float | None
    ) -> tuple[Usage, float | None, Mapping[str, AgentUsage]]:
        """The run's totals and ``usage_by_agent``: each agent of the chain its own entry.

        ``usage`` and ``cost`` are the run's own model calls (every agent's); each segment is
        charged to the agent that ran it, and its sub-agents are listed under that agent.
        """
        names = [name for name, _ in self.segments] + [run.settings.agent_name]
        ledgers = [ledger for _, ledger in self.segments] + [run.subagents]
        added = run._added
        charges = run._charges
        added_at = [0, *self._added_at, len(added)]
        charges_at = [0, *self._charges_at, len(charges)]
        by_agent: dict[str, AgentUsage] = {}
        for index, name in enumerate(names):
            own = [
                m
                for m in added[added_at[index] : added_at[index + 1]]
                if isinstance(m, AssistantMessage)
            ]
            spent, priced = _segment(run, own, charges[charges_at[index] : charges_at[index + 1]])
            _merge(by_agent, name, AgentUsage(spent, priced))
        for name, ledger in zip(names, ledgers, strict=True):
            if ledger is None:
                continue
            usage = usage + ledger.usage
            cost = _add_cost(cost, ledger.cost)
            for path, entry in ledger.by_path.items():
                _merge(by_agent, f"{name}/{path}", entry)
        return usage, cost, by_agent


def _segment(
    run: ExecutionState,
    assistants: list[AssistantMessage],
    charges: tuple[tuple[AssistantMessage, str], ...],
) -> tuple[Usage, float | None]:
    """One agent's part of the run: its replies' and discarded attempts' usage and cost (S29)."""
    usage = NO_USAGE
    for message in assistants:
        usage = add_usage(usage, message.usage)
    for message, _ in charges:
        usage = add_usage(usage, message.usage)
    if run._unattested:
        return usage, None
    answered = run._answered
    provider = run.settings.provider.name
    total = 0.0
    for message, by in [(m, answered.get(m.id, provider)) for m in assistants] + list(charges):
        if message.usage is None:
            continue
        cost = estimate_cost(message.usage, message.model or run.settings.model, provider=by)
        if cost is None:
            return usage, None
        total += cost
    return usage, total


def _add_cost(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _merge(by_agent: dict[str, AgentUsage], name: str, entry: AgentUsage) -> None:
    known = by_agent.get(name)
    if known is None:
        by_agent[name] = entry
        return
    # An agent the run came back to (A → B → A) is one entry: one run, its parts summed.
    by_agent[name] = AgentUsage(
        known.usage + entry.usage, _add_cost(known.cost, entry.cost), max(known.runs, entry.runs)
    )


def _check_filtered(messages: tuple[Message, ...]) -> None:
    """An input filter's result must be a valid history (S34, S36): every call answered."""
    calls: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        if not isinstance(message, UserMessage | AssistantMessage | ToolMessage):
            raise ConfigurationError(
                f"a handoff's input_filter must return user, assistant and tool messages (the "
                f"receiver's prompt is the head), got {message!r}"
            )
        if isinstance(message, AssistantMessage):
            calls.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolMessage):
            if message.tool_call_id not in calls:
                raise ConfigurationError(
                    "a handoff's input_filter kept a tool result without the call it answers "
                    f"({message.tool_call_id!r}); drop both or keep both"
                )
            answered.add(message.tool_call_id)
    missing = calls - answered
    if missing:
        raise ConfigurationError(
            "a handoff's input_filter kept tool calls without their results "
            f"({', '.join(sorted(missing))}); drop both or keep both"
        )
