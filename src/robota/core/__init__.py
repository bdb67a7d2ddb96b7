"""``robota.core``: the platform-neutral runtime (spec S01–S04).

Everything here runs wherever Python runs: no processes, sockets, TLS, HTTP clients, SQLite or
vendor SDKs (held by import-linter, see ``pyproject.toml``). It has no host default (S02): what
needs the operating system — the environment resolver, hook executors, journals — is passed in by
the caller from :mod:`robota.host` or the caller's own code.

The public names are re-exported from :mod:`robota`; import them from there.
"""

from robota.core._abort import AbortController, AbortSignal, abort_error_from_reason, is_abort
from robota.core._env import (
    ENV_REFERENCE_PREFIX,
    EnvResolver,
    MappingEnvResolver,
    is_env_reference,
    resolve_env_reference,
)
from robota.core._errors import (
    AbortError,
    AuthenticationError,
    ConfigurationError,
    DisposedAgentError,
    EmptyCompletionError,
    ErrorCategory,
    HistoryError,
    NetworkError,
    ProviderError,
    RateLimitError,
    RobotaError,
    SameToolInputLoopError,
    SchemaValidationError,
    StorageError,
    StructuredOutputError,
    ToolExecutionError,
)
from robota.core._history import (
    DEFAULT_INTERRUPTED_ANNOTATION,
    ConversationStore,
    HistoryView,
    PendingAssistant,
)
from robota.core._logging import (
    LogEvent,
    Logger,
    LoggerSink,
    MemorySink,
    NullSink,
    StdlibLoggingSink,
    get_global_logger_sink,
    get_logger,
    set_global_logger_sink,
)
from robota.core._messages import (
    AssistantMessage,
    Message,
    MessageState,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from robota.core._models import (
    DEFAULT_CONTEXT_WINDOW,
    ModelMetadata,
    get_model_context_window,
    get_model_metadata,
    register_model_metadata,
    unregister_model_metadata,
)
from robota.core._pricing import (
    ModelPricing,
    estimate_cost,
    get_model_pricing,
    register_model_pricing,
    unregister_model_pricing,
)
from robota.core._usage import Usage, UsageTriple

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
