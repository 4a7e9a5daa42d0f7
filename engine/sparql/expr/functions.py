"""The SPARQL builtin functions that take already-evaluated arguments.

Every function has the signature ``f(ctx, *args) -> Term`` and raises
ExprError on a type error; ``BUILTINS`` maps the upper-case keyword to
``(function, min_args, max_args)`` so the evaluator can check arity once.
The special forms that must see unevaluated arguments (BOUND, IF,
COALESCE) live in the evaluator. Date/time functions are in
:mod:`engine.sparql.expr.datetime_functions`.
"""

from __future__ import annotations

import hashlib
import math
import random
import uuid
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from urllib.parse import quote

from engine.rdf import (
    IRI,
    RDF_DIRLANGSTRING,
    RDF_LANGSTRING,
    XSD_DECIMAL,
    BNode,
    Literal,
    Term,
    TripleTerm,
    iri_problem,
    resolve_iri,
)
from engine.sparql.expr.context import EvalContext, ExprError
from engine.sparql.expr.operators import number_of
from engine.sparql.expr.xpath_regex import compile_regex, xpath_matches, xpath_replace
from engine.sparql.expr.xsd import (
    DECIMAL,
    DOUBLE,
    INTEGER,
    bool_literal,
    format_decimal_plain,
    integer_literal,
    number_literal,
    numeric,
)

EMPTY = Literal("")

# ------------------------------------------------------------ argument checks


def string_arg(term: Term) -> Literal:
    """A string literal argument: simple, xsd:string or language-tagged."""
    if term.__class__ is Literal and term.datatype is None:  # type: ignore[union-attr]
        return term  # type: ignore[return-value]
    raise ExprError(f"expected a string literal, got {term!r}")


def simple_arg(term: Term) -> str:
    """The text of a simple literal / xsd:string argument (no language tag)."""
    if term.__class__ is Literal and term.datatype is None and term.lang is None:  # type: ignore[union-attr]
        return term.lexical  # type: ignore[union-attr]
    raise ExprError(f"expected a simple literal, got {term!r}")


def _compatible(a: Term, b: Term) -> tuple[Literal, Literal]:
    """Check 17.4.3.1.2 argument compatibility: b has no tag or a's tag."""
    first, second = string_arg(a), string_arg(b)
    if second.lang is not None and (first.lang is None or first.lang.lower() != second.lang.lower()):
        raise ExprError("incompatible language tags")
    return first, second


def _like(source: Literal, text: str) -> Literal:
    """A result string carrying the language tag of ``source``."""
    return Literal(text, lang=source.lang)


# ------------------------------------------------------------- term functions


def _str(ctx: EvalContext, term: Term) -> Literal:
    if term.__class__ is IRI:
        return Literal(term.value)  # type: ignore[union-attr]
    if term.__class__ is Literal:
        return Literal(term.lexical)  # type: ignore[union-attr]
    raise ExprError(f"STR of {term!r}")


def _lang(ctx: EvalContext, term: Term) -> Literal:
    if term.__class__ is Literal:
        return Literal(term.language or "")  # type: ignore[union-attr]
    raise ExprError("LANG of a non-literal")


def _langdir(ctx: EvalContext, term: Term) -> Literal:
    if term.__class__ is Literal:
        return Literal(term.direction or "")  # type: ignore[union-attr]
    raise ExprError("LANGDIR of a non-literal")


def _has_lang(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is Literal and term.lang is not None)  # type: ignore[union-attr]


def _has_langdir(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is Literal and term.direction is not None)  # type: ignore[union-attr]


def _strlangdir(ctx: EvalContext, text: Term, lang: Term, direction: Term) -> Literal:
    tag, way = simple_arg(lang), simple_arg(direction)
    if not tag or way not in ("ltr", "rtl"):
        raise ExprError("STRLANGDIR needs a language tag and the direction ltr or rtl")
    return Literal(simple_arg(text), lang=f"{tag}--{way}")


