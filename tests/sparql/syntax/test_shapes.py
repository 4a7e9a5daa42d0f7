"""Queries by shape: a query differing only in a constant is built from the
cached template of its shape, and must be exactly the query a parse gives."""

from __future__ import annotations

import random

import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from engine.sparql.syntax import SparqlSyntaxError, parse_query
from engine.sparql.syntax.shapes import ShapeCache, shape_of

PREFIX = "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"

#: shapes over random constants: (template, how to draw its constants)
SHAPES = [
    ("SELECT ?n ?a WHERE {{ <http://example.org/u{0}> ex:name ?n ; ex:age ?a }}", "i"),
    ("SELECT ?f WHERE {{ ex:u{0} ex:knows ?f . ?f ex:age ?a FILTER(?a > {1}) }}", "ii"),
    ("SELECT ?u WHERE {{ ?u ex:name \"n{0}\" }}", "i"),
    ("SELECT ?u WHERE {{ ?u ex:name \"n{0}\"@en }}", "i"),
    ("SELECT ?u WHERE {{ ?u ex:age \"{0}\"^^xsd:integer }}", "i"),
    ("SELECT ?u WHERE {{ ?u ex:score {0}.5 }}", "i"),
    ("SELECT ?u WHERE {{ ?u ex:age -{0} }}", "i"),
    ("SELECT ?u ?v WHERE {{ VALUES ?v {{ {0} \"s{1}\" ex:u{2} UNDEF }} ?u ex:age ?v }}", "iii"),
    ("SELECT (COUNT(?f) AS ?c) WHERE {{ ex:u{0} ex:knows ?f }}", "i"),
    ("SELECT ?f WHERE {{ ex:u{0} ex:knows+ ?f }} LIMIT {1}", "ii"),
    ("ASK {{ ex:u{0} ex:knows ex:u{1} }}", "ii"),
    ("SELECT ?a WHERE {{ ex:u{0} ex:age ?a FILTER(xsd:integer(?a) = {1} || STR(?a) = \"{2}\") }}", "iii"),
    ("SELECT ?f WHERE {{ ex:u{0} ex:knows ?f OPTIONAL {{ ?f ex:name ?n FILTER(?n != \"n{1}\") }} }}", "ii"),
    ("SELECT ?s WHERE {{ GRAPH ex:g{0} {{ ?s ?p ex:u{1} }} }}", "ii"),
    ("CONSTRUCT {{ ex:u{0} ex:seen ?f }} WHERE {{ ex:u{0} ex:knows ?f }}", "i"),
    ("SELECT ?x WHERE {{ BIND(ex:u{0} AS ?x) FILTER(?x IN (ex:u{1}, ex:u{2})) }}", "iii"),
    ("SELECT ?s WHERE {{ ?s ex:name ?n FILTER(REGEX(?n, \"^n{0}\", \"i\")) }} OFFSET {1}", "ii"),
]


def draw(rng: random.Random, kinds: str) -> list[int]:
    return [rng.choice([0, 1, 7, rng.randrange(60)]) for _ in kinds]


@pytest.mark.parametrize("template", [t for t, _ in SHAPES])
def test_a_new_constant_gives_the_query_a_parse_gives(template):
    kinds = dict(SHAPES)[template]
    rng = random.Random(template)
    cache = ShapeCache(64)
    hits = 0
    for _ in range(60):
        text = PREFIX + template.format(*draw(rng, kinds))
        hits += cache.lookup(text, None) is not None
        query, _ = cache.prepare(text, None, parse_query)
        assert query == parse_query(text), text
    assert hits > 30  # the shape was parsed once, or once per kept constant (LIMIT, OFFSET)


@pytest.fixture(scope="module")
def people() -> Store:
    store = Store()
    ex = "http://example.org/"
    rng = random.Random(3)
    triples = []
    for i in range(60):
        u = IRI(f"{ex}u{i}")
        triples += [(u, IRI(ex + "name"), Literal(f"n{i}")), (u, IRI(ex + "age"), Literal(str(i % 20),
                     "http://www.w3.org/2001/XMLSchema#integer")),
                    (u, IRI(ex + "score"), Literal(f"{i % 9}.5", "http://www.w3.org/2001/XMLSchema#decimal"))]
        triples += [(u, IRI(ex + "knows"), IRI(f"{ex}u{rng.randrange(60)}")) for _ in range(rng.randrange(4))]
    store.add(triples)
    store.add([(IRI(f"{ex}u{i}"), IRI(ex + "in"), IRI(f"{ex}u{i + 1}")) for i in range(5)], graph=ex + "g1")
    return store


