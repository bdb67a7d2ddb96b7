"""S12/S21: a tool whose path rules answer to another name, and the gate's per-path screen.

``PermissionArgument(also_judged_as=("Read",))`` lets ``Read`` deny and ask rules judge a search
tool's calls; :meth:`PermissionGate.path_screen` carries the same judgement to each path a walk
meets. The screen's verdicts are checked against :func:`evaluate_permission` itself, on a real
directory tree with the host's resolver, so "judged as the gate would judge it" is tested, not
assumed.
"""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robota
import robota.host

from .conftest import make_tool

PATH = robota.PermissionArgument("path", "path")
WALK = robota.PermissionArgument("path", "path", also_judged_as=("Read",))


def _grep(argument: robota.PermissionArgument = WALK) -> robota.Tool:
    return make_tool(
        "Grep",
        risk="inspect",
        argument=argument,
        properties={"path": {"type": "string"}, "glob": {"type": "string"}},
    )


def test_also_judged_as_takes_tool_names_only() -> None:
    with pytest.raises(robota.ConfigurationError, match="also_judged_as"):
        robota.PermissionArgument("path", "path", also_judged_as="Read")  # type: ignore[arg-type]
    with pytest.raises(robota.ConfigurationError, match="also_judged_as"):
        robota.PermissionArgument("path", "path", also_judged_as=("",))
    assert robota.PermissionArgument("p", "path", also_judged_as=["Read"]).also_judged_as == (  # type: ignore[arg-type]
        "Read",
    )


def test_s12_a_read_deny_judges_a_tool_that_answers_to_read() -> None:
    policy = robota.PermissionPolicy(deny=["Read(secrets/**)"])
    context = robota.PermissionContext(workspace="/w")
    denied = robota.evaluate_permission(_grep(), {"path": "secrets/x"}, policy, context)
    other = robota.evaluate_permission(_grep(PATH), {"path": "secrets/x"}, policy, context)
    assert denied.behavior == "deny"
    assert denied.rule == "Read(secrets/**)"
    assert other.behavior == "allow"  # a tool that does not answer to Read is not judged by it


def test_s12_an_ask_rule_for_read_asks_about_the_tool_too() -> None:
    policy = robota.PermissionPolicy(ask=["Read(secrets/**)"])
    context = robota.PermissionContext(workspace="/w")
    decision = robota.evaluate_permission(_grep(), {"path": "secrets"}, policy, context)
    assert decision.behavior == "ask"
    assert decision.always_ask


def test_s12_allow_rules_and_ceilings_for_read_grant_the_tool_nothing() -> None:
    context = robota.PermissionContext(workspace="/w")
    asked = robota.PermissionPolicy(allow=["Read(**)"], ask_everything=True)
    ceiling = robota.PermissionPolicy(ceiling=["Read(**)"])
    assert robota.evaluate_permission(_grep(), {"path": "a"}, asked, context).behavior == "ask"
    assert robota.evaluate_permission(_grep(), {"path": "a"}, ceiling, context).behavior == "deny"


def test_s12_a_tool_denied_outright_as_read_is_not_offered() -> None:
    gate = robota.PermissionGate(robota.PermissionPolicy(deny=["Read"]))
    assert not gate.offered(_grep())
    assert gate.offered(_grep(PATH))


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "w"
    for path in (
        "src/app.py",
        "src/.env",
        "src/deep/.env",
        "secrets/key.pem",
        "secrets/sub/more.txt",
        "docs/a.md",
        "notes.txt",
    ):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x\n")
    (root / "vault").symlink_to("secrets")
    return root


RULES = [
    "Read(secrets/**)",
    "Read(secrets/*)",
    "Read(secrets)",
    "Grep(**/.env)",
    "Read(**/*.pem)",
    "Read(vault/**)",
    "Read(src/*/.env)",
    "Read(/**/docs/*.md)",
    "Glob(src/**)",
    "Read(nothing-here/**)",
]
PATHS = [
    "src",
    "src/app.py",
    "src/.env",
    "src/deep",
    "src/deep/.env",
    "secrets",
    "secrets/key.pem",
    "secrets/sub",
    "secrets/sub/more.txt",
    "docs/a.md",
    "notes.txt",
]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("direction", ["deny", "ask"])
def test_s12_the_screen_judges_each_path_as_the_gate_judges_a_call_naming_it(
    tree: pathlib.Path, rule: str, direction: str
) -> None:
    policy = robota.PermissionPolicy(**{direction: [rule]})  # type: ignore[arg-type]
    context = robota.host.permission_context(tree)
    gate = robota.PermissionGate(policy, context)
    tool = _grep()
    screen = gate.path_screen(tool, {"path": "."})
    root = robota.host.canonical_path(str(tree))
    for path in PATHS:
        expected = robota.evaluate_permission(tool, {"path": path}, policy, context)
        verdict = screen.verdict(f"{root}/{path}")
        if expected.behavior == "deny":
            assert verdict == "deny", (rule, path)
        elif expected.always_ask:
            assert verdict == "ask", (rule, path)
        else:
            assert verdict == "allow", (rule, path)


