"""Every text core can place in front of a model, in one object (S35 override seam).

This foundation layer injects no persona or product vocabulary: each text below defaults to
neutral mechanism wording, and :class:`ModelTexts` is the one seam a product layer replaces it
through (``Agent(texts=ModelTexts(...))``). A new model-facing string added to core gets a field
here (S35: a standing design rule, not a one-time inventory).

Templates name their values as ``{placeholder}``; each field documents the ones it takes. The
values are substituted in one pass, so a value that itself contains ``{...}`` is left as it is.
A template naming a placeholder its field does not define — or missing one the field needs — is
refused when the object is built, with a :class:`~robota.ConfigurationError` naming it. Only
``{word}`` (letters, digits, ``_``) is read as a placeholder; other braces (JSON, say) are text.
"""

from __future__ import annotations

import contextvars
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Final, final

from robota.core._context import CONTEXT_GUARD_THRESHOLD, ContextUsage
from robota.core._errors import ConfigurationError
from robota.core._text_check import check_text

__all__ = [
    "DEFAULT_INTERRUPTED_ANNOTATION",
    "DEFAULT_OUTPUT_FEEDBACK",
    "DEFAULT_OUTPUT_INSTRUCTION",
    "DEFAULT_SUMMARY_FALLBACK",
    "DEFAULT_SUMMARY_INSTRUCTION",
    "DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION",
    "LEGACY_TEXT_OPTIONS",
    "ContextLimitMessage",
    "ModelTexts",
    "default_context_limit_message",
    "render",
    "texts_from_options",
]

DEFAULT_SUMMARY_INSTRUCTION: Final = (
    "The tool-call budget for this turn is used up. Do not call any tools. Reply with what has "
    "been done and found so far, and what remains unfinished."
)
"""The per-call instruction of the forced summary (S39)."""

DEFAULT_SUMMARY_FALLBACK: Final = (
    "The tool-call budget for this turn was used up before a final answer was produced."
)
"""The run's output when the forced summary produces no text (S39)."""

DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION: Final = (
    "These tool calls were not executed because no tool of that name is available: {calls}. "
    "Do not call any tools. Reply using only what you already have."
)
"""The per-call instruction of the final call forced by repeated unavailable tools (S37);
``{calls}`` is replaced by the calls that never ran."""

DEFAULT_OUTPUT_INSTRUCTION: Final = (
    "Reply with only a JSON value that matches this JSON Schema, and no other text:\n{schema}"
)
"""The first attempt's system instruction (S18, S35 seam); ``{schema}`` is the schema as JSON."""

DEFAULT_OUTPUT_FEEDBACK: Final = (
    "The previous reply did not match the required JSON Schema:\n{issues}\n"
    "Reply again with only a JSON value that matches this JSON Schema:\n{schema}"
)
"""The retry turn's text (S18, S35 seam); ``{issues}`` lists the problems, one per line."""

DEFAULT_INTERRUPTED_ANNOTATION: Final = "[This response was interrupted before it was completed.]"
"""Neutral text appended to an interrupted assistant message when it is sent back to a model (S34).
Override it per store (S35: every model-facing string has a seam)."""

ContextLimitMessage = Callable[[ContextUsage], str]
"""Builds the diagnostic committed when the pre-send guard blocks a request (S39 seam)."""


def default_context_limit_message(usage: ContextUsage) -> str:
    """The neutral diagnostic for a request the context guard did not send."""
    if usage.window is None:  # the guard only blocks against a known window; kept total
        return (
            f"The request was not sent: it needs about {usage.tokens:,} tokens. "
            "Shorten the conversation or start a new one."
        )
    return (
        f"The request was not sent: it needs about {usage.tokens:,} tokens, more than "
        f"{int(usage.window * CONTEXT_GUARD_THRESHOLD):,} of the model's "
        f"{usage.window:,}-token context window. "
        "Shorten the conversation or start a new one."
    )


_OMITTED: Final = "[Result omitted: no room left in the context window. The call to {tool}{source} "

