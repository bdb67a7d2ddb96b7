r"""Option values and operands that are small languages, judged as the program reads them (S21).

Some values a read-only program is given are programs in their own right: a jq filter, a git
pretty format, a ref-filter format, a ``date`` string. An allow-listed option is only as
read-only as every value it accepts, so each such value is read here the way its program reads
it, and refused when it makes the program run another program, read a file its operands do not
name, or put the environment in front of the model.

**jq filters** (jq 1.7's manual and lexer). The filter is tokenised as jq does — string literals
with their ``\(...)`` interpolations (code again), ``#`` comments, field names (``.env``),
variables (``$ENV``, also spelled ``$ ENV``), identifiers (``env``) — and refused when it:

* reads the environment: the ``env`` builtin or the ``$ENV`` variable, wherever the code is
  (inside an interpolation ``"\(env.HOME)"`` included). ``.env``, ``."env"`` and ``"env"`` are
  data. An identifier ``env`` in an object key (``{env: 1}``, ``{env}``) is refused too: which
  words are keys depends on grammar details that differ between jq versions, and a refusal
  costs one prompt;
* imports a module or asks where modules are (``import``, ``include``, ``modulemeta``,
  ``get_search_list``): a file read relative to the working directory or the home directory;
* has a comment with a backslash in it: jq 1.7.1 continues such a comment onto the next line
  and jq 1.6 does not, so the two would read different code.

The filter is not all jq runs: at every start jq 1.5 and later read ``$HOME/.jq``. A file there
is sourced into every program and its definitions replace the builtins — ``def length: env;``
makes ``jq length`` print the environment — and a directory there is where ``import`` looks
first (what else versions load from it differs). So jq is not read-only at all while anything
(a file, a directory, a link, even a dangling one) is at that path, or while the home it would
be under is not known (:func:`jq_start_file_refusal`); a write there always asks (S21's trust
locations).

Audited and harmless: ``input``/``inputs`` (the files already named), ``input_filename``,
``$__loc__``, ``$ARGS`` (the command line's own ``--arg`` values), ``debug``/``stderr``/
``halt_error`` (standard error), ``get_jq_origin``/``get_prog_origin`` (a directory name), the
date builtins (the time zone), ``@sh`` and the other formats (text only).

**Formats and expressions given to allow-listed options** (git 2.39-2.47, GNU coreutils 9,
findutils 4.9, diffutils 3, util-linux 2.38, tree 2, ripgrep 14, jq 1.7 — the verdict for each):

* ``git log``/``show``/``rev-list``/``shortlog`` ``--format``, ``--pretty`` (a built-in name,
  ``format:``, ``tformat:`` or a string with ``%``) and ``shortlog --group=format:``: an
  allow-list of placeholders. ``%G?``, ``%GS``, ``%GK``, ``%GF``, ``%GP``, ``%GT`` and ``%GG``
  run gpg to verify a signature (what ``--show-signature`` does, which is not listed), and an
  unknown placeholder or a pretty alias from git's configuration is refused.
  ``%(describe)`` (git runs ``git describe``), ``%(decorate)``, ``%(trailers)``, colours and
  padding only read the repository.
* ``git for-each-ref``/``branch``/``tag`` ``--format`` and ``--sort``: an allow-list of ref-filter
  atoms. ``%(signature…)`` verifies the signature with gpg (newer git); an unknown atom is
  refused.
* ``git ls-files``/``ls-tree`` ``--format`` and ``git cat-file --batch=…``/``--batch-check=…``/
  ``--batch-command=…``: their own atoms, all metadata; anything else refused.
* ``git log --date=format:…``, ``date +FORMAT``, ``ls``/``du --time-style``, ``tree --timefmt``:
  strftime, text only.
* ``date -d``/``--date`` and ``find -newerXt``: a ``TZ="…"`` inside the string makes the program
  open that time-zone file — any path, a FIFO or a terminal included — so a date string naming a
  time zone is refused; every other date string is text. ``date -f FILE`` reads a date string
  from each line of a file whose content the line does not show, so it is refused.
* ``find -printf``, ``stat --format``/``--printf``: metadata of the files already named (``%l``,
  ``%N`` print a link's target, never its content).
* ``diff --line-format`` and the ``--*-group-format`` options: text and line numbers.
* ``grep``/``rg``/``git grep``/``git log -G``/``nl -b p…``/``diff -I``/``find -regex``: regular
  expressions (time, never a program); ``rg --replace``: capture references; ``rg --colors``,
  ``column``'s and ``cut``'s separators and column names, ``tree -H``/``-T``, ``git describe
  --dirty=…``, ``jq --arg``/``--argjson``: text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

__all__ = ["date_string_refusal", "jq_filter_refusal", "jq_start_file_refusal", "value_refusal"]

# --------------------------------------------------------------------------------------- jq

_JQ_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:::[A-Za-z_][A-Za-z_0-9]*)*")
_JQ_FIELD: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_JQ_NUMBER: Final = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JQ_SPACE: Final = re.compile(r"(?:[ \t\r\n]+|#[^\n]*)*")
_JQ_MODULE_WORDS: Final = frozenset({"import", "include", "modulemeta", "get_search_list"})
_JQ_MAX_NESTING: Final = 64


class _Unreadable(Exception):
    """The filter cannot be read the one way jq reads it."""


class _JqReferences:
    """The identifiers and variables a jq filter's code names (strings and fields excluded)."""

    __slots__ = ("_text", "identifiers", "variables")

    def __init__(self, text: str) -> None:
        self._text = text
        self.identifiers: list[str] = []
        self.variables: list[str] = []
        end = self._code(0, nesting=0)
        if end != len(text):  # pragma: no cover - _code reads to the end at nesting 0
            raise _Unreadable("the filter does not end where it should")

    def _code(self, index: int, *, nesting: int) -> int:
        # Code up to the end (nesting 0) or up to the `)` that closes an interpolation.
        if nesting > _JQ_MAX_NESTING:
            raise _Unreadable("string interpolations nest too deeply")
        text = self._text
        depth = 0
        while index < len(text):
            char = text[index]
            if char == "#":
                end = text.find("\n", index)
                end = len(text) if end < 0 else end
                if "\\" in text[index:end]:
                    raise _Unreadable(
                        "a comment with a backslash (jq versions disagree where it ends)"
                    )
                index = end
            elif char == '"':
                index = self._string(index + 1, nesting=nesting)
            elif char == ".":
                # jq's lexer takes the longest token: `..` (recurse), a field `.env` (data, not
                # the builtin), a number `.5`, or `.` alone — so `..env` is `..` and `env`.
                field = _JQ_FIELD.match(text, index + 1)
                number = _JQ_NUMBER.match(text, index)
                if text.startswith("..", index):
                    index += 2
                elif field is not None:
                    index = field.end()
                elif number is not None:
                    index = number.end()
                else:
                    index += 1
            elif char == "$":
                # jq 1.6 reads `$` and the name as two tokens, so space or a comment may part them.
                space = _JQ_SPACE.match(text, index + 1)
                start = space.end() if space is not None else index + 1
                name = _JQ_IDENT.match(text, start)
                if name is None:
                    raise _Unreadable("a `$` without a variable name")
                if "\\" in text[index:start]:
                    raise _Unreadable(
                        "a comment with a backslash (jq versions disagree where it ends)"
                    )
                self.variables.append(name.group())
                index = name.end()
            elif char == "@":
                name = _JQ_FIELD.match(text, index + 1)
                index = name.end() if name is not None else index + 1  # a format: @base64
            elif char.isascii() and (char.isalpha() or char == "_"):
                name = _JQ_IDENT.match(text, index)
                assert name is not None
                self.identifiers.append(name.group())
                index = name.end()
            elif char.isascii() and char.isdigit():
                number = _JQ_NUMBER.match(text, index)
                assert number is not None
                index = number.end()  # `1.env` is the number `1.` and then `env`, as in jq
            else:
                if nesting:
                    if char == "(":
                        depth += 1
                    elif char == ")":
                        if depth == 0:
                            return index + 1
                        depth -= 1
                index += 1
        if nesting:
            raise _Unreadable("a string interpolation is not closed")
        return index

    def _string(self, index: int, *, nesting: int) -> int:
        text = self._text
        while index < len(text):
            char = text[index]
            if char == '"':
                return index + 1
            if char == "\\":
                if text.startswith("(", index + 1):
                    index = self._code(index + 2, nesting=nesting + 1)  # `"\(code)"`
                    continue
                index += 2
                continue
            index += 1
        raise _Unreadable("a string is not closed")


