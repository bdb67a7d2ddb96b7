"""The public surface: pinned names, public module paths, docstrings."""

from __future__ import annotations

import inspect

import robota
import robota.host

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
    "EnvResolver",
}


def test_required_names_are_exported() -> None:
    assert set(robota.__all__) >= EXPECTED_PUBLIC


def test_all_is_pinned() -> None:
    # Adding or removing a public name is a deliberate act: update this list with it.
    assert sorted(robota.__all__) == sorted(
        [
            "__version__",
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
    )


def _public_objects() -> list[tuple[str, object]]:
    return [(name, getattr(robota, name)) for name in robota.__all__] + [
        (name, getattr(robota.host, name)) for name in robota.host.__all__
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


def test_version_is_a_string() -> None:
    assert isinstance(robota.__version__, str)
    assert robota.__version__
