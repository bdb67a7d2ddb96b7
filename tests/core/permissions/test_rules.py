"""S12 the rule grammar."""

from __future__ import annotations

import pytest

import robota
from robota.core.permissions import parse_rule


def test_s12_rule_forms_parse() -> None:
    assert parse_rule("Bash", "deny").pattern is None
    rule = parse_rule("Bash(rm -rf *)", "deny")
    assert (rule.tool, rule.pattern) == ("Bash", "rm -rf *")
    assert parse_rule("*", "allow").everything
    assert parse_rule("**", "deny").everything
    # A pattern containing parentheses keeps them.
    assert parse_rule("Bash(echo (hi))", "deny").pattern == "echo (hi)"


@pytest.mark.parametrize("bad", ["", "  ", "Bash(", "Bash()", "Two words(x)", "(x)"])
def test_s12_malformed_rules_are_configuration_errors(bad: str) -> None:
    with pytest.raises(robota.ConfigurationError):
        parse_rule(bad, "deny")


def test_s12_allow_rules_need_a_literal_server_prefix_for_tool_globs() -> None:
    assert parse_rule("mcp__github__*", "allow").tool == "mcp__github__*"
    with pytest.raises(robota.ConfigurationError, match="server prefix"):
        parse_rule("mcp__*", "allow")
    with pytest.raises(robota.ConfigurationError, match="server prefix"):
        parse_rule("Bash*", "allow")
    assert parse_rule("mcp__*", "deny").tool == "mcp__*"  # deny and ask may glob freely


def test_s12_policy_validates_its_rules_and_mode() -> None:
    with pytest.raises(robota.ConfigurationError, match="mode"):
        robota.PermissionPolicy(mode="yolo")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="list"):
        robota.PermissionPolicy(allow="Bash")
    with pytest.raises(robota.ConfigurationError, match="server prefix"):
        robota.PermissionPolicy(allow=["Web*"])
