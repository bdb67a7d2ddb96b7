"""A worker process for the crash trials (S40): runs, kills itself at a boundary, recovers.

Usage: ``python crash_worker.py MODE SCENARIO JOURNAL EXECUTION_ID EFFECTS_FILE [KILL_AT]``

* ``MODE``: ``run`` starts the execution; ``race`` resumes once without retrying and reports
  how long it took; ``recover`` acts as a host after a crash — resume,
  settle every reconciliation item by looking at the external effects file (an effect whose
  call id is in the file happened; anything else did not), answer a pending request, resume
  again — and prints what it saw; ``respond`` answers the pending request and exits; ``resume``
  resumes once and prints the result.
* ``SCENARIO``: ``tools`` (two rounds, three effects, two of them in one response),
  ``suspend`` (a tool that waits for an outside response beside an ordinary effect) or
  ``structured`` (S18: ``output=City``; the first reply does not validate, the retry does; every
  model call this process dispatches is logged to ``EFFECTS.model``) or ``media`` (``tools``
  with a run input of message parts — text and an image — whose every model call logs the parts
  it was sent, by kind and digest, to ``EFFECTS.model``) or ``limited`` (``tools`` run with
  ``limits=UsageLimits(requests=2)``, so its third model call is refused; every model call
  this process dispatches is logged to ``EFFECTS.model``; a ``UsageLimitExceeded`` is reported
  as ``limit``) or ``transient`` (``tools`` on a model whose first dispatch of each conversation
  state in a process streams some text and then fails with a recoverable 503; the agent's
  ``RetryPolicy`` tries again — issue 28) or ``child`` (issue 29: the parent's first response
  calls a sub-agent, ``helper``, and the ``effect`` tool; the helper — an agent with a model of
  its own and no journal — calls ``effect`` once and answers; every model call of either is
  logged to ``EFFECTS.model``, and the report holds ``usage_by_agent``).
* ``JOURNAL``: ``sqlite:<path>`` or ``postgres:<dsn>``.
* ``KILL_AT``: ``<record kind>:<n>:<before|after>`` — SIGKILL this process before or after the
  n-th journal append of that kind; or ``body:<n>`` — inside the n-th tool body, after its
  external effect was written and before it returns.

The model is deterministic in the conversation (it answers from the tool results it sees), so a
new process continues exactly where the killed one stopped. The last line on stdout is a JSON
report.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from typing import Any

import robota
import robota.host
from robota import (
    ChatRequest,
    ExecutionJournal,
    JournalLease,
    JournalRecord,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolMessage,
    Usage,
)

MODE, SCENARIO, JOURNAL, EXECUTION_ID, EFFECTS = sys.argv[1:6]
KILL_AT = sys.argv[6] if len(sys.argv) > 6 else ""


APPENDED: list[str] = []  # every record kind this process appended, of every execution


def _kill() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class _Killer:
    """Counts appends per record kind and kills the process at the chosen one."""

    def __init__(self, spec: str) -> None:
        self.kind, self.n, self.when = "", 0, ""
        if spec and not spec.startswith("body:"):
            kind, n, when = spec.split(":")
            self.kind, self.n, self.when = kind, int(n), when
        self.counts: dict[str, int] = {}

    def before(self, record: JournalRecord) -> None:
        self.counts[record.kind] = self.counts.get(record.kind, 0) + 1
        APPENDED.append(record.kind)
        if self._hit(record) and self.when == "before":
            _kill()

    def after(self, record: JournalRecord) -> None:
        if self._hit(record) and self.when == "after":
            _kill()

    def _hit(self, record: JournalRecord) -> bool:
        return record.kind == self.kind and self.counts.get(record.kind) == self.n


class _KillingLease(JournalLease):
    def __init__(self, inner: JournalLease, killer: _Killer) -> None:
        self._inner = inner
        self._killer = killer

    @property
    def execution_id(self) -> str:
        return self._inner.execution_id

    async def append(self, record: JournalRecord) -> None:
        self._killer.before(record)
        await self._inner.append(record)
        self._killer.after(record)

    async def release(self) -> None:
        await self._inner.release()


class _KillingJournal(ExecutionJournal):
    def __init__(self, inner: ExecutionJournal, killer: _Killer) -> None:
        self._inner = inner
        self._killer = killer

    async def acquire(self, execution_id: str) -> JournalLease:
        return _KillingLease(await self._inner.acquire(execution_id), self._killer)

    async def read(self, execution_id: str) -> tuple[JournalRecord, ...]:
        return await self._inner.read(execution_id)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _ConversationModel(robota.Provider):
    """Answers from what the conversation holds, so any process continues the same way."""

    @property
    def name(self) -> str:
        return "crashmodel"

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m.content for m in request.messages if isinstance(m, ToolMessage)]
        if SCENARIO == "transient":
            state = len(request.messages)
            FAILED.setdefault(state, 0)
            FAILED[state] += 1
            if FAILED[state] == 1:
                # Issue 28: text reached the caller, then the stream broke; it is retried.
                yield TextDelta("partial reply that must not stay")
                raise robota.ProviderError("overloaded, try again", status=503)
        if SCENARIO == "structured":
            attempt = sum(isinstance(m, robota.UserMessage) for m in request.messages)
            _log_model_call(f"attempt {attempt}")
            # The first reply misses a field; the retry (after the feedback turn) is valid.
            yield TextDelta('{"name": "Oslo"}' if attempt == 1 else VALID_CITY)
            yield ResponseDone(
                model=request.model, usage=Usage.from_counts(prompt=10, completion=5)
            )
            return
        if SCENARIO == "media":
            _log_model_call(json.dumps(_sent_parts(request)))
        if SCENARIO == "limited":
            _log_model_call(f"after {len(results)} results")
        if SCENARIO in ("tools", "media", "limited", "transient"):
            plan: list[list[tuple[str, dict[str, str]]]] = [
                [("effect", {"label": "a"}), ("effect", {"label": "b"})],
                [("effect", {"label": "c"})],
            ]
            done_after = 3
        else:
            plan = [[("approve", {"label": "x"}), ("effect", {"label": "y"})]]
            done_after = 2
        if len(results) >= done_after:
            yield TextDelta("done: " + ", ".join(results))
        else:
            turn = plan[0] if len(results) < 2 else plan[1]
            for index, (name, args) in enumerate(turn):
                yield ToolCallReady(ToolCall(f"call_{index}", name, json.dumps(args)))
        yield ResponseDone(model=request.model, usage=Usage.from_counts(prompt=10, completion=5))


class _ChildModels(robota.Provider):
    """Issue 29: the parent's and the helper's models, each answering from its conversation."""

    def __init__(self, role: str) -> None:
        self._role = role

    @property
    def name(self) -> str:
        return f"crash{self._role}"

    async def chat(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> robota.ChatResponse:
        return await robota.collect_stream(self.chat_stream(request, signal=signal))

    async def chat_stream(
        self, request: ChatRequest, *, signal: robota.AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        results = [m.content for m in request.messages if isinstance(m, ToolMessage)]
        _log_model_call(f"{self._role} after {len(results)} results")
        calls: list[tuple[str, dict[str, str]]] = []
        if self._role == "parent" and not results:
            calls = [("helper", {"input": "go"}), ("effect", {"label": "p"})]
        elif self._role == "child" and not results:
            calls = [("effect", {"label": "k"})]
        if calls:
            for index, (name, args) in enumerate(calls):
                yield ToolCallReady(ToolCall(f"call_{index}", name, json.dumps(args)))
        else:
            yield TextDelta(f"{self._role} done: " + ", ".join(results))
        yield ResponseDone(model=request.model, usage=Usage.from_counts(prompt=10, completion=5))


@dataclass
class City:
    name: str
    population: int


VALID_CITY = '{"name": "Oslo", "population": 700000}'
# Only the run is given limits: a continuation must keep the ones its journal saved (S40).
LIMITS = robota.UsageLimits(requests=2) if SCENARIO == "limited" else None
OUTPUT = City if SCENARIO == "structured" else None
IMAGE = bytes(range(256)) * 64  # 16 KiB, every byte value
INPUT: str | list[robota.MessagePart] = (
    [robota.TextPart("start"), robota.ImagePart(IMAGE, "image/png")]
    if SCENARIO == "media"
    else "start"
)


def _sent_parts(request: ChatRequest) -> list[list[str]]:
    """The parts of the request's user message, as ``[kind, text or sha256, media type]``."""
    user = next(m for m in request.messages if isinstance(m, robota.UserMessage))
    if isinstance(user.content, str):
        return [["string", user.content, ""]]
    return _digests(user.content)


