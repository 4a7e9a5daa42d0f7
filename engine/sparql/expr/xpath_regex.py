"""XPath regular expressions (REGEX, REPLACE) on top of Python's ``re``.

SPARQL uses the XPath dialect, which differs from Python's in a few places
that matter in practice: ``.`` does not match ``\\r``, ``$`` without the
``m`` flag only matches at the very end, ``x`` strips whitespace but has no
comments, ``q`` quotes the whole pattern, ``\\p{..}`` names Unicode categories
and the replacement string uses ``$1``. Patterns are translated once and the
compiled result is cached, because the same pattern is applied to every row.

Matching uses the ``regex`` module rather than ``re`` because a backtracking
match can take exponential time (``^(a|aa)+$`` over forty letters), and only
``regex`` can stop a match part way: a match first runs for a short slice
(:data:`FIRST_SLICE`) with the GIL released. Nearly every match ends within
it. One that does not goes on in a helper thread, in slices that double (so
it costs at most twice its own time), while the evaluating thread asks the
query's checkpoint every :data:`POLL` seconds: past the time limit, when the
client left or when the server stops, the evaluation raises at once and
leaves the helper behind, which ends after its current slice. A daemon
thread, it never keeps the process from exiting.
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Generic, TypeVar

import regex

from engine.sparql.expr.context import ExprError
from engine.store import checkpoint

T = TypeVar("T")

#: seconds a match runs in the evaluating thread before it moves to a helper
FIRST_SLICE = 0.05
#: seconds between two questions to the checkpoint while a helper matches
POLL = 0.05

#: the digits of a ``$N`` group reference (str.isdigit() also takes superscripts,
#: which int() refuses, and other scripts' digits, which XPath does not)
_DIGITS = frozenset("0123456789")

_FLAG_BITS = {"s": regex.DOTALL, "m": regex.MULTILINE, "i": regex.IGNORECASE, "x": 0, "q": 0}

_CATEGORIES = frozenset(
    "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po "
    "Z Zs Zl Zp S Sm Sc Sk So C Cc Cf Co Cn".split()
)

# XML 1.0 NameStartChar / NameChar, for the \i and \c escapes
_NAME_START = (
    ":A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_NAME_CHAR = _NAME_START + r"\-.0-9\u00b7\u0300-\u036f\u203f-\u2040"
_NAME_ESCAPES = {"i": _NAME_START, "c": _NAME_CHAR}


@lru_cache(maxsize=64)
def _category_members(name: str) -> str:
    """The body of a character class matching Unicode general category ``name``."""
    if name not in _CATEGORIES:
        raise ExprError(f"unsupported regex property \\p{{{name}}}")
    parts: list[str] = []
    start = previous = -2
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)).startswith(name):
            if code != previous + 1:
                if start >= 0:
                    parts.append(_range(start, previous))
                start = code
            previous = code
    if start >= 0:
        parts.append(_range(start, previous))
    return "".join(parts)


def _range(first: int, last: int) -> str:
    low = re.escape(chr(first))
    return low if first == last else f"{low}-{re.escape(chr(last))}"


def _property_escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate ``\\p{X}``/``\\P{X}`` starting at ``i``; returns (text, next index)."""
    negated = pattern[i + 1] == "P"
    end = pattern.find("}", i + 3)
    if pattern[i + 2 : i + 3] != "{" or end < 0:
        raise ExprError("malformed \\p escape in regex")
    members = _category_members(pattern[i + 3 : end])
    if in_class:
        if negated:
            raise ExprError("\\P{..} inside a character class is not supported")
        return members, end + 1
    return ("[^" if negated else "[") + members + "]", end + 1