# -------------------------------------------------- triple terms (SPARQL 1.2)


def _triple(ctx: EvalContext, subject: Term, predicate: Term, obj: Term) -> TripleTerm:
    if subject.__class__ is not IRI and subject.__class__ is not BNode:
        raise ExprError(f"TRIPLE: the subject {subject!r} is not an IRI or blank node")
    if predicate.__class__ is not IRI:
        raise ExprError(f"TRIPLE: the predicate {predicate!r} is not an IRI")
    return TripleTerm(subject, predicate, obj)


def _component(name: str) -> Callable[[EvalContext, Term], Term]:
    def component(ctx: EvalContext, term: Term) -> Term:
        if term.__class__ is not TripleTerm:
            raise ExprError(f"{name.upper()} of {term!r}, which is not a triple term")
        return getattr(term, name)

    return component


def _is_triple(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is TripleTerm)


def _langmatches(ctx: EvalContext, tag: Term, pattern: Term) -> Literal:
    """RFC 4647 basic filtering, case-insensitive; ``*`` matches any non-empty tag."""
    language = simple_arg(tag).lower()
    wanted = simple_arg(pattern).lower()
    if wanted == "*":
        return bool_literal(language != "")
    return bool_literal(language == wanted or language.startswith(wanted + "-"))


def _datatype(ctx: EvalContext, term: Term) -> IRI:
    if term.__class__ is not Literal:
        raise ExprError("DATATYPE of a non-literal")
    return IRI(term.datatype_iri)  # type: ignore[union-attr]


def _iri(ctx: EvalContext, term: Term) -> IRI:
    if term.__class__ is IRI:
        return term  # type: ignore[return-value]
    value = resolve_iri(simple_arg(term), ctx.base)
    # an IRI with a space, '>' or a quote would be stored as given and then
    # break (or inject statements into) every N-Triples and Turtle answer
    problem = iri_problem(value)
    if problem:
        raise ExprError(f"IRI() of a string that is not an IRI: {problem}")
    return IRI(value)


def _bnode(ctx: EvalContext, label: Term | None = None) -> BNode:
    if label is None:
        return ctx.fresh_bnode()
    return ctx.bnode_for(simple_arg(label))


def _same_term(ctx: EvalContext, a: Term, b: Term) -> Literal:
    return bool_literal(a == b)


def _is_iri(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is IRI)


def _is_blank(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is BNode)


def _is_literal(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is Literal)


def _is_numeric(ctx: EvalContext, term: Term) -> Literal:
    return bool_literal(term.__class__ is Literal and numeric(term) is not None)  # type: ignore[arg-type]


def _strlang(ctx: EvalContext, text: Term, lang: Term) -> Literal:
    tag = simple_arg(lang)
    if not tag:
        raise ExprError("STRLANG with an empty language tag")
    return Literal(simple_arg(text), lang=tag)


def _strdt(ctx: EvalContext, text: Term, datatype: Term) -> Literal:
    if datatype.__class__ is not IRI or datatype.value in (RDF_LANGSTRING, RDF_DIRLANGSTRING):  # type: ignore[union-attr]
        raise ExprError("STRDT needs a datatype IRI")
    return Literal(simple_arg(text), datatype.value)  # type: ignore[union-attr]


# ---------------------------------------------------------- numeric functions


def _abs(ctx: EvalContext, term: Term) -> Literal:
    rank, value = number_of(term)
    return number_literal(abs(value), rank)