def _digests(parts: tuple[robota.MessagePart, ...]) -> list[list[str]]:
    sent = []
    for part in parts:
        if isinstance(part, robota.TextPart):
            sent.append(["text", part.text, ""])
        else:
            data = getattr(part, "data", None) or b""
            media_type = getattr(part, "media_type", None) or ""
            sent.append([part.kind, hashlib.sha256(data).hexdigest(), media_type])
    return sent


def _log_model_call(label: str) -> None:
    # Outside the journal, so a trial can count the model calls every process dispatched.
    with open(EFFECTS + ".model", "a", encoding="utf-8") as file:
        file.write(label + "\n")
        file.flush()
        os.fsync(file.fileno())


BODIES = [0]  # tool bodies started in this process
FAILED: dict[int, int] = {}  # transient: dispatches per conversation length in this process


def _external_effect(ctx: robota.ToolContext, label: str) -> None:
    # The external effect: one line per logical call, flushed to disk.
    with open(EFFECTS, "a", encoding="utf-8") as file:
        file.write(f"{ctx.call_id} {label}\n")
        file.flush()
        os.fsync(file.fileno())


def _maybe_kill_in_body() -> None:
    BODIES[0] += 1
    if f"body:{BODIES[0]}" == KILL_AT:
        _kill()


