r"""Shell words: what one word of a command line becomes after the shell has read it (S12, S21).

The grammar (tree-sitter-bash, see :mod:`._shell`) says where a word starts and ends and which
pieces of it are expansions; this module decides what the word *is*, with POSIX quote removal
written out here rather than trusted to the grammar: a backslash quotes the next character,
single quotes quote everything up to the next one, double quotes quote everything but ``$``,
`````` and the backslash escapes of ``$ ` " \\`` and newline.

A word is a sequence of :class:`WordPart`: literal characters (each remembering whether it was
quoted), parameter expansions (``$NAME`` / ``${NAME}``), tilde prefixes, unquoted glob
characters, and *dynamic* parts whose value only exists at run time (command substitution,
``${x:-y}``, arithmetic, special parameters). A construct this module does not model exactly —
ANSI-C quoting, brace expansion, extended globs, a place where its reading and the grammar's
disagree — makes the word *unsupported*, with the reason; callers treat that as "cannot tell",
never as a plain word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, final

from robota.core.permissions._globs import wildcard_match

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = [
    "Word",
    "WordPart",
    "WordPartKind",
    "append_literal",
    "glob_fixed_prefix",
    "glob_has_magic",
    "glob_match",
    "glob_unescape",
    "read_heredoc",
    "substitution_count",
    "substitution_nodes",
    "unescaped",
]

WordPartKind: TypeAlias = Literal["literal", "parameter", "tilde", "glob", "dynamic"]

_GLOB_META: Final = frozenset("*?[]\\")
_ANY_CHAR: Final = re.compile(".", re.DOTALL)
_NAME_START: Final = re.compile(r"[A-Za-z_]")
# After an unquoted `$`, these begin an expansion (a name, a positional or special parameter,
# `${`, `$(`, `$'`, `$"`); anything else leaves the `$` literal.
_EXPANDS_AFTER_DOLLAR: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789{(@*#?-$!'\""
)
_OPERATOR_CHARS: Final = frozenset(";&|<>()")
_BRACE_EXPANSION: Final = re.compile(r"\{[^{}\x00]*(?:,|\.\.)[^{}\x00]*\}")
_CONSTRUCTS: Final = {
    "ansi_c_string": "ANSI-C quoting ($'…')",
    "translated_string": 'a locale string ($"…")',
    "brace_expression": "brace expansion",
    "extglob_pattern": "an extended glob",
    "array": "an array",
}
_ARITHMETIC_NAMES: Final = re.compile(r"[A-Za-z_]")
_IFS_OR_GLOB: Final = re.compile(r"[ \t\n*?\[]")
# `~user`, and bash's `~+`, `~-`, `~N`, `~+N`, `~-N` (the directory stack): all but `~` alone
# are names this analysis cannot know.
_TILDE_USER: Final = re.compile(r"[A-Za-z0-9._+-]*")


@final
@dataclass(frozen=True, slots=True)
class WordPart:
    """One piece of a word.

    Attributes:
        kind: ``"literal"`` characters; a ``"parameter"`` expansion (``text`` is the name); a
            ``"tilde"`` prefix (``text`` is the user name, empty for the current user); an
            unquoted ``"glob"`` construct (``*``, ``?`` or a bracket expression, as written); or
            a ``"dynamic"`` part known only at run time (``text`` is its source).
        text: See ``kind``.
        quoted: The part was inside quotes (or escaped): no field splitting, no globbing.
    """

    kind: WordPartKind
    text: str
    quoted: bool = False


@final
@dataclass(frozen=True, slots=True)
class Word:
    """One word of a command line.

    Attributes:
        source: The word as written.
        parts: What it is made of (see :class:`WordPart`).
        unsupported: Why the word is not understood exactly, or ``None``.
        substitution: It contains a command or process substitution (a command runs).
    """

    source: str
    parts: tuple[WordPart, ...]
    unsupported: str | None = None
    substitution: bool = False

    @property
    def value(self) -> str:
        """The word after quote removal; expansions are shown as written (``$HOME``, ``*``)."""
        pieces: list[str] = []
        for part in self.parts:
            if part.kind == "parameter":
                pieces.append("$" + part.text)
            elif part.kind == "tilde":
                pieces.append("~" + part.text)
            else:
                pieces.append(part.text)
        return "".join(pieces)

    @property
    def literal(self) -> bool:
        """The program receives exactly :attr:`value`: no expansion, glob or tilde in it."""
        return self.unsupported is None and all(p.kind == "literal" for p in self.parts)

    @property
    def dynamic(self) -> bool:
        """Part of the word is only known at run time (an expansion or substitution)."""
        return self.unsupported is not None or any(
            p.kind in ("parameter", "dynamic") for p in self.parts
        )

    @property
    def has_glob(self) -> bool:
        """The word contains an unquoted glob construct (the shell may replace it by names)."""
        return any(p.kind == "glob" for p in self.parts)

    @property
    def has_tilde(self) -> bool:
        """The word contains a tilde prefix (the shell replaces it by a home directory)."""
        return any(p.kind == "tilde" for p in self.parts)

    def pattern(
        self, *, variables: Mapping[str, str] | None = None, home: str | None = None
    ) -> str | None:
        r"""The word as a glob pattern after the expansions that can be known here.

        Every literal character that is special to a glob (``* ? [ ] \\``) is escaped with a
        backslash, unquoted glob constructs are left as they are, ``~`` becomes ``home`` and a
        parameter its value in ``variables``. ``None`` when the result cannot be known: a
        dynamic part, an unknown parameter, ``~user``, a tilde without ``home``, an unquoted
        parameter whose value would be split into several words, or an unsupported word.
        """
        if self.unsupported is not None:
            return None
        pieces: list[str] = []
        for part in self.parts:
            if part.kind == "literal":
                pieces.append(_escape(part.text))
            elif part.kind == "glob":
                pieces.append(part.text)
            elif part.kind == "tilde":
                if part.text or home is None:
                    return None
                pieces.append(_escape(home))
            elif part.kind == "parameter":
                value = (variables or {}).get(part.text)
                if value is None:
                    return None
                if not part.quoted and _IFS_OR_GLOB.search(value):
                    return None  # field splitting or pathname expansion of the value
                pieces.append(_escape(value))
            else:
                return None
        return "".join(pieces)


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in _GLOB_META else ch for ch in text)


def glob_unescape(pattern: str) -> str:
    """``pattern`` (from :meth:`Word.pattern`) with its backslash escapes removed."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\" and index + 1 < len(pattern):
            out.append(pattern[index + 1])
            index += 2
            continue
        out.append(ch)
        index += 1
    return "".join(out)


