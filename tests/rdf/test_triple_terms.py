"""RDF 1.2 triple terms and directional strings through the term model, the
N-Triples reader and writers, the loader and the dictionary.

Terms are generated (seeded): nested triple terms whose literals hold what
breaks naive splitting (spaces, ``)>>``, ``<<(``, quotes, backslashes, line
breaks, tabs), blank nodes and directional language tags."""

from __future__ import annotations

import random

import pytest

from engine.api import Store
from engine.rdf import (
    IRI,
    KIND_TRIPLE,
    BNode,
    Literal,
    MemoryTermDictionary,
    NTriplesError,
    RdfSyntaxError,
    TripleTerm,
    c14n_term,
    canonical,
    canonical_nquads,
    format_term,
    parse_rdf,
    parse_statement,
    parse_term,
    split_nquads,
    write_graph,
)

EX = "http://example.org/"
NASTY = ["a b", ")>>", "<<( x )>>", 'say "hi"', "back\\slash", "line\nbreak", "tab\there", "", "é ü 中"]


def _literal(rng: random.Random) -> Literal:
    text = rng.choice(NASTY) + rng.choice(NASTY)
    kind = rng.randrange(4)
    if kind == 0:
        return Literal(text)
    if kind == 1:
        return Literal(text, lang=rng.choice(["en", "en-gb", "ar--rtl", "en--ltr"]))
    if kind == 2:
        return Literal(str(rng.randrange(-50, 50)), "http://www.w3.org/2001/XMLSchema#integer")
    return Literal(text, EX + "type")


def triple_term(rng: random.Random, depth: int = 0) -> TripleTerm:
    subject = IRI(f"{EX}s{rng.randrange(5)}") if rng.random() < 0.7 else BNode(f"b{rng.randrange(3)}")
    if depth < 3 and rng.random() < 0.4:
        obj: object = triple_term(rng, depth + 1)
    else:
        obj = rng.choice([IRI(f"{EX}o{rng.randrange(5)}"), BNode("x"), _literal(rng)])
    return TripleTerm(subject, IRI(f"{EX}p{rng.randrange(3)}"), obj)  # type: ignore[arg-type]


TERMS = [triple_term(random.Random(seed)) for seed in range(300)]


@pytest.mark.parametrize("term", TERMS[:150], ids=lambda t: str(hash(t) % 10**6))
def test_spellings_read_back_as_the_same_term(term):
    spelled = format_term(term)
    assert spelled.startswith("<<( ") and spelled.endswith(" )>>")
    assert parse_term(spelled) == term
    assert canonical(spelled) == spelled
    assert parse_term(format_term(term, tsv=True), shorthands=True) == term
    line = f"<{EX}s> <{EX}p> {c14n_term(term)} ."
    assert "\n" not in line and "\t" not in line
    assert parse_statement(line)[2] == term


def test_triple_terms_are_terms_with_ids():
    terms = MemoryTermDictionary()
    ids = terms.encode_many(TERMS)
    assert (terms.kinds(ids) == KIND_TRIPLE).all()
    assert terms.decode_many(ids) == TERMS
    assert len(set(ids.tolist())) == len(set(TERMS))
    copy = TripleTerm(TERMS[0].subject, TERMS[0].predicate, TERMS[0].object)
    assert terms.lookup(copy) == ids[0]


def test_a_document_with_triple_terms_loads_through_the_column_split():
    ground = [t for t in TERMS if "_:" not in format_term(t)][:80]
    lines = [f"<{EX}r{i}> <{EX}says> {c14n_term(t)} ." for i, t in enumerate(ground)]
    lines.append(f"<{EX}plain> <{EX}p> \"no triple term here\" .")
    document = "\n".join(lines).encode()
    quads = split_nquads(canonical_nquads(document, "nt"))
    assert len(quads) == len(lines)
    store = Store()
    assert store.load(document, format="nt") == len(lines)
    stored = {(s, p, o) for s, p, o in store.triples()}
    assert stored == {(s, p, o) for s, p, o, _ in parse_rdf(document, "nt")}
    assert {o for _, _, o in stored if isinstance(o, TripleTerm)} == set(ground)
    # and written back in the syntaxes whose 1.2 forms Oxigraph reads, then read again
    for fmt in ("nt", "turtle"):
        text = b"".join(write_graph(fmt, sorted(stored, key=str), {"ex": EX}))
        again = {(s, p, o) for s, p, o, _ in parse_rdf(text, fmt)}
        assert again == stored, fmt
    # RDF/XML 1.2 writes a triple term as the content of rdf:parseType="Triple"
    inner = TripleTerm(IRI(EX + "c"), IRI(EX + "d"), Literal("<<( x"))
    nested = TripleTerm(IRI(EX + "a"), IRI(EX + "b"), inner)
    xml = b"".join(write_graph("xml", [(IRI(EX + "r"), IRI(EX + "says"), nested)], {"ex": EX})).decode()
    assert xml.count('rdf:parseType="Triple"') == 2 and "&lt;&lt;( x" in xml


