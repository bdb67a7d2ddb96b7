"""``a2a_app`` and ``a2a_tool``: a Robota agent as an A2A agent, and an A2A agent as a tool.

The ``a2a-sdk`` package (the ``a2a`` extra) loads when one of them is first called, so
``import robota.serve`` works without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from a2a.types import AgentSkill
    from starlette.applications import Starlette

    import robota.core
    import robota.host
    from robota.serve._a2a_server import AgentSource

__all__ = ["a2a_app", "a2a_tool"]

_INSTALL = 'the A2A support needs the a2a extra: pip install -e ".[a2a]" in the Robota checkout'


def _missing(exc: ImportError) -> ImportError:
    error = ImportError(f"{_INSTALL} ({exc})")
    error.__cause__ = exc
    return error


def a2a_app(
    agent: AgentSource,
    *,
    url: str,
    name: str | None = None,
    description: str = "",
    version: str = "1.0.0",
    skills: Sequence[AgentSkill] = (),
    max_contexts: int = 256,
    allowed_hosts: Sequence[str] = (),
) -> Starlette:
    """An ASGI app that serves ``agent`` over the A2A protocol (1.0, with 0.3 method names).

    Serves the agent card at ``/.well-known/agent-card.json`` (and under the path of ``url``
    when it has one, where the SDK's resolver looks) and the JSON-RPC endpoint at the path of
    ``url``: ``SendMessage`` / ``message/send``, ``SendStreamingMessage`` /
    ``message/stream`` (server-sent events), ``GetTask`` / ``tasks/get``, ``CancelTask`` /
    ``tasks/cancel`` (and the SDK's other task methods). Each message's text parts are the
    prompt of one run; the run's text streams as chunks of the task's ``answer`` artifact, which
    ends holding the final text, and the task completes. ``tasks/cancel`` aborts the run (S23):
    the task ends ``canceled`` with the text so far in its artifact. A failed run ends the task
    ``failed`` with a short message naming the failure's class and code — never its text, a stack
    trace or a key. Tasks are kept in memory.

    Conversations: an A2A context id is one conversation. Pass a factory (``lambda:
    robota.Agent(...)``) to give each context its own agent, so contexts run side by side; pass
    one agent and it carries every context's history in turn (one turn at a time). Either way at
    most ``max_contexts`` conversations are kept, the least recently used dropped first (its
    agent closed).

    Security (issue 31): without a token the app answers only peers on this machine whose
    ``Host`` names loopback, the host of ``url`` or one of ``allowed_hosts`` (403 otherwise:
    DNS rebinding, a hand-run ``uvicorn --host 0.0.0.0``), and refuses a bearer token it does
    not check (400); a request from another site's ``Origin`` is a 403 and a body over 1 MiB a
    413. It has no authentication of its own: bind it to loopback, or serve it with
    :func:`robota.serve.serve`, which requires a token for any other bind and then checks
    ``Authorization: Bearer`` on every request — anyone who can reach an unauthenticated server
    can run the agent and read a task by its id.

    Args:
        agent: A :class:`robota.Agent`, or a callable returning a new one per context.
        url: The absolute URL clients send JSON-RPC to (advertised in the card); its path is
            the endpoint's path, e.g. ``"http://127.0.0.1:8000/"``.
        name: The card's name; default: the agent's name (``"agent"`` for a factory).
        description: The card's description.
        version: The card's agent version.
        skills: ``a2a.types.AgentSkill`` entries for the card; default: one ``chat`` skill.
        max_contexts: The most conversations kept in memory.
        allowed_hosts: More host names (no port) the app answers besides loopback and the
            host of ``url`` — the names clients reach it by, e.g. through a proxy.

    Raises:
        ImportError: the ``a2a`` extra (``a2a-sdk``, ``starlette``) is not installed.
        ValueError: ``url`` is not an absolute http(s) URL, or ``max_contexts`` is below 1.
        TypeError: ``agent`` is neither an agent nor a callable.
    """
    try:
        from robota.serve._a2a_server import build_a2a_app  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise _missing(exc) from exc
    return build_a2a_app(
        agent,
        name=name,
        description=description,
        url=url,
        version=version,
        skills=skills,
        max_contexts=max_contexts,
        allowed_hosts=allowed_hosts,
    )


def a2a_tool(
    url: str,
    *,
    name: str | None = None,
    description: str | None = None,
    client: robota.host.EgressClient | None = None,
    timeout: float = 300.0,
) -> robota.core.Tool:
    """A tool that sends the model's message to the remote A2A agent at ``url``.

    Each call fetches the agent card (``url`` itself when it ends in ``.json``; else
    ``.well-known/agent-card.json`` under ``url``'s path, as the SDK's resolver looks, then at
    its origin's root), sends one A2A 1.0 JSON-RPC ``SendMessage`` (``returnImmediately``)
    to the card's JSON-RPC endpoint, polls the task (``GetTask``) until it ends, and returns the
    answer's text (a completed task's artifacts, or the reply message); a failed, rejected or
    canceled task is an error result the model reads. Each call is a new conversation on the
    remote side.

    Egress (S06): all of its HTTP goes through :class:`robota.host.EgressClient` — ``client``,
    or a default one — so the card fetch, the call and every redirect are checked by the egress
    policy (a loopback, private or metadata address is refused; tests pass a client made with
    :func:`robota.testing.loopback_allowance` and a resolver). A card that names an endpoint on
    another origin than its own is refused: the card cannot send the message elsewhere.

    Permissions (S12, S21): risk ``execute`` — the message leaves the machine, so the default
    mode asks unless a rule allows the tool. The destination is fixed here, by whoever builds the
    tool, and is never an argument of the model's: rules name the tool (``a2a_billing``, or
    ``name=``) and may scope to its ``message`` argument, read as text. The run's abort ends the
    call (S23) and, like ``timeout`` passing, sends ``CancelTask`` for a remote task still
    going (best effort, at most 5 s); aborted mid-send, the call waits up to those 5 s for the
    answer that names the task.

    Args:
        url: The remote agent's base URL, or its agent card's URL.
        name: The tool's name; default ``a2a_<host>``.
        description: What the model is told the tool does; default: a generic text.
        client: The egress client to use (left open); default: a fresh one per call.
        timeout: Seconds for the whole call, card fetch included.

    Raises:
        ImportError: the ``a2a`` extra (``a2a-sdk``) is not installed.
        ValueError: ``url`` is not an absolute http(s) URL, or ``timeout`` is not above 0.
    """
    try:
        from robota.serve._a2a_tool import A2ATool  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise _missing(exc) from exc
    return A2ATool(url, name=name, description=description, client=client, timeout=timeout)
