"""One reading of a program's options (issue 24, S12/S21).

The read-only classifier's allow-lists (``robota.host.paths._readonly_programs``) and the rule
matcher's option grammars (``robota.core.permissions._programs``) both say which options of a
program take a value. Two readings that can disagree are a defect (S05's words): where both
tables name a program, every option the classifier lists must be in the grammar with the same
arity, so a command is split into options and operands the same way by both.
"""

from __future__ import annotations

from robota.core.permissions._options import Grammar
from robota.core.permissions._programs import GRAMMARS
from robota.host.paths._readonly_programs import GIT_GLOBAL, GIT_SUBCOMMANDS, PROGRAMS, Program


def _classifier_arity(program: Program, option: str) -> str:
    if option in program.values:
        return "value"
    if option in program.optional:
        return "optional"
    return "flag"


def _grammar_arity(grammar: Grammar, option: str) -> str | None:
    entry = grammar.long.get(option) or grammar.short.get(option)
    return entry[1] if entry is not None else None


def _shared() -> list[tuple[str, Program, Grammar]]:
    pairs = [(name, PROGRAMS[name], GRAMMARS[name]) for name in PROGRAMS if name in GRAMMARS]
    git = GRAMMARS["git"]
    pairs += [
        (f"git {name}", GIT_SUBCOMMANDS[name], git.subcommands[name])
        for name in GIT_SUBCOMMANDS
        if name in git.subcommands
    ]
    return pairs


def test_s12_the_classifier_and_the_rule_matcher_read_shared_options_alike() -> None:
    shared = _shared()
    assert shared, "no program is in both tables: this test would prove nothing"
    for name, program, grammar in shared:
        for option in {*program.flags, *program.values, *program.optional}:
            assert _grammar_arity(grammar, option) == _classifier_arity(program, option), (
                name,
                option,
            )


def test_s12_git_global_options_the_classifier_allows_take_no_value_in_the_grammar() -> None:
    git = GRAMMARS["git"]
    for option in GIT_GLOBAL:
        assert _grammar_arity(git, option) == "flag", option
