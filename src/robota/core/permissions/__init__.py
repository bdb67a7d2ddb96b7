"""Permissions (S12, S21): rules, the one evaluation order, and the gate."""

from robota.core.permissions._evaluate import (
    DEFAULT_TRUST_LOCATIONS,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionPolicy,
    ReadOnlyCommandClassifier,
    evaluate_permission,
)
from robota.core.permissions._gate import Approval, ApprovalRequest, Approver, PermissionGate
from robota.core.permissions._patterns import (
    MatchResult,
    PathResolver,
    match_command,
    match_path,
    match_text,
    match_url,
    split_url,
)
from robota.core.permissions._rules import PermissionRule, RuleDirection, parse_rule
from robota.core.permissions._shell import CommandLine, SimpleCommand, analyze_command

__all__ = [
    "DEFAULT_TRUST_LOCATIONS",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "CommandLine",
    "MatchResult",
    "PathResolver",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionGate",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionRule",
    "ReadOnlyCommandClassifier",
    "RuleDirection",
    "SimpleCommand",
    "analyze_command",
    "evaluate_permission",
    "match_command",
    "match_path",
    "match_text",
    "match_url",
    "parse_rule",
    "split_url",
]
