"""Hook executors on the host (S22): shell commands and HTTP endpoints.

Both decode into core's :class:`~robota.core.hooks.HookOutcome` and never raise for a hook's own
failure.

Command hooks — the payload is written to the command's stdin as JSON, with the ``cwd`` the process
runs in added when the fire site gave none (every Claude Code hook input names it; a hook entry's
``env``, a mapping, adds to its process's environment). Each process gets a fresh copy of its
environment (the executor's ``env=``, else this process's) without the ambient ``TRACEPARENT`` and
``TRACESTATE`` (S27): in a traced run whose host granted hooks it gets ``TRACEPARENT`` naming the
run's span instead; in any other run — traced without that grant, or untraced — none, because this
package never adopts ambient trace state and a hook's span claiming the host process's parent would
sit in another trace than the run's. A ``TRACEPARENT`` the hook entry's own ``env`` sets wins. It is
never written into the stdin JSON.

* exit 0 → allow; stdout is carried, and a JSON object on stdout is decoded (it may block, add
  ``additionalContext``, or — for command hooks only — steer a pre-tool call with
  ``permissionDecision``/``updatedInput``); plain text on stdout is additional context, which a
  ``UserPromptSubmit`` fire site sends to the model;
* exit 2 → deny, with stderr as the reason;
* any other exit code, a kill by a signal, a timeout, or a process that never started → error,
  with a reason that names which. Never silently coerced to allow or deny.

The child leads its own process group, and its own session too once children are isolated
(S09); the whole group is killed on a timeout or an abort, so a hook cannot leave a grandchild
behind on the way out.

HTTP hooks POST the payload and must answer 2xx with a JSON body stating ``"decision": true`` or
``false``; anything else is an error. They go through the egress boundary (S06,
:class:`~robota.host.EgressClient`) unless a trusted client is given for a fixed endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signals
from collections.abc import Mapping
from typing import Any, Final, final

import httpx2

from robota.core import AbortSignal, ConfigurationError, child_environment
from robota.core.hooks import HookOutcome, HookSpec, decode_hook_body
from robota.host._errors import ResponseTooLargeError
from robota.host._race import Ending, cancel_and_wait, settle
from robota.host.egress._client import EgressClient
from robota.host.egress._policy import Rejected
from robota.host.processes._children import spawn

__all__ = ["CommandHookExecutor", "HttpHookExecutor"]

DEFAULT_HOOK_TIMEOUT: Final = 60.0
_OUTPUT_LIMIT: Final = 1_000_000


@final
class CommandHookExecutor:
    """Runs ``type: "command"`` hooks as real processes (``/bin/sh -c <command>``).

    Args:
        default_timeout: Seconds before a hook without its own ``timeout`` counts as failed.
        env: The environment of every hook process (default: a copy of this process's), each
            time copied without its ``TRACEPARENT``/``TRACESTATE`` (see the module docstring).
        cwd: Their working directory (default: this process's).
    """

    __slots__ = ("_cwd", "_default_timeout", "_env")

    def __init__(
        self,
        *,
        default_timeout: float = DEFAULT_HOOK_TIMEOUT,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self._default_timeout = default_timeout
        self._env = dict(env) if env is not None else None
        self._cwd = cwd

    async def execute(
        self,
        hook: HookSpec,
        payload: Mapping[str, Any],
        *,
        signal: AbortSignal | None = None,
        traceparent: str | None = None,
    ) -> HookOutcome:
        """Run the hook's command with ``payload`` on stdin and decode the result.

        ``traceparent`` (S27: handed by the runner when the host granted hooks) becomes the
        process's ``TRACEPARENT`` unless its configuration sets one; it is never part of
        ``payload``. Without it the process gets no ``TRACEPARENT``/``TRACESTATE`` at all, not
        even those of the executor's ``env=`` or this process's environment.
        """
        if hook.command is None:
            return HookOutcome.error("a command hook needs a 'command'")
        own = hook.options.get("env")
        if own is not None and not (
            isinstance(own, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in own.items())
        ):
            return HookOutcome.error("a command hook's 'env' must map names to strings")
        timeout = hook.timeout or self._default_timeout
        # S27: the base (this executor's env=, else this process's) is copied with its
        # TRACEPARENT/TRACESTATE removed — they are ambient there — and replaced only by what
        # the run handed; only the hook's own entry counts as its configuration, which wins.
        env = child_environment(
            os.environ if self._env is None else self._env,
            traceparent,
            configured=own,
            strip=True,
        )
        try:
            process = await _start(hook.command, env=env, cwd=self._cwd)
        except OSError as exc:
            return HookOutcome.error(f"the hook process never started: {exc}")
        communicate = asyncio.ensure_future(
            process.communicate(_body_of(_with_cwd(payload, self._cwd)))
        )
        ending = await settle(
            communicate, signal=signal, within=timeout, stop=lambda: _kill(process, communicate)
        )
        if ending != "done":
            return _stopped(ending, timeout)
        stdout_bytes, stderr_bytes = communicate.result()
        stdout = stdout_bytes[:_OUTPUT_LIMIT].decode(errors="replace")
        stderr = stderr_bytes[:_OUTPUT_LIMIT].decode(errors="replace").strip()
        code = process.returncode
        if code == 0:
            return _decode_stdout(stdout)
        if code == 2:
            return HookOutcome.deny(stderr or "the hook exited with status 2")
        if code is not None and code < 0:
            name = _signal_name(-code)
            return HookOutcome.error(f"the hook was killed by signal {name}")
        detail = f": {stderr[:500]}" if stderr else ""
        return HookOutcome.error(f"the hook exited with status {code}{detail}")


async def _start(
    command: str, *, env: Mapping[str, str] | None, cwd: str | None
) -> asyncio.subprocess.Process:
    # S09 through spawn: the hook leads its own session when children are isolated; either way
    # it leads its own process group, so a timeout or abort kills it with its descendants (S22).
    pipe = asyncio.subprocess.PIPE
    return await spawn(
        "/bin/sh",
        "-c",
        command,
        stdin=pipe,
        stdout=pipe,
        stderr=pipe,
        env=env,
        cwd=cwd,
        process_group=0,
    )


def _with_cwd(payload: Mapping[str, Any], cwd: str | None) -> Mapping[str, Any]:
    """``payload`` with the ``cwd`` the hook runs in, as every Claude Code hook input has it.

    A ``cwd`` the fire site set is kept; a working directory that no longer exists is left out.
    """
    if "cwd" in payload:
        return payload
    try:
        where = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    except OSError:
        return payload
    return {**payload, "cwd": where}


def _body_of(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(payload), default=str).encode()


def _stopped(ending: Ending, timeout: float) -> HookOutcome:
    if ending == "aborted":
        return HookOutcome.error("the hook was stopped because the run was aborted")
    return HookOutcome.error(f"the hook timed out after {timeout:g} seconds")


def _decode_stdout(stdout: str) -> HookOutcome:
    text = stdout.strip()
    if not text.startswith(("{", "[")):
        # Plain stdout on exit 0 is context for the events that take it (UserPromptSubmit).
        return HookOutcome("allow", output=stdout, additional_context=text)
    try:
        body = json.loads(text)
    except ValueError as exc:
        return HookOutcome.error(
            f"the hook printed something that looks like JSON but is not ({exc})"
        )
    return decode_hook_body(body, default="allow", steering=True, output=stdout)


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return str(number)


async def _kill(process: asyncio.subprocess.Process, communicate: asyncio.Future[Any]) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signals.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(communicate), 5)
    if not communicate.done():
        communicate.cancel()


@final
class HttpHookExecutor:
    """Runs ``type: "http"`` hooks: POSTs the payload as JSON and decodes the verdict.

    A hook URL comes from configuration, so it crosses the egress boundary (S06) like any other
    caller-supplied URL: by default every request goes through an :class:`EgressClient` — the URL
    and each redirect hop are checked, and the connection goes only to the addresses checked.

    Args:
        egress: The egress client to send through (default: one this executor owns, closed by
            :meth:`aclose`).
        trusted_client: Instead of the egress boundary, a plain ``httpx2`` client for a fixed
            endpoint you trust (e.g. your own service on localhost). Hook URLs are then *not*
            checked. Give at most one of ``egress`` and ``trusted_client``.
        default_timeout: Seconds before a hook without its own ``timeout`` counts as failed.

    Raises:
        ConfigurationError: both ``egress`` and ``trusted_client`` were given.
    """

    __slots__ = ("_default_timeout", "_egress", "_owns_egress", "_trusted")

    def __init__(
        self,
        *,
        egress: EgressClient | None = None,
        trusted_client: httpx2.AsyncClient | None = None,
        default_timeout: float = DEFAULT_HOOK_TIMEOUT,
    ) -> None:
        if egress is not None and trusted_client is not None:
            raise ConfigurationError(
                "give HttpHookExecutor either egress= or trusted_client=, not both"
            )
        self._trusted = trusted_client
        self._owns_egress = egress is None and trusted_client is None
        self._egress = EgressClient() if self._owns_egress else egress
        self._default_timeout = default_timeout

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: AbortSignal | None = None
    ) -> HookOutcome:
        """POST ``payload`` to the hook's URL and decode the answer (never raises for the hook)."""
        if hook.url is None:
            return HookOutcome.error("an http hook needs a 'url'")
        extra = hook.options.get("headers")
        headers = {str(k): str(v) for k, v in extra.items()} if isinstance(extra, Mapping) else {}
        headers["Content-Type"] = "application/json"
        timeout = hook.timeout or self._default_timeout
        send = asyncio.ensure_future(self._send(hook.url, headers, _body_of(payload)))
        # Cancelling the request releases its connection.
        ending = await settle(
            send, signal=signal, within=timeout, stop=lambda: cancel_and_wait(send)
        )
        if ending != "done":
            return _stopped(ending, timeout)
        try:
            answer = send.result()
        except ResponseTooLargeError:
            return HookOutcome.error("the hook's answer was too large")
        except httpx2.HTTPError as exc:
            return HookOutcome.error(f"the hook could not be reached: {type(exc).__name__}: {exc}")
        if isinstance(answer, Rejected):
            return HookOutcome.error(
                f"the hook URL was refused by the egress policy: {answer.reason}"
            )
        status, content = answer
        if not 200 <= status < 300:
            return HookOutcome.error(f"the hook answered HTTP {status}")
        try:
            verdict = json.loads(content)
        except ValueError:
            return HookOutcome.error("the hook's answer is not JSON")
        return decode_hook_body(verdict, default=None, steering=False)

    async def _send(
        self, url: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, bytes] | Rejected:
        if self._trusted is not None:
            response = await self._trusted.post(url, content=body, headers=dict(headers))
            return response.status_code, response.content
        assert self._egress is not None
        result = await self._egress.request("POST", url, headers=headers, content=body)
        if isinstance(result, Rejected):
            return result
        return result.status, result.content

    async def aclose(self) -> None:
        """Close the egress client if this executor created it (a given client stays open)."""
        if self._owns_egress and self._egress is not None:
            await self._egress.aclose()
