"""``evaluate_permission``: the one evaluation order for every caller (S21).

Interactive sessions, background tasks and subagents differ only in the context they pass — a
ceiling, an ask-everything flag, their own lists — never in the order, so one call cannot be
decided two ways depending on who made it. The order:

1. **Nothing later softens a denial.** A tool acting only for the operator is refused in a peer
   agent's turn; a call outside the caller's ceiling is refused (not offered to a person); a
   matching deny rule denies. Bypass mode is no exception.
2. **Some calls always reach a person**, in every mode, bypass included, and remembered consent
   never answers them: a deny or ask rule that cannot be evaluated, an explicit ask rule, a
   catastrophic removal, and a write into a location that widens what later turns, child
   sessions or the user's shell trust. In plan mode an ask about anything but an inspect-class
   call is a denial.
3. **Bypass and allow rules only answer what is left.** Bypass allows; an explicit allow rule (or,
   outside plan mode, remembered consent) allows.
4. **The mode decides by risk class** — the declared one, except that a command tool whose call
   runs only built-in read-only commands inside the workspace (the host's classifier says so) is
   decided as inspect: plan allows only inspect and refuses the unclassified; default allows
   inspect; accept-edits allows inspect and modify; anything else asks. An unclassified tool asks.

An ``ask`` is resolved by the caller: to a person where an approver is attached, to a denial where
none is (see :class:`PermissionGate`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, final

from robota.core._errors import ConfigurationError
from robota.core.permissions._patterns import MatchResult, PathResolver, match_path
from robota.core.permissions._removal import catastrophic_reason
from robota.core.permissions._rules import PermissionRule, RuleDirection, parse_rule
from robota.core.tools._tool import RiskClass, Tool

__all__ = [
    "DEFAULT_TRUST_LOCATIONS",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionMode",
    "PermissionPolicy",
    "ReadOnlyCommandClassifier",
    "evaluate_permission",
]

PermissionMode: TypeAlias = Literal["default", "plan", "accept_edits", "bypass"]
PermissionBehavior: TypeAlias = Literal["allow", "deny", "ask"]
ReadOnlyCommandClassifier: TypeAlias = Callable[[str], bool]
"""``(command) -> bool``: whether a command line runs only built-in read-only commands naming
nothing outside the workspace (symlinks followed). ``robota.host.is_read_only_command`` is one."""

DEFAULT_TRUST_LOCATIONS: Final = (
    # What later sessions and child sessions of an agent obey.
    "**/.robota/**",
    "**/.claude/**",  # another agent's settings and hooks: the project's, and ~/.claude/ too
    "~/.claude.json",  # that agent's user settings: the MCP servers it starts in every project
    "**/.mcp.json",  # the MCP servers it names are started as commands by later sessions
    # What git and its hook managers run.
    "**/.git/**",  # hooks, config, commondir, modules: all of it is what git obeys
    "**/.gitmodules",
    "**/.husky/**",  # git hooks (husky points core.hooksPath here): run on commit, push …
    "**/.pre-commit-config.yaml",  # hooks pre-commit fetches and runs on every commit
    "**/lefthook.*",  # lefthook's hooks (.yml, .yaml, .json, .toml): run on commit, push …
    "**/.lefthook.*",  # the same, hidden
    "**/lefthook-local.*",  # a local override lefthook merges over the shared hooks
    "**/.lefthook-local.*",  # the same, hidden
    "**/.lefthook/**",  # scripts lefthook's hooks run
    # What the user's shell, editors and build tools run on their own.
    "**/.envrc",
    "**/.env",
    "**/mise.toml",  # mise: environment, hooks and tools set on entering the directory
    "**/.mise.toml",  # the same, hidden
    "**/mise.*.toml",  # mise.local.toml and per-environment files mise merges in
    "**/.mise.*.toml",  # the same, hidden
    "**/.mise/**",  # mise's configuration directory and its tasks
    "**/.config/mise/**",  # the same under .config (the project's, and the user's own)
    "**/.vscode/settings.json",
    "**/.vscode/tasks.json",
    "**/.vscode/launch.json",  # programs and pre-launch tasks the debugger starts
    "**/*.code-workspace",  # a workspace file carries settings, tasks and launch configurations
    "**/.idea/**",  # JetBrains run configurations, external tools, file watchers run on save
    "**/.devcontainer/**",  # the image and lifecycle commands run when the container is built
    "**/.cargo/config.toml",  # build wrappers, runners and linkers cargo runs
    "**/.cargo/config",  # the same, under its older name
    "**/.mvn/**",  # extensions.xml loads build extensions; jvm.config adds JVM options
    # Python: what runs at every interpreter start, before any program of the user's.
    "**/site-packages/*.pth",  # a line starting `import` runs at every start
    "**/dist-packages/*.pth",  # the same, where Debian's Python keeps it
    "**/sitecustomize.py",  # imported at every start wherever it is on the path
    "**/usercustomize.py",  # the same, from the user's site directory
    # Where package managers fetch from and what they run (and their credentials); these and
    # the ones above are read in the home directory too.
    "**/.npmrc",
    "**/.pnpmfile.*",  # pnpm runs its hooks (readPackage …) at every install
    "**/.yarnrc",  # yarn 1: yarn-path (the script yarn runs) and the registry
    "**/.yarnrc.yml",  # yarn 2+: yarnPath, plugins and the registry
    "**/.pypirc",
    "**/.netrc",
    # CI: jobs that run with the repository's secrets.
    "**/.github/workflows/**",
    "**/.github/actions/**",  # local actions those workflows run
    "**/.gitlab-ci.yml",
    "**/.circleci/**",
    "**/azure-pipelines.yml",
    "**/bitbucket-pipelines.yml",
    "**/Jenkinsfile",
    # The user's own account: shell start-up files, PATH, tool configuration, credentials.
    "~/.bashrc",
    "~/.bashrc.d/**",  # sourced by the usual .bashrc (Fedora's, and many users' own)
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.bash_aliases",  # sourced by the usual .bashrc
    "~/.profile",
    "~/.zshrc",
    "~/.zshenv",  # read by every zsh, interactive or not
    "~/.zprofile",
    "~/.zlogin",
    "~/.zlogout",
    "~/.gitconfig",
    "~/.git-credentials",
    "~/.jq",  # jq reads it at every start: `def length: env;` makes `jq length` print secrets
    "~/.pip/**",  # pip's older user configuration: the index every install fetches from
    "~/.cargo/**",  # cargo's configuration, and its bin directory on PATH
    "~/.gradle/init.d/**",  # init scripts every Gradle build runs first
    "~/.gradle/init.gradle",  # the same, as one file
    "~/.gradle/init.gradle.kts",  # the same, in Kotlin
    "~/.gradle/gradle.properties",  # org.gradle.jvmargs (a -javaagent) for every build
    "~/.m2/settings.xml",  # the repositories every Maven build fetches from, and credentials
    "~/.local/bin/**",  # on PATH: a program here shadows the system's
    "~/bin/**",  # on PATH in the usual .profile
    "~/go/bin/**",  # on PATH for Go users: what `go install` put there
    "~/.bun/bin/**",  # on PATH for Bun users
    "~/.deno/bin/**",  # on PATH for Deno users
    "~/.vscode/**",  # the editor's extensions: code it runs
    "~/.gnupg/**",  # keys git trusts when it verifies signatures, and the agent's programs
    "~/.ssh/**",
    "~/.config/**",  # git, mise, gh, pip, systemd user units …
    "~/.aws/**",
    "~/.docker/config.json",
    "~/.kube/**",
)
"""Locations whose contents later turns, child sessions or the user's shell and tools trust or
run: configuration, hooks, CI, start-up files and credentials. A write into one always asks, in
every mode (S21), wherever it lands: a ``**/`` pattern matches under any directory — the
workspace, another checkout, the home directory, ``/tmp`` — since a program obeys its
configuration wherever it finds it; a ``~/`` one matches in the home directory; any other
relative pattern is placed in the workspace. (This is a trust location's reading only: a user's
``Read(**/.env)`` rule stays relative to the workspace.)"""


@final
@dataclass(frozen=True, slots=True)
class PermissionPolicy:
    """The rules and mode a call is judged by.

    Args:
        mode: ``"default"``, ``"plan"``, ``"accept_edits"`` or ``"bypass"``.
        allow: Allow rules (the narrower grammar).
        deny: Deny rules.
        ask: Ask rules.
        ceiling: A caller's ceiling (allow grammar): when given, a call it does not cover is
            refused outright — how a background task or subagent is bounded.
        ask_everything: Ask about every call the earlier steps leave open (a background
            policy's flag); the mode then auto-allows nothing.

    Raises:
        ConfigurationError: for a malformed rule, an unknown mode, or an allow rule outside the
            narrower grammar.
    """

    mode: PermissionMode = "default"
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()
    ceiling: Sequence[str] | None = None
    ask_everything: bool = False
    _parsed: dict[RuleDirection | Literal["ceiling"], tuple[PermissionRule, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.mode not in ("default", "plan", "accept_edits", "bypass"):
            raise ConfigurationError(
                f"permission mode must be default, plan, accept_edits or bypass; got {self.mode!r}"
            )
        for name in ("allow", "deny", "ask"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ConfigurationError(f"{name} must be a list of rule strings, not one string")
        self._parsed["allow"] = tuple(parse_rule(r, "allow") for r in self.allow)
        self._parsed["deny"] = tuple(parse_rule(r, "deny") for r in self.deny)
        self._parsed["ask"] = tuple(parse_rule(r, "ask") for r in self.ask)
        if self.ceiling is not None:
            self._parsed["ceiling"] = tuple(parse_rule(r, "allow") for r in self.ceiling)

    def rules(self, kind: RuleDirection | Literal["ceiling"]) -> tuple[PermissionRule, ...]:
        """The parsed rules of one list."""
        return self._parsed.get(kind, ())


@final
@dataclass(frozen=True, slots=True)
class PermissionContext:
    """What the evaluation knows about where the call runs.

    Attributes:
        workspace: The absolute workspace root relative paths are judged from.
        home: The user's home directory, for ``~`` in patterns and paths. Without it,
            home-relative trust locations (``~/.bashrc``) cannot be recognised; the host's
            :func:`robota.host.permission_context` fills it in.
        resolve_path: Canonicalises a path (symlinks followed); pass
            ``robota.host.canonical_path``. Without one, paths are compared lexically.
        read_only_command: The host's read-only command classifier (see
            :data:`ReadOnlyCommandClassifier`); without one no command call counts as inspect.
        remembered: Allow rules the operator consented to earlier in the session. They never
            answer an always-ask case, and never let a change proceed in plan mode.
        trust_locations: Path patterns a write into which always asks, read as
            :data:`DEFAULT_TRUST_LOCATIONS` are (a ``**/`` pattern matches anywhere).
        origin: ``"peer"`` for a turn another agent's message started: it contributes no
            authority, and tools that act only for the operator are withheld.
    """

    workspace: str = "/"
    home: str | None = None
    resolve_path: PathResolver | None = None
    read_only_command: ReadOnlyCommandClassifier | None = None
    remembered: Sequence[str] = ()
    trust_locations: Sequence[str] = DEFAULT_TRUST_LOCATIONS
    origin: Literal["operator", "peer"] = "operator"


@final
@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """The answer for one call.

    Attributes:
        behavior: ``"allow"``, ``"deny"`` or ``"ask"``.
        reason: Why, in words a person and a model can read.
        rule: The rule that decided it, when one did.
        always_ask: An ask that a person must answer every time; remembered consent and
            "remember this" never apply to it.
    """

    behavior: PermissionBehavior
    reason: str
    rule: str | None = None
    always_ask: bool = False


_DEFAULT_CONTEXT: Final = PermissionContext()


def evaluate_permission(
    tool: Tool,
    args: Mapping[str, Any],
    policy: PermissionPolicy,
    context: PermissionContext | None = None,
) -> PermissionDecision:
    """Decide one call (S21): see the module docstring for the order.

    Args:
        tool: The tool; its declared risk class and permission argument are read from it.
        args: The call's (validated) arguments.
        policy: The rules and mode.
        context: Where the call runs; defaults to a workspace of ``/`` with lexical paths.

    Returns:
        A :class:`PermissionDecision`; ``ask`` is for the caller to resolve.
    """
    ctx = context or _DEFAULT_CONTEXT
    plan = policy.mode == "plan"

    def applies(rule: PermissionRule) -> MatchResult:
        return rule.applies(
            tool, args, workspace=ctx.workspace, home=ctx.home, resolve=ctx.resolve_path
        )

    # 1. Nothing later softens a denial.
    if ctx.origin == "peer" and tool.operator_only:
        return PermissionDecision(
            "deny", f"{tool.name!r} acts only for the operator; a peer agent's turn cannot use it"
        )
    ceiling = policy.rules("ceiling") if policy.ceiling is not None else None
    if ceiling is not None and not any(applies(rule) == "match" for rule in ceiling):
        return PermissionDecision(
            "deny", f"{tool.name!r} is outside this caller's permission ceiling"
        )
    always_ask: PermissionDecision | None = None
    for rule in policy.rules("deny"):
        result = applies(rule)
        if result == "match":
            return PermissionDecision("deny", f"denied by rule {rule.text!r}", rule.text)
        if result == "unevaluable" and always_ask is None:
            always_ask = PermissionDecision(
                "ask",
                f"deny rule {rule.text!r} cannot be evaluated for this call; a person must decide",
                rule.text,
                always_ask=True,
            )
    # 2. Some calls always reach a person.
    if always_ask is None:
        for rule in policy.rules("ask"):
            result = applies(rule)
            if result == "match":
                always_ask = PermissionDecision(
                    "ask", f"ask rule {rule.text!r}", rule.text, always_ask=True
                )
                break
            if result == "unevaluable":
                always_ask = PermissionDecision(
                    "ask",
                    f"ask rule {rule.text!r} cannot be evaluated for this call; a person must "
                    "decide",
                    rule.text,
                    always_ask=True,
                )
                break
    if always_ask is None:
        always_ask = _catastrophic_removal(tool, args, ctx) or _trust_widening_write(
            tool, args, ctx
        )
    risk = _effective_risk(tool, args, ctx)
    if always_ask is not None:
        if plan and risk != "inspect":
            return PermissionDecision(
                "deny",
                f"plan mode does not ask about changes: {always_ask.reason}",
                always_ask.rule,
            )
        return always_ask
    # 3. Bypass and allow rules answer only what is left.
    if policy.mode == "bypass":
        return PermissionDecision("allow", "bypass mode")
    for rule in policy.rules("allow"):
        if applies(rule) == "match":
            return PermissionDecision("allow", f"allowed by rule {rule.text!r}", rule.text)
    if not plan:
        for text in ctx.remembered:
            rule = _remembered_rule(text)
            if applies(rule) == "match":
                return PermissionDecision("allow", f"allowed by earlier consent {text!r}", text)
    if policy.ask_everything:
        if plan and risk != "inspect":
            return PermissionDecision("deny", "plan mode does not ask about changes")
        return PermissionDecision("ask", "this caller asks about every call")
    # 4. The mode decides by risk class.
    return _by_mode(policy.mode, risk, tool)


def _by_mode(mode: PermissionMode, risk: RiskClass | None, tool: Tool) -> PermissionDecision:
    label = risk or "unclassified"
    if mode == "plan":
        if risk == "inspect":
            return PermissionDecision("allow", "plan mode allows inspection")
        if risk is None:
            return PermissionDecision(
                "deny",
                f"plan mode refuses {tool.name!r}: it declares no risk class; declare one, e.g. "
                '@robota.tool(risk="inspect") for a tool that only reads (or "modify", '
                '"execute")',
            )
        return PermissionDecision("deny", f"plan mode does not make changes ({label} call)")
    if risk == "inspect":
        return PermissionDecision("allow", "inspection is allowed")
    if mode == "accept_edits" and risk == "modify":
        return PermissionDecision("allow", "accept-edits mode allows changes")
    return PermissionDecision(
        "ask", f"a {label} call needs approval in {mode.replace('_', '-')} mode"
    )


def _effective_risk(
    tool: Tool, args: Mapping[str, Any], ctx: PermissionContext
) -> RiskClass | None:
    argument = tool.permission_argument
    if (
        argument is not None
        and argument.kind == "command"
        and ctx.read_only_command is not None
        and isinstance(args.get(argument.key), str)
    ):
        try:
            read_only = ctx.read_only_command(args[argument.key])
        except Exception:  # noqa: BLE001 - a failing classifier proves nothing
            read_only = False
        if read_only:
            return "inspect"
    return tool.risk


def _catastrophic_removal(
    tool: Tool, args: Mapping[str, Any], ctx: PermissionContext
) -> PermissionDecision | None:
    argument = tool.permission_argument
    if argument is None or argument.kind != "command":
        return None
    command = args.get(argument.key)
    if not isinstance(command, str):
        return None
    reason = catastrophic_reason(
        command, workspace=ctx.workspace, home=ctx.home, resolve=ctx.resolve_path
    )
    if reason is None:
        return None
    return PermissionDecision("ask", reason, always_ask=True)


def _trust_widening_write(
    tool: Tool, args: Mapping[str, Any], ctx: PermissionContext
) -> PermissionDecision | None:
    argument = tool.permission_argument
    if argument is None or argument.kind != "path" or tool.risk == "inspect":
        return None
    value = args.get(argument.key)
    for pattern in ctx.trust_locations:
        if pattern.startswith("~") and ctx.home is None:
            continue  # without a home directory the location cannot be placed (pass `home`)
        result = match_path(
            _anywhere(pattern),
            value,
            workspace=ctx.workspace,
            home=ctx.home,
            resolve=ctx.resolve_path,
        )
        if result == "match":
            return PermissionDecision(
                "ask",
                f"writing {value!r} widens what later sessions trust ({pattern})",
                always_ask=True,
            )
        if result == "unevaluable":
            return PermissionDecision(
                "ask",
                f"cannot tell whether {value!r} is a trusted location; a person must decide",
                always_ask=True,
            )
    return None


def _anywhere(pattern: str) -> str:
    """A trust location's ``**/`` pattern read from the root, so it matches outside the workspace.

    S21: "a write into a location that widens what … the user's shell will trust" — a checkout
    next to the workspace obeys its ``.git/hooks``, a ``.envrc`` under ``/tmp`` is loaded on
    ``cd``, wherever the file lands. ``match_path`` places a relative pattern in the workspace,
    which is right for a user's rule (``Read(**/.env)``) and wrong here.
    """
    return "/" + pattern if pattern.startswith("**/") else pattern


@functools.lru_cache(maxsize=256)
def _remembered_rule(text: str) -> PermissionRule:
    # A session's consent is read on every call; a rule is immutable, so it is parsed once.
    return parse_rule(text, "allow")
