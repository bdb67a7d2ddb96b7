"""The machinery every SDK-based provider adapter shares (S23, S25, S27, S28, S30, S42).

Vendor-neutral, so each adapter package (``robota.providers.openai``, ``…anthropic``,
``…gemini``) uses it without importing another adapter (the independence contract allows an
adapter to import this kit and nothing of another adapter's):

* :mod:`._values` — reading SDK objects, the usage attestation rule, the error values for
  answers that are not the API's, the mapping of ``httpx2`` transport failures, retry hints;
* :mod:`._drive` — the call and stream drivers (native payloads reported on the raw surface,
  the run's signal honoured at every await, the SDK stream always closed) and the tool
  projection cache;
* :mod:`._trace` — trace headers sent to the listed origin only, exact request bodies;
* :mod:`._options` — the checks every adapter's constructor and request make, the model table;
* :mod:`._sdk_provider` — the :class:`SDKProvider` base;
* :mod:`._errors` — the network errors, the error class for a vendor's row, error bodies;
* :mod:`._continuation` — the continuation text an adapter hands back to itself (S26);
* :mod:`._sdk` — the lazy import of a vendor's SDK, with the install command when missing;
* :mod:`._base64` — :func:`base64_text` (media bytes as base64 text in one allocation, issue 26).

Each adapter supplies its own mapping of its SDK's exceptions (``map_error``) on top of
:func:`map_transport_error`.
"""

from robota.providers._kit._base64 import base64_text
from robota.providers._kit._continuation import decode_continuation, encode_continuation
from robota.providers._kit._drive import (
    Driver,
    ErrorMapper,
    StreamTranslator,
    ToolProjector,
    drive_call,
    drive_stream,
    replayed,
)
from robota.providers._kit._errors import (
    STREAM_ERROR_TEXT,
    classified_error,
    error_body,
    text_or_none,
    timeout_error,
    unreachable_error,
)
from robota.providers._kit._options import (
    USE_EFFORT,
    USE_OUTPUT,
    ExtraReserved,
    check_adapter_options,
    check_base_url,
    check_stop_count,
    extra_collision,
    given,
    register_model_table,
    use_setting,
    with_extra_fields,
)
from robota.providers._kit._sdk import load_sdk
from robota.providers._kit._sdk_provider import SDKProvider
from robota.providers._kit._trace import guard_trace_redirects, sdk_call, trace_headers, traced_call
from robota.providers._kit._values import (
    attested,
    count,
    incomplete_stream,
    invalid_response,
    map_transport_error,
    member,
    no_capture,
    retry_after_seconds,
)

__all__ = [
    "STREAM_ERROR_TEXT",
    "USE_EFFORT",
    "USE_OUTPUT",
    "Driver",
    "ErrorMapper",
    "ExtraReserved",
    "SDKProvider",
    "StreamTranslator",
    "ToolProjector",
    "attested",
    "base64_text",
    "check_adapter_options",
    "check_base_url",
    "check_stop_count",
    "classified_error",
    "count",
    "decode_continuation",
    "drive_call",
    "drive_stream",
    "encode_continuation",
    "error_body",
    "extra_collision",
    "given",
    "guard_trace_redirects",
    "incomplete_stream",
    "invalid_response",
    "load_sdk",
    "map_transport_error",
    "member",
    "no_capture",
    "register_model_table",
    "replayed",
    "retry_after_seconds",
    "sdk_call",
    "text_or_none",
    "timeout_error",
    "trace_headers",
    "traced_call",
    "unreachable_error",
    "use_setting",
    "with_extra_fields",
]
