"""``ExecutionSettings``: what one run executes with, fixed when it starts.

A fallback switch (issue 28, S30) replaces a run's settings with the new model's provider, model
and window; nothing else in them changes during a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from robota.core._guardrails import Guardrail
from robota.core._limits import UsageLimits
from robota.core._retry import RetryPolicy
from robota.core._texts import ModelTexts
from robota.core._tracing import TraceContext
from robota.core.execution._cache import ResponseCache
from robota.core.execution._journal import RuntimeState
from robota.core.execution._retry import ModelCandidate
from robota.core.execution._structured import StructuredSettings
from robota.core.hooks._runner import HookRunner
from robota.core.providers._contract import Provider, ToolChoice
from robota.core.providers._effort import EffortSelection
from robota.core.providers._settings import NO_SETTINGS, ModelSettings

__all__ = ["ExecutionSettings"]


@final
@dataclass(frozen=True, slots=True)
class ExecutionSettings:
    """What one run executes with; fixed when the run starts."""

    agent_name: str
    provider: Provider
    model: str
    max_rounds: int
    tool_choice: ToolChoice
    native_tools: tuple[str, ...]
    max_same_tool_inputs: int | None
    allow_tool_only_completion: bool
    context_floor: int
    texts: ModelTexts
    response_cache: ResponseCache | None
    structured: StructuredSettings | None = None
    effort: EffortSelection = "auto"
    runtime_state: RuntimeState | None = None
    trace: TraceContext | None = None
    context_window: int | None = None
    """The window the caller passed (``Agent(context_window=...)``); it wins (S13)."""
    model_settings: ModelSettings = NO_SETTINGS
    """The agent's model settings with the run's laid over them (S28)."""
    hooks: HookRunner | None = None
    """Runs the run's own lifecycle hooks, ``UserPromptSubmit`` and ``Stop`` (S22)."""
    limits: UsageLimits | None = None
    """The agent's usage limits with the run's laid over them (S29, S31)."""
    retry: RetryPolicy | None = None
    """The run's retry policy for model calls (issue 28); ``None``: a failure is not retried."""
    fallback: tuple[ModelCandidate, ...] = ()
    guardrails: tuple[Guardrail, ...] = ()
    """The run's input and output guardrails (issue 29; tool guardrails wrap the tool gate)."""
    max_handoffs: int = 10
    """Transfers the run takes (issue 29): the entry agent's ``max_handoffs``, whole run."""
    """The models a switchable failure moves the call to, in the caller's order (S30)."""

    def fallback_pairs(self) -> tuple[tuple[Provider, str], ...]:
        """The fallback chain as (provider, model) pairs, in the caller's order."""
        return tuple((c.provider, c.model) for c in self.fallback)