def unescaped(text: str) -> Iterator[tuple[int, str]]:
    """Each character of ``text`` that a backslash does not escape, with its index."""
    index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        yield index, text[index]
        index += 1


def glob_has_magic(pattern: str) -> bool:
    """Whether ``pattern`` (from :meth:`Word.pattern`) has an unescaped glob character."""
    return any(ch in "*?[" for _, ch in unescaped(pattern))


def glob_match(pattern: str, text: str) -> bool:
    """Whether ``text`` matches ``pattern``, in the syntax of :meth:`Word.pattern`.

    ``*``, ``?``, bracket sets with ``!``/``^`` negation and backslash escapes; ``*`` also matches
    ``/`` (a command argument is not a path). One :func:`~._globs.wildcard_match` over the
    pattern's items, so a pattern with several ``*`` stays within ``len(pattern) * len(text)``
    character tests on a long model-written word (S12).
    """
    return wildcard_match(_glob_items(pattern), text, is_star=_is_star, one=_glob_char_matches)


_GlobItem: TypeAlias = str | re.Pattern[str] | None
"""One item of a glob: a literal character, a one-character pattern (``?``, a set), or ``*``."""


def _is_star(item: _GlobItem) -> bool:
    return item is None


def _glob_char_matches(item: _GlobItem, char: str) -> bool:
    if isinstance(item, str):
        return item == char
    return item is not None and item.fullmatch(char) is not None


