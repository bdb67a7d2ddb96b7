"""The ``Agent`` facade (S03, S20, S24, S35, S38).

An agent owns one conversation, a set of tools and one or more providers, all passed to its
constructor (no globals). Runs on one agent take turns through a FIFO slot, so its history is
strictly sequential; separate agents run fully concurrently. ``aclose()`` (or ``async with``)
waits for in-flight and queued runs, disposes plugins and modules, closes the providers it owns,
and never raises for a cleanup failure. That disposal runs as one task the agent owns, so a caller
cancelled mid-``aclose()`` cannot cut it short; every later ``aclose()`` joins the same task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, final, overload

from typing_extensions import TypedDict, Unpack

from robota.core._abort import AbortSignal, abort_error_from_reason
from robota.core._agent_checks import (
    check_agent_arguments,
    check_run_input,
    check_text,
    unknown_run_options,
)
from robota.core._agent_children import run_child
from robota.core._agent_durable import DurableAgentMixin
from robota.core._agent_models import (
    FallbackEntry,
    check_retry,
    disable_sdk_retries,
    resolve_fallback,
)
from robota.core._agent_tool import AgentTool
from robota.core._cancel import AbortGuard
from robota.core._context import ContextUsage
from robota.core._emit import EventEmitter
from robota.core._errors import (
    ConfigurationError,
    DisposedAgentError,
)
from robota.core._events import (
    AgentEvent,
    CallbackEventService,
    EventNames,
    EventService,
    OwnerRef,
)
from robota.core._guardrails import Guardrail, InputGuardrail, OutputGuardrail, check_guardrails
from robota.core._handoff import DEFAULT_MAX_HANDOFFS, Handoff, check_max_handoffs, transfers
from robota.core._history import (
    ConversationStore,
    HistoryMutation,
    HistoryView,
)
from robota.core._limits import UsageLimits, check_limits
from robota.core._logging import get_logger
from robota.core._messages import Message, SystemMessage, new_id
from robota.core._models import (
    ContextWindow,
    check_context_window,
    get_model_context_window,
    resolve_context_window,
)
from robota.core._parts import UserInput, user_content
from robota.core._plugins import (
    ExtensionHook,
    Module,
    ModuleRegistry,
    Plugin,
    invoke_extension,
    run_cleanup_step,
)
from robota.core._rare import RareField
from robota.core._retry import RetryPolicy
from robota.core._run_events import RunEvent
from robota.core._sync import SyncDriver, refuse_inside_event_loop
from robota.core._texts import (
    LEGACY_TEXT_OPTIONS,
    ContextLimitMessage,
    ModelTexts,
    texts_from_options,
)
from robota.core._tracing import TraceContext, check_trace
from robota.core.execution._cache import ResponseCache
from robota.core.execution._durable import (
    acquire_lease,
    check_execution_id,
    read_records,
    release_lease,
)
from robota.core.execution._guardrails import GuardrailGate, tool_guardrails
from robota.core.execution._guards import (
    DEFAULT_MAX_ROUNDS,
)
from robota.core.execution._journal import (
    ExecutionJournal,
    ExecutionStateError,
    JournalLease,
)
from robota.core.execution._journaled import (
    JournalBinding,
)
from robota.core.execution._limits import run_limits
from robota.core.execution._loop import Execution, ExecutionSettings
from robota.core.execution._result import RunResult
from robota.core.execution._slot import RunSlot
from robota.core.execution._stream import RunStream
from robota.core.execution._structured import (
    OutputSpec,
    StructuredSettings,
)
from robota.core.execution._subagents import Delegation
from robota.core.hooks._runner import HookRunner
from robota.core.permissions._gate import PermissionGate
from robota.core.providers._contract import Provider, ToolChoice
from robota.core.providers._effort import EffortSelection, check_effort
from robota.core.providers._resolve import provider_for_model
from robota.core.providers._settings import ModelSettings, check_settings
from robota.core.tools._deferral import ToolCatalog, ToolDeferral
from robota.core.tools._executor import ToolCallOutcome, ToolExecutionService, ToolGate
from robota.core.tools._registry import ToolLike, ToolRegistry
from robota.core.tools._source import ToolSource
from robota.core.tools._tool import RiskClass, Tool

if TYPE_CHECKING:
    from robota.core.execution._retry import ModelCandidate  # noqa: F401 - a RareField type
    from robota.core.permissions._gate import Approver

__all__ = ["Agent", "ModelSelection", "RunOptions"]

T = TypeVar("T")

_TOOL_CHOICES: Final = ("auto", "none", "required")
_MAX_EXECUTION_ID: Final = 200

_log = get_logger("robota.agent")


@final
@dataclass(frozen=True, slots=True)
class ModelSelection:
    """The provider and model an agent addresses; ``str()`` gives ``"provider:model"``."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def _check_non_negative(value: object, where: str, hint: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{where} must be a non-negative integer{hint}, got {value!r}")
    return value


def _check_rounds(value: object, where: str) -> int:
    return _check_non_negative(value, where, " (0 disables the cap)")


