"""Expression semantics: operators, EBV, builtins, casts, ordering, aggregates."""

from __future__ import annotations

import re

import pytest

from engine.rdf import IRI, XSD, BNode, Literal, Variable
from engine.sparql.algebra import (
    BGP,
    Aggregate,
    BinaryExpr,
    CallExpr,
    ExistsExpr,
    FunctionExpr,
    InExpr,
    TermExpr,
    UnaryExpr,
    VarExpr,
)
from engine.sparql.expr import (
    EvalContext,
    ExprError,
    compute_aggregate,
    effective_boolean_value,
    evaluate,
    order_key,
    term_equal,
)

INT = XSD + "integer"
DEC = XSD + "decimal"
DBL = XSD + "double"
FLT = XSD + "float"
BOOL = XSD + "boolean"
DT = XSD + "dateTime"
TRUE = Literal("true", BOOL)
FALSE = Literal("false", BOOL)


def lit(value: object) -> Literal:
    """Shorthand: Python int/float/bool/str to the matching literal."""
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if isinstance(value, int):
        return Literal(str(value), INT)
    if isinstance(value, float):
        return Literal(repr(value), DBL)
    return Literal(str(value))


def c(term: object) -> TermExpr:
    return TermExpr(term if isinstance(term, (IRI, BNode, Literal)) else lit(term))


def call(name: str, *args: object) -> CallExpr:
    return CallExpr(name, tuple(a if _is_expr(a) else c(a) for a in args))


EXPR_TYPES = (TermExpr, VarExpr, BinaryExpr, UnaryExpr, InExpr, CallExpr, FunctionExpr, ExistsExpr)


def _is_expr(value: object) -> bool:
    return isinstance(value, EXPR_TYPES)


def op(symbol: str, left: object, right: object) -> BinaryExpr:
    return BinaryExpr(symbol, left if _is_expr(left) else c(left), right if _is_expr(right) else c(right))


def ev(expr, row=None, ctx=None):
    return evaluate(expr, row or {}, ctx or EvalContext())


def err(expr, row=None, ctx=None) -> bool:
    try:
        ev(expr, row, ctx)
    except ExprError:
        return True
    return False


# ----------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(
    "symbol,left,right,expected",
    [
        ("+", lit(1), lit(2), Literal("3", INT)),
        ("+", Literal("1", XSD + "short"), lit(2), Literal("3", INT)),
        ("+", Literal("1.0", DEC), lit(2), Literal("3.0", DEC)),
        ("-", Literal("1.5", DEC), Literal("0.25", DEC), Literal("1.25", DEC)),
        ("*", Literal("1.5", DEC), lit(2), Literal("3.0", DEC)),
        ("/", lit(4), lit(2), Literal("2.0", DEC)),
        ("/", lit(1), lit(4), Literal("0.25", DEC)),
        ("+", Literal("1.5", FLT), lit(1), Literal("2.5E0", FLT)),
        ("+", Literal("1.5", FLT), Literal("1", DBL), Literal("2.5E0", DBL)),
        ("*", Literal("2E-1", DBL), Literal("2", DEC), Literal("4.0E-1", DBL)),
        ("/", Literal("1", DBL), lit(0), Literal("INF", DBL)),
        ("/", Literal("-1", DBL), lit(0), Literal("-INF", DBL)),
        ("/", Literal("0", DBL), lit(0), Literal("NaN", DBL)),
    ],
)
def test_arithmetic_promotion_and_lexical_forms(symbol, left, right, expected):
    assert ev(op(symbol, left, right)) == expected


def test_integer_and_decimal_division_by_zero_is_an_error():
    assert err(op("/", 1, 0))
    assert err(op("/", Literal("1.5", DEC), Literal("0.0", DEC)))


def test_arithmetic_on_non_numbers_is_an_error():
    assert err(op("+", "1", 1))
    assert err(op("+", Literal("abc", INT), 1))
    assert err(op("+", IRI("http://x"), 1))
    assert err(op("+", Literal("-1", XSD + "positiveInteger"), 1))


