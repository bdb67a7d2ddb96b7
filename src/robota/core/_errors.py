"""The error taxonomy (S42).

Every error Robota raises on purpose derives from one root so a caller can branch on the failure
kind without parsing message text::

    RobotaError                         code, category (user | provider | system), recoverable
    ├── ConfigurationError (ValueError)     bad options or registry input: fix the call
    │   ├── NativeToolUnavailableError      a provider-hosted tool not supported/enabled (S30)
    │   └── SchemaConversionError           a type the schema subset cannot carry (S16)
    ├── SchemaValidationError (ValueError)  a value does not satisfy its schema; carries `issues`
    ├── ProviderError                       a model call failed; keeps vendor `status`/`vendor_type`
    │   ├── AuthenticationError             credentials refused (401/403)
    │   ├── RateLimitError                  throttled (429); carries `retry_after`
    │   └── NetworkError                    the request never got an HTTP answer
    ├── ToolExecutionError                  a tool body failed; names the tool and call
    ├── StructuredOutputError               retries exhausted; carries `issues` and `attempts`
    ├── SameToolInputLoopError              byte-identical tool input repeated past the limit (S39)
    ├── EmptyCompletionError                a turn ended with neither text nor tool result (S39)
    ├── UsageLimitExceeded                  going on would pass a run's UsageLimits (S31; _limits)
    ├── GuardrailTripped                    an input/output guardrail objected (_guardrails)
    ├── DisposedAgentError (RuntimeError)   the agent was closed; distinct from "not initialised"
    ├── InternalError                       the run failed unexpectedly (a bug); keeps the cause
    ├── ExecutionControlError               an execution-control outcome, never model-visible
    │   └── StorageError                    persistence failed; keeps the original cause
    ├── HistoryError (RuntimeError)         a write that would break a history principle (S34)
    ├── CredentialStoreError                a credential store cannot be read or written (S11)
    ├── LockedError                         a sealed artifact is intact but cannot open now (S11)
    ├── CorruptError                        a sealed artifact does not open here (S11)
    └── AbortError                          the caller cancelled (S15); see ``robota.is_abort``

``category`` says whose side the failure is on: ``user`` (the caller's input or action),
``provider`` (the model or its vendor), ``system`` (the runtime or its host). ``recoverable``
says whether trying again — a new turn, a corrected call, a later retry — can succeed without
changing the program.

Control-flow outcomes that are not failures (cancellation of an asyncio task, suspension) are not
in this tree; ``asyncio.CancelledError`` always propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final, Literal, TypeAlias

__all__ = [
    "AbortError",
    "AuthenticationError",
    "ConfigurationError",
    "CorruptError",
    "CorruptReason",
    "CredentialStoreError",
    "DisposedAgentError",
    "EmptyCompletionError",
    "ErrorCategory",
    "ExecutionControlError",
    "HistoryError",
    "InternalError",
    "LockedError",
    "LockedReason",
    "NativeToolUnavailableError",
    "NetworkError",
    "ProviderError",
    "RateLimitError",
    "RobotaError",
    "SameToolInputLoopError",
    "SchemaConversionError",
    "SchemaValidationError",
    "StorageError",
    "StructuredOutputError",
    "ToolExecutionError",
]

ErrorCategory: TypeAlias = Literal["user", "provider", "system"]
"""Whose side a failure is on: the caller's, the model vendor's, or the runtime's/host's."""


class RobotaError(Exception):
    """Root of every error Robota raises on purpose (S42).

    Attributes:
        code: A stable machine-readable identifier (``"rate_limited"``, ``"aborted"`` …). Branch
            on it, or on the class, never on the message.
        category: ``"user"``, ``"provider"`` or ``"system"``.
        recoverable: Whether retrying (a new turn, a corrected call, a later attempt) can succeed.
        context: Extra facts for diagnostics (provider name, tool call id …). Never secrets.

    Each subclass fixes sensible defaults for ``code``, ``category`` and ``recoverable``; a raiser
    may override any of them per instance. ``cause``, when given, becomes ``__cause__`` so the
    standard traceback shows it.
    """

    default_code: ClassVar[str] = "robota_error"
    default_category: ClassVar[ErrorCategory] = "system"
    default_recoverable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        category: ErrorCategory | None = None,
        recoverable: bool | None = None,
        cause: BaseException | None = None,
        context: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code: str = code if code is not None else self.default_code
        self.category: ErrorCategory = category if category is not None else self.default_category
        self.recoverable: bool = (
            recoverable if recoverable is not None else self.default_recoverable
        )
        self.context: Mapping[str, object] = dict(context) if context else {}
        if cause is not None:
            self.__cause__ = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructors break the default exception pickling (which replays
        # `self.args` positionally); errors cross process pools, so rebuild from the state.
        state = dict(self.__dict__)
        return (_rebuild_error, (type(self), self.message, state))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


def _rebuild_error(cls: type[RobotaError], message: str, state: dict[str, Any]) -> RobotaError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class ConfigurationError(RobotaError, ValueError):
    """Options, registry input or references that cannot work; the message says how to fix it."""

    default_code = "configuration"
    default_category = "user"


class NativeToolUnavailableError(ConfigurationError):
    """A provider-hosted tool was requested that the provider does not support or enable (S30).

    Raised before any transport starts.
    """

    default_code = "native_tool_unavailable"


class SchemaConversionError(ConfigurationError):
    """A type cannot be converted to the parameter-schema subset (S16).

    The message names the construct, why it is refused, and an alternative.

    Attributes:
        construct: The refused construct (``"a fixed-length tuple"``, ``"Any"`` …).
    """

    default_code = "schema_conversion"

    def __init__(self, message: str, *, construct: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.construct = construct


class SchemaValidationError(RobotaError, ValueError):
    """A value failed validation against its schema.

    Attributes:
        issues: Readable issue strings, each naming the path of the offending value.
    """

    default_code = "validation"
    default_category = "user"
    default_recoverable = True

    def __init__(self, message: str, *, issues: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.issues: tuple[str, ...] = tuple(issues)


# HTTP statuses after which the same request may succeed on another model: the model is missing,
# throttled or overloaded, or the vendor failed on its side. Everything else — a malformed
# request, refused credentials, a payload too large, or no status at all — is not evidence that
# switching models helps, and switching on an unknown cause can repeat a request that was never
# going to succeed or mask a bug (S42).
_SWITCHABLE_STATUSES = frozenset({404, 408, 409, 429, 500, 502, 503, 504, 529})


class ProviderError(RobotaError):
    """A model call failed at the provider (S42).

    Attributes:
        status: The vendor's HTTP status, when the call got an HTTP answer.
        vendor_type: The vendor's own error type string (e.g. ``"overloaded_error"``), opaque.
        provider: The provider's opaque name, when known.
        model: The model the call was addressed to (or that answered), when known.
        request_id: The vendor's request id, for support tickets.
        switchable: Whether another model could serve the same request. An adapter that knows
            its vendor's error types states it explicitly; otherwise it is derived from
            ``status`` alone, and an unknown cause is *not* switchable.
        retry_after: Seconds the vendor asked the caller to wait before trying again, when it
            said (a ``Retry-After`` on a 429, a 503 or a 529); ``None`` otherwise.
    """

    default_code = "provider_error"
    default_category = "provider"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        vendor_type: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        request_id: str | None = None,
        switchable: bool | None = None,
        retry_after: float | None = None,
        **kwargs: Any,
    ) -> None:
        if "recoverable" not in kwargs or kwargs["recoverable"] is None:
            kwargs["recoverable"] = status is not None and (status >= 500 or status in (408, 429))
        super().__init__(message, **kwargs)
        self.status = status
        self.vendor_type = vendor_type
        self.provider = provider
        self.model = model
        self.request_id = request_id
        self._switchable = switchable
        if retry_after is not None and not retry_after >= 0:  # negative or NaN: not a wait
            retry_after = None
        self.retry_after = retry_after

    @property
    def switchable(self) -> bool:
        """Whether another model could serve this request; unknown cause ⇒ ``False``."""
        if self._switchable is not None:
            return self._switchable
        return self.status is not None and self.status in _SWITCHABLE_STATUSES


class AuthenticationError(ProviderError):
    """The vendor refused the credentials (typically HTTP 401 or 403).

    Not switchable: another model behind the same credentials is refused the same way.
    """

    default_code = "authentication"

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("recoverable", False)
        kwargs.setdefault("switchable", False)
        super().__init__(message, **kwargs)


class RateLimitError(ProviderError):
    """The vendor throttled the call (HTTP 429).

    Attributes:
        retry_after: Seconds the vendor asked the caller to wait, when it said.
    """

    default_code = "rate_limited"

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("status", 429)
        kwargs.setdefault("recoverable", True)
        super().__init__(message, retry_after=retry_after, **kwargs)


class NetworkError(ProviderError):
    """The request got no HTTP answer (connection refused, reset, DNS failure, timeout).

    Recoverable by retrying later; not switchable unless the adapter says so, because the cause
    lies between us and the vendor rather than in one model.
    """

    default_code = "network"

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("recoverable", True)
        super().__init__(message, **kwargs)


class ToolExecutionError(RobotaError):
    """A tool body raised or returned a failure.

    Attributes:
        tool_name: The registered tool name.
        call_id: The runtime's own minted id for this tool body (S36), not the provider's.
    """

    default_code = "tool_execution"
    default_category = "system"
    default_recoverable = True

    def __init__(
        self,
        message: str,
        *,
        tool_name: str,
        call_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.tool_name = tool_name
        self.call_id = call_id


class StructuredOutputError(RobotaError):
    """The model's final text never validated against the requested schema (S18).

    Attributes:
        issues: The validation issues of the last attempt.
        attempts: How many attempts were made, the first one included.
    """

    default_code = "structured_output"
    default_category = "provider"

    def __init__(
        self, message: str, *, issues: Sequence[str] = (), attempts: int, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.issues: tuple[str, ...] = tuple(issues)
        self.attempts = attempts


class SameToolInputLoopError(RobotaError):
    """One tool was called with byte-identical input more often than the configured limit (S39).

    The agent failed to make progress; this is a failure, not an interruption, and it is
    recoverable: a new turn with different guidance may succeed.
    """

    default_code = "same_tool_input_loop"
    default_category = "provider"
    default_recoverable = True

    def __init__(self, message: str, *, tool_name: str, limit: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.tool_name = tool_name
        self.limit = limit


class EmptyCompletionError(RobotaError):
    """A turn ended with neither text nor a tool result while tool-only completion was allowed.

    Reported rather than passed off as an empty success (S39).
    """

    default_code = "empty_completion"
    default_category = "provider"
    default_recoverable = True


class HookBlockedError(RobotaError):
    """A lifecycle hook refused the operation (S22), e.g. a ``UserPromptSubmit`` hook's deny.

    The turn ended before any model call: history holds nothing of it.

    Attributes:
        event: The hook event (``"UserPromptSubmit"``).
        reason: The hook's reason.
    """

    default_code = "hook_blocked"
    default_category = "user"

    def __init__(self, message: str, *, event: str, reason: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.event = event
        self.reason = reason


class DisposedAgentError(RobotaError, RuntimeError):
    """The agent was closed; it accepts no new work (S20, S24).

    Distinct from "not yet initialised" on purpose: the fix is to build a new agent, not to await
    something that was forgotten.
    """

    default_code = "disposed"
    default_category = "user"


class InternalError(RobotaError):
    """The run failed for a reason no contract names — a bug in Robota or an extension.

    Raised instead of an opaque crash so a caller catching :class:`RobotaError` sees every
    failure; ``__cause__`` keeps the original exception.
    """

    default_code = "internal"
    default_category = "system"


class ExecutionControlError(RobotaError):
    """An execution-control outcome (persistence failure, uncertain effect) (S39).

    It propagates as itself: never turned into assistant text, nor into a tool failure the model
    could retry, because a retried effect could run twice.
    """

    default_code = "execution_control"
    default_category = "system"


class StorageError(ExecutionControlError):
    """Persisting or reading durable state failed; ``__cause__`` keeps the original error."""

    default_code = "storage"
    default_category = "system"


class ExecutionSuspendedError(ExecutionControlError):
    """A tool saved a request for an outside response; the execution suspends (S40).

    Raised inside a tool body by :meth:`~robota.ToolContext.request_outside_response` and
    turned by the loop into ``RunResult.status == "suspended"``; a caller never sees it from
    ``agent.run()``. A tool must let it propagate.
    """

    default_code = "execution_suspended"
    default_category = "system"


class HistoryError(RobotaError, RuntimeError):
    """A write that would break a history principle (S34, S35).

    A second system message, an assistant message outside the begin/commit protocol, a write
    while a response is pending: a programming error in the caller.
    """

    default_code = "history"
    default_category = "user"


class AbortError(RobotaError):
    """The caller cancelled the operation (S15, S38).

    A caller recognises it from the class alone. ``reason`` is what was passed to
    ``AbortController.abort()``; when that reason is itself an exception it is also the
    ``__cause__``.
    """

    default_code = "aborted"
    default_category = "user"
    default_recoverable = True

    def __init__(
        self, message: str = "The operation was aborted.", *, reason: object = None, **kwargs: Any
    ) -> None:
        if reason is not None and isinstance(reason, BaseException):
            kwargs.setdefault("cause", reason)
        super().__init__(message, **kwargs)
        self.reason = reason


# S11: opening a sealed artifact fails in two distinct ways; neither message carries
# plaintext, a key or a path (they come from fixed tables).

LockedReason: TypeAlias = Literal["keys_locked", "no_secret"]
"""Why an intact artifact cannot be opened now: the keys are locked, or none are held here."""

CorruptReason: TypeAlias = Literal["not_sealed", "unsupported_framing", "wrong_kind", "damaged"]
"""Why an artifact does not open here.

