"""The run's context window and its pre-send guard (S13, S31, S39).

A mixin of :class:`~robota.core.execution._loop.Execution`: the window is resolved once per run
(the caller's, the server's report, the registered table; else unknown, and then nothing is
checked), and a request whose estimated input passes the guard threshold is not sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from robota.core._abort import is_abort
from robota.core._cancel import AbortGuard
from robota.core._context import (
    CONTEXT_GUARD_THRESHOLD,
    ContextUsage,
    estimate_text_tokens,
    estimate_tools_tokens,
)
from robota.core._events import EventNames
from robota.core._models import get_model_context_window, resolve_context_window
from robota.core.execution._loop_state import LoopState
from robota.core.providers._contract import ChatRequest, ToolSpec

__all__ = ["ContextGuardMixin"]


class ContextGuardMixin(LoopState):
    """The context window and the pre-send guard of :class:`Execution`."""

    if not TYPE_CHECKING:
        __slots__ = ()

    def _input_estimate(self, request: ChatRequest, extra: str) -> int:
        """The pre-send estimate of a request's input tokens (S31, S39)."""
        return (
            self._store.context.effective_tokens(self.settings.context_floor)
            + self._tools_tokens_of(request.tools)
            + (estimate_text_tokens(extra) if extra else 0)
        )

    def _context_guard(self, request: ChatRequest, extra: str) -> ContextUsage | None:
        # S39 pre-send guard: estimate the request against the model's window (S13, S31).
        tokens = self._input_estimate(request, extra)
        window = self._context_window()
        if window is None or tokens <= CONTEXT_GUARD_THRESHOLD * window:
            return None  # an unknown window has no size to check against (S13, S39)
        usage = ContextUsage(tokens, window, self._store.context.reported)
        if self.emitter.enabled:
            self.emitter.emit(
                EventNames.CONTEXT_BLOCKED,
                {"tokens": tokens, "window": window, "threshold": CONTEXT_GUARD_THRESHOLD},
            )
        return usage

    async def _resolve_window(self) -> None:
        # S13/S39: once per run, before its first call — the caller's window, the server's
        # report, the registered table; else unknown, which the run states (event and result).
        settings = self.settings
        try:
            # S23: the question is one more await the run's abort ends; the run then settles as
            # interrupted at its first round, with the window left unresolved.
            with AbortGuard(self._signal) as guard:
                window = await guard.call(
                    lambda: resolve_context_window(
                        settings.provider, settings.model, given=settings.context_window
                    )
                )
        except Exception as error:
            if is_abort(error, self._signal):
                return
            raise
        self._window = window
        if not window.known and self.emitter.enabled:
            self.emitter.emit(
                EventNames.CONTEXT_WINDOW_UNKNOWN,
                {"model": settings.model, "provider": settings.provider.name},
            )

    def _context_window(self) -> int | None:
        if self._window is None:
            # Not resolved yet (nothing awaited so far): the caller's window or the table.
            settings = self.settings
            if settings.context_window is not None:
                return settings.context_window
            return get_model_context_window(settings.model, provider=settings.provider.name)
        return self._window.tokens

    def _tools_tokens_of(self, specs: tuple[ToolSpec, ...]) -> int:
        cached_specs, tokens = self._tools_tokens
        if cached_specs is not specs:
            tokens = estimate_tools_tokens(specs)
            self._tools_tokens = (specs, tokens)
        return tokens
