"""``robota demo``: an offline tour of what exists today.

The agent loop is not built yet, so this demo drives the foundation directly — history,
cancellation, usage and cost, the model registry, the error taxonomy — and says so. It prints no
imitation of agent output: the only "response" it handles is a fixed three-chunk stream that it
labels as scripted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TextIO

import robota


async def _scripted_stream(signal: robota.AbortSignal) -> AsyncIterator[str]:
    for chunk in ("Four", " is", " the answer."):
        signal.throw_if_aborted()
        yield chunk
        await asyncio.sleep(0)


async def _history_section(out: TextIO) -> None:
    store = robota.ConversationStore(system_prompt="You are a helpful assistant.")
    store.set_system_prompt("You answer in one short sentence.")
    store.append(robota.UserMessage("What is 2 + 2?"))
    heads = [m for m in store.messages if m.kind == "system"]
    out.write("1. Conversation history (S34, S35)\n")
    out.write(f"   system prompt set twice -> {len(heads)} system message: {heads[0].content!r}\n")

    controller = robota.AbortController()
    try:
        # Leaving the block by an exception commits what arrived as "interrupted" (S34).
        with store.begin_assistant(model="scripted") as pending:
            async for chunk in _scripted_stream(controller.signal):
                pending.append_text(chunk)
                if len(pending.text.split()) == 2:
                    controller.abort("user pressed stop")
    except robota.AbortError as error:
        out.write(
            "   a scripted 3-chunk reply, aborted after 2 chunks "
            f"(is_abort: {robota.is_abort(error, controller.signal)})\n"
        )
    committed = store.messages[-1]
    out.write(f"   committed: {committed.content!r} state={committed.state}\n")
    sent = store.provider_messages()[-1].content
    out.write(f"   what the next provider call is sent: {sent!r}\n")

    wording = robota.ProviderError("upstream aborted the stream after a policy check", status=502)
    out.write(
        f"   a provider error whose text says 'aborted' is an abort? {robota.is_abort(wording)}\n"
    )


def _usage_section(out: TextIO) -> None:
    out.write("2. Usage and cost (S29, S04)\n")
    usage = robota.Usage.from_counts(prompt=1_200, completion=300, cache_read=1_000)
    out.write(
        f"   {usage.prompt_tokens} prompt tokens ({usage.cache_read_tokens} from cache, part of "
        f"the prompt), {usage.completion_tokens} completion, total {usage.total_tokens}\n"
    )
    inconsistent = robota.Usage.from_counts(prompt=10, completion=5, total=99)
    out.write(f"   counts that do not add up are kept and marked partial: {inconsistent.partial}\n")
    model = "example-model-for-demo"
    robota.register_model_pricing(
        model,
        input_per_million=3.0,
        output_per_million=15.0,
        cache_read_per_million=0.3,
        replace=True,
    )
    cost = robota.estimate_cost(usage, model)
    out.write(f"   cost on a model priced 3/15/0.3 USD per 1M tokens: ${cost:.6f}\n")
    out.write(
        f"   cost on a model with no registered price: {robota.estimate_cost(usage, 'unpriced')}\n"
    )


def _models_section(out: TextIO) -> None:
    out.write("3. Model metadata (S13) and the diagnostic sink (S14)\n")
    robota.register_model_metadata("example-small-model", context_window=8_192, replace=True)
    window = robota.get_model_context_window("example-small-model")
    out.write(f"   registered model: context window {window}\n")
    records: list[logging.LogRecord] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    target = logging.getLogger("robota.demo")
    target.propagate = False
    target.addHandler(_Collect())
    previous = robota.set_global_logger_sink(robota.StdlibLoggingSink(target))
    try:
        for _ in range(3):
            robota.get_model_context_window("a-model-nobody-registered")
    finally:
        robota.set_global_logger_sink(previous)
    out.write(
        f"   unknown model asked 3 times -> {robota.DEFAULT_CONTEXT_WINDOW} each time, "
        f"{len(records)} warning through stdlib logging:\n"
    )
    for record in records:
        out.write(f"     {record.levelname}: {record.getMessage()}\n")


def _errors_section(out: TextIO) -> None:
    out.write("4. Errors (S42)\n")
    for error in (
        robota.RateLimitError("slow down", retry_after=2.0),
        robota.ProviderError("bad request", status=400),
        robota.ProviderError("no HTTP answer"),
    ):
        out.write(
            f"   {type(error).__name__}(status={error.status}): code={error.code} "
            f"category={error.category} recoverable={error.recoverable} "
            f"switchable={error.switchable}\n"
        )


def run_demo(out: TextIO) -> int:
    """Print the tour to ``out``; returns the exit code."""
    out.write(
        f"Robota {robota.__version__} — foundation demo, offline.\n"
        "The agent loop is not built yet (see README, Status); this exercises what exists.\n\n"
    )
    asyncio.run(_history_section(out))
    _usage_section(out)
    _models_section(out)
    _errors_section(out)
    return 0
