"""core/_rare.py: rarely set fields live off the object until first set (issue 27)."""

from __future__ import annotations

from robota.core._rare import RareField


class _Holder:
    __slots__ = ("_rare",)

    closed = RareField["list[str] | None"](None)
    count = RareField["int"](0)

    def __init__(self) -> None:
        self._rare: dict[str, object] | None = None


def test_issue27_a_rare_field_reads_its_default_and_builds_nothing_until_set() -> None:
    holder = _Holder()
    holder.closed = None  # setting the default stores nothing
    assert holder.closed is None
    assert holder.count == 0
    assert holder._rare is None


def test_issue27_a_rare_field_keeps_what_is_set_and_forgets_it_at_its_default() -> None:
    holder, other = _Holder(), _Holder()
    errors = ["boom"]
    holder.closed = errors
    holder.count = 3
    assert holder.closed is errors
    assert holder.count == 3
    assert other.closed is None  # per instance, never shared
    holder.count = 0
    assert holder.count == 0
    assert holder._rare == {"closed": errors}
