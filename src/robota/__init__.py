"""Robota: an agent runtime for Python.

Provider-neutral, tool-using, permission-gated, cancellable and recoverable agents, safe with
untrusted model output. This module re-exports the public core API (:mod:`robota.core`);
host integrations live in :mod:`robota.host`, vendor adapters in ``robota.providers.*`` and the
offline test kit in :mod:`robota.testing`.
"""

import contextlib as _contextlib

from robota._version import __version__
from robota.core import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_INTERRUPTED_ANNOTATION,
    ENV_REFERENCE_PREFIX,
    AbortController,
    AbortError,
    AbortSignal,
    AssistantMessage,
    AuthenticationError,
    ConfigurationError,
    ConversationStore,
    DisposedAgentError,
    EmptyCompletionError,
    EnvResolver,
    ErrorCategory,
    HistoryError,
    HistoryView,
    LogEvent,
    Logger,
    LoggerSink,
    MappingEnvResolver,
    MemorySink,
    Message,
    MessageState,
    ModelMetadata,
    ModelPricing,
    NetworkError,
    NullSink,
    PendingAssistant,
    ProviderError,
    RateLimitError,
    RobotaError,
    SameToolInputLoopError,
    SchemaValidationError,
    StdlibLoggingSink,
    StorageError,
    StructuredOutputError,
    SystemMessage,
    ToolCall,
    ToolExecutionError,
    ToolMessage,
    Usage,
    UsageTriple,
    UserMessage,
    abort_error_from_reason,
    estimate_cost,
    get_global_logger_sink,
    get_logger,
    get_model_context_window,
    get_model_metadata,
    get_model_pricing,
    is_abort,
    is_env_reference,
    register_model_metadata,
    register_model_pricing,
    resolve_env_reference,
    set_global_logger_sink,
    unregister_model_metadata,
    unregister_model_pricing,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_INTERRUPTED_ANNOTATION",
    "ENV_REFERENCE_PREFIX",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AssistantMessage",
    "AuthenticationError",
    "ConfigurationError",
    "ConversationStore",
    "DisposedAgentError",
    "EmptyCompletionError",
    "EnvResolver",
    "ErrorCategory",
    "HistoryError",
    "HistoryView",
    "LogEvent",
    "Logger",
    "LoggerSink",
    "MappingEnvResolver",
    "MemorySink",
    "Message",
    "MessageState",
    "ModelMetadata",
    "ModelPricing",
    "NetworkError",
    "NullSink",
    "PendingAssistant",
    "ProviderError",
    "RateLimitError",
    "RobotaError",
    "SameToolInputLoopError",
    "SchemaValidationError",
    "StdlibLoggingSink",
    "StorageError",
    "StructuredOutputError",
    "SystemMessage",
    "ToolCall",
    "ToolExecutionError",
    "ToolMessage",
    "Usage",
    "UsageTriple",
    "UserMessage",
    "__version__",
    "abort_error_from_reason",
    "estimate_cost",
    "get_global_logger_sink",
    "get_logger",
    "get_model_context_window",
    "get_model_metadata",
    "get_model_pricing",
    "is_abort",
    "is_env_reference",
    "register_model_metadata",
    "register_model_pricing",
    "resolve_env_reference",
    "set_global_logger_sink",
    "unregister_model_metadata",
    "unregister_model_pricing",
]


# Public objects report the public path (`robota.Agent`, not `robota.core._agent.Agent`) in
# reprs, tracebacks and pickles; every one of them is importable from here.
def _relabel_public_objects() -> None:
    namespace = globals()
    for name in __all__:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith("robota.core."):
            # Aliases of builtin types (unions, literals) cannot be relabelled; they keep theirs.
            with _contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = __name__


_relabel_public_objects()
del _relabel_public_objects
