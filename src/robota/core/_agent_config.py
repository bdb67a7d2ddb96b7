"""The agent's configuration and the state it answers for (S13, S24, S31, S35).

A mixin of :class:`~robota.Agent`: which provider and model runs address (and the fallback
chain's providers), the context window known for them, the system prompt, the conversation
(:meth:`~robota.Agent.replace_history`) and the read-only properties a host reads. Construction
and validation are in :mod:`robota.core._agent`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from robota.core._agent_checks import check_text
from robota.core._agent_models import disable_sdk_retries
from robota.core._agent_options import check_non_negative
from robota.core._agent_state import AgentState
from robota.core._context import ContextUsage
from robota.core._errors import ConfigurationError, DisposedAgentError
from robota.core._history import ConversationStore, HistoryView
from robota.core._limits import UsageLimits
from robota.core._messages import Message, SystemMessage
from robota.core._models import ContextWindow, get_model_context_window, resolve_context_window
from robota.core._retry import RetryPolicy
from robota.core._texts import ModelTexts
from robota.core.execution._journal import ExecutionJournal
from robota.core.hooks._runner import HookRunner
from robota.core.providers._contract import Provider
from robota.core.tools._tool import Tool

__all__ = ["AgentConfigMixin", "ModelSelection"]


@final
@dataclass(frozen=True, slots=True)
class ModelSelection:
    """The provider and model an agent addresses; ``str()`` gives ``"provider:model"``."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


class AgentConfigMixin(AgentState):
    """Model selection, windows, system prompt, history and properties of :class:`~robota.Agent`."""

    if not TYPE_CHECKING:
        __slots__ = ()

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
            ledger.effective_tokens(check_non_negative(floor, "context_floor")),
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