def jq_filter_refusal(program: str) -> str | None:
    """Why the jq filter ``program`` is not read-only; ``None`` when it only reads its input."""
    try:
        names = _JqReferences(program)
    except _Unreadable as exc:
        return f"the jq program cannot be read exactly: {exc}"
    if any(v == "ENV" or v.startswith("ENV::") for v in names.variables):
        return "the jq program reads the environment ($ENV), which holds secrets"
    if "env" in names.identifiers:
        return "the jq program reads the environment (env), which holds secrets"
    module = next((i for i in names.identifiers if i in _JQ_MODULE_WORDS), None)
    if module is not None:
        return f"the jq program uses {module}, which reads a module file"
    return None


def jq_start_file_refusal(home: str | None) -> str | None:
    """Why jq is not read-only for a user whose home is ``home``; ``None`` when it may be.

    jq reads ``$HOME/.jq`` at start (see the module docstring); the classifier assumes the
    command runs with ``HOME`` set to the home it was given. Anything at that path, or a path
    that cannot be looked at, means the filter on the command line is not all jq runs.
    """
    if not home or not os.path.isabs(home):
        return "jq reads ~/.jq at start, and the home directory it would read is not known"
    try:
        os.lstat(os.path.join(home, ".jq"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"jq reads ~/.jq at start, and whether it exists cannot be told ({exc.strerror})"
    return "jq loads ~/.jq at start, whose definitions can replace any filter (even `length`)"


# ----------------------------------------------------------------------------- git formats

# gitpretty(5), "PLACEHOLDERS": every placeholder that reads only the commit and the repository.
_PRETTY_PLACEHOLDER: Final = re.compile(
    r"%[+\- ]?(?:"
    r"[%nmHhTtPpdDSesfbBN]|x[0-9a-fA-F]{2}"
    r"|[ac][nNeElLdDrtiIsh]|g[DdnNeEs]"
    r"|C(?:red|green|blue|reset|\([^)]*\))"
    r"|(?:w|<|<\||>|>\||>>|>>\||><|><\|)\([^)]*\)"
    r"|\((?:describe|decorate|trailers)(?::[^)]*)?\)"
    r")"
)
_PRETTY_NAMES: Final = frozenset(
    {"oneline", "short", "medium", "full", "fuller", "reference", "email", "mboxrd", "raw"}
)
# git-for-each-ref(1), "FIELD NAMES" (with `*` for the peeled object and `:options`).
_REF_ATOMS: Final = frozenset(
    {
        *("refname", "objecttype", "objectsize", "objectname", "deltabase", "upstream", "push"),
        *("HEAD", "color", "align", "end", "if", "then", "else", "symref", "worktreepath"),
        *("raw", "contents", "subject", "body", "trailers", "tree", "parent", "numparent"),
        *("object", "type", "tag", "author", "authorname", "authoremail", "authordate"),
        *("committer", "committername", "committeremail", "committerdate", "tagger"),
        *("taggername", "taggeremail", "taggerdate", "creator", "creatordate", "describe"),
        *("ahead-behind", "is-base"),
    }
)
# git-ls-files(1) and git-ls-tree(1) "--format", git-cat-file(1) "BATCH OUTPUT".
_LS_FILES_ATOMS: Final = frozenset(
    {"objectmode", "objectname", "objecttype", "objectsize", "stage", "eolinfo", "eolattr", "path"}
)
_LS_TREE_ATOMS: Final = frozenset({"objectmode", "objecttype", "objectname", "objectsize", "path"})
_CAT_FILE_ATOMS: Final = frozenset(
    {"objectname", "objecttype", "objectsize", "deltabase", "rest", "objectmode"}
)
_ATOM_TEXT: Final = re.compile(r"%(?:%|[0-9a-fA-F]{2}|\((?P<atom>[^)]*)\))")
_GPG: Final = "runs gpg to verify a signature (as --show-signature does)"


def _pretty(value: str) -> str | None:
    # gitpretty(5): a built-in name, `format:`/`tformat:` and a string, or a string with `%`.
    if not value or value in _PRETTY_NAMES:
        return None
    for prefix in ("format:", "tformat:"):
        if value.startswith(prefix):
            return _placeholders(value[len(prefix) :])
    if "%" not in value:
        return f"the pretty format {value!r} is not a built-in one (git's configuration says)"
    return _placeholders(value)


def _placeholders(text: str) -> str | None:
    index = text.find("%")
    while index >= 0:
        match = _PRETTY_PLACEHOLDER.match(text, index)
        if match is None:
            modifier = 1 if text[index + 1 : index + 2] in ("+", "-", " ") else 0
            code = text[index : index + 3 + modifier]
            if code[1 + modifier : 2 + modifier] == "G":
                return f"the format placeholder {code!r} {_GPG}"
            return f"the format placeholder {code!r} is not known to only read"
        index = text.find("%", match.end())
    return None


def _atoms(allowed: frozenset[str], what: str) -> Callable[[str], str | None]:
    def judge(value: str) -> str | None:
        index = value.find("%")
        while index >= 0:
            match = _ATOM_TEXT.match(value, index)
            if match is None:
                return f"the {what} at {value[index : index + 12]!r} is not known to only read"
            atom = match["atom"]
            if atom is not None:
                refusal = _atom(atom, allowed, what)
                if refusal is not None:
                    return refusal
            index = value.find("%", match.end())
        return None

    return judge


def _atom(atom: str, allowed: frozenset[str], what: str) -> str | None:
    name = atom.split(":", 1)[0].removeprefix("*")
    if name == "signature":
        return f"the {what} %({atom}) {_GPG}"
    if name not in allowed:
        return f"the {what} %({atom}) is not known to only read"
    return None


def _ref_sort(value: str) -> str | None:
    # git-for-each-ref(1) --sort: an atom's name, `-` to reverse, `version:`/`v:` to compare
    # as versions.
    key = value.removeprefix("-")
    for prefix in ("version:", "v:"):
        key = key.removeprefix(prefix)
    return _atom(key, _REF_ATOMS, "sort key")


def _shortlog_group(value: str) -> str | None:
    if value.startswith("format:"):
        return _placeholders(value.removeprefix("format:"))
    return None  # author, committer, trailer:<key>


def date_string_refusal(value: str) -> str | None:
    """Why a GNU date string (``date -d``, ``find -newermt``) does more than name a time.

    A ``TZ="…"`` in it makes the program open that time-zone file, whatever the path.
    """
    if "tz=" in value.lower():
        return "the date string names a time zone, which makes the program open that file"
    return None


def _date_file(value: str) -> str | None:
    return f"`date -f {value}` reads each line as a date string, which may name any file"


_ref_format = _atoms(_REF_ATOMS, "format atom")
_LOG_CHECKS: Final[Mapping[str, Callable[[str], str | None]]] = {
    "--format": _pretty,
    "--pretty": _pretty,
}
_REF_CHECKS: Final[Mapping[str, Callable[[str], str | None]]] = {
    "--format": _ref_format,
    "--sort": _ref_sort,
}
_CAT_FILE = _atoms(_CAT_FILE_ATOMS, "batch format atom")

# Which option values of which program are a language, and how each is judged.
_CHECKS: Final[Mapping[str, Mapping[str, Callable[[str], str | None]]]] = {
    "git log": _LOG_CHECKS,
    "git show": _LOG_CHECKS,
    "git rev-list": _LOG_CHECKS,
    "git shortlog": {**_LOG_CHECKS, "--group": _shortlog_group},
    "git for-each-ref": _REF_CHECKS,
    "git branch": _REF_CHECKS,
    "git tag": _REF_CHECKS,
    "git ls-files": {"--format": _atoms(_LS_FILES_ATOMS, "format atom")},
    "git ls-tree": {"--format": _atoms(_LS_TREE_ATOMS, "format atom")},
    "git cat-file": {
        "--batch": _CAT_FILE,
        "--batch-check": _CAT_FILE,
        "--batch-command": _CAT_FILE,
    },
    "date": {
        "-d": date_string_refusal,
        "--date": date_string_refusal,
        "-f": _date_file,
        "--file": _date_file,
    },
}


def value_refusal(
    name: str, given: Sequence[tuple[str, str]], operands: Sequence[str]
) -> str | None:
    """Why an option value or operand of the read-only program ``name`` does more than read.

    Args:
        name: The program as the classifier names it (``"jq"``, ``"git log"``).
        given: Every ``(option, value)`` the command gave, in order.
        operands: Its operands (for jq, the filter first).
    """
    if name == "jq" and operands:
        return jq_filter_refusal(operands[0])
    checks = _CHECKS.get(name, {})
    for option, value in given:
        judge = checks.get(option)
        refusal = judge(value) if judge is not None else None
        if refusal is not None:
            return refusal
    return None