def test_float_results_are_single_precision():
    result = ev(op("+", Literal("0.1", FLT), Literal("0.2", FLT)))
    assert result.datatype == FLT
    assert result.lexical == "3.0E-1"


def test_unary_operators():
    assert ev(UnaryExpr("-", c(3))) == Literal("-3", INT)
    assert ev(UnaryExpr("-", c(Literal("1.5", DEC)))) == Literal("-1.5", DEC)
    assert ev(UnaryExpr("+", c(Literal("01", XSD + "byte")))) == Literal("1", INT)
    assert ev(UnaryExpr("!", c(""))) == TRUE
    assert err(UnaryExpr("-", c("a")))
    assert err(UnaryExpr("!", c(IRI("http://x"))))


# ---------------------------------------------------------------- comparison


@pytest.mark.parametrize(
    "a,b",
    [
        (lit(1), Literal("1.0", DEC)),
        (lit(1), Literal("1E0", DBL)),
        (Literal("01", INT), lit(1)),
        (Literal("0.1", DEC), Literal("1E-1", DBL)),
        (Literal("1", XSD + "int"), lit(1)),
        (Literal("a"), Literal("a", XSD + "string")),
        (Literal("a", lang="en"), Literal("a", lang="EN")),
        (TRUE, Literal("1", BOOL)),
        (Literal("2010-01-01T00:00:00Z", DT), Literal("2010-01-01T01:00:00+01:00", DT)),
        (IRI("http://x"), IRI("http://x")),
        (Literal("x", "http://unknown/dt"), Literal("x", "http://unknown/dt")),
    ],
)
def test_equal_values(a, b):
    assert term_equal(a, b)
    assert ev(op("=", a, b)) == TRUE
    assert ev(op("!=", a, b)) == FALSE


@pytest.mark.parametrize(
    "a,b",
    [
        (lit(1), lit(2)),
        (lit(1), Literal("1")),
        (Literal("a", lang="en"), Literal("a")),
        (Literal("a", lang="en"), Literal("a", lang="fr")),
        (IRI("http://x"), Literal("http://x")),
        (BNode("a"), BNode("b")),
        (TRUE, lit(1)),
        (Literal("NaN", DBL), Literal("NaN", DBL)),
    ],
)
def test_unequal_values(a, b):
    assert not term_equal(a, b)
    assert ev(op("!=", a, b)) == TRUE


def test_equality_of_unknown_datatypes_is_an_error_unless_identical():
    a = Literal("a", "http://unknown/dt")
    b = Literal("b", "http://unknown/dt")
    with pytest.raises(ExprError):
        term_equal(a, b)
    assert err(op("!=", a, b))
    with pytest.raises(ExprError):
        term_equal(Literal("abc", INT), lit(1))


@pytest.mark.parametrize(
    "symbol,a,b,expected",
    [
        ("<", lit(1), Literal("1.5", DEC), True),
        (">", Literal("2E0", DBL), lit(1), True),
        ("<=", lit(2), Literal("2.0", DEC), True),
        (">=", lit(1), lit(2), False),
        ("<", Literal("abc"), Literal("abd"), True),
        ("<", Literal("B"), Literal("a"), True),
        ("<", FALSE, TRUE, True),
        ("<", Literal("2010-01-01T00:00:00Z", DT), Literal("2010-01-01T00:00:01Z", DT), True),
        ("<", Literal("NaN", DBL), lit(1), False),
        (">=", Literal("NaN", DBL), lit(1), False),
    ],
)
def test_ordering_comparisons(symbol, a, b, expected):
    assert ev(op(symbol, a, b)) == (TRUE if expected else FALSE)


@pytest.mark.parametrize(
    "a,b",
    [
        (lit(1), Literal("1")),
        (IRI("http://a"), IRI("http://b")),
        (Literal("a", lang="en"), Literal("b", lang="en")),
        (Literal("a", "http://unknown/dt"), Literal("b", "http://unknown/dt")),
        (Literal("abc", INT), lit(1)),
    ],
)
def test_ordering_incomparable_terms_is_an_error(a, b):
    assert err(op("<", a, b))