# field → (placeholders it may use, placeholders it must use)
_TEMPLATES: Final[Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "summary_instruction": (frozenset(), frozenset()),
    "summary_fallback": (frozenset(), frozenset()),
    "unavailable_tools_instruction": (frozenset({"calls"}), frozenset({"calls"})),
    "output_instruction": (frozenset({"schema"}), frozenset({"schema"})),
    "output_feedback": (frozenset({"issues", "schema"}), frozenset({"issues"})),
    "interrupted_annotation": (frozenset(), frozenset()),
    "unavailable_tool_result": (frozenset({"tool", "available"}), frozenset({"tool", "available"})),
    "deferred_tools_hint": (frozenset({"count"}), frozenset()),
    "omitted_completed_notice": (frozenset({"tool", "source"}), frozenset()),
    "omitted_failed_notice": (frozenset({"tool", "source"}), frozenset()),
    "omitted_unexecuted_notice": (frozenset({"tool", "source", "status"}), frozenset()),
    "not_dispatched_result": (frozenset({"reason"}), frozenset()),
    "invalid_arguments_result": (frozenset({"tool", "problem"}), frozenset({"problem"})),
    "rejected_arguments_result": (frozenset({"tool", "problem"}), frozenset({"problem"})),
    "broken_schema_result": (frozenset({"tool"}), frozenset()),
    "tool_failure_result": (frozenset({"tool", "error"}), frozenset()),
    "request_failed_notice": (frozenset({"error"}), frozenset()),
    "permission_denied_result": (frozenset({"reason"}), frozenset()),
    "no_approver_result": (frozenset({"reason"}), frozenset()),
    "declined_result": (frozenset({"reason"}), frozenset()),
    "hook_blocked_result": (frozenset({"reason"}), frozenset()),
    "prompt_hook_context": (frozenset({"context"}), frozenset({"context"})),
    "stop_hook_feedback": (frozenset({"reason"}), frozenset({"reason"})),
    "media_omitted_notice": (frozenset({"media", "model"}), frozenset()),
    "tool_search_description": (frozenset(), frozenset()),
    "tool_search_loaded_note": (frozenset(), frozenset()),
    "tool_search_no_match_note": (frozenset(), frozenset()),
    "tool_search_query_description": (frozenset(), frozenset()),
    "tool_search_max_results_description": (frozenset({"default"}), frozenset()),
    "interrupted_before_start": (frozenset(), frozenset()),
    "interrupted_while_running": (frozenset(), frozenset()),
    "abandoned_while_running": (frozenset(), frozenset()),
    "oversized_result": (
        frozenset({"tool", "size", "limit"}),
        frozenset(),
    ),
    "setup_failed_error": (frozenset({"error"}), frozenset()),
    "handoff_result": (frozenset({"agent"}), frozenset()),
    "handoff_refused_result": (frozenset({"agent", "reason"}), frozenset({"reason"})),
    "settled_failed_result": (frozenset(), frozenset()),
}