@functools.lru_cache(maxsize=1024)
def _glob_items(pattern: str) -> tuple[_GlobItem, ...]:
    items: list[_GlobItem] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\" and index + 1 < len(pattern):
            items.append(pattern[index + 1])
            index += 2
            continue
        if ch == "*":
            if not items or items[-1] is not None:  # `**` is `*`
                items.append(None)
        elif ch == "?":
            items.append(_ANY_CHAR)
        elif ch == "[":
            close = _bracket_end(pattern, index)
            if close is None:
                items.append(ch)
            else:
                body = pattern[index + 1 : close]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                if "[:" in body:
                    members = "\\s\\S"  # a character class: over-approximated as "any"
                else:
                    members = "".join(c if c == "-" else re.escape(c) for c in body)
                items.append(re.compile(f"[{'^' if negate else ''}{members}]", re.DOTALL))
                index = close + 1
                continue
        else:
            items.append(ch)
        index += 1
    return tuple(items)


def glob_fixed_prefix(pattern: str) -> str:
    """The directory every match of ``pattern`` (from :meth:`Word.pattern`) lies in.

    The literal text before the last ``/`` that precedes the first glob character; ``""`` when
    the first component already is a glob, and the whole (unescaped) pattern when it has none.
    """
    first = next((i for i, ch in unescaped(pattern) if ch in "*?["), None)
    if first is None:
        return glob_unescape(pattern)
    slash = pattern.rfind("/", 0, first)  # our escaping never escapes a slash
    if slash < 0:
        return ""
    return "/" if slash == 0 else glob_unescape(pattern[:slash])


# --------------------------------------------------------------------------- reading a word


