"""A Robota tool that asks a remote A2A agent (issue 31, item 3), through the egress client.

The ``a2a-sdk`` client speaks over legacy ``httpx``; Robota's egress client is ``httpx2`` with a
pinned transport (S06). Rather than bridge the two, :class:`A2ATool` makes the two calls it
needs itself over :meth:`robota.host.EgressClient.request` — the card fetch (``GET`` of
``/.well-known/agent-card.json``) and one JSON-RPC ``SendMessage`` (A2A 1.0) — and builds and
reads them with the SDK's own protocol types (``AgentCard``, ``SendMessageRequest``,
``SendMessageResponse``), so an ill-formed card or answer is refused by the same definitions the
SDK uses. Every hop of both calls is checked by the egress policy: a card whose endpoint is on
another origin than the card is refused outright, and a loopback, private or metadata address is
refused by the policy.

The message is sent with ``returnImmediately`` and the task is then polled (``GetTask``) until
it ends, so the tool always knows the remote task's id: when the calling run is aborted (S23)
or the tool's ``timeout`` passes while the task is still going, the tool sends ``CancelTask``
for it — best effort, within :data:`CANCEL_TIMEOUT` seconds — rather than leave the remote
agent working for nobody. A remote agent that ignores ``returnImmediately`` answers once the
task ended, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, final
from urllib.parse import urljoin, urlsplit

import httpx2
from a2a.types import (
    AgentCard,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

import robota.core
import robota.host

__all__ = ["CANCEL_TIMEOUT", "DEFAULT_TIMEOUT", "A2ATool"]

_log = logging.getLogger("robota.serve.a2a")

CANCEL_TIMEOUT: Final = 5.0
"""Seconds the tool spends, at most, telling a remote agent to cancel an abandoned task."""

DEFAULT_TIMEOUT: Final = 300.0
CARD_PATH: Final = "/.well-known/agent-card.json"
_MAX_BYTES: Final = 4 * 1024 * 1024
_ERROR_EXCERPT: Final = 500
_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_]+")

#: S12: a rule can scope to what the model sends (``a2a_billing(*refund*)``); the destination is
#: fixed when the tool is built, so it is never the model's to choose.
MESSAGE_ARGUMENT = robota.core.PermissionArgument("message", "text")

_PARAMETERS: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "What to ask the remote agent."},
    },
    "required": ["message"],
    "additionalProperties": False,
}

_POLL_FIRST: Final = 0.1
_POLL_MAX: Final = 2.0
# Polled while in these; any other state (an unspecified one included) ends the call.
_WORKING: Final = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})

_DONE: Final = {
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_INPUT_REQUIRED: "needs more input",
    TaskState.TASK_STATE_AUTH_REQUIRED: "needs authorization",
}


class _Refusal(Exception):
    """A call that cannot go on; its text is the model's answer."""


def _default_name(url: str) -> str:
    host = urlsplit(url).hostname or "agent"
    return "a2a_" + _NAME_CHARS.sub("_", host).strip("_")[:100]


def _card_urls(url: str) -> list[str]:
    """Where the card may be, in the order tried.

    ``url`` itself when it names a ``.json`` file; else the well-known path under ``url``'s path
    (where the SDK's resolver looks), then at its origin's root.
    """
    parts = urlsplit(url)
    if parts.path.endswith(".json"):
        return [url]
    origin = f"{parts.scheme}://{parts.netloc}"
    under = f"{origin}{parts.path.rstrip('/')}{CARD_PATH}"
    root = f"{origin}{CARD_PATH}"
    return [under] if under == root else [under, root]


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


@dataclass(slots=True)
class _Remote:
    """The remote task a call started, while it may still be going (for ``CancelTask``)."""

    endpoint: str = ""
    task_id: str = ""


async def _pause(seconds: float, signal: robota.core.AbortSignal) -> None:
    """Sleep ``seconds``, or raise the abort as soon as ``signal`` aborts (S23)."""
    signal.throw_if_aborted()
    waiting = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait((waiting,), timeout=seconds)
    finally:
        waiting.cancel()
    signal.throw_if_aborted()


def _rpc(method: str, params: Mapping[str, Any]) -> bytes:
    payload = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    return json.dumps(payload).encode("utf-8")


def _texts(parts: Any) -> list[str]:
    return [part.text for part in parts if part.HasField("text")]


