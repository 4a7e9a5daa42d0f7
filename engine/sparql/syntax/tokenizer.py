"""SPARQL 1.1 tokenizer: one compiled regex, one pass, a list of tuples.

Parsing is on the per-request hot path, so the whole lexical grammar (SPARQL
1.1 section 19.8) is a single alternation of named groups run with
``finditer``; each match also swallows the whitespace and comments before the
token. Tokens are plain tuples ``(kind, value, start, end)``:

- keywords: ``kind`` is the upper-cased word (keywords are case-insensitive),
  except the case-sensitive ``a`` whose kind is ``"a"``;
- punctuation: ``kind`` is the symbol itself (``"{"``, ``"^^"``, ``"&&"``...;
  SPARQL 1.2's ``<<(`` ``)>>`` ``<<`` ``>>`` ``~`` ``{|`` ``|}`` too);
- everything else has a lower-case kind: ``iri`` (value: the unresolved
  reference), ``pname`` (value: ``(prefix, local)`` with escapes removed),
  ``bnode`` (label), ``var`` (name), ``lang`` (tag), ``int``/``dec``/``dbl``
  (lexical form, unsigned: signs are separate tokens), ``str`` (decoded
  text), and a final ``eof``.

Codepoint escapes (``\\uXXXX``, ``\\UXXXXXXXX``) are read where SPARQL 1.2
allows them, inside IRIs and strings, in the same pass as a string's other
escapes (so ``"\\u005Cn"`` is a backslash and an ``n``); anywhere else a
backslash is an unexpected character. (SPARQL 1.1 replaced them in the
whole text first; the 1.1 suite's tests hold under either reading.)
"""

from __future__ import annotations

import re

from engine.sparql.syntax.errors import error_at
from engine.sparql.syntax.tokenizer_kernel import ascii_tokens

Token = tuple[str, object, int, int]

_BASE = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_CHARS_U = _BASE + "_"
_CHARS = _CHARS_U + "\\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PREFIX = f"[{_BASE}](?:[{_CHARS}.]*[{_CHARS}])?"
_LOCAL = f"(?:[{_CHARS_U}:0-9]|{_PLX})(?:(?:[{_CHARS}.:]|{_PLX})*(?:[{_CHARS}:]|{_PLX}))?"
_VARNAME = f"[{_CHARS_U}0-9][{_CHARS_U}0-9\u00b7\u0300-\u036f\u203f-\u2040]*"
_EXP = r"[eE][+-]?[0-9]+"

_MASTER = re.compile(
    r"(?:[ \t\r\n]|#[^\r\n]*)*(?:"
    r"(?P<iri><(?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)"
    r"|(?P<long1>'''(?:(?:'|'')?(?:[^'\\]|\\[^\r\n]))*''')"
    r'|(?P<long2>"""(?:(?:"|"")?(?:[^"\\]|\\[^\r\n]))*""")'
    r"|(?P<str1>'(?:[^'\\\r\n]|\\[^\r\n])*')"
    r'|(?P<str2>"(?:[^"\\\r\n]|\\[^\r\n])*")'
    f"|(?P<var>[?$]{_VARNAME})"
    f"|(?P<bnode>_:[{_CHARS_U}0-9](?:[{_CHARS}.]*[{_CHARS}])?)"
    # the lookahead fails a keyword at once: a prefix runs up to a ':' (without it
    # the prefix's pattern backtracks through every shorter word first)
    f"|(?P<pname>(?=[{_CHARS}.]*+:)(?:{_PREFIX})?:(?:{_LOCAL})?)"
    f"|(?P<dbl>[0-9]+\\.[0-9]*{_EXP}|\\.?[0-9]+{_EXP})"
    r"|(?P<dec>[0-9]*\.[0-9]+)"
    r"|(?P<int>[0-9]+)"
    r"|(?P<lang>@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<punct><<\(|\)>>|<<|>>|\{\||\|\}|\^\^|\|\||&&|!=|<=|>=|[{}()\[\];,.=<>!+\-*/^|?~])"
    r"|(?P<eof>\Z)"
    r"|(?P<bad>[^ \t\r\n])"
    r")"
)