``damaged`` covers every authentication failure: changed bytes, or bytes bound to another owner,
another kind of the same sealing class, or another key pair — the cipher cannot tell these apart.
"""

_LOCKED_MESSAGES: Final[Mapping[LockedReason, str]] = MappingProxyType(
    {
        "keys_locked": (
            "the sealed artifact is intact but cannot be opened now: this sealer's keys are "
            "locked; unlock them and open it again"
        ),
        "no_secret": (
            "the sealed artifact is intact but this sealer holds no secret key; only the "
            "owner's process can open it"
        ),
    }
)

_CORRUPT_MESSAGES: Final[Mapping[CorruptReason, str]] = MappingProxyType(
    {
        "not_sealed": "the artifact is not sealed: it lacks the sealed framing",
        "unsupported_framing": (
            "the artifact is sealed in a framing version this build does not read; a newer "
            "build may open it"
        ),
        "wrong_kind": "the sealed artifact was sealed as another kind of artifact",
        "damaged": (
            "the sealed artifact does not open: it was changed since sealing, or it is bound to "
            "another owner, kind or key"
        ),
    }
)


class CredentialStoreError(RobotaError):
    """The credential store cannot be read or written (S11).

    Raised instead of answering "absent" when the store could not be consulted — a locked or
    missing keychain, an unreadable or corrupt file, a file another account can read. The message
    never contains a secret; ``__cause__``, when set, is the OS or backend error.
    """

    default_code = "credential_store"
    default_category = "system"


class LockedError(RobotaError):
    """The artifact is intact but this process cannot open it now (S11).

    Its keys are locked, or it holds none and only the owner's process reads the artifact.
    Recoverable: unlocking the keys (or asking the owner's process) can succeed. Distinct from
    :class:`CorruptError` on purpose, and never carries plaintext, a key or a path.

    Attributes:
        reason: Which of the :data:`LockedReason` cases applies.
    """

    default_code = "sealed_locked"
    default_category = "system"
    default_recoverable = True

    def __init__(self, reason: LockedReason = "keys_locked", **kwargs: Any) -> None:
        super().__init__(_LOCKED_MESSAGES[reason], **kwargs)
        self.reason: LockedReason = reason


class CorruptError(RobotaError):
    """The artifact does not open here (S11).

    It is not sealed in a framing this build reads, it is damaged, or it is bound to another
    owner or kind. Distinct from :class:`LockedError` on purpose, and never carries plaintext, a
    key or a path.

    Attributes:
        reason: Which of the :data:`CorruptReason` cases applies.
    """

    default_code = "sealed_corrupt"
    default_category = "system"

    def __init__(self, reason: CorruptReason = "damaged", **kwargs: Any) -> None:
        super().__init__(_CORRUPT_MESSAGES[reason], **kwargs)
        self.reason: CorruptReason = reason
