r"""ECMA-262 regular expressions, as JSON Schema's ``pattern`` means them (S16).

:func:`compile_ecma_pattern` is the one place a schema pattern is compiled: the subset check and
the validator both use it, so a pattern is judged alike by both. It translates the pattern into
a Python one with ECMA's meaning (the ``u`` flag: one code point per character), refusing what it
does not model rather than reading it in Python's dialect, whose ``$``, ``.``, ``\d``, ``\w``
and ``\s`` accept more.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from robota.core.schema._excerpt import EXCERPT_CHARS, excerpt

__all__ = ["compile_ecma_pattern"]

_MAX_GROUP_DEPTH: Final = 64  # as deep as a schema may nest

_NOT_A_LINE_TERMINATOR: Final = "[^\\n\\r\\u2028\\u2029]"
_WHITESPACE: Final = (
    "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
r"""ECMA's ``\s`` as class text (§22.2.2.9): WhiteSpace and LineTerminator, Zs of Unicode 15."""
_ANY_CHARACTER: Final = "[\\x00-\\U0010ffff]"
_NO_CHARACTER: Final = "[^\\x00-\\U0010ffff]"
_CONTROL_ESCAPES: Final = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_DIGITS: Final = frozenset("0123456789")  # ECMA's DecimalDigit: ASCII only (not str.isdecimal)
_BRACED: Final = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_MAX_REPEAT: Final = 1_000_000_000