@final
class A2ATool(robota.core.Tool):
    """A remote A2A agent as a Robota tool; see :func:`robota.serve.a2a_tool`."""

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        description: str | None = None,
        client: robota.host.EgressClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        given: object = url  # untyped callers can pass anything
        parts = urlsplit(url) if isinstance(given, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be an absolute http(s) URL of an A2A agent, got {url!r}")
        if client is not None and not isinstance(client, robota.host.EgressClient):
            raise TypeError(
                f"client= must be a robota.host.EgressClient, got {type(client).__name__}"
            )
        seconds: object = timeout
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
            raise ValueError(f"timeout must be a number of seconds above 0, got {timeout!r}")
        super().__init__(
            name or _default_name(url),
            description
            or (
                f"Send a message to the remote agent at {url} (A2A protocol) and return its"
                " answer. Each call starts a new conversation: include what it needs to know."
            ),
            _PARAMETERS,
            # S21: the message leaves this machine, so it is never auto-allowed as an inspection.
            risk="execute",
            permission_argument=MESSAGE_ARGUMENT,
            source="robota.serve",
        )
        self.url = url
        self.client = client
        self.timeout = float(timeout)

    async def execute(
        self, args: Mapping[str, Any], ctx: robota.core.ToolContext
    ) -> robota.core.ToolResult:
        message: str = args["message"]
        if self.client is not None:
            return await self._execute(self.client, message, ctx.signal)
        async with robota.host.EgressClient(timeout=self.timeout, max_bytes=_MAX_BYTES) as client:
            return await self._execute(client, message, ctx.signal)

    async def _execute(
        self, client: robota.host.EgressClient, message: str, signal: robota.core.AbortSignal
    ) -> robota.core.ToolResult:
        remote = _Remote()
        try:
            try:
                async with asyncio.timeout(self.timeout):
                    return await self._ask(client, message, signal, remote)
            except BaseException:
                if remote.task_id:  # started and not seen to end: S23, tell it to stop
                    await self._cancel(client, remote)
                raise
        except _Refusal as refusal:
            return robota.core.ToolResult(str(refusal), is_error=True)
        except TimeoutError:
            return robota.core.ToolResult(
                f"The agent at {self.url} took longer than {self.timeout:g} s; the call was"
                " stopped.",
                is_error=True,
            )
        except httpx2.TransportError as exc:
            return robota.core.ToolResult(
                f"Could not reach the agent at {self.url}: {type(exc).__name__}", is_error=True
            )

    async def _cancel(self, client: robota.host.EgressClient, remote: _Remote) -> None:
        """Send ``CancelTask`` for ``remote``'s task: best effort, at most CANCEL_TIMEOUT s."""
        signal = robota.core.AbortController().signal  # the run's own signal has aborted
        body = _rpc("CancelTask", {"id": remote.task_id})
        try:
            async with asyncio.timeout(CANCEL_TIMEOUT):
                await self._call(client, "POST", remote.endpoint, signal, body)
        except Exception as exc:  # noqa: BLE001 - best effort: the call ends either way
            _log.debug("canceling remote A2A task failed: %s", type(exc).__name__)

    async def _call(
        self,
        client: robota.host.EgressClient,
        method: str,
        url: str,
        signal: robota.core.AbortSignal,
        body: bytes | None = None,
        *,
        missing: bool = False,
    ) -> Any:
        """The JSON answer of one exchange; ``None`` for a 404 when ``missing`` allows one."""
        headers = {"Accept": "application/json", "A2A-Version": "1.0"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        # S06: every hop checked; S23: the run's abort ends the exchange (AbortError).
        result = await client.request(
            method, url, headers=headers, content=body, signal=signal, max_bytes=_MAX_BYTES
        )
        signal.throw_if_aborted()  # S23: an answer that arrived as the run aborted goes no further
        if isinstance(result, robota.host.Rejected):
            raise _Refusal(f"The call to {url} was refused: {result.reason}")
        if missing and result.status == 404:
            return None
        if not 200 <= result.status < 300:
            raise _Refusal(f"The agent at {url} answered HTTP {result.status}.")
        try:
            return json.loads(result.content)
        except ValueError:
            raise _Refusal(f"The agent at {url} did not answer with JSON.") from None

    async def _endpoint(
        self, client: robota.host.EgressClient, signal: robota.core.AbortSignal
    ) -> str:
        *earlier, card_url = _card_urls(self.url)
        data = None
        for candidate in earlier:
            data = await self._call(client, "GET", candidate, signal, missing=True)
            if data is not None:
                card_url = candidate
                break
        if data is None:
            data = await self._call(client, "GET", card_url, signal)
        card = AgentCard()
        try:
            ParseDict(data, card, ignore_unknown_fields=True)
        except (ParseError, TypeError, ValueError):
            raise _Refusal(f"The agent card at {card_url} is not a valid A2A agent card.") from None
        for interface in card.supported_interfaces:
            version = interface.protocol_version or "1.0"
            if interface.protocol_binding.upper() == "JSONRPC" and version.startswith("1."):
                endpoint = urljoin(card_url, interface.url)
                if _origin(endpoint) != _origin(card_url):
                    # The card does not get to send the model's message to another host.
                    raise _Refusal(
                        f"The agent card at {card_url} names an endpoint on another origin"
                        f" ({endpoint}); only the card's own origin is called."
                    )
                return endpoint
        raise _Refusal(
            f"The agent card at {card_url} offers no A2A 1.x JSON-RPC interface this tool speaks."
        )

    async def _ask(
        self,
        client: robota.host.EgressClient,
        text: str,
        signal: robota.core.AbortSignal,
        remote: _Remote,
    ) -> robota.core.ToolResult:
        endpoint = await self._endpoint(client, signal)
        request = SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)]
            ),
            # The task comes back at once, so its id is known while it runs (for CancelTask).
            configuration=SendMessageConfiguration(
                accepted_output_modes=["text/plain"], return_immediately=True
            ),
        )
        result = await self._send(
            client, endpoint, signal, _rpc("SendMessage", MessageToDict(request))
        )
        answer = SendMessageResponse()
        try:
            ParseDict(result, answer, ignore_unknown_fields=True)
        except (ParseError, TypeError, ValueError):
            raise _Refusal(f"The agent at {endpoint} sent an answer A2A does not define.") from None
        if answer.HasField("task") and answer.task.status.state in _WORKING:
            remote.endpoint, remote.task_id = endpoint, answer.task.id
        # S23: an answer that came in the grace time after an abort is not the call's result
        # (a task still going is canceled by the caller).
        signal.throw_if_aborted()
        if answer.HasField("message"):
            return robota.core.ToolResult("\n".join(_texts(answer.message.parts)))
        if not answer.HasField("task"):
            raise _Refusal(f"The agent at {endpoint} sent neither a task nor a message.")
        task = answer.task
        pause = _POLL_FIRST
        while task.status.state in _WORKING:
            remote.endpoint, remote.task_id = endpoint, task.id
            await _pause(pause, signal)  # raises the abort (S23): the caller cancels the task
            pause = min(pause * 1.5, _POLL_MAX)
            task = await self._get_task(client, endpoint, signal, task.id)
        remote.task_id = ""  # it ended: nothing to cancel
        return _task_result(task)

    async def _send(
        self,
        client: robota.host.EgressClient,
        endpoint: str,
        signal: robota.core.AbortSignal,
        body: bytes,
    ) -> dict[str, Any]:
        """The ``SendMessage`` exchange; an abort (S23) waits a little for its task's id.

        Aborted mid-send, the remote task may exist already, and only the answer (sent at once,
        ``returnImmediately``) names it: the exchange gets up to CANCEL_TIMEOUT seconds more so
        the caller can cancel that task. The abort is raised after the answer (or that time).
        """
        quiet = robota.core.AbortController()  # the exchange's own: the run's may abort
        sending = asyncio.ensure_future(self._result(client, endpoint, quiet.signal, body))
        stopping = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait((sending, stopping), return_when=asyncio.FIRST_COMPLETED)
            if not sending.done():
                await asyncio.wait((sending,), timeout=CANCEL_TIMEOUT)
        finally:
            stopping.cancel()
            if not sending.done():
                quiet.abort()
                sending.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sending
        if sending.cancelled() or sending.exception() is not None:
            signal.throw_if_aborted()  # S23: a failure after the abort is not the call's end
        return sending.result()

    async def _result(
        self,
        client: robota.host.EgressClient,
        endpoint: str,
        signal: robota.core.AbortSignal,
        body: bytes,
    ) -> dict[str, Any]:
        """The ``result`` of one JSON-RPC exchange (a refusal for an error or anything else)."""
        data = await self._call(client, "POST", endpoint, signal, body)
        if not isinstance(data, dict):
            raise _Refusal(f"The agent at {endpoint} sent an answer that is not JSON-RPC.")
        error = data.get("error")
        if isinstance(error, dict):
            detail = str(error.get("message", ""))[:_ERROR_EXCERPT]
            raise _Refusal(f"The agent at {endpoint} refused the message: {detail}")
        result = data.get("result")
        if not isinstance(result, dict):
            raise _Refusal(f"The agent at {endpoint} sent a JSON-RPC answer with no result.")
        return result

    async def _get_task(
        self,
        client: robota.host.EgressClient,
        endpoint: str,
        signal: robota.core.AbortSignal,
        task_id: str,
    ) -> Task:
        result = await self._result(client, endpoint, signal, _rpc("GetTask", {"id": task_id}))
        task = Task()
        try:
            ParseDict(result, task, ignore_unknown_fields=True)
        except (ParseError, TypeError, ValueError):
            raise _Refusal(f"The agent at {endpoint} sent a task A2A does not define.") from None
        if task.id != task_id:
            raise _Refusal(f"The agent at {endpoint} answered about another task.")
        return task

    def __repr__(self) -> str:
        return f"<A2ATool {self.name!r} {self.url!r}>"


def _task_result(task: Task) -> robota.core.ToolResult:
    """The answer of a finished task: its artifacts' text, or its status message."""
    state = task.status.state
    status_text = "\n".join(_texts(task.status.message.parts))
    answer = "\n".join(text for artifact in task.artifacts for text in _texts(artifact.parts))
    if state == TaskState.TASK_STATE_COMPLETED:
        return robota.core.ToolResult(answer or status_text)
    if state in _DONE:
        return robota.core.ToolResult(f"The remote agent {_DONE[state]}: {status_text or answer}")
    label = TaskState.Name(state).removeprefix("TASK_STATE_").lower()
    detail = (status_text or answer)[:_ERROR_EXCERPT]
    return robota.core.ToolResult(
        f"The remote agent's task ended {label}" + (f": {detail}" if detail else "."),
        is_error=True,
    )