def test_datetime_timezone_rules():
    local = Literal("2010-01-01T12:00:00", DT)
    assert err(op("=", local, Literal("2010-01-01T12:00:00Z", DT)))
    assert err(op("<", local, Literal("2010-01-01T13:00:00Z", DT)))
    assert ev(op("<", local, Literal("2010-01-03T00:00:00Z", DT))) == TRUE
    assert ev(op(">", local, Literal("2009-12-30T00:00:00Z", DT))) == TRUE
    assert ev(op("=", local, Literal("2010-01-01T12:00:00.000", DT))) == TRUE


# ------------------------------------------------------------------- logic


ERROR = op("/", 1, 0)


@pytest.mark.parametrize(
    "symbol,left,right,expected",
    [
        ("||", True, ERROR, True),
        ("||", ERROR, True, True),
        ("||", False, ERROR, None),
        ("||", ERROR, ERROR, None),
        ("||", False, False, False),
        ("&&", False, ERROR, False),
        ("&&", ERROR, False, False),
        ("&&", True, ERROR, None),
        ("&&", True, True, True),
    ],
)
def test_error_tolerant_logic(symbol, left, right, expected):
    expr = op(symbol, left, right)
    if expected is None:
        assert err(expr)
    else:
        assert ev(expr) == (TRUE if expected else FALSE)


@pytest.mark.parametrize(
    "term,expected",
    [
        (TRUE, True),
        (FALSE, False),
        (lit(0), False),
        (lit(2), True),
        (Literal("0.0", DEC), False),
        (Literal("NaN", DBL), False),
        (Literal(""), False),
        (Literal("x"), True),
    ],
)
def test_effective_boolean_value(term, expected):
    assert effective_boolean_value(term) is expected


@pytest.mark.parametrize(
    "term", [IRI("http://x"), BNode("b"), Literal("2010-01-01T00:00:00Z", DT), Literal("x", "http://dt"),
             # SPARQL 1.2: ill-formed booleans and numbers and tagged strings have no EBV
             Literal("maybe", BOOL), Literal("abc", INT), Literal("x", lang="en")]
)
def test_effective_boolean_value_errors(term):
    with pytest.raises(ExprError):
        effective_boolean_value(term)


def test_in_and_not_in():
    assert ev(InExpr(c(2), (c(1), c(2), c(3)))) == TRUE
    assert ev(InExpr(c(2), (c(1), c(3)))) == FALSE
    assert ev(InExpr(c(2), ())) == FALSE
    assert ev(InExpr(c(2), (ERROR, c(2)))) == TRUE
    assert err(InExpr(c(2), (ERROR, c(3))))
    assert ev(InExpr(c(2), (ERROR, c(2)), negated=True)) == FALSE
    assert err(InExpr(c(2), (ERROR, c(3)), negated=True))
    assert ev(InExpr(c(2), (c(1), c(3)), negated=True)) == TRUE


# ---------------------------------------------------------- special forms

X = Variable("x")


def test_variables_bound_and_coalesce():
    row = {X: lit(5)}
    assert ev(VarExpr(X), row) == lit(5)
    assert err(VarExpr(Variable("y")), row)
    assert ev(call("BOUND", VarExpr(X)), row) == TRUE
    assert ev(call("BOUND", VarExpr(Variable("y"))), row) == FALSE
    assert ev(call("COALESCE", VarExpr(Variable("y")), ERROR, 7)) == lit(7)
    assert err(call("COALESCE", VarExpr(Variable("y"))))
    assert err(call("COALESCE"))


def test_if_is_lazy():
    assert ev(call("IF", True, 1, ERROR)) == lit(1)
    assert ev(call("IF", "", ERROR, 2)) == lit(2)
    assert err(call("IF", ERROR, 1, 2))


