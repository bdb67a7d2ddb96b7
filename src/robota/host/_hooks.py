"""Hook executors on the host (S22): shell commands and HTTP endpoints.

Both decode into core's :class:`~robota.core.hooks.HookOutcome` and never raise for a hook's own
failure.

Command hooks — the payload is written to the command's stdin as JSON:

* exit 0 → allow; stdout is carried, and a JSON object on stdout is decoded (it may block, or —
  for command hooks only — steer a pre-tool call with ``permissionDecision``/``updatedInput``);
* exit 2 → deny, with stderr as the reason;
* any other exit code, a kill by a signal, a timeout, or a process that never started → error,
  with a reason that names which. Never silently coerced to allow or deny.

The child leads its own session and process group (S09), and the whole group is killed on a
timeout or an abort, so a hook cannot leave a grandchild behind on the way out.

HTTP hooks POST the payload and must answer 2xx with a JSON body stating ``"decision": true`` or
``false``; anything else is an error. Their URL passes an egress check first — a seam the host
fills with its egress policy (:func:`robota.host.check_url` once it exists); pass
``check_url=None`` only for a trusted, fixed endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signals
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

import httpx2

from robota.core import AbortSignal
from robota.core.hooks import HookOutcome, HookSpec, decode_hook_body

__all__ = ["CommandHookExecutor", "HttpHookExecutor"]

DEFAULT_HOOK_TIMEOUT: Final = 60.0
_OUTPUT_LIMIT: Final = 1_000_000

UrlCheck = Callable[[str], Awaitable[str | None]]
"""``(url) -> None`` when the URL may be called, else the reason it may not."""


@final
class CommandHookExecutor:
    """Runs ``type: "command"`` hooks as real processes (``/bin/sh -c <command>``).

    Args:
        default_timeout: Seconds before a hook without its own ``timeout`` counts as failed.
        env: The environment of every hook process (default: a copy of this process's).
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
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: AbortSignal | None = None
    ) -> HookOutcome:
        """Run the hook's command with ``payload`` on stdin and decode the result."""
        if hook.command is None:
            return HookOutcome.error("a command hook needs a 'command'")
        timeout = hook.timeout or self._default_timeout
        try:
            process = await asyncio.create_subprocess_exec(
                "/bin/sh",
                "-c",
                hook.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(os.environ) if self._env is None else self._env,
                cwd=self._cwd,
                start_new_session=True,  # S09: its own group, killed as a whole
            )
        except OSError as exc:
            return HookOutcome.error(f"the hook process never started: {exc}")
        data = json.dumps(dict(payload), default=str).encode()
        communicate = asyncio.ensure_future(process.communicate(data))
        waiters: set[asyncio.Future[Any]] = {communicate}
        aborted: asyncio.Future[object] | None = None
        if signal is not None:
            aborted = asyncio.ensure_future(signal.wait())
            waiters.add(aborted)
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            await _kill(process, communicate)
            raise
        finally:
            if aborted is not None and not aborted.done():
                aborted.cancel()
        if communicate not in done:
            await _kill(process, communicate)
            if aborted is not None and aborted in done:
                return HookOutcome.error("the hook was stopped because the run was aborted")
            return HookOutcome.error(f"the hook timed out after {timeout:g} seconds")
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


def _decode_stdout(stdout: str) -> HookOutcome:
    text = stdout.strip()
    if not text.startswith(("{", "[")):
        return HookOutcome.allow(stdout)
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

    Args:
        check_url: The egress check each URL passes first (see the module docstring); it returns
            ``None`` to allow or the reason to refuse. Required: pass ``None`` explicitly only
            for trusted, fixed endpoints.
        client: The HTTP client (default: one owned by this executor; close it with
            :meth:`aclose`).
        default_timeout: Seconds before a hook without its own ``timeout`` counts as failed.
    """

    __slots__ = ("_check", "_client", "_default_timeout", "_owns_client")

    def __init__(
        self,
        *,
        check_url: UrlCheck | None,
        client: httpx2.AsyncClient | None = None,
        default_timeout: float = DEFAULT_HOOK_TIMEOUT,
    ) -> None:
        self._check = check_url
        self._owns_client = client is None
        self._client = client or httpx2.AsyncClient(follow_redirects=False, trust_env=False)
        self._default_timeout = default_timeout

    async def execute(
        self, hook: HookSpec, payload: Mapping[str, Any], *, signal: AbortSignal | None = None
    ) -> HookOutcome:
        """POST ``payload`` to the hook's URL and decode the answer."""
        if hook.url is None:
            return HookOutcome.error("an http hook needs a 'url'")
        if self._check is not None:
            refusal = await self._check(hook.url)
            if refusal is not None:
                return HookOutcome.error(
                    f"the hook URL was refused by the egress policy: {refusal}"
                )
        headers = hook.options.get("headers")
        timeout = hook.timeout or self._default_timeout
        try:
            response = await self._client.post(
                hook.url,
                json=dict(payload),
                headers=dict(headers) if isinstance(headers, Mapping) else None,
                timeout=timeout,
            )
        except httpx2.TimeoutException:
            return HookOutcome.error(f"the hook timed out after {timeout:g} seconds")
        except httpx2.HTTPError as exc:
            return HookOutcome.error(f"the hook could not be reached: {type(exc).__name__}: {exc}")
        if not 200 <= response.status_code < 300:
            return HookOutcome.error(f"the hook answered HTTP {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            return HookOutcome.error("the hook's answer is not JSON")
        return decode_hook_body(body, default=None, steering=False)

    async def aclose(self) -> None:
        """Close the HTTP client if this executor created it."""
        if self._owns_client:
            await self._client.aclose()
