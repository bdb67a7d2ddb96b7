"""Handoffs (issue 29): a model transfers the run to another agent.

``Agent(handoffs=[billing, robota.Handoff(refunds, input_filter=...)])`` gives the agent's model
one generated tool per handoff, ``transfer_to_<name>``. When the model calls one, the receiving
agent continues the *same run* with the conversation so far, under its own system prompt (S35),
tools, model and provider; ``RunResult.agent`` names the agent that finished and
``RunResult.usage_by_agent`` gives each agent of the chain its own entry. What the run keeps
across agents, and what the receiver brings, is listed in :mod:`robota.core.execution._handoffs`
and in the :class:`Handoff` docstring.

The rules of a batch (S34, S36: every tool call is answered):

* the transfer's own call is answered ("Transferred to …") and the handoff is taken once the
  whole batch settled — the batch's other calls run as usual, under the agent that asked for them;
* a second transfer in the same batch is refused with an error result (the first accepted wins);
* past the run's limit (``Agent(max_handoffs=...)`` of the agent the run started on, default
  :data:`DEFAULT_MAX_HANDOFFS`) a transfer is refused with an error result telling the model to
  finish the task itself; every transfer counts, so a cycle ``A → B → A`` is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, final

from robota.core._agent_base import AgentBase
from robota.core._agent_tool import CeilingGate
from robota.core._errors import ConfigurationError, RobotaError
from robota.core._messages import AssistantMessage, Message, ToolMessage
from robota.core._texts import render
from robota.core.execution._handoffs import RunHandoffs, Transfer
from robota.core.execution._limits import check_capped, check_priced
from robota.core.execution._loop import Execution
from robota.core.tools._tool import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from robota.core._agent_options import RunOptions
    from robota.core._events import EventService
    from robota.core._texts import ModelTexts
    from robota.core.execution._settings import ExecutionSettings
    from robota.core.tools._executor import ToolExecutionService
    from robota.core.tools._registry import ToolRegistry

__all__ = [
    "DEFAULT_MAX_HANDOFFS",
    "Handoff",
    "HandoffReceiver",
    "TransferTool",
    "check_max_handoffs",
    "transfers",
]

DEFAULT_MAX_HANDOFFS: Final = 10
"""How many transfers one run takes by default (``Agent(max_handoffs=...)``)."""

_MAX_TOOL_NAME: Final = 64  # the strictest common provider rule: ^[a-zA-Z0-9_-]{1,64}$
_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_-]")
_NO_ARGUMENTS: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


class HandoffReceiver(Protocol):
    """What a transfer reads of the agent it hands the run to: a :class:`robota.Agent`.

    ``Handoff.agent`` is an :class:`~robota.core._agent_base.AgentBase` — that is, an ``Agent``;
    this module sits below the facade, so it names the agent's internals it reads here (mypy
    checks ``Agent`` against them in ``robota.core._agent``).
    """

    @property
    def name(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def system_prompt(self) -> str | None: ...
    @property
    def texts(self) -> ModelTexts: ...
    @property
    def _executor(self) -> ToolExecutionService: ...
    @property
    def _event_service(self) -> EventService | None: ...
    @property
    def _tools(self) -> ToolRegistry: ...
    def _settings(self, output: object, options: RunOptions) -> ExecutionSettings: ...
    async def _ensure_initialized(self) -> None: ...


@final
@dataclass(frozen=True, slots=True)
class Handoff:
    """A transfer to ``agent`` that another agent's model can make (issue 29).

    Pass it in ``Agent(handoffs=[...])``; a bare :class:`~robota.Agent` there is
    ``Handoff(agent)``. The agent's model is offered a tool ``tool_name`` taking no arguments;
    calling it hands the run to ``agent``, which continues it with the conversation so far.

    The receiver brings its own system prompt (it replaces the conversation's head for the rest
    of the run, S35), tools and tool gate, provider, model, retry policy and fallback, reasoning
    effort, model settings and texts. The run keeps, across agents: its conversation (the entry
    agent's history holds the whole run, and the entry agent's own prompt is its head again when
    the run ends), abort signal (S23), usage limits and round budget, the structured output it
    asked for (the receiver's final reply is validated against the run's ``output=``, S18) and
    whether a turn may complete on tool results alone (S39), its
    lifecycle hooks, guardrails and plugins, its trace (S27), its event services, and the gate of
    the agent the run started on, as a ceiling every receiver's call passes too (S21). Run
    options that tune the model (``effort=``, ``settings=``, ``retry=``, ``native_tools=``)
    apply to the entry agent only. The receiver's own conversation is neither read nor changed:
    to continue the next turn with it, give it the conversation
    (``await receiver.replace_history(entry.history)``). Nor are its lifecycle hooks, input and
    output guardrails, plugins or ``journal=`` used: those are the run's, the entry agent's (its
    tool guardrails do apply: they wrap its tool gate). It is readied as for its own first run
    (modules and plugins initialised, tool sources started) before its first round. A
    ``tool_search`` it makes loads its deferred tools (S19) as in its own runs.

    Args:
        agent: The :class:`~robota.Agent` that takes the run over.
        tool_name: The generated tool's name; default ``transfer_to_<agent name>``, with every
            character outside ``[a-zA-Z0-9_-]`` replaced by ``_`` (64 characters at most).
        description: What the model reads to decide when to transfer; default: a neutral
            sentence naming the agent.
        input_filter: A function of the conversation so far (a tuple of messages, without the
            system head) returning what the receiver's model is sent of it instead — drop tool
            calls (:meth:`drop_tool_calls`), keep the last turns … History itself is append-only
            (S34) and keeps everything; the result must keep every tool call with its result.

    Misuse: two handoffs (or a handoff and a tool) of one agent with one tool name raise
    :class:`~robota.ConfigurationError` when the agent is built. Agents of one chain should have
    distinct names: ``RunResult.usage_by_agent`` is keyed by name.

    Journaled (S40): the entry agent's journal records the whole run, the receivers' calls and
    effects too (a receiver's own ``journal=`` is not used). A continuation
    (:meth:`~robota.Agent.resume`) starts on the entry agent and takes again every handoff its
    history proves — each receiver found by its tool name among the handoffs of the agent
    active then — so resume on agents built with the same handoffs; nothing is repeated. An
    ``input_filter`` is applied again on a continuation: keep it a pure function of the messages.
    """

    agent: AgentBase
    _: KW_ONLY
    tool_name: str | None = None
    description: str | None = None
    input_filter: Callable[[tuple[Message, ...]], Sequence[Message]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.agent, AgentBase):  # that is, a robota.Agent
            raise ConfigurationError(f"Handoff needs a robota.Agent, got {self.agent!r}")
        for field in ("tool_name", "description"):
            value = getattr(self, field)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigurationError(
                    f"Handoff {field} must be a non-empty string or None, got {value!r}"
                )
        if self.input_filter is not None and not callable(self.input_filter):
            raise ConfigurationError(
                f"Handoff input_filter must be a function of the messages, got "
                f"{self.input_filter!r}"
            )

    @property
    def name(self) -> str:
        """The generated tool's name."""
        if self.tool_name is not None:
            return self.tool_name
        return _UNSAFE.sub("_", f"transfer_to_{self.agent.name}")[:_MAX_TOOL_NAME]

    @staticmethod
    def drop_tool_calls(messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """An ``input_filter``: the conversation without tool calls and their results.

        An assistant message keeps its text; one that had nothing but tool calls is left out.
        """
        kept: list[Message] = []
        for message in messages:
            if isinstance(message, ToolMessage):
                continue
            if isinstance(message, AssistantMessage) and message.tool_calls:
                if message.content.strip():
                    kept.append(replace(message, tool_calls=()))
                continue
            kept.append(message)
        return tuple(kept)


@final
class TransferTool(Tool):
    """The ``transfer_to_<name>`` tool a :class:`Handoff` generates (internal)."""

    def __init__(self, handoff: Handoff) -> None:
        self.handoff = handoff
        super().__init__(
            name=handoff.name,
            description=handoff.description
            or f"Transfer the conversation to the agent {handoff.agent.name!r}, which continues "
            "it from here.",
            parameters=_NO_ARGUMENTS,
            # The transfer acts on nothing; every call the receiver makes is gated (S21).
            risk="inspect",
        )

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Accept the transfer for when the batch settles, or answer why it was refused."""
        receiver = cast("HandoffReceiver", self.handoff.agent)
        run = ctx._run if isinstance(ctx._run, Execution) else None
        texts = receiver.texts if run is None else run.settings.texts
        refused = _refusal(run, receiver)
        if refused is None and run is not None:
            try:
                _accept(run, self.handoff)
            except RobotaError as error:  # the receiver cannot run under this run (limits …)
                refused = error.message
        if refused is not None:
            return ToolResult(
                render(texts.handoff_refused_result, agent=repr(receiver.name), reason=refused),
                is_error=True,
            )
        return ToolResult(render(texts.handoff_result, agent=repr(receiver.name)))

    def accept(self, run: Execution) -> None:
        """Record the transfer on ``run`` for when its batch settles (a continuation's too)."""
        _accept(run, self.handoff)


def _refusal(run: Execution | None, receiver: HandoffReceiver) -> str | None:
    if run is None:
        return "a transfer takes effect only inside a run (not in a direct invocation)"
    if receiver.closed:
        return "that agent is closed"
    state = run.handoffs
    if state is not None and state.requested is not None:
        return (
            f"this response already transferred to {state.requested.name!r}; one transfer per "
            "response"
        )
    limit = run.settings.max_handoffs
    if state is not None and state.count >= limit:
        return (
            f"this run reached its limit of {limit} handoff(s); finish the task yourself with "
            "what you have"
        )
    if limit < 1:
        return "this run takes no handoffs; finish the task yourself with what you have"
    return None


def _accept(run: Execution, handoff: Handoff) -> None:
    """Record the transfer on the run; raises when the receiver cannot run under it."""
    receiver = cast("HandoffReceiver", handoff.agent)
    state = run.handoffs
    if state is None:
        state = run.handoffs = RunHandoffs(run)
    own = receiver._settings(None, {})
    limits = run.settings.limits
    # S31/S30: the run's limits hold for it too — for every model of its chain, which may answer.
    for provider, model in ((own.provider, own.model), *own.fallback_pairs()):
        check_priced(limits, model, provider.name)
        check_capped(limits, provider, model)
    executor = receiver._executor
    above = state.entry_gate
    ceiling = None
    if executor is state.entry_tools:
        ceiling = state.entry_ceiling  # back to the entry agent: its own gate and ceiling
    elif above is not None:
        ceiling = CeilingGate(executor.gate, above, receiver.name)
    state.requested = Transfer(
        name=receiver.name,
        agent_id=receiver.id,
        settings=own,
        tools=executor,
        ceiling=ceiling,
        system_prompt=receiver.system_prompt,
        service=receiver._event_service,
        input_filter=handoff.input_filter,
        # S03/S41: its modules initialised and tool sources started, as before its own runs.
        prepare=receiver._ensure_initialized,
    )


def check_max_handoffs(value: object) -> int:
    """``Agent(max_handoffs=...)``: a non-negative integer (0: the run takes none)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(
            f"max_handoffs must be a non-negative integer (0 refuses every transfer), got {value!r}"
        )
    return value


def transfers(handoffs: Iterable[object], *, owner: str) -> list[TransferTool]:
    """The tools of ``Agent(handoffs=...)``: one per handoff, names unique among them.

    Raises:
        ConfigurationError: for an entry that is neither an agent nor a :class:`Handoff`, two
            handoffs with one tool name.
    """
    if isinstance(handoffs, str | bytes | Mapping) or not isinstance(handoffs, Iterable):
        raise ConfigurationError(
            f"handoffs must be a list (handoffs=[billing]), got {handoffs!r}; put each agent "
            "in a list"
        )
    tools: list[TransferTool] = []
    for entry in handoffs:
        handoff = entry if isinstance(entry, Handoff) else None
        if handoff is None:
            if not isinstance(entry, AgentBase):
                raise ConfigurationError(
                    f"handoffs takes robota.Agent or robota.Handoff objects, got {entry!r}"
                )
            handoff = Handoff(entry)
        tool = TransferTool(handoff)
        if any(other.name == tool.name for other in tools):
            raise ConfigurationError(
                f"agent {owner!r}: two handoffs generate the tool name {tool.name!r}; give one "
                "a tool_name= (robota.Handoff(agent, tool_name=...)) or the agents other names"
            )
        tools.append(tool)
    return tools