def test_exists_uses_the_context_callback():
    seen = []

    def exists(pattern, row):
        seen.append((pattern, dict(row)))
        return True

    ctx = EvalContext(exists=exists)
    expr = ExistsExpr(BGP(()))
    assert ev(expr, {X: lit(1)}, ctx) == TRUE
    assert ev(ExistsExpr(BGP(()), negated=True), {}, ctx) == FALSE
    assert seen[0] == (BGP(()), {X: lit(1)})
    assert err(expr)


def test_unknown_functions_are_errors():
    assert err(call("NOSUCH", 1))
    assert err(FunctionExpr("http://example.org/f", (c(1),)))
    assert err(call("STRLEN", "a", "b"))


# ----------------------------------------------------------- string functions

EN = Literal("abc", lang="en")


@pytest.mark.parametrize(
    "expr,expected",
    [
        (call("STR", IRI("http://x")), Literal("http://x")),
        (call("STR", Literal("1e0", DBL)), Literal("1e0")),
        (call("LANG", EN), Literal("en")),
        (call("LANG", "a"), Literal("")),
        (call("DATATYPE", "a"), IRI(XSD + "string")),
        (call("DATATYPE", EN), IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")),
        (call("DATATYPE", 1), IRI(INT)),
        (call("LANGMATCHES", "en-US", "en"), TRUE),
        (call("LANGMATCHES", "en", "EN"), TRUE),
        (call("LANGMATCHES", "english", "en"), FALSE),
        (call("LANGMATCHES", "fr", "*"), TRUE),
        (call("LANGMATCHES", "", "*"), FALSE),
        (call("STRLEN", "食べ物"), lit(3)),
        (call("STRLEN", "\U0001f600"), lit(1)),
        (call("UCASE", EN), Literal("ABC", lang="en")),
        (call("LCASE", "ABC"), Literal("abc")),
        (call("SUBSTR", "foobar", 4), Literal("bar")),
        (call("SUBSTR", "foobar", 4, 1), Literal("b")),
        (call("SUBSTR", EN, 2), Literal("bc", lang="en")),
        (call("SUBSTR", "abc", 0, 2), Literal("a")),
        (call("SUBSTR", "abc", 5), Literal("")),
        (call("CONCAT", "a", "b"), Literal("ab")),
        (call("CONCAT", EN, Literal("d", lang="en")), Literal("abcd", lang="en")),
        (call("CONCAT", EN, "d"), Literal("abcd")),
        (call("CONCAT"), Literal("")),
        (call("CONTAINS", EN, "b"), TRUE),
        (call("CONTAINS", "abc", "x"), FALSE),
        (call("STRSTARTS", EN, Literal("ab", lang="en")), TRUE),
        (call("STRENDS", "abc", "bc"), TRUE),
        (call("STRBEFORE", EN, "b"), Literal("a", lang="en")),
        (call("STRBEFORE", EN, "z"), Literal("")),
        (call("STRBEFORE", EN, ""), Literal("", lang="en")),
        (call("STRAFTER", EN, "b"), Literal("c", lang="en")),
        (call("STRAFTER", EN, ""), Literal("abc", lang="en")),
        (call("STRAFTER", "abc", "xyz"), Literal("")),
        (call("ENCODE_FOR_URI", "Los Angeles"), Literal("Los%20Angeles")),
        (call("ENCODE_FOR_URI", "100%~é"), Literal("100%25~%C3%A9")),
        (call("STRLANG", "chat", "fr"), Literal("chat", lang="fr")),
        (call("STRDT", "123", IRI(INT)), lit(123)),
        (call("MD5", "abc"), Literal("900150983cd24fb0d6963f7d28e17f72")),
        (call("SHA1", "abc"), Literal("a9993e364706816aba3e25717850c26c9cd0d89d")),
        (call("ISNUMERIC", 1), TRUE),
        (call("ISNUMERIC", Literal("abc", INT)), FALSE),
        (call("ISNUMERIC", "1"), FALSE),
        (call("ISIRI", IRI("http://x")), TRUE),
        (call("ISBLANK", BNode("b")), TRUE),
        (call("ISLITERAL", BNode("b")), FALSE),
        (call("SAMETERM", lit(1), Literal("01", INT)), FALSE),
        (call("SAMETERM", EN, Literal("abc", lang="en")), TRUE),
    ],
)
def test_builtin_results(expr, expected):
    assert ev(expr) == expected


@pytest.mark.parametrize(
    "expr",
    [
        call("STR", BNode("b")),
        call("LANG", IRI("http://x")),
        call("STRLEN", 1),
        call("UCASE", IRI("http://x")),
        call("CONTAINS", "abc", Literal("b", lang="en")),
        call("CONTAINS", Literal("abc", lang="fr"), Literal("b", lang="en")),
        call("STRBEFORE", "abc", Literal("b", lang="cy")),
        call("CONCAT", "a", 1),
        call("STRLANG", EN, "fr"),
        call("STRDT", EN, IRI(INT)),
        call("STRDT", "a", "b"),
        call("MD5", EN),
        call("SUBSTR", "abc", "1"),
    ],
)
def test_builtin_type_errors(expr):
    assert err(expr)


def test_iri_resolves_against_base():
    ctx = EvalContext(base="http://example.org/dir/")
    assert ev(call("IRI", "x"), ctx=ctx) == IRI("http://example.org/dir/x")
    assert ev(call("URI", IRI("http://a/b")), ctx=ctx) == IRI("http://a/b")
    assert err(call("IRI", EN), ctx=ctx)


def test_bnode_labels_are_scoped_to_a_row():
    ctx = EvalContext()
    first = ev(call("BNODE", "a"), ctx=ctx)
    assert ev(call("BNODE", "a"), ctx=ctx) == first
    assert ev(call("BNODE", "b"), ctx=ctx) != first
    assert ev(call("BNODE"), ctx=ctx) != ev(call("BNODE"), ctx=ctx)
    ctx.new_row()
    assert ev(call("BNODE", "a"), ctx=ctx) != first


def test_random_and_identifiers():
    value = ev(call("RAND"))
    assert value.datatype == DBL and 0 <= float(value.lexical) < 1
    assert ev(call("UUID")).value.startswith("urn:uuid:")
    assert re.fullmatch(r"[0-9a-f-]{36}", ev(call("STRUUID")).lexical)


# ------------------------------------------------------------------- regex


@pytest.mark.parametrize(
    "text,pattern,flags,expected",
    [
        ("abc", "^a", None, True),
        ("ABC", "b", "i", True),
        ("ABC", "b", None, False),
        ("a\nb", "a.b", None, False),
        ("a\nb", "a.b", "s", True),
        ("a\rb", "a.b", None, False),
        ("x\ny", "^y$", "m", True),
        ("x\ny", "^y$", None, False),
        ("abc\n", "abc$", None, False),
        ("abc", "a b c", "x", True),
        ("a.c", ".", "q", True),
        ("abc", "a.c", "q", False),
        ("Ab1", r"^\p{Lu}\p{Ll}\p{Nd}$", None, True),
        ("a1", r"^\P{L}", None, False),
        ("食べ物", "べ", None, True),
    ],
)
def test_regex(text, pattern, flags, expected):
    args = (Literal(text), pattern) + ((flags,) if flags else ())
    assert ev(call("REGEX", *args)) == (TRUE if expected else FALSE)


def test_regex_errors():
    assert err(call("REGEX", "abc", "(", ""))
    assert err(call("REGEX", "abc", "a", "z"))
    assert err(call("REGEX", IRI("http://x"), "x"))
    assert ev(call("REGEX", EN, "b")) == TRUE


def test_replace():
    assert ev(call("REPLACE", "abcd", "b", "Z")) == Literal("aZcd")
    assert ev(call("REPLACE", EN, "b", "Z")) == Literal("aZc", lang="en")
    assert ev(call("REPLACE", "abab", "(ab)|(a)", "[1=$1][2=$2]")) == Literal("[1=ab][2=][1=ab][2=]")
    assert ev(call("REPLACE", "ABCD", "b", "Z", "i")) == Literal("AZCD")
    assert ev(call("REPLACE", "a$b", r"\$", r"\$\\")) == Literal("a$\\b")
    assert err(call("REPLACE", "abc", "x*", "y"))
    assert err(call("REPLACE", "abc", "b", "$"))


# --------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "name,arg,expected",
    [
        ("ABS", lit(-2), lit(2)),
        ("ABS", Literal("-1.6", DEC), Literal("1.6", DEC)),
        ("ABS", Literal("-1", XSD + "short"), lit(1)),
        ("CEIL", Literal("2.5", DEC), Literal("3", DEC)),
        ("CEIL", Literal("-1.6", DEC), Literal("-1", DEC)),
        ("FLOOR", Literal("-1.6", DEC), Literal("-2", DEC)),
        ("ROUND", Literal("2.5", DEC), Literal("3", DEC)),
        ("ROUND", Literal("-2.5", DEC), Literal("-2", DEC)),
        ("ROUND", Literal("1.1", DEC), Literal("1", DEC)),
        ("ROUND", lit(-2), lit(-2)),
        ("ROUND", Literal("2.5", DBL), Literal("3.0E0", DBL)),
        ("CEIL", Literal("-0.5", DBL), Literal("-0E0", DBL)),
        ("FLOOR", Literal("INF", DBL), Literal("INF", DBL)),
    ],
)
def test_numeric_functions(name, arg, expected):
    assert ev(call(name, arg)) == expected