def test_answers_from_the_cached_shape_are_those_of_a_parse(people):
    rng = random.Random(11)
    for template, kinds in SHAPES:
        for _ in range(15):
            text = PREFIX + template.format(*draw(rng, kinds))
            assert answer(people.query(text)) == answer(people.execute(parse_query(text))), text


def answer(result) -> object:
    """What a result says, comparable across two runs."""
    if result.form == "ASK":
        return result.boolean
    return sorted(map(repr, result.rows() if result.form == "SELECT" else result.triples()))


def test_constants_that_steer_the_parser_stay_in_the_shape():
    key, _, lifted = shape_of(PREFIX + "SELECT * WHERE { ?s ?p \"1\"^^xsd:integer "
                              "FILTER(xsd:integer(?o) = -1) } LIMIT 5", None)
    between = "".join(key[2])
    # the prefixes, the datatype, the function, the signed number and LIMIT are in the key
    for kept in ("<http://example.org/>", "xsd:integer(", "-1", "LIMIT 5", "^^xsd:integer"):
        assert kept in between
    assert key[1] == ("str",)
    assert shape_of(PREFIX + "SELECT * WHERE { ?s ?p ?o } LIMIT 6", None)[0] != \
        shape_of(PREFIX + "SELECT * WHERE { ?s ?p ?o } LIMIT 5", None)[0]


def test_blank_nodes_and_variables_are_never_lifted():
    one = shape_of("SELECT * WHERE { _:a ?p ?o }", None)[0]
    other = shape_of("SELECT * WHERE { _:b ?p ?o }", None)[0]
    assert one != other
    x, y = "SELECT ?x WHERE { ?x ?p 1 }", "SELECT ?y WHERE { ?y ?p 1 }"
    assert shape_of(x, None)[0] != shape_of(y, None)[0]


def test_a_literal_whose_datatype_differs_is_another_shape():
    cache = ShapeCache(8)
    xsd = "http://www.w3.org/2001/XMLSchema#"
    cache.prepare(f'SELECT * WHERE {{ ?s ?p "1"^^<{xsd}integer> }}', None, parse_query)
    text = f'SELECT * WHERE {{ ?s ?p "1"^^<{xsd}decimal> }}'
    assert cache.lookup(text, None) is None
    assert cache.prepare(text, None, parse_query)[0] == parse_query(text)


def test_the_base_is_part_of_the_shape():
    cache = ShapeCache(8)
    cache.prepare("SELECT * WHERE { <a> ?p ?o }", "http://one.example/", parse_query)
    assert cache.lookup("SELECT * WHERE { <b> ?p ?o }", "http://two.example/") is None
    query, _ = cache.lookup("SELECT * WHERE { <b> ?p ?o }", "http://one.example/")
    assert query == parse_query("SELECT * WHERE { <b> ?p ?o }", "http://one.example/")


@pytest.mark.parametrize("bad", ['SELECT * WHERE { ?s ?p "bad\\q" }', "SELECT * WHERE { ?s ?p nope:x }"])
def test_a_bad_constant_in_a_cached_shape_gives_the_parsers_error(bad):
    cache = ShapeCache(8)
    cache.prepare('SELECT * WHERE { ?s ?p "fine" }', None, parse_query)
    with pytest.raises(SparqlSyntaxError) as parsed:
        parse_query(bad)
    with pytest.raises(SparqlSyntaxError) as cached:
        cache.prepare(bad, None, parse_query)
    assert str(cached.value) == str(parsed.value)


def test_a_query_with_service_lifts_nothing():
    text = "SELECT * WHERE { SERVICE <http://remote.example/sparql> { ?s ?p <http://example.org/x> } }"
    _, _, lifted = shape_of(text, None)
    assert lifted == []
