"""The conformance kit's scenarios, one coroutine each (see ``run_provider_conformance``).

Each check makes its provider calls in a fixed order (documented on the public runner, so a
replay fixture can script its responses) and raises :class:`ScenarioFailed` at the first
observable departure from the provider contract.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

from robota.core import (
    AssistantMessage,
    ProviderError,
    RunResult,
    Tool,
    ToolCall,
    ToolContext,
    ToolMessage,
    Usage,
    UserMessage,
)
from robota.core.providers import (
    ChatResponse,
    ResponseDone,
    ResponseFormat,
    ToolSpec,
)
from robota.core.schema import validate_against_json_schema
from robota.testing._conformance_abort import check_abort_mid_stream
from robota.testing._conformance_io import (
    AGENT_ROUNDS,
    TEXT_PROMPT,
    Collected,
    Limits,
    ScenarioFailed,
    being_cancelled,
    bounded,
    build_agent,
    build_request,
    check_text_reply,
    close_stream,
    collect,
    describe,
    discard_stream,
    last_assistant,
    next_event,
    offered_tools,
    open_stream,
    output_schema,
)
from robota.testing._conformance_target import DEFAULT_TOOL, ConformanceScenario, ConformanceTarget

__all__ = ["CHECKS"]

_TOOL_PROMPT: Final = (
    "Use the get_capital tool to look up the capital of France, then tell me what it is."
)
_PARALLEL_PROMPT: Final = (
    "Use the get_capital tool to look up the capitals of France and of Japan. Call the tool "
    "for both countries at once, in parallel, before answering."
)
_STRUCTURED_PROMPT: Final = (
    "What is the capital of France? Reply with only a JSON object matching this JSON Schema, "
    "and no other text:\n{schema}"
)


def _tool_prompt(target: ConformanceTarget, *, parallel: bool) -> str:
    if target.tools == (DEFAULT_TOOL,):
        return _PARALLEL_PROMPT if parallel else _TOOL_PROMPT
    names = ", ".join(spec.name for spec in target.tools)
    if parallel:
        return (
            f"Call the available tools ({names}) at least twice at once, in parallel, before "
            "answering."
        )
    return f"Use one of the available tools ({names}), then say what it returned."


@final
class _AnsweringTool(Tool):
    """A real tool body for one offered spec: answers ``tool_result``, records each call."""

    def __init__(self, spec: ToolSpec, answer: str) -> None:
        super().__init__(spec.name, spec.description, spec.parameters)
        self._answer = answer
        self.provider_call_ids: list[str | None] = []

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Record the provider's call id and answer."""
        self.provider_call_ids.append(ctx.provider_call_id)
        return self._answer


# ---------------------------------------------------------------------------------- text, stream


async def check_text(target: ConformanceTarget, limits: Limits) -> None:
    """``chat()`` answers a plain question with text and no tool calls (S28)."""
    request = build_request(target, [UserMessage(TEXT_PROMPT)])
    response = await bounded("chat()", lambda: target.provider.chat(request), limits.call_timeout)
    if not isinstance(response, ChatResponse):
        raise ScenarioFailed(f"chat() returned {response!r}, not a ChatResponse")
    if response.tool_calls:
        raise ScenarioFailed(
            f"chat() returned tool calls {response.tool_calls!r} for a request offering no tools"
        )
    check_text_reply("chat()", response.content, target)


async def check_stream(target: ConformanceTarget, limits: Limits) -> None:
    """``chat_stream()`` yields text deltas, then one ``ResponseDone`` last; closes early (S28)."""
    request = build_request(target, [UserMessage(TEXT_PROMPT)])
    got = await collect("chat_stream()", lambda: target.provider.chat_stream(request), limits)
    if got.calls:
        raise ScenarioFailed(
            f"chat_stream() yielded tool calls {got.calls!r} for a request offering no tools"
        )
    if not got.deltas:
        raise ScenarioFailed("chat_stream() yielded no TextDelta before its ResponseDone")
    check_text_reply("chat_stream()", got.text, target)

    what = "a second chat_stream(), closed after its first event"
    stream = open_stream(what, lambda: target.provider.chat_stream(request))
    try:
        first = await next_event(what, stream, limits)
    except BaseException:
        await discard_stream(stream)
        raise
    if first is None:
        raise ScenarioFailed(f"{what} ended without yielding any event")
    await close_stream(what, stream, limits)


# ------------------------------------------------------------------------------------ tool calls


