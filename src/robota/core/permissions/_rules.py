"""Permission rules (S12): the grammar users know from agent settings files.

``Tool`` — any invocation of that tool. ``Tool(pattern)`` — invocations whose declared permission
argument matches ``pattern`` in the argument's kind. ``Tool(param: pattern)`` — a parameter rule
(deny and ask only), where ``param`` must be one of the tool's declared parameters; otherwise the
colon is part of the pattern, so a URL or command containing one keeps its meaning. A bare ``*``
or ``**`` matches any invocation of any tool, in every direction. Tool names may be globs in deny
and ask rules (``*``, ``mcp__*``). A deny or ask rule also judges a tool whose permission argument
answers to the rule's tool name (``PermissionArgument(..., also_judged_as=("Read",))``): Claude
Code applies ``Read`` rules to the tools that read files.

Allow rules are held to a narrower grammar, because an allow grants what the operator may never
have seen: no parameter rules (one never matches in the allow direction), and no tool-name glob
unless it starts with a literal server prefix (``mcp__server__*``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core.permissions._patterns import (
    GLOB_CHARS,
    Direction,
    MatchResult,
    PathResolver,
    match_command,
    match_path,
    match_text,
    match_url,
)
from robota.core.tools._tool import Tool

__all__ = ["PermissionRule", "RuleDirection", "parse_rule"]

RuleDirection: TypeAlias = Literal["allow", "deny", "ask"]

_SERVER_PREFIX: Final = re.compile(r"^mcp__[A-Za-z0-9_\-]+__")
_PARAMETER: Final = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$", re.DOTALL)


@final
@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One parsed rule.

    Attributes:
        text: The rule as written.
        direction: ``"allow"``, ``"deny"`` or ``"ask"``.
        tool: The tool name or name glob.
        pattern: The text inside the parentheses, or ``None``.
        everything: A bare ``*`` / ``**``: any invocation of any tool.
    """

    text: str
    direction: RuleDirection
    tool: str
    pattern: str | None
    everything: bool = False

    def names(self, tool: Tool) -> bool:
        """Whether this rule names ``tool``: its own name, or one its argument answers to.

        A deny or ask rule also names a tool whose permission argument lists the rule's tool
        in ``also_judged_as`` (``Read(secrets/**)`` names ``Grep``); an allow rule names the
        tool itself only, so it never grants a tool nobody named.
        """
        if self.everything or fnmatch.fnmatchcase(tool.name, self.tool):
            return True
        argument = tool.permission_argument
        if self.direction == "allow" or argument is None:
            return False
        return any(fnmatch.fnmatchcase(name, self.tool) for name in argument.also_judged_as)

    def applies(
        self,
        tool: Tool,
        arguments: Mapping[str, Any],
        *,
        workspace: str,
        home: str | None,
        resolve: PathResolver | None,
    ) -> MatchResult:
        """Whether this rule covers the call (``"unevaluable"`` when that cannot be judged)."""
        if self.everything:
            return "match"
        if not self.names(tool):
            return "no_match"
        pattern = self.pattern
        if pattern is None or pattern.strip() in ("*", "**"):
            return "match"
        matcher_direction: Direction = "allow" if self.direction == "allow" else "deny"
        parameter = _PARAMETER.match(pattern)
        properties = tool.parameters.get("properties", {})
        if parameter is not None and parameter.group(1) in properties:
            name, sub_pattern = parameter.group(1), parameter.group(2).strip()
            if self.direction == "allow":
                return "no_match"  # the narrower allow grammar has no parameter rules
            argument = tool.permission_argument
            if argument is not None and name == argument.key:
                # S12: a rule naming the primary field as a parameter asks rather than being
                # ignored; an ignored deny fails open.
                return "unevaluable"
            if name not in arguments:
                return "no_match"
            return match_text(sub_pattern, arguments[name])
        argument = tool.permission_argument
        if argument is None:
            return "unevaluable"  # a pattern, but the tool declares no argument to judge
        value = arguments.get(argument.key)
        if argument.kind == "path":
            return match_path(
                pattern,
                value,
                workspace=workspace,
                home=home,
                resolve=resolve,
                direction=matcher_direction,
            )
        if argument.kind == "url":
            return match_url(pattern, value, direction=matcher_direction)
        if argument.kind == "command":
            return match_command(pattern, value, direction=matcher_direction, home=home)
        return match_text(pattern, value)


def parse_rule(text: str, direction: RuleDirection) -> PermissionRule:
    """Parse one rule string.

    Raises:
        ConfigurationError: for a malformed rule, or an allow rule outside the narrower grammar.
    """
    candidate: object = text  # rules come from configuration files
    if not isinstance(candidate, str) or not text.strip():
        raise ConfigurationError(f"a permission rule must be a non-empty string, got {text!r}")
    stripped = text.strip()
    if stripped in ("*", "**"):
        return PermissionRule(text, direction, "*", None, everything=True)
    name, paren, rest = stripped.partition("(")
    name = name.strip()
    pattern: str | None = None
    if paren:
        if not rest.endswith(")"):
            raise ConfigurationError(f"permission rule {text!r}: missing closing parenthesis")
        pattern = rest[:-1]
        if not pattern.strip():
            raise ConfigurationError(
                f"permission rule {text!r}: empty pattern; write {name!r} alone"
            )
    if not name or any(ch.isspace() for ch in name):
        raise ConfigurationError(
            f"permission rule {text!r}: the tool name is missing or has spaces"
        )
    if direction == "allow" and GLOB_CHARS.search(name):
        prefix = _SERVER_PREFIX.match(name)
        if prefix is None or GLOB_CHARS.search(prefix.group(0)):
            raise ConfigurationError(
                f"allow rule {text!r}: a tool-name glob in an allow rule needs a literal server "
                "prefix (e.g. 'mcp__server__*'), or it would grant tools nobody reviewed"
            )
    return PermissionRule(text, direction, name, pattern)