class _Reader:
    __slots__ = ("line_start", "parts", "source", "substitutions", "unsupported")

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.parts: list[WordPart] = []
        self.unsupported: str | None = None
        self.substitutions: list[Node] = []
        self.line_start = True  # a here-document's reading is at the start of a line

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    def refuse(self, reason: str) -> None:
        if self.unsupported is None:
            self.unsupported = reason

    def literal(self, text: str, *, quoted: bool) -> None:
        append_literal(self.parts, text, quoted)

    # -- nodes

    def node(self, node: Node, *, at_start: bool) -> None:
        kind = node.type
        if kind in ("word", "number"):
            self.unquoted(self.text(node), at_start=at_start)
        elif kind == "raw_string":
            text = self.text(node)
            if len(text) < 2 or text[0] != "'" or text[-1] != "'":
                self.refuse("a single-quoted string the parser could not delimit")
                return
            self.literal(text[1:-1], quoted=True)
        elif kind == "string":
            self.double_quoted(node)
        elif kind == "concatenation":
            position = node.start_byte
            run: list[Node] = []  # adjacent unquoted pieces: one stretch of text to the shell
            for child in node.children:
                if child.start_byte != position:
                    self.refuse("a word whose pieces are not adjacent")
                position = child.end_byte
                if child.type in ("word", "number"):
                    run.append(child)
                    continue
                self._unquoted_run(run, at_start=at_start)
                run = []
                self.node(child, at_start=at_start and not self.parts)
            self._unquoted_run(run, at_start=at_start)
        elif kind in ("simple_expansion", "expansion"):
            self.expansion(node, quoted=False)
        elif kind in ("command_substitution", "process_substitution"):
            self.substitution(node, quoted=False)
        elif kind == "arithmetic_expansion":
            self.arithmetic(node, quoted=False)
        elif kind == "brace_expression":
            # `{1..3}`: kept as the characters it is, so expand_braces() can give bash's reading.
            self.refuse("brace expansion")
            self.literal(self.text(node), quoted=False)
        else:
            # ANSI-C ($'…') and locale ($"…") strings, brace expressions, extended globs, arrays
            # — and anything a newer grammar adds: not modelled, so not understood.
            self.refuse(_CONSTRUCTS.get(kind, kind.replace("_", " ")))
            self.parts.append(WordPart("dynamic", self.text(node)))
            self.substitutions.extend(_substitutions_within(node))

    def _unquoted_run(self, run: list[Node], *, at_start: bool) -> None:
        if run:
            text = self.source[run[0].start_byte : run[-1].end_byte].decode(
                "utf-8", "surrogateescape"
            )
            self.unquoted(text, at_start=at_start and not self.parts)

    def substitution(self, node: Node, *, quoted: bool) -> None:
        text = self.text(node)
        if text.startswith("`") and "\\`" in text[1:-1]:
            # Inside backquotes an escaped backquote opens a nested substitution, which the
            # grammar reads as a plain character.
            self.refuse("nested backquotes")
        self.parts.append(WordPart("dynamic", text, quoted))
        self.substitutions.append(node)

    def arithmetic(self, node: Node, *, quoted: bool) -> None:
        text = self.text(node)
        self.parts.append(WordPart("dynamic", text, quoted))
        self.substitutions.extend(_substitutions_within(node))
        if _ARITHMETIC_NAMES.search(text[2:]):
            # The value of a variable in arithmetic is itself evaluated as an expression, and an
            # array subscript in it runs its substitutions: `x='a[$(cmd)]'; echo $((x))`.
            self.refuse("arithmetic on variables")

    def expansion(self, node: Node, *, quoted: bool) -> None:
        named = [c for c in node.children if c.is_named]
        anonymous = [c.type for c in node.children if not c.is_named]
        simple = (
            len(named) == 1
            and named[0].type == "variable_name"
            and anonymous in (["$"], ["${", "}"])
        )
        if simple:
            self.parts.append(WordPart("parameter", self.text(named[0]), quoted))
            return
        # ${x:-y}, ${#x}, $1, $@, $? …: a value only the running shell knows.
        text = self.text(node)
        self.parts.append(WordPart("dynamic", text, quoted))
        found = _substitutions_within(node)
        self.substitutions.extend(found)
        if any(c.type == "subscript" for c in named):
            # An indexed array's subscript is arithmetic: evaluated, substitutions and all.
            self.refuse("an array subscript")
        if "@" in anonymous and "P" in anonymous:
            self.refuse("prompt expansion (${x@P})")  # runs substitutions in the value
        opened = sum(text.count(opener) for opener in ("$(", "<(", ">(")) + text.count("`")
        if opened > substitution_count(node):
            # A backquote or substitution the grammar left as plain text inside ${…}.
            self.refuse("a substitution inside ${…} the grammar did not read")

    def double_quoted(self, node: Node) -> None:
        children = node.children
        if (
            len(children) < 2
            or children[0].type != '"'
            or children[-1].type != '"'
            or self.text(node)[:1] != '"'
        ):
            self.refuse("a double-quoted string the parser could not delimit")
            return
        position = children[0].end_byte
        for child in children[1:-1]:
            if child.start_byte > position:
                gap = self.source[position : child.start_byte].decode("utf-8", "surrogateescape")
                self.double_quoted_text(gap)
            position = child.end_byte
            kind = child.type
            if kind == "string_content":
                self.double_quoted_text(self.text(child))
            elif kind in ("simple_expansion", "expansion"):
                self.expansion(child, quoted=True)
            elif kind == "command_substitution":
                self.substitution(child, quoted=True)
            elif kind == "arithmetic_expansion":
                self.arithmetic(child, quoted=True)
            elif not child.is_named:
                self.double_quoted_text(self.text(child))  # a lone `$` is a character
            else:
                self.refuse(f"{kind.replace('_', ' ')} inside double quotes")
                self.parts.append(WordPart("dynamic", self.text(child), True))
                self.substitutions.extend(_substitutions_within(child))
        if children[-1].start_byte > position:
            gap = self.source[position : children[-1].start_byte].decode("utf-8", "surrogateescape")
            self.double_quoted_text(gap)

    def double_quoted_text(self, text: str) -> None:
        out: list[str] = []
        index = 0
        while index < len(text):
            ch = text[index]
            if ch == "\\" and index + 1 < len(text):
                following = text[index + 1]
                if following == "\n":
                    index += 2
                    continue
                if following in '$`"\\':
                    out.append(following)
                    index += 2
                    continue
                out.append("\\")
                index += 1
                continue
            if ch == "`" or (
                ch == "$" and index + 1 < len(text) and text[index + 1] in _EXPANDS_AFTER_DOLLAR
            ):
                # The grammar should have made this an expansion node; two readings disagree.
                self.refuse("an expansion the shell grammar did not delimit")
            out.append(ch)
            index += 1
        self.literal("".join(out), quoted=True)

    def heredoc_text(self, text: str, *, unquoted: bool, strip_tabs: bool) -> None:
        """Text of a here-document's body, as the program reads it.

        Leading tabs go for ``<<-``; unquoted, a backslash escapes ``$``, a backquote, a
        backslash or a newline (which goes), and nothing else.
        """
        out: list[str] = []
        index = 0
        while index < len(text):
            ch = text[index]
            if strip_tabs and self.line_start and ch == "\t":
                index += 1
                continue
            if unquoted and ch == "\\" and index + 1 < len(text):
                following = text[index + 1]
                if following == "\n":
                    index += 2
                    self.line_start = True
                    continue
                if following in "$`\\":
                    out.append(following)
                    index += 2
                    self.line_start = False
                    continue
            if unquoted and (
                ch == "`"
                or (
                    ch == "$" and index + 1 < len(text) and text[index + 1] in _EXPANDS_AFTER_DOLLAR
                )
            ):
                self.refuse("a here-document body the parser did not read")
            out.append(ch)
            self.line_start = ch == "\n"
            index += 1
        self.literal("".join(out), quoted=True)

    def unquoted(self, text: str, *, at_start: bool) -> None:
        index = 0
        length = len(text)
        after_assignment_sign = False
        while index < length:
            ch = text[index]
            word_start = at_start and index == 0 and not self.parts
            if ch == "\\":
                if index + 1 >= length:
                    self.refuse("a word ending in a backslash")
                    return
                following = text[index + 1]
                index += 2
                if following != "\n":  # backslash-newline is a line continuation
                    self.literal(following, quoted=True)
                continue
            if ch == "~" and (word_start or after_assignment_sign):
                match = _TILDE_USER.match(text, index + 1)
                end = match.end() if match else index + 1
                if end >= length or text[end] in "/:":
                    self.parts.append(WordPart("tilde", text[index + 1 : end]))
                    index = end
                    continue
            after_assignment_sign = False
            if ch in "*?":
                self.parts.append(WordPart("glob", ch))
            elif ch == "[":
                close = _bracket_end(text, index)
                if close is None:
                    self.literal("[", quoted=False)
                else:
                    self.parts.append(WordPart("glob", text[index : close + 1]))
                    index = close + 1
                    continue
            elif ch == "$":
                if index + 1 < length and text[index + 1] in _EXPANDS_AFTER_DOLLAR:
                    self.refuse("an expansion the shell grammar did not delimit")
                self.literal("$", quoted=False)
            elif ch in "`'\"":
                self.refuse("a quote the shell grammar did not delimit")
                self.literal(ch, quoted=False)
            elif ch in _OPERATOR_CHARS or ch.isspace():
                self.refuse(f"an unquoted {ch!r} inside a word")
                self.literal(ch, quoted=False)
            else:
                # bash expands a tilde after the `=` and each `:` of a word that looks like an
                # assignment (`--file=~/x`, `PATH=~/bin:~/sbin`): every such place counts here.
                after_assignment_sign = ch in "=:"
                self.literal(ch, quoted=False)
            index += 1