def _rounding(
    decimal_mode: str, float_function: Callable[[float], float]
) -> Callable[[EvalContext, Term], Literal]:
    """CEIL/FLOOR/ROUND: integers unchanged, decimals written without a
    fractional part (the form the W3C results use), floats kept as floats."""

    def apply(ctx: EvalContext, term: Term) -> Literal:
        rank, value = number_of(term)
        if rank == INTEGER:
            return integer_literal(value)  # type: ignore[arg-type]
        if rank == DECIMAL:
            if decimal_mode == "round":
                rounded = (value + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR)  # type: ignore[operator]
            else:
                rounded = value.to_integral_value(rounding=decimal_mode)  # type: ignore[union-attr]
            return Literal(format_decimal_plain(rounded), XSD_DECIMAL)
        if math.isfinite(value):  # type: ignore[arg-type]
            value = math.copysign(float_function(value), value)  # type: ignore[arg-type]
        return number_literal(value, rank)

    return apply


def _xpath_round(value: float) -> float:
    """fn:round: halves go towards positive infinity."""
    return float(math.floor(value + 0.5))


def _rand(ctx: EvalContext) -> Literal:
    return number_literal(random.random(), DOUBLE)


# ----------------------------------------------------------- string functions


def _strlen(ctx: EvalContext, term: Term) -> Literal:
    return integer_literal(len(string_arg(term).lexical))


def _substr(ctx: EvalContext, source: Term, start: Term, length: Term | None = None) -> Literal:
    """fn:substring: 1-based, positions rounded, out-of-range parts dropped."""
    text = string_arg(source)
    first = _rounded_position(start)
    if length is None:
        last = math.inf
    else:
        last = first + _rounded_position(length)
    if first != first or last != last:
        return _like(text, "")
    begin = max(first, 1)
    if last <= begin:
        return _like(text, "")
    end = len(text.lexical) + 1 if last == math.inf else min(last, len(text.lexical) + 1)
    return _like(text, text.lexical[int(begin) - 1 : int(end) - 1])


def _rounded_position(term: Term) -> float:
    rank, value = number_of(term)
    if rank == INTEGER:
        return float(value)
    if rank == DECIMAL:
        return float((value + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))  # type: ignore[operator]
    return value if not math.isfinite(value) else _xpath_round(value)  # type: ignore[arg-type]


def _ucase(ctx: EvalContext, term: Term) -> Literal:
    text = string_arg(term)
    return _like(text, text.lexical.upper())


def _lcase(ctx: EvalContext, term: Term) -> Literal:
    text = string_arg(term)
    return _like(text, text.lexical.lower())


def _encode_for_uri(ctx: EvalContext, term: Term) -> Literal:
    return Literal(quote(string_arg(term).lexical, safe="~"))


def _concat(ctx: EvalContext, *parts: Term) -> Literal:
    """Keeps a language tag only when every part carries the same one."""
    texts = [string_arg(part) for part in parts]
    langs = {text.lang for text in texts}
    lang = langs.pop() if len(langs) == 1 else None
    return Literal("".join(text.lexical for text in texts), lang=lang)


def _contains(ctx: EvalContext, a: Term, b: Term) -> Literal:
    first, second = _compatible(a, b)
    return bool_literal(second.lexical in first.lexical)


def _strstarts(ctx: EvalContext, a: Term, b: Term) -> Literal:
    first, second = _compatible(a, b)
    return bool_literal(first.lexical.startswith(second.lexical))


def _strends(ctx: EvalContext, a: Term, b: Term) -> Literal:
    first, second = _compatible(a, b)
    return bool_literal(first.lexical.endswith(second.lexical))


def _strbefore(ctx: EvalContext, a: Term, b: Term) -> Literal:
    first, second = _compatible(a, b)
    index = first.lexical.find(second.lexical)
    if index < 0:
        return EMPTY
    return _like(first, first.lexical[:index])


def _strafter(ctx: EvalContext, a: Term, b: Term) -> Literal:
    first, second = _compatible(a, b)
    index = first.lexical.find(second.lexical)
    if index < 0:
        return EMPTY
    return _like(first, first.lexical[index + len(second.lexical) :])


def _regex(ctx: EvalContext, text: Term, pattern: Term, flags: Term | None = None) -> Literal:
    regex = compile_regex(simple_arg(pattern), simple_arg(flags) if flags is not None else "")
    return bool_literal(xpath_matches(string_arg(text).lexical, regex))


