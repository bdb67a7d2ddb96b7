"""Whether a fallback model can serve a run, and what its switch reports (S17, S18, S24, S30).

A run that moves to another model of the caller's chain (:mod:`._retry`) is re-projected for it
by the loop — the structured-output transport is asked of the new model (S18), tool schemas are
projected by the new provider (S17), effort and settings are resolved and reported per model
(S24, S28) and media in history the new model cannot take go as a notice (S30). What cannot be
re-projected refuses the candidate with the reason, never dropped silently:

* tools the run offers, on a model whose table says it takes none;
* a provider-hosted tool the run asked for that the new provider does not support or enable;
* media in the user's own messages that the new model is stated not to accept.
"""

from __future__ import annotations

from collections.abc import Sequence

from robota.core._errors import ConfigurationError
from robota.core._messages import Message, UserMessage
from robota.core.execution._retry import ModelCandidate
from robota.core.providers._capabilities import check_media, check_native_tools, model_capability

__all__ = ["candidate_refusal"]


def candidate_refusal(
    candidate: ModelCandidate,
    *,
    tools_offered: bool,
    native_tools: Sequence[str],
    media_messages: Sequence[Message],
) -> str | None:
    """Why ``candidate`` cannot serve the run, or ``None`` when it can (S30).

    Only a capability the candidate's table states absent refuses it: silence about a
    capability is not a denial (S30), so an unknown one lets the candidate's server decide.
    """
    provider, model = candidate.provider, candidate.model
    if tools_offered and model_capability(provider, model, "tools") is False:
        return f"model {model!r} on provider {provider.name!r} takes no tools; this run offers some"
    try:
        check_native_tools(provider, native_tools)
        # S30: the user's own media must reach the model; a tool's media go as a notice.
        check_media(provider, model, [m for m in media_messages if isinstance(m, UserMessage)])
    except ConfigurationError as refused:
        return refused.message
    return None