# Set while the deprecated Agent keywords are mapped: their texts are type-checked but their
# placeholders are not (they took any text before ModelTexts; `render` leaves unknown names as
# written).
_LEGACY: Final = contextvars.ContextVar("robota_legacy_texts", default=False)
_PLACEHOLDER: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render(template: str, **values: str) -> str:
    """``template`` with each ``{name}`` in ``values`` replaced, in one pass."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


@final
@dataclass(frozen=True, slots=True)
class ModelTexts:
    """Every text core can place in front of a model, each with a neutral default (S35).

    Pass one to :class:`~robota.Agent` as ``texts=``; change a few fields with
    :func:`dataclasses.replace` or by naming only those (the rest keep their defaults)::

        texts = robota.ModelTexts(summary_fallback="Out of steps.")
        agent = robota.Agent("openai:gpt-5-mini", texts=texts)

    Immutable and checked when built: a field that is not a string (``context_limit_message``:
    not a function) or a template with an unknown or missing placeholder raises
    :class:`~robota.ConfigurationError` naming the field and the placeholder. Placeholders are
    ``{name}``; other braces are kept as text. ``{tool}`` is always the tool's name in quotes
    as Python's ``repr`` writes it (``'search'``).

    Per-call instructions and run output (S37, S39, S18):

    Attributes:
        summary_instruction: Added as a user message to the one forced summary call when the
            round budget is used up (S39); only in that request, never in history. Default
            :data:`~robota.DEFAULT_SUMMARY_INSTRUCTION`.
        summary_fallback: The run's output (and committed reply) when that summary call
            produces no text. Default :data:`~robota.DEFAULT_SUMMARY_FALLBACK`.
        unavailable_tools_instruction: Added as a user message to the final call forced after
            repeated unavailable tool calls (S37); ``{calls}`` (required) names the calls that
            never ran. Default :data:`~robota.DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION`.
        context_limit_message: A function of the :class:`~robota.ContextUsage` returning the
            diagnostic committed to history when the pre-send guard blocks a request (S39).
            Default :func:`~robota.default_context_limit_message`.
        output_instruction: Appended to the system message of a structured-output request when
            the provider has no native schema parameter (S18); ``{schema}`` (required) is the
            JSON Schema. Default :data:`~robota.DEFAULT_OUTPUT_INSTRUCTION`.
        output_feedback: The user message of the retry turn after an invalid structured reply
            (S18); ``{issues}`` (required) lists the problems, ``{schema}`` is the schema.
            Default :data:`~robota.DEFAULT_OUTPUT_FEEDBACK`.
        interrupted_annotation: Appended (after a blank line) to an interrupted assistant reply
            whenever history is sent to a model (S34). Default
            :data:`~robota.DEFAULT_INTERRUPTED_ANNOTATION`.
        unavailable_tool_result: The tool result of a call naming no registered tool (S37);
            ``{tool}`` and ``{available}`` (both required: the offered tool names joined with
            ``", "``, or ``none``). Default ``"Tool {tool} is not available, so this call was
            not executed. Available tools: {available}."``.
        deferred_tools_hint: Appended after a space to that result when some tools are withheld
            until ``tool_search`` finds them (S19); ``{count}`` is how many. Default
            ``"{count} more can be found with tool_search."``.
        omitted_completed_notice: Replaces a completed call's result the context budget has no
            room for (S39); ``{tool}``, ``{source}`` (``" (source: …)"`` or empty). Default
            says the call completed and must not be repeated.
        omitted_failed_notice: The same, for a call that failed while running: its effects may
            be partial. Placeholders as above.
        omitted_unexecuted_notice: The same, for a call that never ran; ``{status}`` is its
            outcome (``"refused"``, ``"not dispatched"`` …).
        not_dispatched_result: The tool result of a committed call a guard stopped before
            dispatch (S39), or one whose response did not complete; ``{reason}`` says why.
            Default ``"This tool call was not dispatched: {reason}"``.
        invalid_arguments_result: The tool result of a call whose arguments are not a JSON
            object (S16); ``{tool}``, ``{problem}`` (required). Default ``"Invalid arguments
            for tool {tool}: {problem}."``.
        rejected_arguments_result: The tool result of a call whose arguments do not match the
            tool's schema (S16); ``{problem}`` (required) lists the issues, ``{tool}``. Default
            ``"{problem}. Fix the arguments and call the tool again."``.
        broken_schema_result: The tool result of a call to a tool whose own parameter schema
            is invalid (S16): the model is told not to retry. ``{tool}``.
        tool_failure_result: The tool result of a body that raised (S39); ``{tool}``,
            ``{error}`` (the error's message, or ``"TypeName: detail"``). Default ``"Tool
            {tool} failed: {error}"``.
        request_failed_notice: Appended to the committed assistant reply (after a blank line
            when it has text) when a provider call fails (S39); ``{error}`` is the failure's
            message. Default ``"Request failed: {error}"``.
        permission_denied_result: The tool result of a call the permission policy denies
            (S21, :class:`~robota.PermissionGate`); ``{reason}`` is the rule's reason. Default
            ``"Permission denied: {reason}."``.
        no_approver_result: The tool result of a call that needs approval when no approver is
            attached (S21); ``{reason}`` says why it asks.
        declined_result: The tool result of a call the person declined (S21); ``{reason}`` is
            ``": "`` and their reason, or empty. Default ``"The user declined this
            call{reason}."``.
        hook_blocked_result: The tool result of a call a ``PreToolUse`` hook blocked (S22);
            ``{reason}`` is the hook's. Default ``"Blocked by a hook: {reason}"``.
        prompt_hook_context: The text part a ``UserPromptSubmit`` hook's additional context is
            sent as, after the prompt in the same user message (S22); ``{context}`` is the
            hooks' context. Default: ``"Context added by a hook:"``, a line break, ``{context}``.
        media_omitted_notice: Sent in place of a media part in history (a tool's image, an
            earlier turn's PDF) that the model is stated not to take (S30); ``{media}``
            (``"images"``, ``"PDF documents"``, ``"audio"``) and ``{model}``. Default
            ``"[{media} omitted: model {model} does not take {media}]"``.
        stop_hook_feedback: The user message that continues a run a ``Stop`` hook blocked
            (S22); ``{reason}`` is the hook's. Default ``"A Stop hook asked you to continue:
            {reason}"``.
        tool_search_description: The description of the built-in ``tool_search`` tool, sent
            with its schema while tool deferral is engaged (S19).
        tool_search_loaded_note: The ``note`` in a ``tool_search`` result that loaded tools.
        tool_search_no_match_note: The ``note`` in a ``tool_search`` result that found none.
        tool_search_query_description: The description of ``tool_search``'s ``query``
            parameter, in its JSON Schema. Default ``"Keywords describing the tool needed, or
            select:<names>."``.
        tool_search_max_results_description: The description of its ``max_results``
            parameter; ``{default}`` is how many it loads when not told. Default ``"How many
            tools to load (default {default})."``.
        interrupted_before_start: The tool result of a call the run's abort reached before it
            started (S38). Default ``"Interrupted by user before this tool started; it did not
            run."``.
        interrupted_while_running: The tool result of a body that stopped on the run's abort
            (S38). Default ``"Interrupted by user while this tool was running."``.
        abandoned_while_running: The tool result of a body the run stopped waiting for
            (:meth:`~robota.AbortController.abandon`). Default ``"Interrupted by user while this
            tool was running: the run stopped waiting for it, so what it did before it was
            stopped is unknown."``.
        handoff_result: The result of a ``transfer_to_<name>`` call the run takes (issue 29);
            ``{agent}`` is the receiver's name. Default ``"Transferred to {agent}, which
            continues the conversation."``.
        handoff_refused_result: The result of a transfer the run refuses (a second one in a
            response, the run's handoff limit …); ``{reason}`` (required) says why. Default
            ``"Not transferred to {agent}: {reason}."``.

    Texts a host places when it runs the calls elsewhere (``robota.temporal``):

    Attributes:
        oversized_result: The tool result of a call whose result is larger than the host can
            carry and has nowhere to store (Temporal without an execution journal); ``{tool}``,
            ``{size}`` (bytes), ``{limit}`` (bytes). Default says the result was not kept and
            asks for less.
        setup_failed_error: The error, inside :attr:`tool_failure_result`, of a call whose
            worker could not start the body (an unknown tool, a newer payload): it never ran.
            ``{error}`` is the worker's message. Default ``"the tool activity failed:
            {error}"``.
        settled_failed_result: The tool result of a call whose uncertain effect the host
            settled as failed without giving a text (S40). Default ``"The call's effect was
            settled as failed."``.
    """

    summary_instruction: str = DEFAULT_SUMMARY_INSTRUCTION
    summary_fallback: str = DEFAULT_SUMMARY_FALLBACK
    unavailable_tools_instruction: str = DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION
    context_limit_message: ContextLimitMessage = default_context_limit_message
    output_instruction: str = DEFAULT_OUTPUT_INSTRUCTION
    output_feedback: str = DEFAULT_OUTPUT_FEEDBACK
    interrupted_annotation: str = DEFAULT_INTERRUPTED_ANNOTATION
    unavailable_tool_result: str = (
        "Tool {tool} is not available, so this call was not executed. Available tools: {available}."
    )
    deferred_tools_hint: str = "{count} more can be found with tool_search."
    omitted_completed_notice: str = (
        _OMITTED + "completed and its effects happened; do not repeat it. Ask for a smaller part "
        "of the result if you need it.]"
    )
    omitted_failed_notice: str = (
        _OMITTED + "failed while running; its effects may be partial or uncertain. Check the "
        "current state before trying again.]"
    )
    omitted_unexecuted_notice: str = _OMITTED + "was not executed ({status}).]"
    not_dispatched_result: str = "This tool call was not dispatched: {reason}"
    invalid_arguments_result: str = "Invalid arguments for tool {tool}: {problem}."
    rejected_arguments_result: str = "{problem}. Fix the arguments and call the tool again."
    broken_schema_result: str = (
        "Tool {tool} cannot be called: its parameter schema is invalid. This is an error in the "
        "tool's definition, not in your arguments; do not call it again."
    )
    tool_failure_result: str = "Tool {tool} failed: {error}"
    request_failed_notice: str = "Request failed: {error}"
    permission_denied_result: str = "Permission denied: {reason}."
    no_approver_result: str = (
        "Permission denied: {reason}; approval is required and no one is attached to give it."
    )
    declined_result: str = "The user declined this call{reason}."
    hook_blocked_result: str = "Blocked by a hook: {reason}"
    prompt_hook_context: str = "Context added by a hook:\n{context}"
    stop_hook_feedback: str = "A Stop hook asked you to continue: {reason}"
    media_omitted_notice: str = "[{media} omitted: model {model} does not take {media}]"
    tool_search_description: str = (
        "Find more tools. Some tools are not listed yet; search their names and descriptions "
        "with keywords, or pick exact names with 'select:name1,name2'. Tools found become "
        "callable from your next step."
    )
    tool_search_loaded_note: str = "These tools are loaded and can be called from your next step."
    tool_search_no_match_note: str = "No tool matched; try other keywords."
    tool_search_query_description: str = "Keywords describing the tool needed, or select:<names>."
    tool_search_max_results_description: str = "How many tools to load (default {default})."
    interrupted_before_start: str = "Interrupted by user before this tool started; it did not run."
    interrupted_while_running: str = "Interrupted by user while this tool was running."
    abandoned_while_running: str = (
        "Interrupted by user while this tool was running: the run stopped waiting for it, so "
        "what it did before it was stopped is unknown."
    )
    handoff_result: str = "Transferred to {agent}, which continues the conversation."
    handoff_refused_result: str = "Not transferred to {agent}: {reason}."
    oversized_result: str = (
        "Tool {tool} returned {size} bytes, more than the {limit} a Temporal payload carries "
        "inline, and no execution journal is configured to hold it; the result was not kept. "
        "Ask for less (a range, a summary)."
    )
    setup_failed_error: str = "the tool activity failed: {error}"
    settled_failed_result: str = "The call's effect was settled as failed."

    def render(self, field: str, /, **values: str) -> str:
        """The text of ``field`` with its ``{placeholders}`` replaced by ``values``, in one pass.

        For a host that places one of these texts itself (``robota.temporal``): a placeholder
        not in ``values`` is left as written.

        Raises:
            ValueError: for a name that is not one of the template fields above.
        """
        if field not in _TEMPLATES:
            raise ValueError(f"ModelTexts has no template field {field!r}")
        template: str = getattr(self, field)
        return render(template, **values)

    def __post_init__(self) -> None:
        if not callable(self.context_limit_message):
            raise ConfigurationError(
                "ModelTexts.context_limit_message must be a function of the ContextUsage "
                f"returning a string, got {type(self.context_limit_message).__name__}"
            )
        for name, (allowed, required) in _TEMPLATES.items():
            value: object = getattr(self, name)
            if not isinstance(value, str):
                raise ConfigurationError(
                    f"ModelTexts.{name} must be a string, got {type(value).__name__} {value!r}"
                )
            check_text(value, f"ModelTexts.{name}")
            if _LEGACY.get():
                continue  # a deprecated Agent keyword keeps what it accepted before
            used = set(_PLACEHOLDER.findall(value))
            for unknown in sorted(used - allowed):
                takes = ", ".join("{" + p + "}" for p in sorted(allowed)) or "no placeholders"
                raise ConfigurationError(
                    f"ModelTexts.{name} has the unknown placeholder {{{unknown}}}; it takes "
                    f"{takes} — remove it, or write the text without braces"
                )
            for missing in sorted(required - used):
                raise ConfigurationError(
                    f"ModelTexts.{name} must contain the placeholder {{{missing}}}: without it "
                    "the model is not told what it needs"
                )


LEGACY_TEXT_OPTIONS: Final = (
    "summary_instruction",
    "summary_fallback",
    "unavailable_tools_instruction",
    "context_limit_message",
    "interrupted_annotation",
    "output_instruction",
    "output_feedback",
)
"""The ``Agent`` keywords :class:`ModelTexts` replaces; deprecated, removed one release later."""


def texts_from_options(texts: object, legacy: Mapping[str, object]) -> ModelTexts:
    """The agent's texts from ``texts=`` or the deprecated keywords in ``legacy`` (not ``None``).

    Each deprecated keyword given warns (:class:`DeprecationWarning`, pointing at the caller of
    ``Agent(...)``) and maps onto its field.

    Raises:
        ConfigurationError: when both are given, or ``texts`` is not a :class:`ModelTexts`.
    """
    given = {name: value for name, value in legacy.items() if value is not None}
    if texts is not None:
        if not isinstance(texts, ModelTexts):
            raise ConfigurationError(
                f"texts must be a robota.ModelTexts (texts=robota.ModelTexts(...)), got "
                f"{type(texts).__name__}"
            )
        if given:
            names = ", ".join(f"{name}=" for name in given)
            raise ConfigurationError(
                f"pass the model-facing texts either as texts= or as {names}, not both; put "
                f"them in the ModelTexts (robota.ModelTexts({next(iter(given))}=...))"
            )
        return texts
    for name in given:
        warnings.warn(
            f"Agent({name}=...) is deprecated and will be removed in the next release; pass "
            f"texts=robota.ModelTexts({name}=...) instead",
            DeprecationWarning,
            stacklevel=3,
        )
    if not given:
        return _DEFAULT
    token = _LEGACY.set(True)
    try:
        return replace(_DEFAULT, **given)  # type: ignore[arg-type]
    except ConfigurationError as error:
        # The keyword, not the field, is what the caller wrote.
        raise ConfigurationError(error.message.replace("ModelTexts.", "", 1)) from None
    finally:
        _LEGACY.reset(token)


_DEFAULT: Final = ModelTexts()

assert {f.name for f in fields(ModelTexts)} == {*_TEMPLATES, "context_limit_message"}
