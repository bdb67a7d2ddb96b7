"""What a served run reports when it ends, and the safe error it reports when it fails.

The summary (status, text, usage, cost, model) travels in the last event of both protocols.
A failure is never reported with its message: an exception's text may carry a provider's
response, a key or a path, so a client gets a fixed message and a code (``RobotaError.code``,
a fixed identifier, for robota's own errors; ``internal_error`` for anything else).
"""

from __future__ import annotations

import re
from typing import Any

from robota import AbortError, RobotaError, RunResult

__all__ = ["error_code", "result_summary"]

_CODE = re.compile(r"[a-z][a-z0-9_]{0,63}")


def result_summary(result: RunResult[Any]) -> dict[str, object]:
    """A JSON-ready summary of ``result``: status, text, model, usage and cost (USD or null).

    A suspended run's (S40) also lists its ``pendingRequests`` (``id``, ``kind``, ``tool``).
    """
    usage = result.usage
    summary: dict[str, object] = {
        "status": result.status,
        "text": result.text,
        "model": result.model,
        "usage": {
            "inputTokens": usage.prompt_tokens,
            "outputTokens": usage.completion_tokens,
            "totalTokens": usage.total_tokens,
        },
        "cost": result.cost,
    }
    if result.status == "suspended":  # S40: what it waits for, answered by POST
        summary["pendingRequests"] = [
            {"id": r.id, "kind": r.kind, "tool": r.tool_name} for r in result.pending_requests
        ]
    return summary


def error_code(exc: BaseException) -> str:
    """A client-safe code for ``exc``: robota's own fixed code, else ``internal_error``."""
    if isinstance(exc, AbortError):
        return "aborted"
    if isinstance(exc, RobotaError):
        code = str(exc.code)
        if _CODE.fullmatch(code):
            return code
    return "internal_error"