def _check_limit(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(
            f"{where} must be a positive integer or None (no limit), got {value!r}"
        )
    return value


class RunOptions(TypedDict, total=False):
    """Options of one run (``agent.run(input, **options)``); each overrides the agent's setting.

    Attributes:
        signal: Cancels the run (S23). Aborting mid-run returns ``status="interrupted"`` with
            the text so far; a run still queued when it aborts raises
            :class:`~robota.AbortError` without touching the provider or history (S38).
        retry: The :class:`~robota.RetryPolicy` of this run's model calls; it replaces the
            agent's (``retry=None`` turns retries off for this run).
        max_rounds: The round budget for this run (S39; the run wins over the agent).
        max_same_tool_inputs: The identical-input limit for this run (S39).
        allow_tool_only_completion: Let the turn end on tool results with no summary (S39).
        tool_choice: ``"none"`` offers no tools in this run (S39); ``"required"`` asks for a
            tool call. Default: ``"auto"``.
        native_tools: Provider-hosted tools for this run, checked before transport (S30).
        context_floor: A lower bound on the context tokens the guard assumes (S31) — what the
            caller knows a gateway adds, say; a floor, never an extra charge.
        output_retries: Retry turns after an invalid structured reply (S18); default 2.
        effort: Reasoning effort for this run (S24): ``"none"`` … ``"max"``, or ``"auto"`` (the
            model's default; nothing is sent). The adapter resolves it per model and
            ``result.effort`` records what was actually sent.
        event_service: Receives this run's events besides the agent's service (S33).
        on_event: A callable receiving this run's events (replay-grade records included).
        execution_id: The execution's id, chosen by the host before the run starts (S40): a
            crashed worker never returns a result, so a host that will resume must know it up
            front. With a journal it must be new; without one a fresh id is minted. It is on
            the run's events, on ``ToolContext.execution_id`` and on ``RunResult``.
        trace: W3C trace context the host supplies (S27), from
            :meth:`robota.TraceContext.from_traceparent`. Without it the run carries none: no
            ambient context is ever adopted. With it, every provider call that declares
            propagation is handed a traceparent naming that call's span (sent only to a listed
            origin), each tool body gets ``ctx.traceparent`` naming its own span, and granted
            child processes get ``TRACEPARENT``.
        settings: :class:`~robota.ModelSettings` for this run's model calls; its set fields
            override the agent's ``settings`` field by field (S28).
        lifecycle_hooks: ``False`` runs none of the agent's run-level lifecycle hooks
            (``UserPromptSubmit``, ``Stop``; S22) in this run — for a host layer's own internal
            model call that is not a user's turn, such as a session's compaction summary
            (``robota.sessions``). Tool hooks still apply through the tool gate. Default:
            ``True``. :meth:`resume` takes the same option for the continuation.
        limits: :class:`~robota.UsageLimits` for this run; its set fields override the
            agent's ``limits`` field by field. Passing one stops the run with
            :class:`~robota.UsageLimitExceeded` rather than pass it (S31).
        guardrails: :class:`~robota.InputGuardrail` and :class:`~robota.OutputGuardrail`
            objects run after the agent's own (issue 29); tool guardrails belong to the agent.
        fresh_conversation: Run in a conversation of its own — the system prompt, then this
            input — as each ``Agent.as_tool`` call does: the agent's own history is neither
            sent nor changed (S34), and ``result.messages`` holds what the run added. For a
            layer above that runs an agent as one step of a larger task (``robota.agents``).
            The run still takes its turn (S38). Misuse: :meth:`resume` restores an execution
            into the agent's own conversation (S40), a fresh one's too — resume it on an agent
            whose history is a prefix of it (a new agent built alike). Default: ``False``.
    """

    signal: AbortSignal | None
    retry: RetryPolicy | None
    max_rounds: int | None
    max_same_tool_inputs: int | None
    allow_tool_only_completion: bool | None
    tool_choice: ToolChoice | None
    native_tools: Sequence[str]
    context_floor: int
    output_retries: int
    effort: EffortSelection | None
    event_service: EventService | None
    on_event: Callable[[AgentEvent], None] | None
    execution_id: str | None
    trace: TraceContext | None
    settings: ModelSettings | None
    lifecycle_hooks: bool
    limits: UsageLimits | None
    guardrails: Sequence[InputGuardrail | OutputGuardrail]
    fresh_conversation: bool


_RUN_OPTIONS: Final = frozenset(RunOptions.__annotations__)


def _check_lifecycle_hooks(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, bool):
        raise ConfigurationError(f"lifecycle_hooks must be True or False, got {value!r}")
    return value


def _fresh(options: RunOptions, parent: Delegation | None) -> bool:
    """Whether a run gets a conversation of its own (S34): an option, or a fresh delegation."""
    value = options.get("fresh_conversation", False)
    if not isinstance(value, bool):
        raise ConfigurationError(f"fresh_conversation must be True or False, got {value!r}")
    return value or (parent is not None and parent.fresh)


def _check_tool_choice(value: object) -> ToolChoice:
    if value not in _TOOL_CHOICES:
        raise ConfigurationError(f"tool_choice must be one of {_TOOL_CHOICES}, got {value!r}")
    return value


# Shared by every agent without tool sources; never written (issue 27).
_NO_SOURCE_NAMES: Final[dict[str, tuple[str, ...]]] = {}


@final
class Agent(DurableAgentMixin):
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
        self._max_rounds = _check_rounds(max_rounds, "max_rounds")
        self._effort = check_effort(effort)
        self._model_settings = check_settings(settings, "settings")
        self._limits = check_limits(limits, "limits")
        gate_hooks = getattr(tool_gate, "hooks", None)  # a PermissionGate's, S22
        self._hooks = (
            hooks
            if hooks is not None
            else (gate_hooks if isinstance(gate_hooks, HookRunner) else None)
        )
        self._max_same_inputs = _check_limit(max_same_tool_inputs, "max_same_tool_inputs")
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

    def _route_dispatch(
        self,
        provider: Callable[[Provider], Provider],
        tool: Callable[[Tool], Tool],
        *,
        guardrail: Callable[[Guardrail], Guardrail] | None = None,
        gate: Callable[[ToolGate | None], ToolGate | None] | None = None,
    ) -> None:
        """Internal (robota.temporal): do every provider call and tool body elsewhere.

        Each provider and each registered tool is replaced by what ``provider``/``tool`` return
        for it: the same name, schema and declarations, with the work done elsewhere (a
        Temporal activity). The loop, its guards, the gate and ``tool_search`` stay here. Only
        a fresh agent qualifies, and not one with tool sources: a source starts by itself.
        Issue 29: ``guardrail`` replaces each guardrail (its checks done elsewhere), ``gate``
        the agent's own tool gate (the tool guardrails wrap the result again). The agent's
        loop no longer retries a model call: whoever runs the routed provider owns retries
        (issue 28) — read :attr:`retry` before routing.

        Raises:
            ConfigurationError: for an agent that has run, is closing, or has tool sources.
        """
        if self._initialized or self._current is not None or self._state != "open":
            raise ConfigurationError(
                f"agent {self._name!r} has already run or is closing; route a fresh agent"
            )
        if self._sources:
            names = ", ".join(source.name for source in self._sources)
            raise ConfigurationError(
                f"agent {self._name!r} has tool sources ({names}); a source starts and answers "
                "inside one process, so it cannot be routed — register its tools directly"
            )
        current = self._providers.index(self._provider)
        every = self._every_provider()
        if len({item.name for item in every}) != len(every):
            raise ConfigurationError(
                f"agent {self._name!r}: two different providers of its model chain share a name; "
                "a routed call finds its provider by name, so give each a unique name"
            )
        pairs = [(item, provider(item)) for item in every]  # issue 28: the fallback's too

        def route(item: Provider) -> Provider:
            return next(new for old, new in pairs if old is item)

        self._providers = tuple(route(item) for item in self._providers)
        self._provider = self._providers[current]
        self._fallback = tuple(replace(c, provider=route(c.provider)) for c in self._fallback)
        registered = list(self._tools)
        for entry in registered:
            self._tools.unregister(entry.name)
        for entry in registered:
            routed = tool(entry)
            routed.event_service = entry.event_service
            self._tools.register(routed)
        self._retry = None
        if guardrail is not None:
            self._guardrails = tuple(guardrail(entry) for entry in self._guardrails)
        gated = self._executor.gate
        inner = gated.inner if isinstance(gated, GuardrailGate) else gated
        inner = inner if gate is None else gate(inner)
        guarded = tool_guardrails(self._guardrails)
        self._executor.gate = GuardrailGate(inner, guarded, self._emitter) if guarded else inner

    # ------------------------------------------------------------------ configuration

    def _every_provider(self) -> tuple[Provider, ...]:
        """The agent's providers, then its fallback chain's other ones (issue 28), each once."""
        every = list(self._providers)
        for candidate in self._fallback:
            if not any(candidate.provider is item for item in every):
                every.append(candidate.provider)
        return tuple(every)

    def _own_retries(self) -> None:
        """Turn off, once, the SDK retries of the providers this agent built (issue 28).

        With a retry policy the runtime owns retries; a caller's own providers stay theirs.
        When a run's own ``retry=`` did it on an agent without a policy, the agent takes the
        default :class:`RetryPolicy` for its later runs: their calls would otherwise have no
        retries at all, neither the SDK's nor the runtime's.
        """
        if not self._retries_owned:
            self._retries_owned = True
            built = self._built_provider
            owned = (*((built,) if built else ()), *self._fallback_owned)
            disable_sdk_retries(owned)
            if owned and self._retry is None:
                self._retry = RetryPolicy()

    def _resolve(self, spec: object) -> tuple[Provider, str]:
        if not isinstance(spec, str) or not spec.strip():
            raise ConfigurationError(f"model must be a non-empty string, got {spec!r}")
        prefix, sep, rest = spec.partition(":")
        if sep and rest:
            for item in self._providers:
                if item.name == prefix:
                    return item, rest
        if len(self._providers) == 1:
            return self._providers[0], spec
        names = ", ".join(item.name for item in self._providers)
        raise ConfigurationError(
            f"model {spec!r} does not name one of this agent's providers; write "
            f"'provider:model' with a provider among: {names}"
        )

    def _context_window(self) -> int | None:
        return self._window_of(self._provider.name, self._model)

    def _caller_window(self, provider: str, model: str) -> int | None:
        given = self._given_window
        if given is not None and given[:2] == (provider, model):
            return given[2]
        return None

    def _window_of(self, provider: str, model: str) -> int | None:
        """The best window known without I/O: the caller's, a run's resolution, the table."""
        given = self._caller_window(provider, model)
        if given is not None:
            return given
        resolved = None if self._windows is None else self._windows.get((provider, model))
        if resolved is not None and resolved.known:
            return resolved.tokens
        return get_model_context_window(model, provider=provider)

    @property
    def name(self) -> str:
        """The agent's name."""
        return self._name

    @property
    def id(self) -> str:
        """The agent's unique id (the root of every event's owner path)."""
        return self._id

    @property
    def retry(self) -> RetryPolicy | None:
        """The :class:`~robota.RetryPolicy` of this agent's model calls (``retry=``), if any.

        A host that owns retries itself reads it to apply the same rule (``robota.temporal``
        maps it onto the model-call activity's retry policy).
        """
        return self._retry

    @property
    def texts(self) -> ModelTexts:
        """The model-facing texts this agent uses (S35): ``texts=``, else the defaults.

        A host that runs the agent's calls elsewhere (``robota.temporal``) reads them here, so
        what it places in front of the model follows the same seam.
        """
        return self._texts

    def get_model(self) -> ModelSelection:
        """The provider and model runs address; answerable right after construction (S24)."""
        self._check_not_closed()
        return ModelSelection(self._provider.name, self._model)

    def set_model(self, model: str) -> ModelSelection:
        """Address another model (``"model"`` or ``"provider:model"``) from the next run on.

        Raises:
            ConfigurationError: when the model names no provider of this agent, or its context
                window would make deferral withhold schemas nothing could load (S19).
        """
        self._check_not_closed()
        provider, name = self._resolve(model)
        # S19: deferral may weigh the new model's window; refuse a switch breaking an invariant.
        self._catalog.check(lambda: self._window_of(provider.name, name))
        self._provider, self._model = provider, name
        return ModelSelection(self._provider.name, self._model)

    @property
    def system_prompt(self) -> str | None:
        """The configured system prompt."""
        return self._system_prompt

    def update_system_prompt(self, text: str | None) -> None:
        """Replace the system prompt in the configuration and the history head at once (S35).

        The very next provider request carries it, even in a run already under way.
        """
        self._check_not_closed()
        if text is not None:
            if not isinstance(text, str):
                raise ConfigurationError(
                    f"the system prompt must be a string or None, got {type(text).__name__}"
                )
            check_text(text, "the system prompt")
        self._system_prompt = text
        self._store.set_system_prompt(text)

    @property
    def history(self) -> HistoryView:
        """The conversation, read-only and live."""
        return self._store.messages

    async def replace_history(
        self,
        messages: Iterable[Message],
        *,
        reported_usage: bool = True,
        inject_system_prompt: bool = True,
    ) -> None:
        """Replace the whole conversation with ``messages``, between runs (a restored session).

        The seam a host layer that keeps conversations elsewhere (``robota.sessions``) uses to
        load one into the agent before a turn. It waits for the agent's run slot (S38), so it
        never lands inside a run: runs queued before it finish first, runs started after it see
        the new history. The messages are kept as they are (ids, timestamps, interrupted state);
        nothing is emitted and no plugin is called, since no message is *added* to the
        conversation.

        The system head (S35): when ``messages`` does not begin with a
        :class:`~robota.SystemMessage`, the head is the agent's configured
        :attr:`system_prompt` — a new turn on a restored conversation carries the live prompt,
        never a stale stored one. When it does begin with one, that message is the head and the
        configuration is left unchanged: a host continuing an interrupted execution gives the
        prompt that execution used (the execution's checkpoint keeps it, S40), and a later call
        without a head restores the live one. ``inject_system_prompt=False`` keeps a
        ``messages`` without a head headless: the host continuing an execution that began with
        no system prompt passes it, so the continuation keeps that (S35, S40) instead of taking
        the live prompt — which :meth:`resume` would refuse as a changed prompt. Tools that
        ``tool_search`` loaded (S19) stay loaded, and those the given messages loaded are added.

        ``reported_usage`` (S31): whether the provider reports the messages carry may anchor the
        context estimate (:meth:`context_usage`, the pre-send guard). Pass ``False`` when the
        messages are not the history those reports were made for — a compacted conversation,
        whose reported responses saw turns since replaced by a summary: the context is then
        estimated from the messages alone until the next response reports.

        Raises:
            HistoryError: a system message that is not the first message.
            TypeError: an item that is not a message.
            DisposedAgentError: the agent is closed.
        """
        self._check_not_closed()
        items = tuple(messages)
        await self._acquire()
        try:
            self._check_not_closed()
            self._install_history(items, reported_usage, inject_system_prompt)
        finally:
            self._release()

    def _install_history(
        self, items: tuple[Message, ...], reported_usage: bool = True, inject: bool = True
    ) -> None:
        """Make ``items`` the conversation (the caller holds the run slot, S38)."""
        store = self._new_store(items, reported_usage, inject)
        self._store.observer = None
        self._store = store

    def _new_store(
        self, items: tuple[Message, ...], reported_usage: bool = True, inject: bool = True
    ) -> ConversationStore:
        """A conversation holding ``items`` (and the system prompt), observed by this agent."""
        store = ConversationStore(
            messages=items,
            max_messages=self._history_cap,
            interrupted_annotation=self._texts.interrupted_annotation,
        )
        headless = not (items and isinstance(items[0], SystemMessage))
        if self._system_prompt and headless and inject:
            store.set_system_prompt(self._system_prompt)
        if not reported_usage:
            store.context.forget_report()
        for message in store.messages:
            self._catalog.note(message)
        store.observer = self._on_history
        return store

    @property
    def hooks(self) -> HookRunner | None:
        """The runner of this agent's lifecycle hooks (S22): ``hooks=``, or the tool gate's.

        ``None`` when the agent has none. A layer above core (``robota.sessions``) fires its own
        events (``SessionStart``, ``SessionEnd``) through it, so one configuration serves every
        event.
        """
        return self._hooks

    @property
    def journal(self) -> ExecutionJournal | None:
        """The execution journal the agent was built with (S40), or ``None``."""
        return self._journal

    @property
    def limits(self) -> UsageLimits | None:
        """The usage limits of every run (``limits=``, S31), or ``None``; a run's override them.

        A layer that caps several runs (``robota.sessions``) reads them to tighten, never lift.
        """
        return self._limits

    async def resolve_context_window(self) -> ContextWindow:
        """The current model's context window, as a run resolves it (S13, S39).

        The caller's (``context_window=``), else what the provider's server reports (asked
        now), else the registered table; else unknown. The answer is kept, so
        :meth:`context_usage` knows it from then on — a host layer that plans before the first
        run (``robota.sessions``' compaction) asks here.
        """
        self._check_not_closed()
        provider, model = self._provider, self._model
        window = await resolve_context_window(
            provider, model, given=self._caller_window(provider.name, model)
        )
        self._keep_window((provider.name, model), window)
        return window

    def _keep_window(self, key: tuple[str, str], window: ContextWindow) -> None:
        windows = self._windows
        if window.source != "server" and (windows is None or key not in windows):
            # The caller's and the table's are read where they live (_window_of); only what a
            # server reported needs keeping (issue 27: no per-agent dict for most agents).
            return
        if windows is None:
            windows = self._windows = {}
        windows[key] = window

    def context_usage(self, *, floor: int = 0) -> ContextUsage:
        """How full the current model's context window is (S31), without any provider call.

        ``window`` is the caller's, the one the last run resolved (the server's report), or
        the registered one; ``None`` when none is known (S13).
        """
        window = self._window_of(self._provider.name, self._model)
        ledger = self._store.context
        return ContextUsage(
            ledger.effective_tokens(_check_non_negative(floor, "context_floor")),
            window,
            ledger.reported,
        )

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The registered tools, in registration order."""
        return tuple(self._tools)

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` has begun; a closed agent accepts no runs."""
        return self._state != "open"

    def _check_not_closed(self) -> None:
        if self._state != "open":
            raise DisposedAgentError(
                f"agent {self._name!r} is closed (aclose() was called); create a new Agent"
            )

    # ------------------------------------------------------------------ running

    @overload
    async def run(
        self, input: UserInput, *, output: None = None, **options: Unpack[RunOptions]
    ) -> RunResult[str]: ...
    @overload
    async def run(
        self, input: UserInput, *, output: type[T], **options: Unpack[RunOptions]
    ) -> RunResult[T | None]: ...
    @overload
    async def run(
        self, input: UserInput, *, output: Mapping[str, Any], **options: Unpack[RunOptions]
    ) -> RunResult[Any]: ...
    async def run(
        self, input: UserInput, *, output: object = None, **options: Unpack[RunOptions]
    ) -> RunResult[Any]:
        """Run one turn: send ``input``, run the tools the model asks for, return the result.

        Args:
            input: The user's message: a string, or a sequence of parts (``TextPart``,
                ``ImagePart``, ``DocumentPart``, ``AudioPart``) for images, PDFs and audio.
            output: Ask for a structured result (S18): a type (a pydantic model, a dataclass, a
                ``typing_extensions.TypedDict`` …) or an object JSON schema. ``result.output`` is
                then the validated object (``None`` when the run was interrupted).
            **options: See :class:`RunOptions` (``signal``, ``max_rounds``, ``tool_choice`` …).

        Raises:
            AbortError: the signal aborted while the run waited for its turn (S38).
            DisposedAgentError: the agent is closed.
            ProviderError: a provider call failed (its message is also in history).
            SameToolInputLoopError: a tool was called with identical input too often (S39).
            EmptyCompletionError: tool-only completion was allowed and a reply was empty.
            UsageLimitExceeded: going on would pass a usage limit (``limits=``, S31).
            StructuredOutputError: the output never validated within ``output_retries``.
        """
        check_run_input(input, "run", options)
        settings = self._settings(output, options)
        return await self._execute(input, settings, options.get("signal"), None, options)

    @overload
    def run_sync(
        self, input: UserInput, *, output: None = None, **options: Unpack[RunOptions]
    ) -> RunResult[str]: ...
    @overload
    def run_sync(
        self, input: UserInput, *, output: type[T], **options: Unpack[RunOptions]
    ) -> RunResult[T | None]: ...
    @overload
    def run_sync(
        self, input: UserInput, *, output: Mapping[str, Any], **options: Unpack[RunOptions]
    ) -> RunResult[Any]: ...
    def run_sync(
        self, input: UserInput, *, output: object = None, **options: Unpack[RunOptions]
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code: same arguments, same result.

        Every synchronous call of one agent runs on one event loop the agent keeps (a provider
        the agent built holds connections bound to it), closed by :meth:`close` or when the
        agent is garbage-collected. Ctrl-C cancels the run, which settles as interrupted, and
        then raises :class:`KeyboardInterrupt`.

        Raises:
            RobotaError: when called from a running event loop (``await agent.run()`` there).
        """
        refuse_inside_event_loop("run_sync()", "await agent.run(...)")
        check_run_input(input, "run_sync", options)
        settings = self._settings(output, options)
        return self._sync_driver().run(
            self._execute(input, settings, options.get("signal"), None, options)
        )

    @overload
    def run_stream(
        self, input: UserInput, *, output: None = None, **options: Unpack[RunOptions]
    ) -> RunStream[str]: ...
    @overload
    def run_stream(
        self, input: UserInput, *, output: type[T], **options: Unpack[RunOptions]
    ) -> RunStream[T | None]: ...
    @overload
    def run_stream(
        self, input: UserInput, *, output: Mapping[str, Any], **options: Unpack[RunOptions]
    ) -> RunStream[Any]: ...
    def run_stream(
        self, input: UserInput, *, output: object = None, **options: Unpack[RunOptions]
    ) -> RunStream[Any]:
        """A streamed run: iterate it for events, then ``await stream.result()``.

        Options as for :meth:`run`; a structured result arrives as the result's ``output``,
        never as a delta (S18). The run starts when iteration begins (S38); leaving early aborts
        it (S23).
        """
        self._check_not_closed()
        check_run_input(input, "run_stream", options)
        settings = self._settings(output, options)

        def start(
            run_signal: AbortSignal, notify: Callable[[RunEvent], None]
        ) -> Coroutine[Any, Any, RunResult[Any]]:
            return self._execute(input, settings, run_signal, notify, options)

        return RunStream(start, options.get("signal"), self._track)

    def _track(self, task: asyncio.Task[RunResult[Any]]) -> None:
        tasks = self._stream_tasks
        if tasks is None:
            tasks = self._stream_tasks = set()
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _sync_driver(self) -> SyncDriver:
        if self._sync is None:
            self._sync = SyncDriver()
        return self._sync

    def _parts(self) -> set[int]:
        """The modules and plugins initialised so far, by id (S20)."""
        if self._initialized_parts is None:
            self._initialized_parts = set()
        return self._initialized_parts

    def _settings(self, output: object, options: RunOptions) -> ExecutionSettings:
        if not _RUN_OPTIONS.issuperset(options):
            raise unknown_run_options(options, _RUN_OPTIONS)
        _fresh(options, None)  # a bad value is refused before the run queues
        max_rounds = options.get("max_rounds")
        same = options.get("max_same_tool_inputs")
        tool_only = options.get("allow_tool_only_completion")
        tool_choice = options.get("tool_choice")
        allow_tool_only = self._allow_tool_only if tool_only is None else bool(tool_only)
        structured = None
        if output is not None:
            if allow_tool_only:
                raise ConfigurationError(
                    "output= asks for a validated final reply, which a tool-only completion does "
                    "not have; do not combine it with allow_tool_only_completion"
                )
            structured = StructuredSettings(
                spec=OutputSpec(output),
                retries=_check_non_negative(options.get("output_retries", 2), "output_retries"),
                instruction=self._texts.output_instruction,
                feedback=self._texts.output_feedback,
            )
        retry = check_retry(options["retry"], "retry") if "retry" in options else self._retry
        if retry is not None:
            self._own_retries()
        fallback = self._fallback
        limits = options.get("limits")
        agent_limits = self._limits
        if limits is not None or agent_limits is not None:  # a plain run skips the merge
            limits = run_limits(
                agent_limits,
                limits,
                self._provider,
                self._model,
                [(c.provider, c.model) for c in fallback],
            )
        return ExecutionSettings(
            retry=retry,
            fallback=fallback,
            agent_name=self._name,
            provider=self._provider,
            model=self._model,
            max_rounds=self._max_rounds
            if max_rounds is None
            else _check_rounds(max_rounds, "max_rounds"),
            tool_choice="auto" if tool_choice is None else _check_tool_choice(tool_choice),
            native_tools=tuple(options.get("native_tools", ())),
            max_same_tool_inputs=self._max_same_inputs
            if same is None
            else _check_limit(same, "max_same_tool_inputs"),
            allow_tool_only_completion=allow_tool_only,
            context_floor=_check_non_negative(options.get("context_floor", 0), "context_floor"),
            texts=self._texts,
            response_cache=self._response_cache,
            structured=structured,
            effort=self._effort
            if options.get("effort") is None
            else check_effort(options.get("effort")),
            trace=check_trace(options.get("trace")),
            context_window=self._caller_window(self._provider.name, self._model),
            model_settings=self._model_settings.merged(
                check_settings(options.get("settings"), "run option settings")
            ),
            hooks=self._hooks if _check_lifecycle_hooks(options.get("lifecycle_hooks")) else None,
            limits=limits,
            guardrails=self._run_guardrails(options),
            max_handoffs=self._max_handoffs,
        )

    def _run_guardrails(self, options: RunOptions) -> tuple[Guardrail, ...]:
        if "guardrails" not in options:
            return self._guardrails
        added = check_guardrails(options["guardrails"], "run option guardrails")
        if tool_guardrails(added):
            raise ConfigurationError(
                "a ToolGuardrail wraps the agent's tool gate: pass it to Agent(guardrails=[...]); "
                "the run option guardrails= takes InputGuardrail and OutputGuardrail"
            )
        if any(getattr(g, "check", None) is self for g in added):
            raise ConfigurationError(
                "an agent cannot be its own guardrail (its run would wait for itself, S38); "
                "use another Agent or a function"
            )
        return self._guardrails + added

    async def _execute(
        self,
        input: UserInput,
        settings: ExecutionSettings,
        signal: AbortSignal | None,
        notify: Callable[[RunEvent], None] | None,
        options: RunOptions,
        parent: Delegation | None = None,
    ) -> RunResult[Any]:
        self._check_not_closed()
        # A sequence of parts becomes the tuple history keeps (the caller's list may change).
        content = user_content(input, "agent.run()")
        run_signal = signal if signal is not None else AbortSignal()
        with AbortGuard(run_signal) as guard:
            await guard.call(self._acquire)
        try:
            if run_signal.aborted:  # S38: its turn came after the abort — touch nothing
                raise abort_error_from_reason(run_signal.reason)
            # A run queued before aclose() began still runs: close waits for the queue (S20).
            # S23: an abort while tool sources start ends the run before it touched anything.
            with AbortGuard(run_signal) as guard:
                await guard.call(self._ensure_initialized)
            chosen = options.get("execution_id")
            run_id = new_id("run") if chosen is None else check_execution_id(chosen)
            lease: JournalLease | None = None
            binding: JournalBinding | None = None
            # Issue 29: a journaled parent's sub-agent run is journaled in the parent's journal.
            journal = parent.journal if parent is not None and parent.journal else self._journal
            if journal is not None:
                lease = await acquire_lease(journal, run_id)
                try:
                    if await read_records(journal, run_id):
                        raise ExecutionStateError(
                            f"execution {run_id!r} already exists in the journal; continue it "
                            f"with agent.resume({run_id!r}) or choose a new execution_id",
                            code="execution_exists",
                        )
                except BaseException:
                    await release_lease(lease)
                    raise
                # Issue 29: a child cannot pass a suspension to its caller: its asks stay in memory.
                binding = JournalBinding(lease, store=journal, asks_suspend=parent is None)
                settings = replace(settings, runtime_state=self._runtime_state(settings))
            try:
                emitter = self._scoped_emitter(
                    OwnerRef("execution", run_id),
                    options.get("event_service"),
                    options.get("on_event"),
                    parent.span if parent is not None else None,
                )
                # Issue 29, S34: a fresh call runs in a conversation of its own; the agent's
                # own history is left as it was (append-only), not replaced.
                store = self._new_store(()) if _fresh(options, parent) else self._store
                self._flush_reports(emitter)
                execution = Execution(
                    settings,
                    run_id=run_id,
                    store=store,
                    tools=self._executor,
                    plugins=self._plugins,
                    signal=run_signal,
                    emitter=emitter,
                    notify=notify,
                    journal=binding,
                )
                if parent is not None:
                    execution.ceiling = parent.gate  # S21: the ceiling, for this run only
                try:
                    result = await self._run_current(execution, execution.run(content))
                finally:
                    if execution.handoffs is not None:  # S35: its own prompt is the head again
                        execution.handoffs.settle(store)
                    if parent is not None and parent.settled is not None:
                        # Issue 29: the parent is charged whatever the child used, however
                        # its run ended (a provider error, a limit, a cancel).
                        parent.settled(execution.spend())
                if result.context_window is not None:
                    answered = execution.settings  # S13: a fallback's window is its own
                    key = (answered.provider.name, answered.model)
                    self._keep_window(key, result.context_window)
                return result
            finally:
                if lease is not None:
                    await release_lease(lease)
        finally:
            self._release()

    async def _acquire(self) -> None:
        """Wait for this agent's turn (S38, first come first served).

        The slot is built by the first caller and dropped once idle again, so an agent between
        runs holds none (issue 27). Only one slot exists at a time: it is dropped only when
        nobody holds it or waits on it.
        """
        slot = self._slot
        if slot is None:
            slot = self._slot = RunSlot()
        await slot.acquire()

    def _release(self) -> None:
        """Hand the turn to the next waiter, or free it (and drop the idle slot)."""
        slot = self._slot
        assert slot is not None, "released without acquiring"
        slot.release()
        if slot.idle:
            self._slot = None

    async def _run_current(
        self, execution: Execution, work: Coroutine[Any, Any, RunResult[Any]]
    ) -> RunResult[Any]:
        """Await ``work`` with ``execution`` as the one receiving history mutations."""
        self._current = execution
        try:
            return await work
        finally:
            self._current = None

    def _scoped_emitter(
        self,
        owner: OwnerRef,
        event_service: EventService | None,
        on_event: Callable[[AgentEvent], None] | None,
        parent: EventEmitter | None = None,
    ) -> EventEmitter:
        """An emitter for one run or invocation: the agent's service plus the caller's own.

        ``parent``: the tool call's span when this agent runs as another's tool (S33): its
        services hear this run too, under the owner path nested in the call's.
        """
        services: list[EventService] = list(parent.services) if parent is not None else []
        if self._event_service is not None:
            services.append(self._event_service)
        if event_service is not None:
            services.append(event_service)
        if on_event is not None:
            services.append(CallbackEventService(on_event))
        path = (OwnerRef("agent", self._id), owner)
        return EventEmitter(services, path if parent is None else (*parent.owner_path, *path))

    async def _ensure_initialized(self) -> None:
        # S20: a failed initialisation is not cached; the next run retries what did not succeed.
        if not self._initialized:
            # S03/S20: the call into the extension is made inside invoke_extension, so a plain
            # `def` override that raises fails this run exactly like an async one (and is
            # retried).
            for module in self._modules:
                if id(module) not in self._parts():
                    await invoke_extension(module, "initialize", self)
                    self._parts().add(id(module))
            for plugin in self._plugins:
                if id(plugin) not in self._parts():
                    await invoke_extension(plugin, "setup", self)
                    self._parts().add(id(plugin))
            self._initialized = True
        if self._sources:
            await self._start_sources()

    async def _start_sources(self) -> None:
        """Start every tool source (a no-op for running ones) and register its tools (S41)."""
        if self._source_lock is None:
            self._source_lock = asyncio.Lock()
        async with self._source_lock:  # runs and direct invocations share one start
            for source in self._sources:
                await source.start()
                if source.name not in self._source_names:
                    source.subscribe(self._sync_source)
                self._sync_source(source)

    def _is_own_tool(self, name: str) -> bool:
        """Whether ``name`` is a tool the agent was given itself (not a source's)."""
        if name not in self._tools:
            return False
        return not any(name in names for names in self._source_names.values())

    async def _settle_sources(self) -> None:
        """After a tool round: let the sources finish a change it caused (S19: next round)."""
        for source in self._sources:
            try:
                await source.settle()
            except Exception as exc:  # noqa: BLE001 - a source's failure never fails the run
                _log.error("tool source settle failed", source=source.name, error=repr(exc))

    def _sync_source(self, source: ToolSource) -> None:
        """Replace ``source``'s registered tools with the ones it reports now."""
        for name in self._source_names.get(source.name, ()):
            self._tools.unregister(name)
        registered: list[str] = []
        rejected = [(item.name, item.reason) for item in source.rejected()]
        for tool in source.tools():
            if tool.name in self._tools:
                rejected.append((tool.name, "another tool of this agent has that name"))
                continue
            self._tools.register(tool)
            if self._event_service is not None:
                tool.event_service = self._event_service
            registered.append(tool.name)
        self._source_names[source.name] = tuple(registered)
        for name, reason in rejected:
            key = (source.name, name, reason)
            if self._reported is None:
                self._reported = set()
            if key in self._reported:
                continue  # reported once, not on every run
            self._reported.add(key)
            _log.error("tool left out", source=source.name, tool=name, reason=reason)
            self._reports += (key,)
        if self._current is not None:
            self._flush_reports(self._current.emitter)

    def _flush_reports(self, emitter: EventEmitter | None) -> None:
        """Emit the left-out tools not reported yet, to the run (or call) now under way."""
        reports, self._reports = self._reports, ()
        if emitter is not None and emitter.enabled:
            for source, name, reason in reports:
                emitter.emit(
                    EventNames.TOOL_SOURCE_REJECTED,
                    {"source": source, "tool_name": name, "reason": reason},
                )

    def _on_history(self, mutation: HistoryMutation) -> None:
        execution = self._current
        emitter = execution.emitter if execution is not None else self._emitter
        if mutation.kind == "append" and mutation.message is not None:
            self._catalog.note(mutation.message)  # S19: tool_search results load their tools
        if emitter is not None and emitter.enabled:
            if mutation.kind == "append":
                emitter.emit(EventNames.HISTORY_APPENDED, {"message": mutation.message})
            elif mutation.kind == "system_prompt":
                emitter.emit(EventNames.HISTORY_SYSTEM_PROMPT_SET, {"message": mutation.message})
            else:
                emitter.emit(EventNames.HISTORY_TRIMMED, {"count": mutation.count})
        if execution is not None:
            execution.on_mutation(mutation)

    # ------------------------------------------------------------------ direct invocation

    async def invoke_tool(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        signal: AbortSignal | None = None,
        approver: Approver | None = None,
        event_service: EventService | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> ToolCallOutcome:
        """Invoke a registered tool directly (S43), without fabricating a model turn.

        The call takes the same path as a model-driven one — validation, the tool gate
        (permissions and hooks), the body with its own minted id, the events — and leaves
        history untouched. Allowlists and permissions still apply. No interactive "ask the user"
        handler is injected: an ``ask`` is answered only by the ``approver`` passed here, and is
        a denial without one, because a direct caller is not assumed to have a person behind it.

        Args:
            name: The tool's registered name.
            args: Its arguments (validated against its schema).
            signal: Cancels the body (it observes ``ctx.signal``).
            approver: Answers a permission ``ask`` for this call only.
            event_service: Receives this call's events besides the agent's service.
            on_event: A callable receiving this call's events.

        Returns:
            The :class:`~robota.ToolCallOutcome`: ``status`` (``completed``, ``failed``,
            ``refused`` …) and the ``result``.

        Raises:
            ConfigurationError: when no tool of that name is registered, or ``args`` is not a
                mapping.
            DisposedAgentError: the agent is closed.
        """
        self._check_not_closed()
        if self._sources and not self._is_own_tool(name):
            # S43: a source's tools are reachable directly too; a local tool needs none started.
            with AbortGuard(signal or AbortSignal()) as guard:
                await guard.call(self._start_sources)
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self._tools.names()) or "none"
            raise ConfigurationError(
                f"no tool named {name!r} is registered; available: {available}"
            )
        if not isinstance(args, Mapping):
            raise ConfigurationError(f"tool arguments must be a mapping, got {type(args).__name__}")
        emitter = self._scoped_emitter(
            OwnerRef("invocation", new_id("inv")), event_service, on_event
        )
        self._flush_reports(emitter)
        return await self._executor.invoke(
            tool,
            args,
            signal=signal if signal is not None else AbortSignal(),
            emitter=emitter,
            approver=approver,
        )

    # ------------------------------------------------------------------ disposal

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        input: object = None,
        output: object = None,
        keep_history: bool = False,
        risk: RiskClass | None = "inspect",
    ) -> AgentTool:
        """This agent as a tool another agent's model can call (issue 29).

        Each call runs this agent under what the calling run passes down (abort signal, what is
        left of its limits and round budget, its gate as a ceiling, trace, events, journal); see
        :class:`~robota.AgentTool` for the arguments. ``Agent(tools=[other])`` is
        ``other.as_tool()``.
        """
        return AgentTool(
            self,
            name=name,
            description=description,
            input=input,
            output=output,
            keep_history=keep_history,
            risk=risk,
        )

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

    async def _run_delegated(
        self,
        input: str,
        output: object,
        signal: AbortSignal,
        options: RunOptions,
        parent: Delegation,
    ) -> RunResult[Any]:
        """One run as another agent's tool call (issue 29, robota.core._agent_tool)."""
        settings = self._settings(output, options)
        if parent.journal is not None:  # S40: journaled, and continued, in the parent's journal
            return await run_child(self, input, output, settings, signal, options, parent)
        return await self._execute(input, settings, signal, parent.notify, options, parent)

    async def aclose(self) -> list[BaseException]:
        """Close the agent (S20) and return the cleanup failures; never raises for them.

        Waits for in-flight and queued runs to settle, disposes plugins and modules, closes the
        providers it owns, and leaves no task behind. From the first call on the agent is
        terminal: new runs are refused with :class:`~robota.DisposedAgentError`. Every call
        returns (a fresh list of) the same failures, those of the one disposal.

        The disposal runs as one task the agent owns, and this call only waits for it. Cancelling
        the caller (``asyncio.wait_for(agent.aclose(), ...)``, a cancelled ``async with`` body's
        exit) propagates to the caller as usual, but the disposal goes on to the end; a later
        ``aclose()`` waits for that same disposal and returns its failures.

        A ``CancelledError`` that a cleanup step raises while nobody is cancelling the disposal is
        that step's failure: it is returned with the others and the next step runs. Cancelling the
        disposal task itself — the event loop does so to every task at shutdown — cuts short only
        the step it lands in (recorded as that step's failure, a ``CancelledError``); the rest of
        the disposal still runs, and then the task ends cancelled, so whoever cancelled it sees the
        cancellation honoured. A task cancelled before it could begin (shutdown right after this
        call) disposed nothing; the agent stays ``closing`` and the next ``aclose()`` starts it
        again.
        """
        if self._state == "open":
            self._state = "closing"  # S20: terminal from the moment disposal is initiated
        while self._state == "closing":
            disposal = self._disposal
            if disposal is None or disposal.done():
                # Done while still "closing" only if cancelled before its first step (its
                # `finally` never ran): start it again.
                disposal = asyncio.get_running_loop().create_task(
                    self._dispose(), name=f"robota-dispose-{self._id}"
                )
                self._disposal = disposal
            # asyncio.wait never cancels what it waits on: cancelling this caller leaves the
            # disposal running, and the disposal's own end (even a cancelled one) is not raised.
            await asyncio.wait((disposal,))
        return list(self._close_errors or ())

    def close(self) -> list[BaseException]:
        """:meth:`aclose` for synchronous code: close the agent, return the cleanup failures.

        Runs the disposal on the event loop :meth:`run_sync` used (so a provider the agent owns
        closes its connections on their own loop), then closes that loop.

        Raises:
            RobotaError: when called from a running event loop (``await agent.aclose()`` there).
        """
        refuse_inside_event_loop("close()", "await agent.aclose()")
        driver = self._sync_driver()
        try:
            return driver.run(self.aclose())
        finally:
            driver.close()

    async def _dispose(self) -> None:
        """The one disposal (S20): settle the run queue, run every cleanup step, reset state.

        Runs as a task of its own (see :meth:`aclose`). A cancellation of this task interrupts
        one await only; it is remembered and raised once every step has had its turn.
        """
        # Filled in place, so a later aclose() sees what was recorded.
        errors = self._close_errors if self._close_errors is not None else []
        self._close_errors = errors
        cancelled: asyncio.CancelledError | None = None
        try:
            while True:
                try:
                    await self._acquire()  # the queue's tail: every earlier run settles first
                    break
                except asyncio.CancelledError as exc:
                    # Keep waiting: disposing under a live run would pull its resources away.
                    cancelled = exc
            try:
                for extension, hook in self._cleanup_steps():
                    try:
                        # S20: each step is called inside its guard, so a synchronous raise is
                        # collected; a CancelledError reaching here was aimed at this task.
                        await run_cleanup_step(extension, hook, errors)
                    except asyncio.CancelledError as exc:
                        cancelled = exc  # recorded as that step's failure; the rest still run
                while self._stream_tasks:
                    try:
                        await asyncio.wait(list(self._stream_tasks or ()))
                    except asyncio.CancelledError as exc:
                        cancelled = exc
            finally:
                self._release()
        finally:
            self._state = "closed"
            self._store.observer = None
        if cancelled is not None:
            raise cancelled  # deferred, never swallowed

    def _cleanup_steps(self) -> Iterator[tuple[object, ExtensionHook]]:
        """The S20 cleanup steps in order: plugins, modules, tool sources, gate, providers.

        The gate step ends a :class:`PermissionGate`'s still-running ``Notification`` hooks
        (S22; the gate itself stays usable); only the providers the agent owns are closed.
        """
        for plugin in self._plugins:
            yield plugin, "dispose"
        for module in self._modules:
            yield module, "dispose"
        for source in self._sources:
            yield source, "aclose"
        gate = self._executor.gate
        if isinstance(gate, GuardrailGate):
            gate = gate.inner
        if isinstance(gate, PermissionGate):
            yield gate, "aclose"
        if self._owns_providers:
            for provider in self._providers:
                yield provider, "aclose"
        for provider in self._fallback_owned:
            yield provider, "aclose"

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

    def __repr__(self) -> str:
        return f"<Agent {self._name!r} {self._provider.name}:{self._model} {self._state}>"