def _check_calls(
    what: str, got: Collected, target: ConformanceTarget, *, minimum: int
) -> list[ToolCall]:
    calls = got.calls
    if len(calls) < minimum:
        raise ScenarioFailed(
            f"{what} yielded {len(calls)} ToolCallReady (at least {minimum} expected; text was "
            f"{got.text[:200]!r})"
        )
    offered = [spec.name for spec in target.tools]
    for index, call in enumerate(calls):
        where = f"{what}: tool call #{index + 1}"
        call_id: object = call.id  # an untyped adapter can put anything there
        if not isinstance(call_id, str) or not call_id:
            raise ScenarioFailed(
                f"{where} has id {call.id!r}; the id must be a non-empty string — the vendor's "
                "own, or one the adapter minted when the vendor gives none (S36)"
            )
        if call.name not in offered:
            raise ScenarioFailed(f"{where} names {call.name!r}, not an offered tool {offered}")
        try:
            arguments = json.loads(call.arguments)
        except (TypeError, ValueError) as exc:
            raise ScenarioFailed(
                f"{where} has arguments {call.arguments!r}, which are not JSON text: {exc}"
            ) from None
        if not isinstance(arguments, dict):
            raise ScenarioFailed(
                f"{where} has arguments {call.arguments!r}, which are not a JSON object"
            )
    ids = tuple(call.id for call in calls)
    if target.expected_tool_call_ids is not None and ids != target.expected_tool_call_ids:
        raise ScenarioFailed(
            f"{what} yielded tool-call ids {ids!r}, but the target expects "
            f"{target.expected_tool_call_ids!r}: pass the vendor's ids through untouched (S36)"
        )
    return calls


async def _tool_exchange(target: ConformanceTarget, limits: Limits, *, parallel: bool) -> None:
    """A tool-calling request, then the same conversation with every result linked by id."""
    label = "parallel tool request" if parallel else "tool request"
    user = UserMessage(_tool_prompt(target, parallel=parallel))
    first_request = build_request(target, [user], tools=True, tool_choice=target.tool_choice)
    first = await collect(
        f"chat_stream() ({label})", lambda: target.provider.chat_stream(first_request), limits
    )
    calls = _check_calls(f"chat_stream() ({label})", first, target, minimum=2 if parallel else 1)
    # S36: the ids go back exactly as the provider gave them, each result in call order.
    reply = AssistantMessage(
        first.text,
        tool_calls=tuple(calls),
        model=first.done.model,
        continuation=first.done.continuation,
    )
    results = [
        ToolMessage(target.tool_result, tool_call_id=call.id, tool_name=call.name) for call in calls
    ]
    second_request = build_request(target, [user, reply, *results], tools=True)
    what = f"chat_stream() (the {label}'s tool results sent back)"
    second = await collect(what, lambda: target.provider.chat_stream(second_request), limits)
    check_text_reply(what, second.text, target)


async def check_tool_round_trip(target: ConformanceTarget, limits: Limits) -> None:
    """A tool call arrives complete and its result, linked by id, yields text (S36, S28)."""
    await _tool_exchange(target, limits, parallel=False)
    tools = [_AnsweringTool(spec, target.tool_result) for spec in offered_tools(target)]
    async with build_agent(target, tools) as agent:
        result: RunResult[str] = await bounded(
            "Agent.run() with tools",
            lambda: agent.run(_tool_prompt(target, parallel=False)),
            limits.call_timeout * AGENT_ROUNDS,
        )
    what = "Agent.run() with tools"
    if result.status != "complete" or result.stop_reason != "end_turn":
        raise ScenarioFailed(
            f"{what} ended {result.status!r} with stop reason {result.stop_reason!r}; expected a "
            "complete run ending on a text reply after the tool results"
        )
    ran = [call_id for tool in tools for call_id in tool.provider_call_ids]
    if not ran or result.tool_calls_executed < 1:
        refused = [m.content for m in result.messages if isinstance(m, ToolMessage)]
        raise ScenarioFailed(
            f"{what}: no tool body ran (tool results the model was shown: {refused!r})"
        )
    asked = [
        call.id
        for message in result.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    ]
    if any(call_id not in asked for call_id in ran):
        raise ScenarioFailed(
            f"{what}: the tool bodies saw provider call ids {ran!r}, but the model's calls had "
            f"{asked!r} (S36)"
        )
    check_text_reply(what, result.text, target)