def _bracket_end(text: str, start: int) -> int | None:
    index = start + 1
    if index < len(text) and text[index] in "!^":
        index += 1
    if index < len(text) and text[index] == "]":
        index += 1  # a leading `]` is a member of the set
    while index < len(text):
        ch = text[index]
        if ch == "[" and text[index + 1 : index + 2] in (":", ".", "="):
            # A character class ([:alpha:]), collating symbol or equivalence class.
            close = text.find(text[index + 1] + "]", index + 2)
            if close < 0:
                return None
            index = close + 2
            continue
        if ch == "]":
            return index
        if ch in "/\\'\"":
            return None  # a slash ends the component; quoting inside a set is not modelled
        index += 1
    return None


def substitution_count(node: Node) -> int:
    """Every command and process substitution in ``node``, nested ones too.

    A backquoted substitution counts its two backquotes.
    """
    total = 0
    stack = [node]
    while stack:
        child = stack.pop()
        if child.type in ("command_substitution", "process_substitution"):
            total += 2 if child.children and child.children[0].type == "`" else 1
        stack.extend(child.children)
    return total


def substitution_nodes(node: Node) -> list[Node]:
    """The outermost command and process substitutions in ``node`` (itself included)."""
    found: list[Node] = []
    stack = [node]
    while stack:
        child = stack.pop()
        if child.type in ("command_substitution", "process_substitution"):
            found.append(child)
        else:
            stack.extend(reversed(child.children))
    return found