SLOW = float(os.environ.get("CRASH_WORKER_SLOW_TOOL", "0"))


@robota.tool
async def effect(label: str, ctx: robota.ToolContext) -> str:
    """Perform a side effect outside the process."""
    if SLOW:
        await asyncio.sleep(SLOW)
    _external_effect(ctx, label)
    _maybe_kill_in_body()
    return f"did {label}"


@robota.tool
async def approve(label: str, ctx: robota.ToolContext) -> str:
    """Perform a side effect once someone approved it."""
    answer = await ctx.request_outside_response("approval", {"label": label})
    _external_effect(ctx, f"{label}={answer}")
    _maybe_kill_in_body()
    return f"did {label} with {answer}"


def _open_journal() -> ExecutionJournal:
    kind, _, where = JOURNAL.partition(":")
    if kind == "sqlite":
        return robota.host.SQLiteJournal(where)
    return robota.host.PostgresJournal(where)


def _history(agent: robota.Agent) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for m in agent.history:
        if isinstance(m, robota.AssistantMessage):
            rows.append(
                ["assistant", m.content, [[c.id, c.name, c.arguments] for c in m.tool_calls]]
            )
        elif isinstance(m, ToolMessage):
            rows.append(["tool", m.content, m.tool_call_id, m.tool_name])
        elif isinstance(m.content, str):
            rows.append([m.kind, m.content])
        else:
            rows.append([m.kind, _digests(m.content)])
    return rows


def _effect_of(call_id: str | None) -> str | None:
    """The tool result the external effect of ``call_id`` proves, or ``None`` if it is absent."""
    if call_id is None or not os.path.exists(EFFECTS):
        return None
    with open(EFFECTS, encoding="utf-8") as file:
        for line in file:
            owner, _, label = line.strip().partition(" ")
            if owner == call_id:
                name, _, answer = label.partition("=")
                return f"did {name} with {answer}" if answer else f"did {name}"
    return None


async def _locked_retry(make: Any) -> Any:
    # The killed holder's lock goes with its process; a server may take a moment to notice.
    for _ in range(200):
        try:
            return await make()
        except robota.ExecutionLockedError:
            await asyncio.sleep(0.05)
    return await make()


