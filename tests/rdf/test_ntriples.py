"""The one N-Triples term syntax: escapes, the store's spelling, TSV's spelling, reading back."""

import pytest

from engine.rdf import (
    IRI,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    BNode,
    Literal,
    NTriplesError,
    canonical,
    format_term,
    parse_statement,
    parse_term,
    unescape,
)

TERMS = [
    IRI("http://example.org/a"),
    BNode("b1"),
    Literal("plain"),
    Literal('quote " backslash \\ newline \n return \r tab \t', lang="en-GB"),
    Literal("01", XSD_INTEGER),
    Literal("caf\u00e9 \u2603", "http://example.org/dt"),
]


def test_unescape_resolves_string_and_numeric_escapes():
    assert unescape("a\\tb\\u00E9\\U0001F600\\\"") == 'a\tb\u00e9\U0001f600"'
    assert unescape("no escapes") == "no escapes"
    with pytest.raises(ValueError):
        unescape("\\q")


def test_the_store_spelling_escapes_only_what_canonical_n_triples_must():
    term = Literal('a"b\\c\nd\re\tf')
    assert format_term(term) == '"a\\"b\\\\c\\nd\\re\tf"'
    assert repr(term) == format_term(term)
    assert format_term(IRI("http://example.org/a b")) == "<http://example.org/a b>"


def test_the_tsv_spelling_also_escapes_tab_and_iri_specials():
    assert format_term(Literal("a\tb\bc\fd"), tsv=True) == '"a\\tb\\bc\\fd"'
    assert format_term(IRI("http://example.org/a b"), tsv=True) == "<http://example.org/a\\u0020b>"
    assert "\t" not in format_term(Literal("x\ty", "http://example.org/d\tt"), tsv=True)


@pytest.mark.parametrize("term", TERMS)
def test_every_spelling_reads_back_as_the_same_term(term):
    assert parse_term(format_term(term)) == term
    assert parse_term(format_term(term, tsv=True)) == term
    assert parse_term(format_term(term), shorthands=True) == term


def test_canonical_rewrites_other_escapes_into_the_store_spelling():
    assert canonical('"caf\\u00E9\\t"^^<http://www.w3.org/2001/XMLSchema#string>') == '"café\t"'
    assert canonical("<http://example.org/\\u00E9>") == "<http://example.org/é>"


def test_shorthands_are_read_only_when_asked_for():
    assert parse_term("true", shorthands=True) == Literal("true", XSD_BOOLEAN)
    assert parse_term("-12", shorthands=True) == Literal("-12", XSD_INTEGER)
    assert parse_term(".5", shorthands=True) == Literal(".5", XSD_DECIMAL)
    assert parse_term("1e3", shorthands=True) == Literal("1e3", XSD_DOUBLE)
    assert parse_term("'single'", shorthands=True) == Literal("single")
    assert parse_term('"""long "quoted" text"""', shorthands=True) == Literal('long "quoted" text')
    for text in ("true", "12", "'single'"):
        with pytest.raises(ValueError):
            parse_term(text)


@pytest.mark.parametrize("text", ['"unterminated', '"x"@', '"x"^^dt', "<no-end", "_:", "bare"])
def test_malformed_fields_of_untrusted_input_are_refused(text):
    with pytest.raises(ValueError):
        parse_term(text, shorthands=True)


def test_a_statement_is_read_with_its_escapes_resolved():
    s, p, o, g = parse_statement('<http://a/\\u00E9> <http://p> "x\\ty"@en <http://g> .')
    assert (s, p, o, g) == (IRI("http://a/é"), IRI("http://p"), Literal("x\ty", lang="en"), IRI("http://g"))
    with pytest.raises(NTriplesError) as error:
        parse_statement('<http://a> <http://p> "bad \\q" .', line=7)
    assert error.value.line == 7


@pytest.mark.parametrize("statement", [
    '<http://a/x\\u0020y> <http://p> "o" .',          # an escape spelling a space
    '<http://a> <http://p> <http://a/\\u003E> .',      # ... or '>'
    '<http://a> <http://p> <relative> .',
    '<http://a> <http://p> "1"^^<integer> .',
    '<http://a> <http://p> "o" <graph> .',
])
def test_statements_whose_iris_are_not_absolute_iris_are_refused(statement):
    """They used to be stored, and then broke every N-Triples or Turtle answer holding them."""
    with pytest.raises(NTriplesError, match="IRI"):
        parse_statement(statement, line=3)


def test_canonical_refuses_escapes_that_make_an_iri_invalid():
    assert canonical("<http://a/\\u00E9>") == "<http://a/\u00e9>"
    with pytest.raises(ValueError, match="not allowed in an IRI"):
        canonical("<http://a/x\\u0020y>")
    with pytest.raises(ValueError, match="not allowed in an IRI"):
        canonical('"1"^^<http://a/\\u007Bt>')
