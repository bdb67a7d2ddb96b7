"""S15 abort classification and the AbortController/AbortSignal pair."""

from __future__ import annotations

import asyncio
import threading

import pytest

from robota import (
    AbortController,
    AbortError,
    AbortSignal,
    MemorySink,
    ProviderError,
    abort_error_from_reason,
    is_abort,
)


def test_s15_provider_error_whose_text_contains_abort_is_not_an_abort() -> None:
    assert not is_abort(ProviderError("upstream aborted the stream after a policy check"))
    assert not is_abort(RuntimeError("AbortController is not supported; abort abort ABORTED"))


def test_s15_abort_error_is_an_abort_by_type() -> None:
    assert is_abort(AbortError())


def test_s15_a_foreign_error_class_named_abort_error_is_an_abort() -> None:
    class AbortError(Exception):  # e.g. another library's own abort error
        pass

    assert is_abort(AbortError("x"))


def test_s15_cancelled_error_is_an_abort() -> None:
    assert is_abort(asyncio.CancelledError())


def test_s15_wrapped_abort_is_found_through_the_cause_chain() -> None:
    inner = AbortError()
    middle = RuntimeError("transport closed")
    middle.__cause__ = inner
    outer = ProviderError("stream failed", cause=middle)
    assert is_abort(outer)


def test_s15_context_chain_is_not_followed() -> None:
    # An error raised while *handling* an abort (e.g. cleanup failed) is still a failure.
    failure = OSError("cleanup failed")
    failure.__context__ = AbortError()
    assert not is_abort(failure)


def test_s15_callers_aborted_signal_decides_whatever_the_error() -> None:
    controller = AbortController()
    controller.abort("stop")
    assert is_abort(ProviderError("connection reset"), controller.signal)
    assert is_abort(None, controller.signal)


def test_s15_untriggered_signal_does_not_make_an_error_an_abort() -> None:
    assert not is_abort(ProviderError("x"), AbortController().signal)
    assert not is_abort(None)


def test_s15_cyclic_cause_chain_terminates() -> None:
    a = RuntimeError("a")
    b = RuntimeError("b")
    a.__cause__ = b
    b.__cause__ = a
    assert not is_abort(a)


def test_abort_sets_reason_once_and_defaults_to_abort_error() -> None:
    controller = AbortController()
    assert not controller.signal.aborted
    assert controller.signal.reason is None
    controller.abort()
    assert controller.signal.aborted
    assert isinstance(controller.signal.reason, AbortError)
    first = controller.signal.reason
    controller.abort("later")
    assert controller.signal.reason is first


def test_listeners_run_once_with_the_reason_in_order() -> None:
    controller = AbortController()
    seen: list[tuple[str, object]] = []
    controller.signal.add_listener(lambda r: seen.append(("a", r)))
    controller.signal.add_listener(lambda r: seen.append(("b", r)))
    controller.abort("why")
    controller.abort("again")
    assert seen == [("a", "why"), ("b", "why")]


def test_listener_added_after_abort_runs_immediately() -> None:
    controller = AbortController()
    controller.abort("late")
    seen: list[object] = []
    remove = controller.signal.add_listener(seen.append)
    assert seen == ["late"]
    remove()  # harmless


def test_removed_listener_is_not_called() -> None:
    controller = AbortController()
    seen: list[object] = []
    remove = controller.signal.add_listener(seen.append)
    remove()
    controller.signal.remove_listener(seen.append)  # removing twice is harmless
    controller.abort()
    assert seen == []


def test_raising_listener_is_reported_and_does_not_starve_others(memory_sink: MemorySink) -> None:
    controller = AbortController()
    seen: list[object] = []

    def bad(_: object) -> None:
        raise ValueError("listener bug")

    controller.signal.add_listener(bad)
    controller.signal.add_listener(seen.append)
    controller.abort("x")
    assert seen == ["x"]
    assert any("listener" in e.message for e in memory_sink.events)


def test_throw_if_aborted_raises_abort_error_with_reason() -> None:
    controller = AbortController()
    controller.signal.throw_if_aborted()
    controller.abort("user pressed stop")
    with pytest.raises(AbortError) as info:
        controller.signal.throw_if_aborted()
    assert info.value.reason == "user pressed stop"


def test_s38_abort_error_from_reason_reuses_an_abort_error_and_wraps_anything_else() -> None:
    own = AbortError("mine")
    assert abort_error_from_reason(own) is own
    cause = TimeoutError("deadline")
    wrapped = abort_error_from_reason(cause)
    assert isinstance(wrapped, AbortError)
    assert wrapped.reason is cause
    assert wrapped.__cause__ is cause
    text = abort_error_from_reason("shutting down")
    assert text.reason == "shutting down"
    assert isinstance(abort_error_from_reason(None), AbortError)


async def test_wait_returns_the_reason() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    assert not waiter.done()
    controller.abort("done")
    assert await asyncio.wait_for(waiter, 1) == "done"


async def test_wait_on_an_aborted_signal_returns_immediately() -> None:
    controller = AbortController()
    controller.abort("already")
    assert await controller.signal.wait() == "already"


async def test_wait_wakes_when_aborted_from_another_thread() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    thread = threading.Thread(target=controller.abort, args=("from thread",))
    thread.start()
    assert await asyncio.wait_for(waiter, 5) == "from thread"
    thread.join()


async def test_cancelled_wait_leaves_no_listener_behind() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert controller.signal._listeners == []


def test_any_aborts_with_the_first_sources_reason() -> None:
    a, b = AbortController(), AbortController()
    combined = AbortSignal.any([a.signal, b.signal])
    assert not combined.aborted
    b.abort("b first")
    a.abort("a second")
    assert combined.reason == "b first"
    # The combined signal released its listeners on the sources.
    assert a.signal._listeners == []
    assert b.signal._listeners == []


def test_any_of_an_already_aborted_source_is_aborted() -> None:
    a = AbortController()
    a.abort("early")
    assert AbortSignal.any([AbortController().signal, a.signal]).reason == "early"


def test_reprs_show_state() -> None:
    controller = AbortController()
    assert "not aborted" in repr(controller)
    controller.abort("x")
    assert "reason='x'" in repr(controller.signal)
