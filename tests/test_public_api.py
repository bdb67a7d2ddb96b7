"""The public surface: pinned names, public module paths, docstrings."""

from __future__ import annotations

import inspect

import robota
import robota.agents
import robota.host
import robota.mcp
import robota.temporal
import robota.testing
import robota.tools

EXPECTED_PUBLIC = {
    # Required by issue 2's acceptance (imported by tests outside this repository).
    "RobotaError",
    "ProviderError",
    "AbortController",
    "AbortSignal",
    "AbortError",
    "is_abort",
    "set_global_logger_sink",
    "ConversationStore",
    "Usage",
    "register_model_metadata",
    "get_model_context_window",
    "DEFAULT_CONTEXT_WINDOW",
    # Issue 25: an unknown window is unknown (DEFAULT_CONTEXT_WINDOW is never assumed); a run
    # records its own.
    "ContextWindow",
    "EnvResolver",
    # Issue 3 (the agent loop).
    "Agent",
    "RunResult",
    # Issue 29 (sub-agents): Agent.as_tool, RunResult.usage_by_agent.
    "AgentTool",
    "AgentUsage",
    # Issue 29 (handoffs): Agent(handoffs=[...]), RunResult.agent.
    "Handoff",
    "tool",
    "Tool",
    "ToolContext",
    "Plugin",
    "Provider",
    # Issue 4 (loop guards).
    "SameToolInputLoopError",
    "EmptyCompletionError",
    # Issue 5 (schemas).
    "validate_against_json_schema",
    "schema_from_type",
    "SchemaConversionError",
    "project_tool_schema",
    "StructuredOutputError",
    # Issue 6 (permissions and hooks).
    "evaluate_permission",
    "PermissionPolicy",
    "PermissionDecision",
    "RiskClass",
    "PermissionArgument",
    "HookOutcome",
    "event_enforces",
    # Issue 13 (durable execution).
    "ExecutionJournal",
    "ReconciliationRequired",
    # Issue 28 (usage limits).
    "UsageLimits",
    "UsageLimitExceeded",
    # Issue 29 (guardrails).
    "InputGuardrail",
    "OutputGuardrail",
    "ToolGuardrail",
    "GuardrailTripped",
}

# Issue 7: names acceptance tests outside this repository import from ``robota.host``.
EXPECTED_HOST = {
    "is_path_inside",
    "check_url",
    "EgressClient",
    "OwnerOnlyStore",
    "ProcessScopedDirectory",
    "ProcessMarker",
    "FileCredentialStore",
    "Sealer",
    "LockedError",
    "CorruptError",
    "ProcessEnvResolver",
}


def test_required_host_names_are_exported() -> None:
    assert set(robota.host.__all__) >= EXPECTED_HOST


def test_required_names_are_exported() -> None:
    assert set(robota.__all__) >= EXPECTED_PUBLIC


