"""The run's own hook fire sites (S22): ``UserPromptSubmit`` and ``Stop``.

Both are awaited and inspected (see :data:`~robota.core.hooks.HOOK_EVENTS`):

* ``UserPromptSubmit`` runs before the prompt enters history. A deny ends the turn before any
  model call (:class:`~robota.HookBlockedError`); the additional context of the hooks that
  allowed travels after the prompt, in the same user message, as
  :attr:`~robota.ModelTexts.prompt_hook_context`. A hook that fails is advisory: the turn goes
  on without its context.
* ``Stop`` runs when the model ends its turn with a reply. A block continues the run with the
  hook's reason as a user message (:attr:`~robota.ModelTexts.stop_hook_feedback`), at most
  :attr:`~robota.core.hooks.HookRunner.max_stop_continuations` times per run; the payload's
  ``stop_hook_active`` tells a hook it already continued this run, so it can let it end.
"""

from __future__ import annotations

from typing import Final

from robota.core._abort import AbortSignal
from robota.core._errors import HookBlockedError
from robota.core._parts import MessagePart, TextPart, content_text
from robota.core._texts import ModelTexts, render
from robota.core.hooks._runner import HookRunner

__all__ = ["MAX_HOOK_CONTEXT_CHARS", "prompt_hooks", "stop_hooks"]

MAX_HOOK_CONTEXT_CHARS: Final = 10_000
"""The most characters of one hook's additional context sent to the model; the rest is cut."""


async def prompt_hooks(
    runner: HookRunner,
    prompt: str | tuple[MessagePart, ...],
    *,
    execution_id: str,
    texts: ModelTexts,
    signal: AbortSignal | None,
    traceparent: str | None,
) -> str | tuple[MessagePart, ...]:
    """Run ``UserPromptSubmit``; the user message's content, with any hook context after it.

    Raises:
        HookBlockedError: a hook denied the prompt.
    """
    if not runner.configured("UserPromptSubmit"):
        return prompt
    result = await runner.run(
        "UserPromptSubmit",
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": content_text(prompt),
            "execution_id": execution_id,
        },
        signal=signal,
        traceparent=traceparent,
    )
    if result.blocked:
        raise HookBlockedError(
            f"a UserPromptSubmit hook blocked the prompt: {result.reason}",
            event="UserPromptSubmit",
            reason=result.reason,
        )
    if not result.context:
        return prompt
    context = "\n\n".join(_bounded(text) for text in result.context)
    added = TextPart(render(texts.prompt_hook_context, context=context))
    if isinstance(prompt, str):
        return (TextPart(prompt), added)
    return (*prompt, added)


def _bounded(text: str) -> str:
    if len(text) <= MAX_HOOK_CONTEXT_CHARS:
        return text
    cut = len(text) - MAX_HOOK_CONTEXT_CHARS
    return f"{text[:MAX_HOOK_CONTEXT_CHARS]}\n[{cut} more characters of hook context cut]"


async def stop_hooks(
    runner: HookRunner,
    reply: str,
    *,
    execution_id: str,
    continuations: int,
    signal: AbortSignal | None,
    traceparent: str | None,
) -> str | None:
    """Run ``Stop``; the reason to continue the run, or ``None`` to let it end."""
    if continuations >= runner.max_stop_continuations or not runner.configured("Stop"):
        return None
    result = await runner.run(
        "Stop",
        {
            "hook_event_name": "Stop",
            "stop_hook_active": continuations > 0,
            "last_assistant_message": reply,
            "execution_id": execution_id,
        },
        signal=signal,
        traceparent=traceparent,
    )
    return result.reason if result.blocked else None
