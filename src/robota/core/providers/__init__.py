"""The provider contract (S28, S30, S41).

The base class adapters implement, and the one way to ask what they can do.
"""

from robota.core.providers._capabilities import (
    ModelCapabilities,
    ProviderCapabilities,
    StructuredOutputTransport,
    check_native_tools,
    model_capabilities,
    model_capability,
    provider_capabilities,
    unsupported_settings,
    without_unsupported_settings,
)
from robota.core.providers._contract import (
    ChatRequest,
    ChatResponse,
    NativeCapture,
    NativePayload,
    Provider,
    ResponseDone,
    ResponseFormat,
    StreamEvent,
    TextDelta,
    ToolCallReady,
    ToolChoice,
    ToolSpec,
    collect_stream,
    stream_response,
)
from robota.core.providers._effort import (
    EFFORT_LEVELS,
    EffortDisposition,
    EffortLevel,
    EffortOutcome,
    EffortResolution,
    EffortSelection,
    check_effort,
    resolve_effort,
)
from robota.core.providers._fingerprint import normalize_request, request_fingerprint
from robota.core.providers._resolve import (
    PROVIDER_ENTRY_POINT_GROUP,
    provider_for_model,
    registered_provider_prefixes,
)
from robota.core.providers._settings import ModelSettings

__all__ = [
    "EFFORT_LEVELS",
    "PROVIDER_ENTRY_POINT_GROUP",
    "ChatRequest",
    "ChatResponse",
    "EffortDisposition",
    "EffortLevel",
    "EffortOutcome",
    "EffortResolution",
    "EffortSelection",
    "ModelCapabilities",
    "ModelSettings",
    "NativeCapture",
    "NativePayload",
    "Provider",
    "ProviderCapabilities",
    "ResponseDone",
    "ResponseFormat",
    "StreamEvent",
    "StructuredOutputTransport",
    "TextDelta",
    "ToolCallReady",
    "ToolChoice",
    "ToolSpec",
    "check_effort",
    "check_native_tools",
    "collect_stream",
    "model_capabilities",
    "model_capability",
    "normalize_request",
    "provider_capabilities",
    "provider_for_model",
    "registered_provider_prefixes",
    "request_fingerprint",
    "resolve_effort",
    "stream_response",
    "unsupported_settings",
    "without_unsupported_settings",
]
