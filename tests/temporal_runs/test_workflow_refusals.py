"""What a Temporal workflow refuses to run, checked without a server (robota/temporal/_workflow.py)."""

from __future__ import annotations

import pytest

import robota
from robota.temporal._workflow import _check_runnable
from robota.testing import ScriptedProvider


def test_issue29_an_agent_with_handoffs_is_refused_with_a_clear_error() -> None:
    billing = robota.Agent("m", provider=ScriptedProvider([], name="b"), name="billing")
    triage = robota.Agent(
        "m", provider=ScriptedProvider([], name="t"), name="triage", handoffs=[billing]
    )
    with pytest.raises(robota.ConfigurationError, match="has handoffs"):
        _check_runnable(triage, "triage")
