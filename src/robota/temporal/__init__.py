"""Agents as durable Temporal workflows (the ``temporal`` extra, the official ``temporalio`` SDK).

The agent's loop runs in workflow code; every provider call is the activity
``robota.model_call`` and every tool body the activity ``robota.tool_call``. Workers know agents
by name (:func:`create_worker` with name → factory); a client starts a run by name
(:func:`start_agent_run`) and reads it back (:func:`get_result`) from any process. A worker that
dies mid-run is replaced by any other on the same task queue; a deploy (all workers stopped, new
ones started) continues every run.

Exactly-once effects (S40): with a shared execution journal, a retried tool activity whose earlier
attempt started but never settled raises :class:`robota.ReconciliationRequired` (through
:func:`get_result`) instead of running the body again, unless the tool is idempotent; the host
settles it with :func:`reconcile`. Cancelling the workflow interrupts the run (S23) and returns the
text so far; a permission ``ask`` waits for :func:`approve`; :func:`run_state` reports the text so
far, for streaming by polling; a tool's outside-response request (S40) waits for :func:`respond`.
:func:`approve` and :func:`respond` are updates that refuse an unknown or answered id with
:class:`robota.ExecutionStateError`; ``get_result(..., stop_for_input=True)`` raises
:class:`InputRequired` while the run waits for them, so a host drives a run with one loop.
Every attempt of one tool call sees the same ``ctx.idempotency_key`` (workflow id and call id).

Retries are Temporal's: a provider failure that may succeed later (5xx, 408, 429) is retried on
Temporal's schedule, honouring ``retry-after``; a refused request (400, 401, 403 …) is not; the
workers turn their providers' SDK retries off (:meth:`robota.Provider.disable_sdk_retries`).

Sub-agents and guardrails (issue 29): an agent used as a tool (``Agent.as_tool``) runs inside the
parent's workflow — its delegation and its loop in workflow code, its model calls and tool bodies
activities of the parent's run, addressed by its path below the registered agent — so a worker
crash repeats no completed model call of the child, nor (with the workers' journal) a settled
tool effect; ``RunOutput.usage_by_agent`` breaks the usage down. A plain-function guardrail
check runs in the activity ``robota.guardrail`` (:data:`GUARDRAIL`; a sync check in a thread,
given JSON), a guardrail agent like a sub-agent; a trip is :class:`robota.GuardrailTripped`. A
factory builds its sub-agents and guardrail agents fresh on every call: one it shares between
calls is refused when a run starts.

In workflow code (replayed, no I/O): the agent's factory, its permission gate and plugins. Refused
when a run starts: an agent — or a sub-agent or guardrail agent below it — with its own journal,
tool sources or hooks. A tool result over
``INLINE_RESULT_BYTES`` — its text and media parts, base64 — is stored in the journal and
referenced by a marker with no parts (the run's messages show the marker); the model call
restores the text and the parts within the S39 tool-result budget (past it, the bounded notice),
while the workflow's pre-send context guard counts the marker (a known limit).

Large media in a run's input (issue 26): ``start_agent_run(..., journal=...)`` writes each media
part over 64 KiB to the journal the workers share and sends a stand-in of the same kind whose
bytes are a reference, shaped to count the same context tokens (S31); every model call sends the
stored part. Without a journal, input media over what a payload carries are refused before the
run starts. Typed results: ``start_agent_run(..., output=...)`` carries the JSON schema; each
retry turn is a model-call activity (a replay never calls the model again);
:attr:`RunOutput.output` holds the validated JSON value and ``get_result(handle, output=Type)``
the typed object.
:func:`create_replayer` replays recorded histories, to check a change before deploying it.
"""

from robota.temporal._activities import (
    GUARDRAIL,
    MODEL_CALL,
    TOOL_CALL,
    AgentFactory,
    AgentRegistry,
    RobotaActivities,
)
from robota.temporal._client import (
    InputRequired,
    PendingApproval,
    RunState,
    approve,
    get_result,
    reconcile,
    respond,
    run_state,
    start_agent_run,
)
from robota.temporal._codec import PAYLOAD_VERSION, RunOutput
from robota.temporal._worker import create_replayer, create_worker
from robota.temporal._workflow import WORKFLOW_NAME

__all__ = [
    "GUARDRAIL",
    "MODEL_CALL",
    "PAYLOAD_VERSION",
    "TOOL_CALL",
    "WORKFLOW_NAME",
    "AgentFactory",
    "AgentRegistry",
    "InputRequired",
    "PendingApproval",
    "RobotaActivities",
    "RunOutput",
    "RunState",
    "approve",
    "create_replayer",
    "create_worker",
    "get_result",
    "reconcile",
    "respond",
    "run_state",
    "start_agent_run",
]