class _PatternFault(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _clip(text: str) -> str:
    """A piece of the pattern, as a message quotes it: cut short past a few dozen characters."""
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def _invalid(what: str) -> _PatternFault:
    return _PatternFault(f"is not a valid expression: {what}")


def _unsupported(construct: str, why: str = "") -> _PatternFault:
    return _PatternFault(f"uses {construct}, which is not supported (S16)" + why)


@lru_cache(maxsize=256)
def compile_ecma_pattern(source: str) -> re.Pattern[str] | str:
    r"""``source`` (an ECMA-262 pattern) compiled with ECMA semantics, or why it cannot be.

    The one place a pattern is compiled (S16): the validator's schema check and its traversal
    both come here, so what is refused and what is judged can never differ. The result is
    remembered per pattern; a reason reads after the pattern: ``"is not a valid expression: …"``
    or ``"uses …, which is not supported (S16)"``.

    Read as with the ``u`` flag JSON Schema asks for (one code point per character, as S16
    counts string length) and no other flag:

    * ``$`` is the end of input and ``^`` its start (no ``m`` flag); ``.`` is any character but
      a line terminator (LF, CR, U+2028, U+2029).
    * ``\d``, ``\w``, ``\b`` and their negations are ASCII, as in ECMA (compiled ``re.ASCII``).
      ``\s`` is exactly ECMA's set, written out — Python's ASCII ``\s`` would make ``\S``
      looser than ECMA's, and its Unicode ``\s`` is looser itself (U+001C–U+001F, U+0085).
    * ``[]`` matches nothing, ``[^]`` anything; ``[ & ~ -`` in a class are literal where ECMA
      reads them so. Escapes keep their ECMA meaning (``\cJ``, ``\0``, ``\u{1F600}``; a
      ``\uD83D\uDE00`` pair is one character; ``\b`` in a class is backspace). An escaped
      punctuation character (``\-``, ``\@``) and a brace that starts no quantifier are that
      character, as Annex B reads them (the ``u`` flag would refuse such a pattern outright;
      the rest of it is still read with ``u``).
    * Refused, naming the construct: ECMA syntax errors (``a**``, ``[z-a]``, ``(?=a)*``, a class
      escape bounding a range …) and what is not carried — backreferences, Unicode property
      escapes (``\p{Lu}``), letters escaped with no ECMA meaning (``\A``, ``\Z``, ``\a``), octal
      escapes, groups other than ``(?:`` ``(?=`` ``(?!`` ``(?<=`` ``(?<!`` ``(?<name>`` (no
      ``(?P<n>``, ``(?i)``, ``(?>``), and a lookbehind Python cannot run (of varying length).
    """
    try:
        translated = _Translation(source).run()
    except _PatternFault as fault:
        return fault.reason
    try:
        return re.compile(translated, re.ASCII)  # ASCII: \d \w \b as ECMA has them
    except re.error as exc:  # the translation is valid ECMA; Python cannot run every lookbehind
        return f"uses what Python's engine cannot run ({exc.msg}), which is not supported (S16)"


class _Translation:
    """An ECMA-262 pattern read left to right into Python ``re`` text (no recursion)."""

    __slots__ = ("at", "groups", "names", "out", "quantifiable", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.at = 0
        self.out: list[str] = []
        self.groups: list[bool] = []  # per open group: can the group take a quantifier
        self.names: set[str] = set()
        self.quantifiable = False

    def run(self) -> str:
        source = self.source
        while self.at < len(source):
            char = source[self.at]
            if char == "\\":
                self._escape()
            elif char == "[":
                self._class()
            elif char == "(":
                self._open()
            elif char == ")":
                self._close()
            elif char in "*+?":
                self._quantifier(char, 1)
            elif char == "{" and (braced := _BRACED.match(source, self.at)) is not None:
                self._quantifier(self._braced(braced), braced.end() - self.at)
            elif char == "|":
                self._emit("|", quantifiable=False)
            elif char == "^":
                self._emit("\\A", quantifiable=False)  # no m flag: the start of input only
            elif char == "$":
                self._emit("\\Z", quantifiable=False)  # the end of input, not before a "\n"
            elif char == ".":
                self._emit(_NOT_A_LINE_TERMINATOR)
            else:  # a literal; a lone { } or ] too, as Annex B reads it
                self._emit(re.escape(char))
        if self.groups:
            raise _invalid("missing ')'")
        return "".join(self.out)

    def _emit(self, text: str, *, quantifiable: bool = True, width: int = 1) -> None:
        self.out.append(text)
        self.quantifiable = quantifiable
        self.at += width

    def _quantifier(self, text: str, width: int) -> None:
        if not self.quantifiable:
            shown = self.source[self.at : self.at + width]
            raise _invalid(f"{shown!r} at offset {self.at} has nothing to repeat")
        if self.source.startswith("?", self.at + width):
            text += "?"
            width += 1
        self._emit(text, quantifiable=False, width=width)

    def _braced(self, braced: re.Match[str]) -> str:
        low_text, comma, high_text = braced.group(1), braced.group(2), braced.group(3)
        if len(low_text) > 10 or (high_text is not None and len(high_text) > 10):
            raise _unsupported(f"a repetition count above {_MAX_REPEAT}")
        low = int(low_text)
        high = int(high_text) if high_text else None
        if max(low, high or 0) > _MAX_REPEAT:
            raise _unsupported(f"a repetition count above {_MAX_REPEAT}")
        if high is not None and high < low:
            raise _invalid(f"numbers out of order in {braced.group(0)}")
        if comma is None:
            return f"{{{low}}}"
        return f"{{{low},}}" if high is None else f"{{{low},{high}}}"

    def _open(self) -> None:
        source, at = self.source, self.at
        if len(self.groups) >= _MAX_GROUP_DEPTH:
            raise _unsupported(f"groups nested more than {_MAX_GROUP_DEPTH} deep")
        if not source.startswith("(?", at):
            self.groups.append(True)
            self._emit("(", quantifiable=False)
            return
        for opener, quantifiable in (
            ("(?:", True),
            ("(?=", False),  # the u flag does not let a lookaround take a quantifier
            ("(?!", False),
            ("(?<=", False),
            ("(?<!", False),
        ):
            if source.startswith(opener, at):
                self.groups.append(quantifiable)
                self._emit(opener, quantifiable=False, width=len(opener))
                return
        if not source.startswith("(?<", at):
            raise _unsupported(f"the group syntax {source[at : at + 3]}")
        end = source.find(">", at + 3)
        name = source[at + 3 : end] if end != -1 else source[at + 3 :]
        if end == -1 or not name.replace("$", "_").isidentifier():
            raise _invalid(f"{excerpt(name)} is not a group name")
        if name in self.names:
            raise _invalid(f"the group name {excerpt(name)} is used twice")
        self.names.add(name)
        self.groups.append(True)
        self._emit("(", quantifiable=False, width=end + 1 - at)  # unnamed: no backreferences

    def _close(self) -> None:
        if not self.groups:
            raise _invalid(f"unmatched ')' at offset {self.at}")
        self._emit(")", quantifiable=self.groups.pop())

    def _escape(self) -> None:
        kind, text, end = self._read_escape(self.at, in_class=False)
        width = end - self.at
        if kind == "char":
            self._emit(re.escape(text), width=width)
        elif kind == "assertion":
            self._emit(text, quantifiable=False, width=width)
        elif kind == "not space":
            self._emit(f"[^{_WHITESPACE}]", width=width)
        else:
            self._emit(f"[{_WHITESPACE}]" if text == _WHITESPACE else text, width=width)

    def _class(self) -> None:
        source = self.source
        at = self.at + 1
        negated = source.startswith("^", at)
        if negated:
            at += 1
        parts: list[str] = []
        not_space = False
        while True:
            if at >= len(source):
                raise _invalid("missing ']'")
            if source[at] == "]":
                break
            first = at
            kind, text, at = self._class_atom(at)
            if source.startswith("-", at) and at + 1 < len(source) and source[at + 1] != "]":
                high_kind, high, after = self._class_atom(at + 1)
                shown = excerpt(source[first:after])
                if kind != "char" or high_kind != "char":
                    raise _invalid(f"a character class escape cannot bound a range ({shown})")
                if ord(text) > ord(high):
                    raise _invalid(f"range out of order: {shown}")
                parts.append(f"{re.escape(text)}-{re.escape(high)}")
                at = after
            elif kind == "char":
                parts.append(re.escape(text))  # escapes [ & ~ - | so Python reads no set syntax
            elif kind == "not space":
                not_space = True
            else:
                parts.append(text)
        text = _class_text("".join(parts), negated=negated, not_space=not_space)
        self._emit(text, width=at + 1 - self.at)

    def _class_atom(self, at: int) -> tuple[str, str, int]:
        if self.source[at] == "\\":
            return self._read_escape(at, in_class=True)
        return "char", self.source[at], at + 1

    def _read_escape(self, at: int, *, in_class: bool) -> tuple[str, str, int]:
        """The escape at ``at``: (kind, text, end); kind is char, set, not space or assertion."""
        source = self.source
        if at + 1 >= len(source):
            raise _invalid("the pattern ends in a lone '\\'")
        char = source[at + 1]
        end = at + 2
        if char in "dDwW":
            return "set", "\\" + char, end
        if char == "s":
            return "set", _WHITESPACE, end
        if char == "S":
            return "not space", "", end
        if char == "b" and in_class:
            return "char", "\b", end  # backspace inside a class
        if char in "bB":
            if in_class:
                raise _invalid("\\B inside a character class")
            return "assertion", "\\" + char, end
        if char in _CONTROL_ESCAPES:
            return "char", _CONTROL_ESCAPES[char], end
        if char == "c":
            letter = source[end : end + 1]
            if not (letter.isascii() and letter.isalpha()):
                raise _invalid("\\c must be followed by a letter")
            return "char", chr(ord(letter) % 32), end + 1
        if char == "0":
            if source[end : end + 1] in _DIGITS:
                raise _unsupported(f"the octal escape {source[at : end + 1]}")
            return "char", "\0", end
        if char in "123456789":
            last = end
            while source[last : last + 1] in _DIGITS:
                last += 1
            raise _unsupported(f"the backreference {_clip(source[at:last])}")
        if char == "k":
            raise _unsupported("a backreference (\\k<name>)")
        if char in "pP":
            close = source.find("}", end)
            braced = source.startswith("{", end) and close != -1
            shown = source[at : close + 1] if braced else source[at:end]
            raise _unsupported(f"{_clip(shown)} (a Unicode property escape)")
        if char == "x":
            digits = source[end : end + 2]
            if len(digits) != 2 or not set(digits) <= _HEX:
                raise _invalid("\\x must be followed by two hex digits")
            return "char", chr(int(digits, 16)), end + 2
        if char == "u":
            return self._unicode_escape(at)
        if char.isascii() and char.isalnum():
            raise _unsupported(
                f"the escape \\{char}", ": ECMA-262 defines no such escape, and Python's differs"
            )
        return "char", char, end  # an identity escape: \/ \. \- \@ …

    def _unicode_escape(self, at: int) -> tuple[str, str, int]:
        source = self.source
        start = at + 2
        if source.startswith("{", start):
            close = source.find("}", start)
            digits = source[start + 1 : close] if close != -1 else ""
            if not digits or not set(digits) <= _HEX:
                raise _invalid("\\u{ must hold hex digits and a closing }")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise _invalid(f"{_clip(source[at : close + 1])} is beyond the last code point")
            return "char", chr(code), close + 1
        digits = source[start : start + 4]
        if len(digits) != 4 or not set(digits) <= _HEX:
            raise _invalid("\\u must be followed by four hex digits or {code point}")
        code = int(digits, 16)
        end = start + 4
        low = source[end + 2 : end + 6]
        if (
            0xD800 <= code <= 0xDBFF
            and source.startswith("\\u", end)
            and len(low) == 4
            and set(low) <= _HEX
            and 0xDC00 <= int(low, 16) <= 0xDFFF
        ):  # with the u flag a surrogate pair is one code point
            code = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)
            end += 6
        return "char", chr(code), end


def _class_text(body: str, *, negated: bool, not_space: bool) -> str:
    r"""A Python rendering of a class: ``body`` members, maybe negated, maybe with ``\S``.

    Python has no class member for ECMA's ``\S`` (its own is another set), so a class holding
    one is written as an alternative: [x\S] is [x] or not-space; [^x\S] is space but not x.
    """
    if not_space:
        if negated:
            return f"(?:(?![{body}])[{_WHITESPACE}])" if body else f"[{_WHITESPACE}]"
        return f"(?:[{body}]|[^{_WHITESPACE}])" if body else f"[^{_WHITESPACE}]"
    if not body:
        return _ANY_CHARACTER if negated else _NO_CHARACTER
    return f"[{'^' if negated else ''}{body}]"