def test_all_is_pinned() -> None:
    # Adding or removing a public name is a deliberate act: update this list with it.
    assert sorted(robota.__all__) == [
        "ANNOTATION_KEYWORDS",
        "AUTO_DEFERRAL_SCHEMA_SHARE",
        "AUTO_DEFERRAL_TOOL_COUNT",
        "AbortController",
        "AbortError",
        "AbortSignal",
        "Admission",
        "Agent",
        "AgentEvent",
        "AgentTool",
        "AgentUsage",
        "Approval",
        "ApprovalRequest",
        "Approver",
        "ArgumentKind",
        "ArtifactKind",
        "ArtifactSealer",
        "AssistantMessage",
        "AudioPart",
        "AuthenticationError",
        "CONSTRAINT_KEYWORDS",
        "CONTEXT_GUARD_THRESHOLD",
        "CachedResponse",
        "CallbackEventService",
        "CapabilitySource",
        "ChatRequest",
        "ChatResponse",
        "Checkpoint",
        "ChildTraceClass",
        "ConfigurationError",
        "ContextLimitMessage",
        "ContextUsage",
        "ContextWindow",
        "ContextWindowSource",
        "ConversationStore",
        "CorruptError",
        "CorruptReason",
        "CredentialStore",
        "CredentialStoreError",
        "DANGEROUS_PROPERTY_NAMES",
        "DEFAULT_CONTEXT_WINDOW",
        "DEFAULT_INTERRUPTED_ANNOTATION",
        "DEFAULT_MAX_HANDOFFS",
        "DEFAULT_MAX_ROUNDS",
        "DEFAULT_OUTPUT_FEEDBACK",
        "DEFAULT_OUTPUT_INSTRUCTION",
        "DEFAULT_SUMMARY_FALLBACK",
        "DEFAULT_SUMMARY_INSTRUCTION",
        "DEFAULT_TRUST_LOCATIONS",
        "DEFAULT_UNAVAILABLE_TOOLS_INSTRUCTION",
        "DisposedAgentError",
        "DocumentPart",
        "EFFORT_LEVELS",
        "ENV_REFERENCE_PREFIX",
        "EffectSettled",
        "EffectStarted",
        "EffortDisposition",
        "EffortLevel",
        "EffortOutcome",
        "EffortResolution",
        "EffortSelection",
        "EmptyCompletionError",
        "EnvResolver",
        "ErrorCategory",
        "EventNames",
        "EventPosture",
        "EventService",
        "ExecutionControlError",
        "ExecutionJournal",
        "ExecutionLockedError",
        "ExecutionStarted",
        "ExecutionStateError",
        "ExecutionSuspendedError",
        "FunctionTool",
        "GuardrailPhase",
        "GuardrailRecord",
        "GuardrailResult",
        "GuardrailTripped",
        "HOOK_EVENTS",
        "Handoff",
        "HistoryError",
        "HistoryMutation",
        "HistoryObserver",
        "HistorySnapshot",
        "HistoryView",
        "HookBlockedError",
        "HookConfig",
        "HookEventName",
        "HookExecutor",
        "HookMatcher",
        "HookOutcome",
        "HookOutcomeKind",
        "HookResult",
        "HookRunner",
        "HookSpec",
        "ImagePart",
        "InMemoryResponseCache",
        "InputGuardrail",
        "InternalError",
        "JOURNAL_FORMAT_VERSION",
        "JournalLease",
        "JournalRecord",
        "JsonType",
        "LimitName",
        "LockedError",
        "LockedReason",
        "LogEvent",
        "Logger",
        "LoggerSink",
        "MAX_VALIDATION_DEPTH",
        "MAX_VALIDATION_NODES",
        "MappingEnvResolver",
        "MemorySink",
        "Message",
        "MessageCommitted",
        "MessagePart",
        "MessageState",
        "ModelCallSettled",
        "ModelCallStarted",
        "ModelCapabilities",
        "ModelCapabilityLookup",
        "ModelFamily",
        "ModelMetadata",
        "ModelPricing",
        "ModelSelection",
        "ModelSettings",
        "ModelTexts",
        "Module",
        "ModuleRegistry",
        "NativeCapture",
        "NativePayload",
        "NativeToolUnavailableError",
        "NetworkError",
        "NullEventService",
        "NullSink",
        "OutputGuardrail",
        "OutputT",
        "OutputTransport",
        "OutsideRequest",
        "OutsideRequested",
        "OutsideResponded",
        "OutsideResponder",
        "OwnerRef",
        "PROVIDER_ENTRY_POINT_GROUP",
        "ParameterSchema",
        "PathScreen",
        "PathVerdict",
        "PendingAssistant",
        "PermissionArgument",
        "PermissionBehavior",
        "PermissionContext",
        "PermissionDecision",
        "PermissionGate",
        "PermissionMode",
        "PermissionPolicy",
        "PermissionSteer",
        "Plugin",
        "PluginFailure",
        "ProjectionOutcome",
        "ProjectionPolicy",
        "ProjectionResult",
        "Provider",
        "ProviderCapabilities",
        "ProviderError",
        "ProviderTrace",
        "RateLimitError",
        "ReadOnlyCommandClassifier",
        "Reconciled",
        "ReconciliationItem",
        "ReconciliationRequired",
        "RecordingEventService",
        "RejectedTool",
        "ResponseCache",
        "ResponseDone",
        "ResponseFormat",
        "RetryPolicy",
        "RetryStarted",
        "RiskClass",
        "RobotaError",
        "RoundStarted",
        "RunEvent",
        "RunInfo",
        "RunOptions",
        "RunResult",
        "RunStatus",
        "RunStream",
        "RuntimeState",
        "SEALED_FRAMING_VERSION",
        "SEALED_MAGIC",
        "SUBSET_KEYWORDS",
        "SameToolInputLoopError",
        "SchemaConversionError",
        "SchemaValidationError",
        "Sealing",
        "SealingGrant",
        "StdlibLoggingSink",
        "StopReason",
        "StorageError",
        "StreamEvent",
        "StructuredOutputError",
        "StructuredOutputTransport",
        "SubagentEvent",
        "SystemMessage",
        "TOOL_RESULT_BUDGET",
        "TOOL_SEARCH_NAME",
        "TextDelta",
        "TextPart",
        "Tool",
        "ToolCall",
        "ToolCallCheck",
        "ToolCallFinished",
        "ToolCallOutcome",
        "ToolCallReady",
        "ToolCallStarted",
        "ToolChoice",
        "ToolContext",
        "ToolDeferral",
        "ToolExecutionError",
        "ToolGate",
        "ToolGuardrail",
        "ToolInvocation",
        "ToolLike",
        "ToolMessage",
        "ToolOutcomeStatus",
        "ToolOutput",
        "ToolRegistry",
        "ToolResidency",
        "ToolResult",
        "ToolSource",
        "ToolSpec",
        "TraceContext",
        "UNAVAILABLE_TOOL_ROUNDS",
        "UnlockListener",
        "Usage",
        "UsageLimitExceeded",
        "UsageLimits",
        "UsageTriple",
        "UserMessage",
        "__version__",
        "abort_error_from_reason",
        "check_artifact_owner",
        "check_credential_key",
        "check_effort",
        "check_media",
        "check_native_tools",
        "check_parameter_schema",
        "child_environment",
        "choose_output_transport",
        "collect_stream",
        "decode_hook_body",
        "decode_journal_record",
        "default_context_limit_message",
        "default_projection_note",
        "derive_span_id",
        "encode_journal_record",
        "estimate_cost",
        "estimate_message_tokens",
        "estimate_text_tokens",
        "estimate_tools_tokens",
        "evaluate_permission",
        "event_enforces",
        "get_global_logger_sink",
        "get_logger",
        "get_model_context_window",
        "get_model_metadata",
        "get_model_pricing",
        "install_command",
        "is_abort",
        "is_env_reference",
        "is_sealed",
        "lookup_model_capabilities",
        "match_model_family",
        "model_capabilities",
        "model_capability",
        "normalize_request",
        "origin_of",
        "project_tool_schema",
        "project_tool_spec",
        "provider_capabilities",
        "provider_for_model",
        "rebuild_history",
        "register_model_metadata",
        "register_model_pricing",
        "registered_provider_prefixes",
        "request_fingerprint",
        "resolve_effort",
        "resolve_env_reference",
        "schema_from_type",
        "sealed_framing_version",
        "set_global_logger_sink",
        "stream_response",
        "tool",
        "unregister_model_metadata",
        "unregister_model_pricing",
        "validate_against_json_schema",
    ]


