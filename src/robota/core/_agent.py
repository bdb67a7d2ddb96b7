"""The ``Agent`` facade (S03, S20, S24, S35, S38).

An agent owns one conversation, a set of tools and one or more providers, all passed to its
constructor (no globals). Runs on one agent take turns through a FIFO slot, so its history is
strictly sequential; separate agents run fully concurrently. ``aclose()`` (or ``async with``)
waits for in-flight and queued runs, disposes plugins and modules, closes the providers it owns,
and never raises for a cleanup failure. That disposal runs as one task the agent owns, so a caller
cancelled mid-``aclose()`` cannot cut it short; every later ``aclose()`` joins the same task.

The class is assembled by concern from mixins, each a module of its own: construction and
validation here, with handoffs added later (their signature names the class); the run API in
:mod:`robota.core._agent_run` (its options and their checks in :mod:`robota.core._agent_options`);
model selection, history and the state readers in :mod:`robota.core._agent_config`; the tool
catalogue — tool sources, direct invocation, dispatch routing — in
:mod:`robota.core._agent_catalog`; initialisation and disposal in
:mod:`robota.core._agent_lifetime`; durable execution in :mod:`robota.core._agent_durable`. Its
base :class:`robota.core._agent_base.AgentBase` is how the modules below it name an agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Final, Literal, final

from robota.core._agent_base import AgentBase
from robota.core._agent_catalog import AgentCatalogMixin
from robota.core._agent_checks import check_agent_arguments
from robota.core._agent_config import AgentConfigMixin, ModelSelection
from robota.core._agent_durable import DurableAgentMixin
from robota.core._agent_lifetime import AgentLifetimeMixin
from robota.core._agent_models import FallbackEntry, check_retry, resolve_fallback
from robota.core._agent_options import RunOptions, check_limit, check_rounds
from robota.core._agent_run import AgentRunMixin
from robota.core._emit import EventEmitter
from robota.core._errors import ConfigurationError
from robota.core._events import EventService, OwnerRef
from robota.core._guardrails import Guardrail, check_guardrails
from robota.core._handoff import (
    DEFAULT_MAX_HANDOFFS,
    Handoff,
    HandoffReceiver,
    check_max_handoffs,
    transfers,
)
from robota.core._history import ConversationStore
from robota.core._limits import UsageLimits, check_limits
from robota.core._messages import Message, new_id
from robota.core._models import check_context_window
from robota.core._plugins import Module, ModuleRegistry, Plugin, run_cleanup_step
from robota.core._rare import RareField
from robota.core._retry import RetryPolicy
from robota.core._texts import (
    LEGACY_TEXT_OPTIONS,
    ContextLimitMessage,
    ModelTexts,
    texts_from_options,
)
from robota.core.execution._cache import ResponseCache
from robota.core.execution._guardrails import GuardrailGate, tool_guardrails
from robota.core.execution._guards import DEFAULT_MAX_ROUNDS
from robota.core.execution._journal import ExecutionJournal
from robota.core.execution._loop import Execution
from robota.core.execution._slot import RunSlot
from robota.core.hooks._runner import HookRunner
from robota.core.providers._contract import Provider
from robota.core.providers._effort import EffortSelection, check_effort
from robota.core.providers._resolve import provider_for_model
from robota.core.providers._settings import ModelSettings, check_settings
from robota.core.tools._deferral import ToolCatalog, ToolDeferral
from robota.core.tools._executor import ToolExecutionService, ToolGate
from robota.core.tools._registry import ToolLike, ToolRegistry
from robota.core.tools._source import ToolSource

if TYPE_CHECKING:  # RareField types
    from robota.core._models import ContextWindow  # noqa: F401
    from robota.core._sync import SyncDriver  # noqa: F401
    from robota.core.execution._result import RunResult  # noqa: F401
    from robota.core.execution._retry import ModelCandidate  # noqa: F401

__all__ = ["Agent", "ModelSelection", "RunOptions"]

_MAX_EXECUTION_ID: Final = 200


# Shared by every agent without tool sources; never written (issue 27).
_NO_SOURCE_NAMES: Final[dict[str, tuple[str, ...]]] = {}


@final
class Agent(
    AgentRunMixin,
    AgentCatalogMixin,
    AgentConfigMixin,
    AgentLifetimeMixin,
    DurableAgentMixin,
    AgentBase,
):
    """An agent: a conversation, tools and providers, run one turn at a time.

    Args:
        model: The model to address. With one provider, its model name (``"gpt-4o"``); with
            several, ``"provider:model"`` (a single provider also accepts that form). With no
            provider at all, ``"prefix:model"`` (``"openai:gpt-5-mini"``) builds the provider
            that an installed package registered for ``prefix`` in the ``robota.providers``
            entry-point group; the agent then owns (and closes) it. The first positional
            argument (``robota.Agent("openai:gpt-5-mini")``); ``model=`` works too.
        api_key: The API key of the provider a ``"prefix:model"`` string builds. Without it the
            provider looks for one itself: its environment variable (``OPENAI_API_KEY`` …), then
            the key ``robota auth set PREFIX`` stored (:func:`robota.host.find_api_key`).
        base_url: The API root of the provider a ``"prefix:model"`` string builds, e.g.
            ``"http://127.0.0.1:8080/v1"`` for ``"openai-compatible:NAME"`` (which otherwise
            reads ``OPENAI_COMPATIBLE_BASE_URL``). With ``provider=`` or ``providers=``, pass
            ``api_key`` and ``base_url`` to that provider instead.
        provider: The provider (one-provider form).
        providers: Several providers, by their unique names (multi-provider form).
        system_prompt: The system prompt, kept as the single head of history (S35).
        tools: Tools, functions to wrap with :func:`robota.tool`, and tool sources
            (:class:`~robota.ToolSource`, e.g. ``robota.mcp.MCPServerStdio``). A source is
            started before the first run (or on ``async with``), shared by every run, restarted
            by a later run if it died, and closed by :meth:`aclose`; its tools are registered
            beside the others and re-read whenever it reports a change.
        plugins: Plugins, hooks awaited in this order (S03).
        modules: Modules, initialised before the first run.
        event_service: Receives every event of this agent (S33); default: none.
        max_rounds: Model/tool rounds per run before the forced summary (S39); ``0`` disables
            the cap. A run may override it.
        max_same_tool_inputs: How often one tool may be called with byte-identical input in a
            run before :class:`~robota.SameToolInputLoopError` (S39); ``None``: no limit.
        allow_tool_only_completion: Let a turn end on its tool results with no summary call;
            a reply with neither text nor a tool call then raises
            :class:`~robota.EmptyCompletionError` (S39).
        tool_concurrency: Most tool bodies of one response running at once.
        effort: The default reasoning effort of every run (S24; a run's ``effort=`` wins);
            default ``"auto"``: nothing is sent and the model uses its own default.
        settings: The default :class:`~robota.ModelSettings` of every run (temperature, output
            cap, stop sequences …); a run's ``settings=`` overrides it field by field (S28).
        limits: The default :class:`~robota.UsageLimits` of every run (model calls, tokens,
            tool calls, cost); a run's ``limits=`` overrides it field by field. A run that would
            pass one stops with :class:`~robota.UsageLimitExceeded` (S31).
        name: A name for events and plugins; default: ``"agent"``.
        owns_providers: Close the providers at :meth:`aclose`. By default they are borrowed and
            stay open under their creator's control (S20).
        history: Earlier messages to continue from (a restored session).
        max_history_messages: A cap on history length; ``None`` (default) keeps everything.
        texts: Every text core places in front of a model — forced-summary and unavailable-tool
            instructions, the structured-output instruction and feedback, the interrupted-reply
            annotation, the context-limit diagnostic, and the tool results core writes itself
            (unavailable tool, omitted result, not dispatched, interrupted). Default: neutral
            texts; see :class:`~robota.ModelTexts` (S35 override seam).
        summary_instruction, summary_fallback, unavailable_tools_instruction,
            context_limit_message, interrupted_annotation, output_instruction, output_feedback:
            Deprecated (a :class:`DeprecationWarning`; removed in the next release): the
            :class:`~robota.ModelTexts` field of the same name, which ``texts=`` takes. Giving
            one of them and ``texts=`` raises :class:`~robota.ConfigurationError`.
        response_cache: Serve identical requests from a cache (keyed by the model that answered,
            S30); hits are rounds with no dispatch.
        tool_gate: The admission seam for tool calls (permissions, hooks). A
            :class:`~robota.PermissionGate`'s ``Notification`` hooks still running when the
            agent closes are ended by :meth:`aclose` (the gate stays usable).
        hooks: Runs the run's own lifecycle hooks (S22): ``UserPromptSubmit`` before the prompt
            enters history (a deny raises :class:`~robota.HookBlockedError` before any model
            call; additional context goes to the model after the prompt) and ``Stop`` when the
            model ends its turn (a block continues the run with the hook's reason, bounded by
            :attr:`~robota.HookRunner.max_stop_continuations`). Default: the hooks of
            ``tool_gate`` when it is a :class:`~robota.PermissionGate` with hooks, so one
            configuration serves tool and lifecycle events.
        retry: A :class:`~robota.RetryPolicy` for every run's model calls (a run's ``retry=``
            wins): a ``recoverable`` failure is tried again after a backoff; never a tool body.
            With it, the SDK retries of providers this agent builds from model strings are
            turned off (one owner of retries); a provider you pass keeps what you built it with
            (pass ``max_retries=0`` to the adapter to leave retries to the policy). Default: none
            — until a run's own ``retry=`` turns the built providers' SDK retries off; from then
            on the agent's policy is the default ``RetryPolicy()`` (see :attr:`retry`).
        fallback: Models to move a call to when it fails ``switchable`` (after the policy gave
            up), in this order: ``"provider:model"`` strings (naming one of this agent's
            providers, or a registered prefix — the agent then builds and owns that provider),
            provider instances (addressed with this agent's model name) or ``(provider,
            "model")`` pairs. A model that lacks what a run needs (tools it offers, a native tool,
            media in the user's messages) is skipped with the reason; a run that moved stays on
            the model that answered, and a journaled one resumes there (S30, S40).
        guardrails: :class:`~robota.InputGuardrail`, :class:`~robota.OutputGuardrail` and
            :class:`~robota.ToolGuardrail` objects (issue 29): input ones run before the first
            model call (a trip raises :class:`~robota.GuardrailTripped`, nothing is sent), output
            ones on the final result before it is returned, tool ones around tool bodies (a trip
            refuses the call like a permission deny). Each call is in ``RunResult.guardrails``
            and emitted as ``execution.guardrail``. Default: none.
        handoffs: Agents (or :class:`~robota.Handoff` objects) this agent's model may transfer
            the run to (issue 29), each through a generated ``transfer_to_<name>`` tool; the
            receiver continues the same run with the conversation so far (see
            :class:`~robota.Handoff`; :meth:`add_handoffs` adds more later, for cycles).
        max_handoffs: Transfers one run started on this agent takes, every agent's counted
            (``A → B → A`` is two); past it a transfer answers with an error telling the model to
            finish itself. Default :data:`~robota.DEFAULT_MAX_HANDOFFS`; ``0`` refuses them all.
        journal: An execution journal the host owns exclusively (S40). Every run is then
            recoverable: each boundary whose loss would make a model call or a tool effect
            ambiguous is durable before the run crosses it, and :meth:`resume` continues an
            interrupted, crashed or suspended execution — in this process or another. The agent
            never closes it.
        tool_deferral: Tool deferral (S19). ``"auto"`` (default) withholds the schemas of tools
            made with ``defer=True`` (``residency="deferred"``) once there are
            :data:`~robota.AUTO_DEFERRAL_TOOL_COUNT` of them or their estimated schema tokens
            reach :data:`~robota.AUTO_DEFERRAL_SCHEMA_SHARE` of the model's context window;
            ``"on"`` always withholds them, ``"off"`` never does. A withheld tool is offered
            from the round after the built-in ``tool_search`` found it. Permissions are decided
            by name only, loaded or not, and :meth:`invoke_tool` reaches deferred tools.
        tool_search: Provide the built-in ``tool_search`` (default). With ``False``, a
            configuration that would withhold a schema is refused: nothing could load it.
        context_window: The model's context window in tokens, when you know it (a local
            server started with ``-c 4096``, say). It wins over what the server reports and the
            registered table, and applies to the model named here (:meth:`set_model` to another
            model looks that one up). Without it, a run asks the provider's server once, then
            the table; a window nobody knows stays unknown — no size is assumed, the pre-send
            guard checks nothing, and ``result.context_window.source == "unknown"`` says so
            (S13, S39).

    Raises:
        ConfigurationError: for contradictory or invalid options; the message says what to fix.
    """

    # __weakref__: layers above core key per-agent state by the agent itself (a
    # WeakKeyDictionary), never by id(), which a later agent may reuse.
    __slots__ = (
        "__weakref__",
        "_catalog",
        "_current",
        "_effort",
        "_executor",
        "_id",
        "_initialized",
        "_max_rounds",
        "_model",
        "_model_settings",
        "_name",
        "_owns_providers",
        "_provider",
        "_providers",
        "_rare",
        "_slot",
        "_state",
        "_store",
        "_system_prompt",
        "_texts",
        "_tools",
    )

    # Most agents leave these at their defaults for life: held in one dict, built when one is
    # first set (issue 27). A system prompt and owned providers (an agent given a provider by
    # name) are common, so they keep slots: setting either would otherwise build the dict.
    _sync = RareField["SyncDriver | None"](None)
    _disposal = RareField["asyncio.Task[None] | None"](None)
    _close_errors = RareField["list[BaseException] | None"](None)
    _stream_tasks = RareField["set[asyncio.Task[RunResult]] | None"](None)
    _initialized_parts = RareField["set[int] | None"](None)
    _reported = RareField["set[tuple[str, str, str]] | None"](None)
    _reports = RareField["tuple[tuple[str, str, str], ...]"](())
    _source_lock = RareField["asyncio.Lock | None"](None)
    _source_names = RareField["dict[str, tuple[str, ...]]"](_NO_SOURCE_NAMES)
    _windows = RareField["dict[tuple[str, str], ContextWindow] | None"](None)
    _given_window = RareField["tuple[str, str, int] | None"](None)
    _journal = RareField["ExecutionJournal | None"](None)
    _hooks = RareField["HookRunner | None"](None)
    _max_same_inputs = RareField["int | None"](None)
    _allow_tool_only = RareField["bool"](False)
    _event_service = RareField["EventService | None"](None)
    _emitter = RareField["EventEmitter | None"](None)
    _response_cache = RareField["ResponseCache | None"](None)
    _history_cap = RareField["int | None"](None)
    _sources = RareField["Sequence[ToolSource]"](())
    _plugins = RareField["Sequence[Plugin]"](())
    _modules = RareField["ModuleRegistry | tuple[()]"](())
    _limits = RareField["UsageLimits | None"](None)
    _retry = RareField["RetryPolicy | None"](None)
    _fallback = RareField["tuple[ModelCandidate, ...]"](())
    _guardrails = RareField["tuple[Guardrail, ...]"](())
    _max_handoffs = RareField["int"](DEFAULT_MAX_HANDOFFS)
    _fallback_owned = RareField["tuple[Provider, ...]"](())
    _retries_owned = RareField["bool"](False)
    _built_provider = RareField["Provider | None"](None)

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: Provider | None = None,
        providers: Sequence[Provider] = (),
        system_prompt: str | None = None,
        tools: Iterable[ToolLike | ToolSource | Agent] = (),
        plugins: Iterable[Plugin] = (),
        modules: Iterable[Module] = (),
        event_service: EventService | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        max_same_tool_inputs: int | None = None,
        allow_tool_only_completion: bool = False,
        tool_concurrency: int = 8,
        effort: EffortSelection = "auto",
        name: str | None = None,
        owns_providers: bool = False,
        history: Iterable[Message] = (),
        max_history_messages: int | None = None,
        texts: ModelTexts | None = None,
        summary_instruction: str | None = None,
        summary_fallback: str | None = None,
        unavailable_tools_instruction: str | None = None,
        context_limit_message: ContextLimitMessage | None = None,
        interrupted_annotation: str | None = None,
        tool_gate: ToolGate | None = None,
        response_cache: ResponseCache | None = None,
        output_instruction: str | None = None,
        output_feedback: str | None = None,
        journal: ExecutionJournal | None = None,
        tool_deferral: ToolDeferral = "auto",
        tool_search: bool = True,
        context_window: int | None = None,
        settings: ModelSettings | None = None,
        hooks: HookRunner | None = None,
        limits: UsageLimits | None = None,
        retry: RetryPolicy | None = None,
        fallback: Sequence[FallbackEntry] = (),
        guardrails: Sequence[Guardrail] = (),
        handoffs: Iterable[Agent | Handoff] = (),
        max_handoffs: int = DEFAULT_MAX_HANDOFFS,
    ) -> None:
        check_agent_arguments(locals())  # wrong types and values, named with their fix
        self._rare: dict[str, object] | None = None  # the RareField values not at default
        given = locals()
        self._texts = texts_from_options(texts, {k: given[k] for k in LEGACY_TEXT_OPTIONS})
        if journal is not None and not isinstance(journal, ExecutionJournal):
            raise ConfigurationError(
                f"journal must be an ExecutionJournal (robota.testing.InMemoryJournal, "
                f"robota.host.SQLiteJournal, robota.host.PostgresJournal …), got {journal!r}"
            )
        self._journal = journal
        if provider is not None and providers:
            raise ConfigurationError("pass either provider= or providers=, not both")
        all_providers = [provider] if provider is not None else list(providers)
        if all_providers and (api_key is not None or base_url is not None):
            raise ConfigurationError(
                "api_key= and base_url= configure the provider a 'prefix:model' string builds; "
                "with provider= or providers=, pass them to that provider instead"
            )
        if not all_providers:
            # A model string with a registered prefix builds its own provider, which the agent
            # then owns; core reads the entry-point group and never names a vendor (S02).
            built, model = provider_for_model(model, api_key=api_key, base_url=base_url)
            all_providers = [built]
            owns_providers = True
            self._built_provider = built  # issue 28: its SDK retries are the agent's to turn off
        seen: set[str] = set()
        for item in all_providers:
            if not isinstance(item, Provider):
                raise ConfigurationError(f"not a Provider: {item!r}")
            if item.name in seen:
                raise ConfigurationError(
                    f"two providers are named {item.name!r}; names must be unique"
                )
            seen.add(item.name)
        # A tuple, not a dict by name: a few providers at most, and a one-tuple is a quarter of
        # a dict's bytes (issue 27's per-agent footprint).
        self._providers: tuple[Provider, ...] = tuple(all_providers)
        self._id = new_id("agent")
        self._name = name or "agent"
        self._provider, self._model = self._resolve(model)
        window = check_context_window(context_window)
        # S13: the caller's window belongs to the model it was given for.
        self._given_window = None if window is None else (self._provider.name, self._model, window)
        self._retry = check_retry(retry, "retry")
        if fallback:  # issue 28: the chain after the agent's own model, in the caller's order
            self._fallback, self._fallback_owned = resolve_fallback(
                fallback,
                model=self._model,
                providers=self._providers,
                resolve=self._resolve,
                window=self._caller_window,
            )
        # What runs resolved, built on first use (issue 27: a few hundred bytes per agent).
        self._windows = None
        self._max_rounds = check_rounds(max_rounds, "max_rounds")
        self._effort = check_effort(effort)
        self._model_settings = check_settings(settings, "settings")
        self._limits = check_limits(limits, "limits")
        gate_hooks = getattr(tool_gate, "hooks", None)  # a PermissionGate's, S22
        self._hooks = (
            hooks
            if hooks is not None
            else (gate_hooks if isinstance(gate_hooks, HookRunner) else None)
        )
        self._max_same_inputs = check_limit(max_same_tool_inputs, "max_same_tool_inputs")
        self._allow_tool_only = bool(allow_tool_only_completion)
        if event_service is not None and not isinstance(event_service, EventService):
            raise ConfigurationError(
                f"event_service needs enabled and emit(); got {event_service!r}"
            )
        self._event_service = event_service
        # Without a service the agent's own emitter would emit nothing: none is built (issue 27).
        self._emitter = (
            EventEmitter((event_service,), (OwnerRef("agent", self._id),))
            if event_service is not None
            else None
        )
        entries: list[ToolLike | ToolSource | Agent] = list(tools)
        sources: list[ToolSource] = []
        plain: list[ToolLike] = []
        for entry in entries:
            if isinstance(entry, Agent):  # issue 29: another agent, callable as a tool
                plain.append(entry.as_tool())
            elif not isinstance(entry, ToolSource):
                plain.append(entry)
            elif any(other.name == entry.name for other in sources):
                raise ConfigurationError(
                    f"two tool sources are named {entry.name!r}; names must be unique"
                )
            else:
                sources.append(entry)
        plain.extend(transfers(handoffs, owner=self._name))
        self._max_handoffs = check_max_handoffs(max_handoffs)
        # Shared empty defaults when there is nothing to hold (issue 27).
        self._sources = sources or ()
        self._tools = ToolRegistry(plain)
        # Source name → registered names; written only with sources (else a shared empty dict).
        self._source_names = {} if sources else _NO_SOURCE_NAMES
        # Built on first use (most agents never need them): a few hundred bytes per agent.
        self._reported = None
        self._reports = ()  # not yet emitted
        self._source_lock = asyncio.Lock() if self._sources else None
        if event_service is not None:
            for registered in self._tools:
                registered.event_service = event_service  # S33: the last agent to set one wins
        searching: object = tool_search  # untyped callers can pass anything
        if not isinstance(searching, bool):
            raise ConfigurationError(f"tool_search must be True or False, got {tool_search!r}")
        self._catalog = ToolCatalog(
            self._tools,
            setting=tool_deferral,
            search=tool_search,
            window=self,
            texts=self._texts,
        )
        self._guardrails = check_guardrails(guardrails, "guardrails")
        guarded = tool_guardrails(self._guardrails)  # issue 29: they wrap the gate
        self._executor = ToolExecutionService(
            self._tools,
            concurrency=tool_concurrency,
            gate=GuardrailGate(tool_gate, guarded, self._emitter) if guarded else tool_gate,
            catalog=self._catalog,
            settle=self._settle_sources if self._sources else None,
            texts=self._texts,
        )
        if any(entry.residency == "deferred" for entry in self._tools):
            self._catalog.check()  # S19: both invariants are refused when the agent is built
        self._plugins = tuple(plugins)
        for plugin in self._plugins:
            if not isinstance(plugin, Plugin):
                raise ConfigurationError(f"not a Plugin: {plugin!r}")
        self._modules = ModuleRegistry(modules) if modules else ()
        self._owns_providers: bool = owns_providers
        if self._retry is not None:
            self._own_retries()
        self._response_cache = response_cache
        self._history_cap = max_history_messages
        self._store = ConversationStore(
            messages=history,
            max_messages=max_history_messages,
            interrupted_annotation=self._texts.interrupted_annotation,
        )
        self._current: Execution | None = None
        for message in self._store.snapshot():  # not .messages: its view is built on first read
            self._catalog.note(message)  # S19: a restored conversation keeps what it loaded
        self._store.observer = self._on_history
        self._system_prompt: str | None = system_prompt
        if system_prompt:
            self._store.set_system_prompt(system_prompt)
        self._slot: RunSlot | None = None  # exists while a run holds or awaits it (_acquire)
        self._sync = None  # run_sync()/close() only
        self._state: Literal["open", "closing", "closed"] = "open"
        self._disposal = None
        self._close_errors = None  # built when closing
        self._initialized = False
        self._initialized_parts = None  # with modules or plugins only
        self._stream_tasks = None  # stream() only

    async def __aenter__(self) -> Agent:
        if self._sources:
            try:
                await self._start_sources()  # S41: sources start on `async with` too
            except BaseException:
                # Nothing may be left running; the agent itself stays usable (S20: a failed
                # start is not cached — a later run starts the sources again).
                for source in self._sources:
                    await run_cleanup_step(source, "aclose", [])
                raise
            self._flush_reports(self._emitter)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def add_handoffs(self, *handoffs: Agent | Handoff) -> None:
        """Add handoffs after construction (issue 29): how two agents hand back to each other.

        Raises:
            ConfigurationError: while a run is under way, for a tool name the agent already
                has, or for a handoff to the agent itself.
        """
        self._check_not_closed()
        if self._current is not None:
            raise ConfigurationError(f"agent {self._name!r} is running; add handoffs between runs")
        tools = transfers(handoffs, owner=self._name)
        for tool in tools:
            if tool.handoff.agent is self:
                raise ConfigurationError(f"agent {self._name!r} cannot hand off to itself")
            if tool.name in self._tools:
                raise ConfigurationError(
                    f"agent {self._name!r} already has a tool named {tool.name!r}; give the "
                    "handoff another tool_name= (robota.Handoff(agent, tool_name=...))"
                )
        for tool in tools:
            self._tools.register(tool)
            tool.event_service = self._event_service

    def __repr__(self) -> str:
        return f"<Agent {self._name!r} {self._provider.name}:{self._model} {self._state}>"


if TYPE_CHECKING:

    def _receives_handoffs(agent: Agent) -> HandoffReceiver:
        return agent  # mypy: an Agent is what a transfer reads of its receiver (_handoff.py)