def _note_output(report: dict[str, Any], result: robota.RunResult[Any]) -> None:
    if isinstance(result.output, City):
        report["output"] = asdict(result.output)
        report["attempts"] = result.attempts


async def main() -> None:
    report: dict[str, Any] = {"items": [], "statuses": []}
    journal = _KillingJournal(_open_journal(), _Killer(KILL_AT))
    tools: list[Any] = [effect, approve]
    provider: robota.Provider = _ConversationModel()
    helper: robota.Agent | None = None
    if SCENARIO == "child":
        # Issue 29: the helper has no journal; the parent's journals it.
        helper = robota.Agent(
            name="helper",
            provider=_ChildModels("child"),
            model="m",
            tools=[effect],
            system_prompt="You are the helper.",
            tool_concurrency=1,
        )
        tools = [helper.as_tool(description="Ask the helper."), effect]
        provider = _ChildModels("parent")
    agent = robota.Agent(
        provider=provider,
        model="m",
        tools=tools,
        journal=journal,
        system_prompt="You are a crash-test agent.",
        tool_concurrency=1,
        retry=robota.RetryPolicy(attempts=3, initial_delay=0.001, jitter=0.0)
        if SCENARIO == "transient"
        else None,
    )
    try:
        if MODE == "run":
            result = await agent.run(INPUT, execution_id=EXECUTION_ID, output=OUTPUT, limits=LIMITS)
            report["statuses"].append(result.status)
            report["pending"] = [r.id for r in result.pending_requests]
            _note_output(report, result)
        elif MODE == "respond":
            records = await journal.read(EXECUTION_ID)
            for record in records:
                if isinstance(record, robota.OutsideRequested):
                    await _locked_retry(
                        lambda r=record: agent.respond(EXECUTION_ID, r.request_id, "yes")
                    )
        elif MODE == "resume":
            result = await _locked_retry(lambda: agent.resume(EXECUTION_ID, output=OUTPUT))
            report["statuses"].append(result.status)
            _note_output(report, result)
        elif MODE == "race":
            # One attempt, no retry: report how it ended and how long it took.
            started = time.monotonic()
            try:
                result = await agent.resume(EXECUTION_ID)
                report["statuses"].append(result.status)
            except robota.ExecutionLockedError as error:
                report["error"] = type(error).__name__
            report["elapsed"] = time.monotonic() - started
        else:  # recover
            for _ in range(10):
                try:
                    result = await _locked_retry(lambda: agent.resume(EXECUTION_ID, output=OUTPUT))
                except robota.ExecutionStateError as error:
                    if error.code != "execution_unknown":
                        raise
                    # Killed before the execution's first record: nothing happened yet.
                    report["statuses"].append("restarted")
                    result = await agent.run("start", execution_id=EXECUTION_ID, output=OUTPUT)
                except robota.ReconciliationRequired as required:
                    for item in required.items:
                        proven = _effect_of(item.call_id) if item.kind == "effect" else None
                        report["items"].append([item.kind, item.call_id, proven is not None])
                        # The items may be a sub-agent's: its execution is named (issue 29).
                        await agent.reconcile(
                            required.execution_id,
                            item.id,
                            happened=proven is not None,
                            result=proven,
                        )
                    continue
                report["statuses"].append(result.status)
                _note_output(report, result)
                if result.status == "suspended":
                    for request in result.pending_requests:
                        await agent.respond(EXECUTION_ID, request.id, "yes")
                    continue
                break
        report["history"] = _history(agent)
        if SCENARIO == "child" and MODE in ("run", "recover", "resume"):
            report["usage_by_agent"] = {
                path: [entry.usage.prompt_tokens, entry.usage.completion_tokens, entry.runs]
                for path, entry in result.usage_by_agent.items()
            }
            report["appended"] = APPENDED
    except robota.UsageLimitExceeded as error:
        report["limit"] = {"limit": error.limit, "requests": error.requests}
        report["history"] = _history(agent)
    finally:
        await agent.aclose()
        if helper is not None:
            await helper.aclose()
        await journal.aclose()
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