# --------------------------------------------------------------- dateTimes

D1 = Literal("2010-12-21T15:38:02.5-08:00", DT)
D2 = Literal("2011-02-01T01:02:03", DT)


@pytest.mark.parametrize(
    "name,arg,expected",
    [
        ("YEAR", D1, lit(2010)),
        ("MONTH", D1, lit(12)),
        ("DAY", D1, lit(21)),
        ("HOURS", D1, lit(15)),
        ("MINUTES", D1, lit(38)),
        ("SECONDS", D1, Literal("2.5", DEC)),
        ("SECONDS", D2, Literal("3", DEC)),
        ("TIMEZONE", D1, Literal("-PT8H", XSD + "dayTimeDuration")),
        ("TIMEZONE", Literal("2010-01-01T00:00:00Z", DT), Literal("PT0S", XSD + "dayTimeDuration")),
        ("TIMEZONE", Literal("2010-01-01T00:00:00+05:30", DT), Literal("PT5H30M", XSD + "dayTimeDuration")),
        ("TZ", D1, Literal("-08:00")),
        ("TZ", Literal("2010-01-01T00:00:00Z", DT), Literal("Z")),
        ("TZ", D2, Literal("")),
        ("HOURS", Literal("2010-12-31T24:00:00Z", DT), lit(0)),
        ("YEAR", Literal("2010-12-31T24:00:00Z", DT), lit(2011)),
        ("DAY", Literal("2012-02-28T24:00:00", DT), lit(29)),
    ],
)
def test_datetime_accessors(name, arg, expected):
    assert ev(call(name, arg)) == expected