def _replace(
    ctx: EvalContext, text: Term, pattern: Term, replacement: Term, flags: Term | None = None
) -> Literal:
    source = string_arg(text)
    regex = compile_regex(simple_arg(pattern), simple_arg(flags) if flags is not None else "")
    return _like(source, xpath_replace(source.lexical, regex, simple_arg(replacement)))


# ------------------------------------------------------ hashes and identifiers


def _hasher(algorithm: str) -> Callable[[EvalContext, Term], Literal]:
    def digest(ctx: EvalContext, term: Term) -> Literal:
        return Literal(hashlib.new(algorithm, simple_arg(term).encode("utf-8")).hexdigest())

    return digest


def _uuid(ctx: EvalContext) -> IRI:
    return IRI(f"urn:uuid:{uuid.uuid4()}")


def _struuid(ctx: EvalContext) -> Literal:
    return Literal(str(uuid.uuid4()))


_UNLIMITED = 1 << 30

BUILTINS: dict[str, tuple[Callable[..., Term], int, int]] = {
    "STR": (_str, 1, 1),
    "LANG": (_lang, 1, 1),
    "LANGMATCHES": (_langmatches, 2, 2),
    "DATATYPE": (_datatype, 1, 1),
    "IRI": (_iri, 1, 1),
    "URI": (_iri, 1, 1),
    "BNODE": (_bnode, 0, 1),
    "SAMETERM": (_same_term, 2, 2),
    "ISIRI": (_is_iri, 1, 1),
    "ISURI": (_is_iri, 1, 1),
    "ISBLANK": (_is_blank, 1, 1),
    "ISLITERAL": (_is_literal, 1, 1),
    "ISNUMERIC": (_is_numeric, 1, 1),
    "STRLANG": (_strlang, 2, 2),
    "STRDT": (_strdt, 2, 2),
    "ABS": (_abs, 1, 1),
    "CEIL": (_rounding(ROUND_CEILING, math.ceil), 1, 1),
    "FLOOR": (_rounding(ROUND_FLOOR, math.floor), 1, 1),
    "ROUND": (_rounding("round", _xpath_round), 1, 1),
    "RAND": (_rand, 0, 0),
    "STRLEN": (_strlen, 1, 1),
    "SUBSTR": (_substr, 2, 3),
    "UCASE": (_ucase, 1, 1),
    "LCASE": (_lcase, 1, 1),
    "ENCODE_FOR_URI": (_encode_for_uri, 1, 1),
    "CONCAT": (_concat, 0, _UNLIMITED),
    "CONTAINS": (_contains, 2, 2),
    "STRSTARTS": (_strstarts, 2, 2),
    "STRENDS": (_strends, 2, 2),
    "STRBEFORE": (_strbefore, 2, 2),
    "STRAFTER": (_strafter, 2, 2),
    "REGEX": (_regex, 2, 3),
    "REPLACE": (_replace, 3, 4),
    "MD5": (_hasher("md5"), 1, 1),
    "SHA1": (_hasher("sha1"), 1, 1),
    "SHA256": (_hasher("sha256"), 1, 1),
    "SHA384": (_hasher("sha384"), 1, 1),
    "SHA512": (_hasher("sha512"), 1, 1),
    "LANGDIR": (_langdir, 1, 1),
    "HASLANG": (_has_lang, 1, 1),
    "HASLANGDIR": (_has_langdir, 1, 1),
    "STRLANGDIR": (_strlangdir, 3, 3),
    "TRIPLE": (_triple, 3, 3),
    "SUBJECT": (_component("subject"), 1, 1),
    "PREDICATE": (_component("predicate"), 1, 1),
    "OBJECT": (_component("object"), 1, 1),
    "ISTRIPLE": (_is_triple, 1, 1),
    "UUID": (_uuid, 0, 0),
    "STRUUID": (_struuid, 0, 0),
}
