"""S42 error taxonomy."""

from __future__ import annotations

import pickle

import pytest

import robota
from robota import (
    AbortError,
    AuthenticationError,
    ConfigurationError,
    DisposedAgentError,
    EmptyCompletionError,
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

ALL_ERRORS: list[RobotaError] = [
    ConfigurationError("bad option"),
    SchemaValidationError("bad value", issues=["$.a: expected integer"]),
    ProviderError("boom", status=500, vendor_type="api_error"),
    AuthenticationError("no", status=401),
    RateLimitError("slow", retry_after=1.5),
    NetworkError("reset"),
    ToolExecutionError("tool failed", tool_name="read_file", call_id="call_1"),
    StructuredOutputError("never valid", issues=["$.x: missing"], attempts=3),
    SameToolInputLoopError("loop", tool_name="search", limit=2),
    EmptyCompletionError("nothing"),
    DisposedAgentError("closed"),
    StorageError("disk full"),
    HistoryError("second system message"),
    AbortError(reason="stop"),
]


@pytest.mark.parametrize("error", ALL_ERRORS, ids=lambda e: type(e).__name__)
def test_s42_every_error_carries_code_category_and_recoverable(error: RobotaError) -> None:
    assert isinstance(error, RobotaError)
    assert isinstance(error.code, str)
    assert error.code
    assert error.category in ("user", "provider", "system")
    assert isinstance(error.recoverable, bool)


def test_s42_codes_are_distinct_per_class() -> None:
    codes = [type(e).default_code for e in ALL_ERRORS]
    assert len(codes) == len(set(codes))


@pytest.mark.parametrize("error", ALL_ERRORS, ids=lambda e: type(e).__name__)
def test_s42_errors_survive_pickling_with_their_facts(error: RobotaError) -> None:
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error)
    assert str(clone) == str(error)
    assert (clone.code, clone.category, clone.recoverable) == (
        error.code,
        error.category,
        error.recoverable,
    )
    if isinstance(error, ProviderError):
        assert isinstance(clone, ProviderError)
        assert (clone.status, clone.vendor_type, clone.switchable) == (
            error.status,
            error.vendor_type,
            error.switchable,
        )


def test_s42_category_and_code_can_be_overridden_per_instance() -> None:
    error = RobotaError("x", code="custom", category="user", recoverable=True)
    assert (error.code, error.category, error.recoverable) == ("custom", "user", True)


def test_s42_cause_becomes_dunder_cause() -> None:
    original = OSError("disk")
    error = StorageError("could not save", cause=original)
    assert error.__cause__ is original


def test_s42_user_mistakes_are_also_the_matching_builtin() -> None:
    assert isinstance(ConfigurationError("x"), ValueError)
    assert isinstance(SchemaValidationError("x"), ValueError)
    assert isinstance(DisposedAgentError("x"), RuntimeError)


def test_s42_provider_error_keeps_vendor_status_and_type() -> None:
    error = ProviderError(
        "overloaded",
        status=529,
        vendor_type="overloaded_error",
        provider="p",
        model="m",
        request_id="req_1",
    )
    assert error.status == 529
    assert error.vendor_type == "overloaded_error"
    assert (error.provider, error.model, error.request_id) == ("p", "m", "req_1")
    assert error.category == "provider"


@pytest.mark.parametrize("status", [404, 408, 429, 500, 502, 503, 504, 529])
def test_s42_statuses_another_model_may_serve_are_switchable(status: int) -> None:
    assert ProviderError("x", status=status).switchable is True


@pytest.mark.parametrize("status", [400, 401, 403, 413, 422])
def test_s42_request_and_credential_failures_are_not_switchable(status: int) -> None:
    assert ProviderError("x", status=status).switchable is False


def test_s42_unknown_cause_is_not_switchable() -> None:
    assert ProviderError("something broke").switchable is False
    assert NetworkError("connection reset").switchable is False
    assert ProviderError("odd status", status=418).switchable is False


def test_s42_adapter_may_state_switchability_explicitly() -> None:
    # A vendor-specific fact (e.g. "context too long" on a 400) can only come from the adapter.
    assert ProviderError("context too long", status=400, switchable=True).switchable is True
    assert ProviderError("overloaded", status=503, switchable=False).switchable is False


def test_s42_authentication_failures_are_neither_recoverable_nor_switchable() -> None:
    error = AuthenticationError("bad key", status=401)
    assert error.recoverable is False
    assert error.switchable is False
    assert error.code == "authentication"


def test_s42_rate_limit_carries_retry_after_and_defaults_to_429() -> None:
    error = RateLimitError("slow down", retry_after=2.5)
    assert error.retry_after == 2.5
    assert error.status == 429
    assert error.recoverable is True
    assert RateLimitError("slow down", retry_after=-1).retry_after is None


def test_s42_provider_recoverability_follows_status() -> None:
    assert ProviderError("x", status=503).recoverable is True
    assert ProviderError("x", status=400).recoverable is False
    assert ProviderError("x").recoverable is False
    assert NetworkError("x").recoverable is True


def test_s42_domain_errors_carry_their_facts() -> None:
    tool = ToolExecutionError("boom", tool_name="t", call_id="tc_1")
    assert (tool.tool_name, tool.call_id) == ("t", "tc_1")
    structured = StructuredOutputError("bad", issues=["a", "b"], attempts=3)
    assert structured.issues == ("a", "b")
    assert structured.attempts == 3
    loop = SameToolInputLoopError("loop", tool_name="t", limit=2)
    assert (loop.tool_name, loop.limit, loop.recoverable) == ("t", 2, True)


def test_s42_public_errors_report_the_public_module() -> None:
    assert robota.ProviderError.__module__ == "robota"
    assert repr(ProviderError("x")) == "ProviderError('x', code='provider_error')"