def test_datetime_errors_and_now():
    assert err(call("TIMEZONE", D2))
    assert err(call("YEAR", "2010-01-01T00:00:00Z"))
    assert err(call("YEAR", Literal("2010-13-01T00:00:00Z", DT)))
    ctx = EvalContext()
    now = ev(call("NOW"), ctx=ctx)
    assert now.datatype == DT and now == ev(call("NOW"), ctx=ctx)
    assert ev(call("YEAR", call("NOW")), ctx=ctx).datatype == INT


# ------------------------------------------------------------------- casts


def cast(datatype: str, term: object) -> FunctionExpr:
    return FunctionExpr(datatype, (c(term),))


@pytest.mark.parametrize(
    "datatype,source,expected",
    [
        (XSD + "string", IRI("http://x"), Literal("http://x")),
        (XSD + "string", Literal("1.0", DEC), Literal("1")),
        (XSD + "string", Literal("1E0", DBL), Literal("1")),
        (XSD + "string", Literal("1E7", DBL), Literal("1.0E7")),
        (XSD + "string", Literal("-7.875", FLT), Literal("-7.875")),
        (XSD + "string", Literal("0", BOOL), Literal("false")),
        (XSD + "string", Literal("2002-10-10T17:00:00Z", DT), Literal("2002-10-10T17:00:00Z")),
        (XSD + "boolean", Literal("1"), TRUE),
        (XSD + "boolean", Literal("false"), FALSE),
        (XSD + "boolean", Literal("0.0", DEC), FALSE),
        (XSD + "boolean", Literal("NaN", DBL), FALSE),
        (XSD + "boolean", lit(3), TRUE),
        (XSD + "integer", Literal(" 13 "), lit(13)),
        (XSD + "integer", Literal("-7.875", FLT), lit(-7)),
        (XSD + "integer", Literal("2.5", DEC), lit(2)),
        (XSD + "integer", TRUE, lit(1)),
        (XSD + "decimal", Literal("+33.3300"), Literal("33.33", DEC)),
        (XSD + "decimal", Literal("1"), Literal("1.0", DEC)),
        (XSD + "decimal", Literal("1.25", FLT), Literal("1.25", DEC)),
        (XSD + "double", Literal("-10.2E3"), Literal("-1.02E4", DBL)),
        (XSD + "double", Literal("1.5"), Literal("1.5E0", DBL)),
        (XSD + "double", Literal("INF"), Literal("INF", DBL)),
        (XSD + "double", lit(13), Literal("1.3E1", DBL)),
        (XSD + "float", Literal("+33.3300"), Literal("3.333E1", FLT)),
        (XSD + "float", FALSE, Literal("0E0", FLT)),
        (XSD + "dateTime", Literal("2002-10-10T17:00:00Z"), Literal("2002-10-10T17:00:00Z", DT)),
        (XSD + "dateTime", Literal("2002-10-10", XSD + "date"), Literal("2002-10-10T00:00:00", DT)),
        (XSD + "int", Literal("12"), Literal("12", XSD + "int")),
    ],
)
def test_casts(datatype, source, expected):
    assert ev(cast(datatype, source)) == expected