_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.S)
_NOT_IN_IRI = re.compile(r'[<>"{}|^`\\\x00-\x20]')
_UCHAR = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_LOCAL_ESCAPE = re.compile(r"\\(.)")


def _codepoint(text: str, start: int, escape: str, digits: str) -> str:
    code = int(digits, 16)
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        raise error_at(text, start, f"invalid code point escape {escape!r}")
    return chr(code)


def _decode_string(text: str, body: str, start: int, body_start: int) -> str:
    """Apply a string body's escapes (ECHAR and UCHAR, one pass); anything
    else is an error (a bad code point is reported where it is)."""
    if "\\" not in body:
        return body

    def replace(match: re.Match[str]) -> str:
        digits = match.group(1) or match.group(2)
        if digits:
            return _codepoint(text, body_start + match.start(), match.group(), digits)
        char = _ECHARS.get(match.group(3))
        if char is None:
            raise error_at(text, start, f"invalid escape sequence {match.group()!r} in string")
        return char

    return _ESCAPE.sub(replace, body)


def _decode_iri(text: str, body: str, start: int) -> str:
    """An IRI reference's UCHAR escapes decoded; an escape may not spell a
    character the IRI could not hold raw (a space, ``>``)."""
    if "\\" not in body:
        return body
    def replace(m: re.Match[str]) -> str:
        return _codepoint(text, start + 1 + m.start(), m.group(), m.group(1) or m.group(2))

    decoded = _UCHAR.sub(replace, body)
    if _NOT_IN_IRI.search(decoded):
        raise error_at(text, start, "an escape in this IRI spells a character IRIs exclude")
    return decoded


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens.

    The list always ends with two ``eof`` tokens so that the parser can peek
    one token ahead without bounds checks. Most texts are read by the
    compiled loop of :mod:`engine.sparql.syntax.tokenizer_kernel` (the same
    tokens); the regex below reads the rest and is the definition.
    """
    found = ascii_tokens(text)
    if found is not None:
        return found
    return regex_tokens(text)


def regex_tokens(text: str) -> list[Token]:
    """:func:`tokenize` by the regex alone."""
    tokens: list[Token] = []
    append = tokens.append
    for match in _MASTER.finditer(text):
        kind = match.lastgroup
        start, end = match.span(kind)
        if kind == "punct":
            value = match.group(kind)
            append((value, value, start, end))
        elif kind == "word":
            value = match.group(kind)
            append(("a" if value == "a" else value.upper(), value, start, end))
        elif kind == "var":
            append(("var", text[start + 1 : end], start, end))
        elif kind == "iri":
            append(("iri", _decode_iri(text, text[start + 1 : end - 1], start), start, end))
        elif kind == "pname":
            value = match.group(kind)
            colon = value.index(":")
            local = value[colon + 1 :]
            if "\\" in local:
                local = _LOCAL_ESCAPE.sub(r"\1", local)
            append(("pname", (value[:colon], local), start, end))
        elif kind in ("int", "dec", "dbl"):
            append((kind, match.group(kind), start, end))
        elif kind == "str1" or kind == "str2":
            append(("str", _decode_string(text, text[start + 1 : end - 1], start, start + 1), start, end))
        elif kind == "long1" or kind == "long2":
            append(("str", _decode_string(text, text[start + 3 : end - 3], start, start + 3), start, end))
        elif kind == "bnode":
            append(("bnode", text[start + 2 : end], start, end))
        elif kind == "lang":
            append(("lang", text[start + 1 : end], start, end))
        elif kind == "eof":
            break
        elif text[start] in "\"'":
            raise error_at(text, start, "unterminated string (or a line break in a short string)")
        else:
            raise error_at(text, start, f"unexpected character {text[start]!r}")
    end = len(text)
    tokens.append(("eof", None, end, end))
    tokens.append(("eof", None, end, end))
    return tokens
