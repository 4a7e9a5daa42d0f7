# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The tokenizer of :mod:`engine.sparql.syntax.tokenizer` for the texts
clients send most, compiled.

Why compiled: every request names its query's shape by its tokens
(:mod:`engine.sparql.syntax.shapes`), and the regex tokenizer spends about
a microsecond a token in Python (the match, its group lookups, the tuple):
the largest single piece of a small query's time on the server's quick
lane. Here one loop over the bytes makes the same token tuples.

Only texts of printable ASCII and whitespace without a backslash or a
long (triple-quoted) string are read here; anything else, and any text the
regex would refuse or read in a way this loop does not follow, gives None
and is left to the regex tokenizer, which stays the definition (the tests
compare both on generated texts and on the W3C suites' queries). The
decisions below follow the regex's alternatives in its order: IRI, strings,
variable, blank node, prefixed name, double, decimal, integer, language
tag, word, punctuation.
"""

cdef inline bint _letter(unsigned char c) noexcept nogil:
    return (c >= 65 and c <= 90) or (c >= 97 and c <= 122)


cdef inline bint _digit(unsigned char c) noexcept nogil:
    return c >= 48 and c <= 57


cdef inline bint _hex(unsigned char c) noexcept nogil:
    return _digit(c) or (c >= 65 and c <= 70) or (c >= 97 and c <= 102)


cdef inline bint _name(unsigned char c) noexcept nogil:
    """A PN_CHARS character (ASCII part): letter, digit, ``_`` or ``-``."""
    return _letter(c) or _digit(c) or c == 95 or c == 45


cdef inline bint _iri_char(unsigned char c) noexcept nogil:
    """A character an IRI reference may hold raw (ASCII part)."""
    return c > 32 and c != 60 and c != 62 and c != 34 and c != 123 and c != 125 and c != 124 \
        and c != 94 and c != 96 and c != 92


cdef inline Py_ssize_t _digits(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and _digit(s[i]):
        i += 1
    return i


cdef inline Py_ssize_t _exponent(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The end of ``[eE][+-]?[0-9]+`` at ``i``, or -1."""
    if i >= n or (s[i] != 101 and s[i] != 69):
        return -1
    i += 1
    if i < n and (s[i] == 43 or s[i] == 45):
        i += 1
    cdef Py_ssize_t end = _digits(s, i, n)
    return end if end > i else -1


cdef inline Py_ssize_t _local_part(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The end of a prefixed name's local part at ``i`` (``i`` when empty):
    name characters, ``:`` and ``%hh``, also ``.`` but not last, and not
    ``-`` or ``.`` first."""
    cdef Py_ssize_t j = i, last = i
    cdef unsigned char c
    while j < n:
        c = s[j]
        if c == 37:  # %hh
            if j + 2 < n and _hex(s[j + 1]) and _hex(s[j + 2]):
                j += 3
                last = j
                continue
            break
        if j == i and (c == 45 or c == 46):
            break
        if _name(c) or c == 58:
            j += 1
            last = j
        elif c == 46:
            j += 1
        else:
            break
    return last


cdef inline int _punct(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The length of the punctuation token at ``i`` (0: none), longest
    symbols first as the regex lists them."""
    cdef unsigned char c = s[i]
    cdef unsigned char d = s[i + 1] if i + 1 < n else 0
    cdef unsigned char e = s[i + 2] if i + 2 < n else 0
    if c == 60:  # <
        if d == 60:
            return 3 if e == 40 else 2
        return 2 if d == 61 else 1
    if c == 41:  # )
        return 3 if d == 62 and e == 62 else 1
    if c == 62:  # >
        return 2 if d == 62 or d == 61 else 1
    if c == 123:  # {
        return 2 if d == 124 else 1
    if c == 124:  # |
        return 2 if d == 125 or d == 124 else 1
    if c == 94:  # ^
        return 2 if d == 94 else 1
    if c == 38:  # &
        return 2 if d == 38 else 0
    if c == 33:  # !
        return 2 if d == 61 else 1
    if c in b"}(][;,.=+-*/?~":
        return 1
    return 0


def ascii_tokens(str text):
    """The token list of :func:`engine.sparql.syntax.tokenizer.tokenize`, or
    None when this loop leaves ``text`` to the regex (see the module docstring)."""
    if not text.isascii() or "\\" in text or "'''" in text or '"""' in text:
        return None
    cdef bytes raw = text.encode("ascii")
    cdef const unsigned char* s = raw
    cdef Py_ssize_t n = len(raw)
    cdef Py_ssize_t i = 0, start, j, k, end
    cdef unsigned char c, q
    cdef int width
    tokens = []
    append = tokens.append
    while True:
        # whitespace and comments before the token
        while i < n:
            c = s[i]
            if c == 32 or c == 9 or c == 13 or c == 10:
                i += 1
            elif c == 35:  # '#' to the end of the line
                while i < n and s[i] != 13 and s[i] != 10:
                    i += 1
            else:
                break
        if i >= n:
            break
        start = i
        c = s[i]
        if c == 60:  # '<': an IRI if its characters run to a '>', else punctuation
            j = i + 1
            while j < n and _iri_char(s[j]):
                j += 1
            if j < n and s[j] == 62:
                append(("iri", text[i + 1:j], start, j + 1))
                i = j + 1
                continue
        elif c == 39 or c == 34:  # a short string (long ones were left to the regex)
            q = c
            j = i + 1
            while j < n and s[j] != q and s[j] != 13 and s[j] != 10:
                j += 1
            if j >= n or s[j] != q:
                return None  # unterminated: the regex names the error
            append(("str", text[i + 1:j], start, j + 1))
            i = j + 1
            continue
        elif c == 63 or c == 36:  # '?' or '$'
            j = i + 1
            while j < n and (_letter(s[j]) or _digit(s[j]) or s[j] == 95):
                j += 1
            if j > i + 1:
                append(("var", text[i + 1:j], start, j))
                i = j
                continue
            if c == 36:
                return None
        elif c == 95:  # '_'
            if i + 1 < n and s[i + 1] == 58:  # '_:' a blank node
                j = i + 2
                if j >= n or not (_name(s[j]) and s[j] != 45):
                    return None
                k = j + 1
                end = k
                while k < n and (_name(s[k]) or s[k] == 46):
                    k += 1
                    if s[k - 1] != 46:
                        end = k
                append(("bnode", text[j:end], start, end))
                i = end
                continue
        elif c == 64:  # '@' a language tag
            j = i + 1
            while j < n and _letter(s[j]):
                j += 1
            if j == i + 1:
                return None
            while j + 1 < n and s[j] == 45 and (_letter(s[j + 1]) or _digit(s[j + 1])):
                j += 1
                while j < n and (_letter(s[j]) or _digit(s[j])):
                    j += 1
            if j + 2 < n and s[j] == 45 and s[j + 1] == 45 and _letter(s[j + 2]):
                j += 2
                while j < n and _letter(s[j]):
                    j += 1
            append(("lang", text[i + 1:j], start, j))
            i = j
            continue
        if c == 58 or _letter(c):  # a prefixed name, when a ':' ends the run of name characters
            j = i
            while j < n and (_name(s[j]) or s[j] == 46):
                j += 1
            if j < n and s[j] == 58 and (j == i or s[j - 1] != 46):
                end = _local_part(s, j + 1, n)
                append(("pname", (text[i:j], text[j + 1:end]), start, end))
                i = end
                continue
        if _letter(c) or c == 95:  # a word: a keyword, or 'a'
            j = i + 1
            while j < n and (_letter(s[j]) or _digit(s[j]) or s[j] == 95):
                j += 1
            value = text[i:j]
            append(("a" if value == "a" else value.upper(), value, start, j))
            i = j
            continue
        if _digit(c) or c == 46:  # numbers, in the regex's order: double, decimal, integer
            j = _digits(s, i, n)
            if j > i and j < n and s[j] == 46:  # [0-9]+ '.' [0-9]* exponent
                end = _exponent(s, _digits(s, j + 1, n), n)
                if end > 0:
                    append(("dbl", text[i:end], start, end))
                    i = end
                    continue
            k = i + 1 if c == 46 else i  # '.'? [0-9]+ exponent
            j = _digits(s, k, n)
            if j > k:
                end = _exponent(s, j, n)
                if end > 0:
                    append(("dbl", text[i:end], start, end))
                    i = end
                    continue
            j = _digits(s, i, n)  # [0-9]* '.' [0-9]+
            if j < n and s[j] == 46:
                end = _digits(s, j + 1, n)
                if end > j + 1:
                    append(("dec", text[i:end], start, end))
                    i = end
                    continue
            if c != 46:  # [0-9]+
                end = _digits(s, i, n)
                append(("int", text[i:end], start, end))
                i = end
                continue
        width = _punct(s, i, n)
        if width == 0:
            return None  # a character the regex calls unexpected
        value = text[i:i + width]
        append((value, value, start, i + width))
        i += width
    append(("eof", None, n, n))
    append(("eof", None, n, n))
    return tokens
