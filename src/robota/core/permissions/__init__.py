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
from robota.core.permissions._shell import (
    CommandLine,
    Heredoc,
    Redirect,
    RedirectKind,
    SimpleCommand,
    analyze_command,
)
from robota.core.permissions._shell_words import (
    Word,
    WordPart,
    WordPartKind,
    glob_has_magic,
    glob_match,
    glob_unescape,
)

__all__ = [
    "DEFAULT_TRUST_LOCATIONS",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "CommandLine",
    "Heredoc",
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
    "Redirect",
    "RedirectKind",
    "RuleDirection",
    "SimpleCommand",
    "Word",
    "WordPart",
    "WordPartKind",
    "analyze_command",
    "evaluate_permission",
    "glob_has_magic",
    "glob_match",
    "glob_unescape",
    "match_command",
    "match_path",
    "match_text",
    "match_url",
    "parse_rule",
    "split_url",
]
