"""``robota.host``: where the agent touches the operating system (spec S05–S11, S02, S22).

Implementations of core's ports that need the OS live here and are passed to core explicitly;
core never reaches for them on its own.

Available now:
    ProcessEnvResolver: resolves ``$ENV:NAME`` references from the process environment.
    canonical_path, is_path_inside: canonical paths and the one containment check (S05).
    is_read_only_command: the read-only command classifier for permission evaluation (S21).
    permission_context: a permission context wired to this machine (paths, home, classifier).
    CommandHookExecutor, HttpHookExecutor: hook executors (S22).
"""

from robota.host._egress import (
    BLOCKED_HOSTNAMES,
    Allowed,
    EgressDecision,
    LoopbackAllowance,
    Rejected,
    Resolver,
    check_url,
    classify_address,
    parse_ip_literal,
)
from robota.host._egress_client import EgressClient, EgressResult, Fetched, ResponseTooLargeError
from robota.host._env import ProcessEnvResolver
from robota.host._hooks import CommandHookExecutor, HttpHookExecutor
from robota.host._paths import canonical_path, is_path_inside
from robota.host._permissions import permission_context
from robota.host._readonly import READ_ONLY_COMMANDS, is_read_only_command

__all__ = [
    "BLOCKED_HOSTNAMES",
    "READ_ONLY_COMMANDS",
    "Allowed",
    "EgressClient",
    "EgressDecision",
    "EgressResult",
    "Fetched",
    "LoopbackAllowance",
    "Rejected",
    "Resolver",
    "ResponseTooLargeError",
    "check_url",
    "classify_address",
    "parse_ip_literal",
    "CommandHookExecutor",
    "HttpHookExecutor",
    "ProcessEnvResolver",
    "canonical_path",
    "is_path_inside",
    "is_read_only_command",
    "permission_context",
]