def _substitutions_within(node: Node) -> list[Node]:
    return [found for child in node.children for found in substitution_nodes(child)]


def read_word(node: Node, source: bytes) -> tuple[Word, list[Node]]:
    """The word ``node`` denotes, and the substitutions inside it (outermost first)."""
    reader = _Reader(source)
    reader.node(node, at_start=True)
    parts = tuple(reader.parts)
    unquoted = "".join(p.text if p.kind == "literal" and not p.quoted else "\x00" for p in parts)
    if reader.unsupported is None and _BRACE_EXPANSION.search(unquoted):
        reader.refuse("brace expansion")
    return (
        Word(
            reader.text(node),
            parts,
            reader.unsupported,
            bool(reader.substitutions),
        ),
        reader.substitutions,
    )


def read_heredoc(
    body: Node | None, source: bytes, start: int, end: int, *, quoted: bool, strip_tabs: bool
) -> Word:
    """What a command reads from a here-document whose body is ``source[start:end]``.

    Quoted (``<<'EOF'``), the body is literal text. Unquoted, the shell removes the backslash
    escapes of ``$``, backquote, backslash and newline, and expands parameters and
    substitutions: these are the word's parameter and dynamic parts (``body``'s expansion nodes
    say where they are). ``<<-`` strips the leading tabs of every line.
    """
    reader = _Reader(source)
    if quoted or body is None:
        text = source[start:end].decode("utf-8", "surrogateescape")
        reader.heredoc_text(text, unquoted=not quoted, strip_tabs=strip_tabs)
    else:
        position = start
        for child in body.children:
            kind = child.type
            if not child.is_named or kind == "heredoc_content" or child.start_byte < position:
                continue  # text, read with the gaps around the expansions
            if child.end_byte > end:
                break
            gap = source[position : child.start_byte].decode("utf-8", "surrogateescape")
            reader.heredoc_text(gap, unquoted=True, strip_tabs=strip_tabs)
            if kind in ("simple_expansion", "expansion"):
                reader.expansion(child, quoted=True)
            elif kind == "command_substitution":
                reader.substitution(child, quoted=True)
            elif kind == "arithmetic_expansion":
                reader.arithmetic(child, quoted=True)
            else:
                reader.refuse(f"{kind.replace('_', ' ')} in a here-document")
                reader.parts.append(WordPart("dynamic", reader.text(child), True))
            reader.line_start = False
            position = child.end_byte
        tail = source[position:end].decode("utf-8", "surrogateescape")
        reader.heredoc_text(tail, unquoted=True, strip_tabs=strip_tabs)
    return Word(
        source[start:end].decode("utf-8", "surrogateescape"),
        tuple(reader.parts),
        reader.unsupported,
        bool(reader.substitutions),
    )


def literal_word(text: str) -> Word:
    """A word made of ``text`` exactly (what ``bash -c``'s script or a wrapper hands on)."""
    return Word(text, (WordPart("literal", text, True),) if text else ())


def append_literal(parts: list[WordPart], text: str, quoted: bool) -> None:
    """Add literal text, merged into the last part when that is literal text quoted alike."""
    if not text:
        return
    if parts and parts[-1].kind == "literal" and parts[-1].quoted == quoted:
        parts[-1] = WordPart("literal", parts[-1].text + text, quoted)
    else:
        parts.append(WordPart("literal", text, quoted))
