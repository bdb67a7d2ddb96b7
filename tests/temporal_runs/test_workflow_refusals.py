"""What a Temporal workflow refuses to run, checked without a server (robota/temporal/_routing.py)."""

from __future__ import annotations

import pytest

import robota
from robota.temporal._routing import check_runnable
from robota.testing import ScriptedProvider


def test_issue29_an_agent_with_handoffs_is_refused_with_a_clear_error() -> None:
    billing = robota.Agent("m", provider=ScriptedProvider([], name="b"), name="billing")
    triage = robota.Agent(
        "m", provider=ScriptedProvider([], name="t"), name="triage", handoffs=[billing]
    )
    with pytest.raises(robota.ConfigurationError, match="has handoffs"):
        check_runnable(triage, "triage")


def test_issue29_a_sub_agent_with_handoffs_is_refused_naming_it() -> None:
    billing = robota.Agent("m", provider=ScriptedProvider([], name="b"), name="billing")
    triage = robota.Agent(
        "m", provider=ScriptedProvider([], name="t"), name="triage", handoffs=[billing]
    )
    lead = robota.Agent("m", provider=ScriptedProvider([], name="l"), name="lead", tools=[triage])
    with pytest.raises(robota.ConfigurationError, match=r"sub-agent 'triage'.*has handoffs"):
        check_runnable(lead, "lead")