@pytest.mark.parametrize(
    "datatype,source",
    [
        (XSD + "integer", Literal("1.0")),
        (XSD + "integer", Literal("1E0")),
        (XSD + "integer", Literal("NaN", DBL)),
        (XSD + "integer", IRI("http://x")),
        (XSD + "decimal", Literal("1E0")),
        (XSD + "decimal", Literal("INF", DBL)),
        (XSD + "double", Literal("string")),
        (XSD + "double", Literal("2002-10-10T17:00:00Z", DT)),
        (XSD + "boolean", Literal("2")),
        (XSD + "boolean", Literal("yes")),
        (XSD + "dateTime", Literal("2002-10-10")),
        (XSD + "dateTime", lit(1)),
        (XSD + "string", BNode("b")),
        (XSD + "byte", Literal("300")),
        (XSD + "integer", Literal("abc", INT)),
    ],
)
def test_invalid_casts(datatype, source):
    assert err(cast(datatype, source))


# ---------------------------------------------------------------- ordering


def test_order_key_is_total_over_mixed_terms():
    terms = [
        Literal("b"),
        Literal("x", "http://unknown/dt"),
        lit(10),
        Literal("2.5", DEC),
        Literal("1E0", DBL),
        Literal("NaN", DBL),
        Literal("abc", INT),
        IRI("http://b"),
        IRI("http://a"),
        BNode("z"),
        None,
        Literal("a", lang="en"),
        Literal("a"),
        TRUE,
        FALSE,
        Literal("2010-01-01T00:00:00Z", DT),
        Literal("2009-01-01T00:00:00", DT),
    ]
    ordered = sorted(terms, key=order_key)
    assert ordered[:4] == [None, BNode("z"), IRI("http://a"), IRI("http://b")]
    numbers = [t for t in ordered if t is not None and getattr(t, "datatype", None) in (INT, DEC, DBL)]
    assert numbers[:3] == [Literal("1E0", DBL), Literal("2.5", DEC), lit(10)]
    assert ordered.index(Literal("a")) < ordered.index(Literal("b"))
    earlier, later = Literal("2009-01-01T00:00:00", DT), Literal("2010-01-01T00:00:00Z", DT)
    assert ordered.index(earlier) < ordered.index(later)
    assert sorted(reversed(terms), key=order_key) == ordered


