"""The diff shown for a change, applied back as a patch, gives the changed file (issue 30)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from robota.tools._patch import apply_patch, unified_diff

_LINES = st.lists(st.sampled_from(["a", "b", "c", "", "def f():", "    pass"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(before=_LINES, after=_LINES, final_before=st.booleans(), final_after=st.booleans())
def test_the_view_diff_applies_back_to_the_change(
    before: list[str], after: list[str], final_before: bool, final_after: bool
) -> None:
    old = "\n".join(before) + ("\n" if final_before and before else "")
    new = "\n".join(after) + ("\n" if final_after and after else "")
    if old == new:
        return
    diff = unified_diff("f.txt", old.encode(), new.encode(), created=False)
    patched, _ = apply_patch(old.encode(), diff)
    assert patched == new.encode()
