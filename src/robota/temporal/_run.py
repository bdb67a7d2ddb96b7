"""One workflow run's state, shared by its routed provider and tools and its handlers.

Internal to :mod:`robota.temporal._workflow`: what the run waits for (approvals, outside
requests, reconciliations), its answers, and the text so far that the ``robota.state`` query
reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from robota.core import AbortController, AbortSignal, ModelTexts, abort_error_from_reason
from robota.core import RetryPolicy as ModelRetryPolicy
from robota.core.permissions import Approval, ApprovalRequest
from robota.lowlevel import new_id
from robota.temporal._codec import RunInput

__all__ = ["WorkflowRun", "refusal"]


class WorkflowRun:
    """One workflow run's state, shared by the routed provider and tools and the handlers."""

    def __init__(self) -> None:
        self.spec: RunInput | None = None
        self.approvals: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, Approval] = {}
        self.pending: dict[str, dict[str, Any]] = {}  # call id → unsettled effect
        self.decisions: dict[str, Mapping[str, Any]] = {}
        self.committed: list[str] = []
        self.done: set[str] = set()  # stream keys whose round has committed
        self.live: dict[str, tuple[int, list[str]]] = {}  # stream key → (attempt, chunks)
        # Issue 29: stream keys of sub-agents' and guardrail agents' model calls. Their text is
        # theirs, not the run's (``text()``, the caller's live view), as a stream keeps it apart.
        self.aside: set[str] = set()
        self.rounds = 0
        self.finished = False
        self.controller = AbortController()  # the run's abort: a Temporal cancel (S23)
        self.refs: dict[str, str] = {}  # marker of a result stored aside → its journal key
        self.texts = ModelTexts()  # S35: the agent's texts, once it is built
        self.retry: ModelRetryPolicy | None = None  # the agent's, applied by Temporal (issue 28)
        self.requests: dict[str, dict[str, Any]] = {}  # outside requests waiting (S40)
        self.responses: dict[str, Any] = {}
        self.answered: set[str] = set()  # approval and request ids answered, for a clear refusal

    @property
    def status(self) -> str:
        if self.finished:
            return "done"
        if self.pending:
            return "awaiting_reconciliation"
        if self.approvals:
            return "awaiting_approval"
        if self.requests:
            return "awaiting_response"
        return "running"

    @property
    def signal(self) -> AbortSignal:
        return self.controller.signal

    def text(self) -> str:
        live = "".join(
            "".join(chunks) for key, (_, chunks) in self.live.items() if key not in self.aside
        )
        return "".join(self.committed) + live

    def text_of(self, key: str) -> str:
        live = self.live.get(key)
        return "".join(live[1]) if live is not None else ""

    def commit(self, key: str, text: str) -> None:
        self.done.add(key)
        self.live.pop(key, None)
        if text and key not in self.aside:
            self.committed.append(text)

    def activity_options(self, *, tool: bool) -> dict[str, Any]:
        spec = self.spec
        assert spec is not None
        return {
            "start_to_close_timeout": timedelta(
                seconds=spec.tool_timeout if tool else spec.model_timeout
            ),
            "heartbeat_timeout": timedelta(seconds=spec.heartbeat_timeout),
        }

    def record_approval(self, approval_id: str, answer: Mapping[str, Any]) -> None:
        """Keep a person's answer to ``approval_id`` (an ``approved`` bool, checked already)."""
        self.answered.add(approval_id)
        reason = answer.get("reason", "")
        self.answers[approval_id] = Approval(
            answer["approved"] is True,
            remember=answer.get("remember", False) is True,
            reason=reason if isinstance(reason, str) else "",
        )

    def record_response(self, request_id: str, answer: Mapping[str, Any]) -> None:
        """Keep the outside response to ``request_id``."""
        self.answered.add(request_id)
        self.responses[request_id] = answer.get("response")

    async def approve(self, request: ApprovalRequest) -> Approval:
        # S21: an ask waits for a person, who answers through the robota.answer_approval update.
        approval_id = new_id("approval")
        self.approvals[approval_id] = {
            "id": approval_id,
            "tool": request.tool.name,
            "arguments": dict(request.arguments),
            "reason": request.reason,
            "always_ask": request.always_ask,
            "agent": request.agent,  # issue 29: a sub-agent's ask names it
        }
        try:
            await workflow.wait_condition(
                lambda: approval_id in self.answers or self.signal.aborted
            )
            if approval_id not in self.answers:  # S23: the run was aborted; nobody answered
                return Approval(False, reason="the run was interrupted before anyone answered")
            return self.answers.pop(approval_id)
        finally:
            self.approvals.pop(approval_id, None)
            self.answers.pop(approval_id, None)

    async def outside(self, details: Mapping[str, Any]) -> dict[str, Any]:
        request_id = str(details["request_id"])
        self.requests[request_id] = dict(details)
        try:
            await workflow.wait_condition(
                lambda: request_id in self.responses or self.signal.aborted
            )
            if request_id not in self.responses:
                raise abort_error_from_reason(self.signal.reason)  # S23: interrupted
            return {request_id: self.responses.pop(request_id)}
        finally:
            self.requests.pop(request_id, None)

    async def reconcile(self, details: Mapping[str, Any]) -> Mapping[str, Any]:
        call_id = str(details["call_id"])
        self.pending[call_id] = dict(details)
        try:
            await workflow.wait_condition(lambda: call_id in self.decisions or self.signal.aborted)
            if call_id not in self.decisions:
                raise abort_error_from_reason(self.signal.reason)  # S23: interrupted
            return self.decisions.pop(call_id)
        finally:
            self.pending.pop(call_id, None)


def refusal(code: str, message: str) -> ApplicationError:
    """An update's refusal, typed so the client raises it as ``ExecutionStateError(code=...)``."""
    return ApplicationError(message, {"code": code}, type=f"robota.{code}", non_retryable=True)