def test_s21_rules_the_call_itself_raised_are_not_applied_again(tree: pathlib.Path) -> None:
    context = robota.host.permission_context(tree)
    root = robota.host.canonical_path(str(tree))
    asked = robota.PermissionGate(robota.PermissionPolicy(ask=["Grep(secrets/**)"]), context)
    # An ask covering the call's own path was put to a person at admission.
    assert not asked.path_screen(_grep(), {"path": "secrets"}).active
    assert asked.path_screen(_grep(), {"path": "."}).verdict(f"{root}/secrets/key.pem") == "ask"
    # A parameter rule judges the call's other arguments, not each path.
    param = robota.PermissionGate(robota.PermissionPolicy(deny=["Grep(glob: *.py)"]), context)
    assert not param.path_screen(_grep(), {"path": "."}).active


def test_a_screen_without_rules_or_without_a_gate_allows_everything() -> None:
    gate = robota.PermissionGate(robota.PermissionPolicy(allow=["Read(**)"]))
    assert not gate.path_screen(_grep(), {"path": "."}).active
    ctx = robota.ToolContext(signal=robota.AbortController().signal, call_id="c", tool_name="t")
    screen = ctx.path_screen({"path": "."})
    assert not screen.active
    assert screen.verdict("/anything") == "allow"


def test_joined_screens_answer_the_most_severe() -> None:
    deny = robota.PathScreen(lambda path: "deny" if path.endswith(".pem") else "allow")
    ask = robota.PathScreen(lambda path: "ask" if "secrets" in path else "allow")
    both = robota.PathScreen.joined([robota.PathScreen(), ask, deny])
    assert both.verdict("/w/secrets/key.pem") == "deny"
    assert both.verdict("/w/secrets/a.txt") == "ask"
    assert both.verdict("/w/a.txt") == "allow"
    assert not robota.PathScreen.joined([robota.PathScreen()]).active


_SEGMENTS = st.sampled_from(
    ["a", "b", ".env", "ab", "*", "?", "a*", "*b", "[ab]", "[!a]", "**", "["]
)
_NAMES = st.sampled_from(["a", "b", ".env", "ab", "ba", "[", "a.b", "a\nb", "\n.env"])


@settings(max_examples=300, deadline=None)
@given(
    pattern=st.lists(_SEGMENTS, min_size=1, max_size=5),
    path=st.lists(_NAMES, min_size=1, max_size=6),
    absolute=st.booleans(),
)
def test_s12_the_compiled_screen_agrees_with_the_gate_on_any_glob(
    pattern: list[str], path: list[str], absolute: bool
) -> None:
    # Lexical paths (no resolver): the screen's one compiled expression against the wildcard
    # scan the gate runs, on patterns with every glob form a segment can hold.
    text = ("/w/" if absolute else "") + "/".join(pattern)
    policy = robota.PermissionPolicy(deny=[f"Read({text})"])
    context = robota.PermissionContext(workspace="/w")
    screen = robota.PermissionGate(policy, context).path_screen(_grep(), {"path": "zzz"})
    expected = robota.evaluate_permission(_grep(), {"path": "/".join(path)}, policy, context)
    verdict = screen.verdict("/w/" + "/".join(path))
    if expected.behavior == "deny":
        assert verdict == "deny"
    elif expected.always_ask:
        assert verdict == "ask"
    else:
        assert verdict == "allow"


def test_s12_a_subtree_anywhere_rule_stays_one_compiled_expression(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `**/node_modules/**` is the usual rule shape; its trailing `**` is a segment boundary, not
    # a second repetition, so it must not fall back to the per-path wildcard scan (a rule set of
    # 100 such rules made a 100k-file walk several times slower; benchmarks/tools_grep.py).
    from robota.core.permissions import _screen

    def scan(self: object, path: str) -> bool:
        raise AssertionError("fell back to the wildcard scan")

    monkeypatch.setattr(_screen._Form, "covers", scan)
    context = robota.PermissionContext(workspace="/w")
    for rule in ("Read(**/node_modules/**)", "Read(**/*.pem/**)", "Read(build/**/**)"):
        policy = robota.PermissionPolicy(deny=[rule])
        screen = robota.PermissionGate(policy, context).path_screen(_grep(), {"path": "zzz"})
        for path in ("/w/a/node_modules", "/w/node_modules/x/y", "/w/k.pem", "/w/build/b", "/w/x"):
            expected = robota.evaluate_permission(_grep(), {"path": path}, policy, context)
            assert screen.verdict(path) == expected.behavior