def test_turtle_reifiers_and_annotations_become_rdf_reifies_triples():
    store = Store()
    store.load(f"""PREFIX : <{EX}>
        :a :b :c ~ :r {{| :source :web |}} .
        << :x :y "z" >> :seen 2 .""".encode(), format="turtle")
    rows = {(s, p, o) for s, p, o in store.triples()}
    reifies = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies")
    abc = TripleTerm(IRI(EX + "a"), IRI(EX + "b"), IRI(EX + "c"))
    assert (IRI(EX + "a"), IRI(EX + "b"), IRI(EX + "c")) in rows
    assert (IRI(EX + "r"), reifies, abc) in rows
    assert (IRI(EX + "r"), IRI(EX + "source"), IRI(EX + "web")) in rows
    [reifier] = [s for s, p, o in rows if p == reifies and o != abc]
    assert isinstance(reifier, BNode)
    assert (IRI(EX + "x"), IRI(EX + "y"), Literal("z")) not in rows  # a reified triple is not asserted


@pytest.mark.parametrize("line, message", [
    (f"<<( <{EX}a> <{EX}b> <{EX}c> )>> <{EX}p> <{EX}o> .", "subject"),
    (f"<{EX}s> <<( <{EX}a> <{EX}b> <{EX}c> )>> <{EX}o> .", "predicate"),
    (f"<{EX}s> <{EX}p> <<( \"lit\" <{EX}b> <{EX}c> )>> .", "subject"),
    (f"<{EX}s> <{EX}p> <<( <{EX}a> _:b <{EX}c> )>> .", "predicate"),
    (f"<{EX}s> <{EX}p> <<( <{EX}a> <{EX}b> <{EX}c> .", ")>>"),
    (f"<{EX}s> <{EX}p> <<( <{EX}a> <{EX}b> <{EX}c> )>> <<( <{EX}a> <{EX}b> <{EX}c> )>> .", "graph"),
    (f"<{EX}s> <{EX}p> <<( <{EX}a> <{EX}b> \"x\"@en--up )>> .", "ltr or rtl"),
    (f"<{EX}s> <{EX}p> <<( <rel> <{EX}b> <{EX}c> )>> .", "absolute"),
])
def test_the_statement_reader_refuses_misplaced_triple_terms(line, message):
    with pytest.raises(NTriplesError) as error:
        parse_statement(line, 7)
    assert error.value.line == 7 and message in str(error.value)


def test_directional_strings_keep_their_direction():
    [(_, _, o, _)] = parse_rdf(f'<{EX}s> <{EX}p> "مرحبا"@ar--rtl .'.encode(), "nt")
    dir_lang_string = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString"
    assert (o.language, o.direction, o.datatype_iri) == ("ar", "rtl", dir_lang_string)
    assert parse_statement(f'<{EX}s> <{EX}p> "x"@en--ltr .')[2] == Literal("x", lang="en--ltr")


def test_canonical_ntriples_escapes_every_control_character():
    text = "".join(chr(c) for c in range(0x20)) + '\x7f"\\é'
    spelled = c14n_term(Literal(text))
    escapes = "".join(f"\\u{c:04X}" for c in range(0x0E, 0x20))
    assert spelled == ('"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b'
                       '\\t\\n\\u000B\\f\\r' + escapes + '\\u007F\\"\\\\é"')
    assert parse_statement(f"<{EX}s> <{EX}p> {spelled} .")[2] == Literal(text)


@pytest.mark.parametrize("element", [
    '<ex:q rdf:parseType="Triple"><rdf:Description rdf:about="http://a/s"><ex:p rdf:resource="http://a/o"/>'
    "</rdf:Description></ex:q>",
    '<ex:p xmlns:its="http://www.w3.org/2005/11/its" its:version="2.0" xml:lang="en" its:dir="rtl">x</ex:p>',
])
def test_rdfxml_12_forms_the_reader_would_drop_are_refused(element):
    document = ('<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
                f'xmlns:ex="http://a/"><rdf:Description rdf:about="http://a/s">{element}'
                "</rdf:Description></rdf:RDF>").encode()
    store = Store()
    with pytest.raises(RdfSyntaxError, match="not read here"):
        store.load(document, format="xml")
    assert len(store) == 0