def _public_objects() -> list[tuple[str, object]]:
    return [
        (name, getattr(module, name))
        for module in (
            robota,
            robota.host,
            robota.testing,
            robota.mcp,
            robota.temporal,
            robota.agents,
            robota.tools,
        )
        for name in module.__all__
    ]


def test_public_classes_and_functions_have_docstrings() -> None:
    missing = [
        name
        for name, obj in _public_objects()
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not inspect.getdoc(obj)
    ]
    assert missing == []


def test_public_methods_have_docstrings() -> None:
    missing = []
    for name, obj in _public_objects():
        if not inspect.isclass(obj):
            continue
        for attr, member in vars(obj).items():
            if attr.startswith("_") or not (
                inspect.isfunction(member) or isinstance(member, (property, classmethod))
            ):
                continue
            if not inspect.getdoc(member):
                missing.append(f"{name}.{attr}")
    assert missing == []


def test_public_classes_report_the_public_module() -> None:
    wrong = [
        name
        for name, obj in ((n, getattr(robota, n)) for n in robota.__all__)
        if inspect.isclass(obj) and obj.__module__ != "robota"
    ]
    assert wrong == []


def test_mcp_public_names_are_exported() -> None:
    # Issue 15: names acceptance tests outside this repository use.
    assert {"MCPServerStdio", "MCPServerHTTP"} <= set(robota.mcp.__all__)


def test_temporal_public_names_are_exported() -> None:
    # Issue 17: names acceptance tests outside this repository use.
    assert {"create_worker", "start_agent_run", "get_result"} <= set(robota.temporal.__all__)


def test_agents_public_names_are_exported() -> None:
    # Issue 29 item 5: the orchestration layer's builders and results.
    assert {"sequential", "parallel", "map_reduce", "FlowResult", "OrchestrationError"} <= set(
        robota.agents.__all__
    )


def test_tools_public_names_are_pinned() -> None:
    # Issue 30: names acceptance tests outside this repository use.
    assert robota.tools.__all__ == [
        "FileChange",
        "Question",
        "QuestionApprover",
        "QuestionAsker",
        "UndoError",
        "Undone",
        "ask_user",
        "builtin",
        "edit_file",
        "glob",
        "grep",
        "list_dir",
        "read_file",
        "shell",
        "undo",
        "web_fetch",
        "write_file",
    ]


def test_version_is_a_string() -> None:
    assert isinstance(robota.__version__, str)
    assert robota.__version__