def test_order_key_numbers_by_value_across_types():
    values = [Literal("3", INT), Literal("2.5", DEC), Literal("-1E1", DBL), Literal("0.5", FLT)]
    assert [t.lexical for t in sorted(values, key=order_key)] == ["-1E1", "0.5", "2.5", "3"]


# -------------------------------------------------------------- aggregates

Y = Variable("y")
Y_EXPR = VarExpr(Y)


def rows(*values):
    return [{Y: v} if v is not None else {} for v in values]


def agg(name, distinct=False, separator=" ", expr=Y_EXPR):
    return Aggregate(name, expr, distinct, separator)


def run(aggregate, data):
    return compute_aggregate(aggregate, data, EvalContext())


def test_count():
    data = rows(lit(1), lit(1), None, lit(2))
    assert run(Aggregate("COUNT", None), data) == lit(4)
    assert run(Aggregate("COUNT", None, distinct=True), data) == lit(3)
    assert run(agg("COUNT"), data) == lit(3)
    assert run(agg("COUNT", distinct=True), data) == lit(2)
    assert run(Aggregate("COUNT", None), []) == lit(0)


def test_sum_and_avg():
    assert run(agg("SUM"), rows(lit(1), lit(2), lit(3))) == lit(6)
    assert run(agg("SUM"), rows(lit(1), Literal("2.2", DEC))) == Literal("3.2", DEC)
    assert run(agg("SUM"), rows(Literal("2E-1", DBL), Literal("0.2", DEC))) == Literal("4.0E-1", DBL)
    assert run(agg("SUM"), []) == lit(0)
    assert run(agg("SUM"), rows(lit(1), Literal("a"))) is None
    assert run(agg("AVG"), rows(lit(1), lit(2), lit(3), lit(4))) == Literal("2.5", DEC)
    assert run(agg("AVG"), rows(lit(1), lit(2), lit(3))) == Literal("2.0", DEC)
    assert run(agg("AVG"), []) == lit(0)
    assert run(agg("AVG"), rows(lit(1), BNode("b"))) is None
    assert run(agg("AVG", distinct=True), rows(lit(1), lit(1), lit(2))) == Literal("1.5", DEC)


def test_min_max_sample_group_concat():
    data = rows(lit(3), Literal("1.0", DEC), Literal("2E0", DBL))
    assert run(agg("MIN"), data) == Literal("1.0", DEC)
    assert run(agg("MAX"), data) == lit(3)
    assert run(agg("MIN"), []) is None
    assert run(agg("SAMPLE"), data) in [row[Y] for row in data]
    assert run(agg("SAMPLE"), []) is None
    words = rows(Literal("a"), Literal("b", lang="en"), Literal("a"))
    assert run(agg("GROUP_CONCAT"), words) == Literal("a b a")
    assert run(agg("GROUP_CONCAT", separator=":"), words) == Literal("a:b:a")
    assert run(agg("GROUP_CONCAT", distinct=True), words) == Literal("a b")
    assert run(agg("GROUP_CONCAT"), []) == Literal("")
    assert run(agg("GROUP_CONCAT"), rows(IRI("http://x"))) is None


def test_aggregate_skips_rows_whose_expression_fails():
    data = rows(lit(1), None, lit(2))
    assert run(agg("SUM"), data) == lit(3)
    assert run(agg("SUM", expr=op("/", 1, VarExpr(Y))), rows(lit(1), lit(0))) == Literal("1.0", DEC)