def _translate(pattern: str, dotall: bool, multiline: bool, extended: bool) -> str:
    out: list[str] = []
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if extended and not in_class and c in " \t\n\r":
            i += 1
            continue
        if c == "\\":
            if i + 1 >= n:
                raise ExprError("regex ends with a backslash")
            nxt = pattern[i + 1]
            if nxt in "pP":
                text, i = _property_escape(pattern, i, in_class)
                out.append(text)
                continue
            if nxt.lower() in _NAME_ESCAPES:
                body = _NAME_ESCAPES[nxt.lower()]
                if in_class and nxt.isupper():
                    raise ExprError(f"\\{nxt} inside a character class is not supported")
                out.append(body if in_class else ("[^" if nxt.isupper() else "[") + body + "]")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if in_class:
            if c == "-" and pattern[i + 1 : i + 2] == "[":
                raise ExprError("character class subtraction is not supported")
            if c == "]":
                in_class = False
            out.append("\\[" if c == "[" else c)
        elif c == "[":
            in_class = True
            out.append(c)
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
        elif c == "." and not dotall:
            out.append("[^\\n\\r]")
        elif c == "$" and not multiline:
            out.append("\\Z")
        elif c == "(" and pattern[i + 1 : i + 2] == "?" and pattern[i + 2 : i + 3] != ":":
            raise ExprError("unsupported group syntax in regex")
        else:
            out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_regex(pattern: str, flags: str = "") -> regex.Pattern:
    """Compile an XPath pattern with XPath flags; ExprError when either is invalid."""
    bits = 0
    for flag in flags:
        if flag not in _FLAG_BITS:
            raise ExprError(f"invalid regex flag {flag!r}")
        bits |= _FLAG_BITS[flag]
    if "q" in flags:
        translated = re.escape(pattern)
        bits &= regex.IGNORECASE
    else:
        translated = _translate(pattern, "s" in flags, "m" in flags, "x" in flags)
    try:
        return regex.compile(translated, bits | regex.VERSION0)
    except (regex.error, OverflowError) as exc:
        raise ExprError(f"invalid regex {pattern!r}: {exc}") from exc


@lru_cache(maxsize=256)
def _replacement_parts(replacement: str, groups: int) -> tuple[str | int, ...]:
    """Split an XPath replacement into literal text and group numbers.

    ``$N`` takes as many digits as still name an existing group (so ``$12``
    with one group is group 1 followed by "2"); ``\\$`` and ``\\\\`` are the
    only escapes.
    """
    parts: list[str | int] = []
    text: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == "\\":
            if i + 1 >= n or replacement[i + 1] not in "\\$":
                raise ExprError("invalid escape in replacement string")
            text.append(replacement[i + 1])
            i += 2
        elif c == "$":
            if i + 1 >= n or replacement[i + 1] not in _DIGITS:
                raise ExprError("'$' in replacement string must be followed by a digit")
            number = int(replacement[i + 1])
            i += 2
            while i < n and replacement[i] in _DIGITS and number * 10 + int(replacement[i]) <= groups:
                number = number * 10 + int(replacement[i])
                i += 1
            if text:
                parts.append("".join(text))
                text = []
            parts.append(number)
        else:
            text.append(c)
            i += 1
    if text:
        parts.append("".join(text))
    return tuple(parts)


def _bounded(match: Callable[[float], T]) -> T:
    """``match(slice)``: here for :data:`FIRST_SLICE`, then in a helper
    thread while this one asks the query's checkpoint (see the module docstring)."""
    try:
        return match(FIRST_SLICE)
    except TimeoutError:
        checkpoint()
    return _HelperMatch(match).wait()


class _HelperMatch(Generic[T]):
    """One long match, run by a daemon thread in doubling slices until it
    finishes or is abandoned (checked between slices)."""

    def __init__(self, match: Callable[[float], T]) -> None:
        self._match = match
        self._done = threading.Event()
        self._abandoned = threading.Event()
        self._result: T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="rivulet-regex", daemon=True).start()

    def _run(self) -> None:
        seconds = FIRST_SLICE * 2
        try:
            while not self._abandoned.is_set():
                try:
                    self._result = self._match(seconds)
                    return
                except TimeoutError:
                    seconds *= 2
        except BaseException as exc:  # handed to the evaluating thread
            self._error = exc
        finally:
            self._done.set()

    def wait(self) -> T:
        """The match's result (or its error), asking the checkpoint every
        :data:`POLL` seconds; whatever the checkpoint raises abandons the match."""
        try:
            while not self._done.wait(POLL):
                checkpoint()
        except BaseException:
            self._abandoned.set()
            raise
        if self._error is not None:
            raise self._error
        return self._result


def xpath_matches(text: str, pattern: regex.Pattern) -> bool:
    """fn:matches: does ``pattern`` match anywhere in ``text``."""
    search = pattern.search
    return _bounded(lambda seconds: search(text, None, None, True, False, seconds)) is not None


def xpath_replace(text: str, pattern: regex.Pattern, replacement: str) -> str:
    """fn:replace: every non-overlapping match replaced, unmatched groups as ""."""
    if pattern.search("") is not None:
        raise ExprError("REPLACE pattern matches the empty string")
    parts = _replacement_parts(replacement, pattern.groups)

    def substitute(match: regex.Match) -> str:
        pieces = []
        for part in parts:
            if isinstance(part, str):
                pieces.append(part)
            elif part <= pattern.groups:
                pieces.append(match.group(part) or "")
        return "".join(pieces)

    return _bounded(lambda seconds: pattern.sub(substitute, text, concurrent=True, timeout=seconds))