async def check_parallel_tool_calls(target: ConformanceTarget, limits: Limits) -> None:
    """Two or more calls in one response, ids kept, results sent back in call order (S36)."""
    await _tool_exchange(target, limits, parallel=True)


# ---------------------------------------------------------------------------- structured output


def _parse_json(what: str, text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ScenarioFailed(f"{what} replied {text[:300]!r}, which is not JSON: {exc}") from None


async def check_structured_output(target: ConformanceTarget, limits: Limits) -> None:
    """A ``json_schema`` response format yields a valid value, directly and via the agent (S18)."""
    schema = output_schema(target)
    prompt = _STRUCTURED_PROMPT.format(schema=json.dumps(schema))
    response_format = ResponseFormat("json_schema", schema=schema, name="conformance_output")
    request = build_request(target, [UserMessage(prompt)], response_format=response_format)
    what = "chat() with a json_schema response_format"
    response = await bounded(what, lambda: target.provider.chat(request), limits.call_timeout)
    if not isinstance(response, ChatResponse):
        raise ScenarioFailed(f"{what} returned {response!r}, not a ChatResponse")
    value = _parse_json(what, response.content)
    issues = validate_against_json_schema(schema, value)
    if issues:
        raise ScenarioFailed(f"{what} replied {value!r}, which breaks the schema: {issues}")

    what = "Agent.run(output=<schema>)"
    async with build_agent(target) as agent:
        result: RunResult[Any] = await bounded(
            what,
            lambda: agent.run(prompt, output=schema, output_retries=0),
            limits.call_timeout * AGENT_ROUNDS,
        )
    if result.status != "complete":
        raise ScenarioFailed(f"{what} ended {result.status!r}, not 'complete'")
    issues = validate_against_json_schema(schema, result.output)
    if issues:
        raise ScenarioFailed(f"{what} gave output {result.output!r}, invalid: {issues}")


# ------------------------------------------------------------------------------------- errors


def _check_provider_error(what: str, error: ProviderError, target: ConformanceTarget) -> None:
    name = target.provider.name
    if not error.message or not error.message.strip():
        raise ScenarioFailed(f"{what} raised {type(error).__name__} with an empty message")
    if error.provider != name:
        raise ScenarioFailed(
            f"{what} raised {describe(error)} with provider={error.provider!r}; set it to the "
            f"provider's name {name!r} (S42)"
        )
    expected = target.expected_error_status
    if expected is not None and error.status != expected:
        raise ScenarioFailed(
            f"{what} raised {describe(error)} with status={error.status!r}, expected {expected}"
        )
    switchable = target.expected_error_switchable
    if switchable is not None and error.switchable != switchable:
        raise ScenarioFailed(
            f"{what} raised {describe(error)} with switchable={error.switchable}, expected "
            f"{switchable} (S42)"
        )


async def _raise_from(
    what: str, call: Callable[[], Awaitable[object]], limits: Limits
) -> ProviderError:
    scope = asyncio.timeout(limits.call_timeout)
    try:
        async with scope:
            outcome = await call()
    except ProviderError as error:
        return error
    except asyncio.CancelledError:
        if being_cancelled():
            raise
        raise ScenarioFailed(
            f"{what} raised CancelledError instead of robota.ProviderError"
        ) from None
    except Exception as exc:
        if isinstance(exc, TimeoutError) and scope.expired():
            raise ScenarioFailed(
                f"{what} did not finish within {limits.call_timeout:g} s"
            ) from None
        raise ScenarioFailed(
            f"{what} raised {describe(exc)}, not a robota.ProviderError: translate vendor and "
            "transport exceptions at the adapter edge (S42)"
        ) from exc
    raise ScenarioFailed(
        f"{what} succeeded with {outcome!r}; the error_mapping transport must answer with a "
        "failure, which the adapter raises as robota.ProviderError"
    )


async def check_error_mapping(target: ConformanceTarget, limits: Limits) -> None:
    """A vendor failure surfaces as ``ProviderError`` with status and verdict, both APIs (S42)."""
    request = build_request(target, [UserMessage(TEXT_PROMPT)])
    error = await _raise_from("chat()", lambda: target.provider.chat(request), limits)
    _check_provider_error("chat()", error, target)

    async def drain() -> ResponseDone | None:
        stream = target.provider.chat_stream(request)
        try:
            async for event in stream:
                if isinstance(event, ResponseDone):
                    return event
            return None
        finally:
            await discard_stream(stream)

    error = await _raise_from("chat_stream()", drain, limits)
    _check_provider_error("chat_stream()", error, target)


# ------------------------------------------------------------------------------ usage and model


def _check_usage(what: str, usage: object) -> Usage:
    if not isinstance(usage, Usage):
        raise ScenarioFailed(
            f"{what} reported usage {usage!r}, not a robota Usage; build it with "
            "Usage.from_counts (S29)"
        )
    counts: tuple[object, ...] = (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)
    if any(not isinstance(n, int) or n < 0 for n in counts):
        raise ScenarioFailed(f"{what} reported {usage!r}: counts must be non-negative integers")
    if usage.partial:
        return usage  # S31: counts the adapter could not attest are kept as reported
    if usage.total_tokens != usage.prompt_tokens + usage.completion_tokens:
        raise ScenarioFailed(
            f"{what} reported {usage!r}: total_tokens is not prompt + completion, yet the usage "
            "is not marked partial (S29, S31)"
        )
    if (
        usage.cache_read_tokens is not None
        and not 0 <= usage.cache_read_tokens <= usage.prompt_tokens
    ):
        raise ScenarioFailed(
            f"{what} reported {usage!r}: the cache read is part of prompt_tokens, so it cannot "
            "exceed it (S29)"
        )
    if usage.prompt_tokens == 0 or usage.completion_tokens == 0:
        raise ScenarioFailed(
            f"{what} reported {usage!r}: a prompt and a reply cannot cost zero tokens; counts the "
            "vendor did not report make the usage partial (Usage.from_counts, S31)"
        )
    return usage


def _check_model(what: str, model: object, target: ConformanceTarget) -> None:
    if not isinstance(model, str) or not model.strip():
        raise ScenarioFailed(f"{what} reported model {model!r}; name the model that answered (S30)")
    if target.expected_model is not None and model != target.expected_model:
        raise ScenarioFailed(
            f"{what} reported model {model!r}, but the target expects {target.expected_model!r}"
        )


async def check_usage_and_model(target: ConformanceTarget, limits: Limits) -> None:
    """Usage is a consistent robota ``Usage`` and the answering model is named (S29–S31)."""
    request = build_request(target, [UserMessage(TEXT_PROMPT)])
    got = await collect("chat_stream()", lambda: target.provider.chat_stream(request), limits)
    _check_usage("chat_stream()'s ResponseDone", got.done.usage)
    _check_model("chat_stream()'s ResponseDone", got.done.model, target)
    response = await bounded("chat()", lambda: target.provider.chat(request), limits.call_timeout)
    if not isinstance(response, ChatResponse):
        raise ScenarioFailed(f"chat() returned {response!r}, not a ChatResponse")
    _check_usage("chat()'s ChatResponse", response.usage)
    _check_model("chat()'s ChatResponse", response.model, target)

    what = "Agent.run()"
    async with build_agent(target) as agent:
        result: RunResult[str] = await bounded(
            what, lambda: agent.run(TEXT_PROMPT), limits.call_timeout
        )
    if result.status != "complete" or result.rounds != 1:
        raise ScenarioFailed(
            f"{what} ended {result.status!r} after {result.rounds} rounds; expected one complete "
            "round for a plain question"
        )
    committed = last_assistant(result.messages)
    if committed is None:
        raise ScenarioFailed(f"{what} committed no assistant reply")
    usage = _check_usage("RunResult", result.usage)
    if committed.usage is None or usage.to_triple() != committed.usage.to_triple():
        raise ScenarioFailed(
            f"{what}: RunResult.usage {usage!r} does not reflect the reply's usage "
            f"{committed.usage!r}"
        )
    _check_model("RunResult", result.model, target)
    if result.model != committed.model:
        raise ScenarioFailed(
            f"{what}: RunResult.model {result.model!r} differs from the committed reply's "
            f"{committed.model!r} (S30)"
        )


CHECKS: Final[
    Mapping[ConformanceScenario, Callable[[ConformanceTarget, Limits], Awaitable[None]]]
] = {
    "text": check_text,
    "stream": check_stream,
    "tool_round_trip": check_tool_round_trip,
    "parallel_tool_calls": check_parallel_tool_calls,
    "structured_output": check_structured_output,
    "abort_mid_stream": check_abort_mid_stream,
    "error_mapping": check_error_mapping,
    "usage_and_model": check_usage_and_model,
}
"""Each scenario's check, by name."""
