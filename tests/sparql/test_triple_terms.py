"""SPARQL 1.2 triple terms over the engine API: patterns with variables
inside triple terms (nested too), reifiers and annotations, the functions,
templates, updates, the result formats and the plan cache."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.api import Store
from engine.rdf import IRI, BNode, Literal, TripleTerm
from engine.sparql.results import read_select, write_select
from engine.sparql.syntax import SparqlSyntaxError, parse_query, parse_update

EX = "http://example.org/"
PREFIX = f"PREFIX : <{EX}> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
REIFIES = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies")


def t(s: str, p: str, o) -> TripleTerm:
    return TripleTerm(IRI(EX + s), IRI(EX + p), o if not isinstance(o, str) else IRI(EX + o))


@pytest.fixture
def store() -> Store:
    store = Store()
    store.load(f"""PREFIX : <{EX}>
        :alice :says <<( :bob :knows :carol )>> .
        :dan :says <<( :bob :knows <<( :carol :likes "tea" )>> )>> .
        :erin :says <<( :bob :knows :bob )>> .
        :frank :says :nothing .
        :bob :knows :carol ~ :claim1 {{| :source :web ; :certainty 0.9 |}} .
    """.encode(), format="turtle")
    return store


def rows(store: Store, query: str) -> Counter:
    result = store.query(PREFIX + query)
    return Counter(tuple(row) for row in result.rows())


def test_variables_inside_a_triple_term_are_bound(store):
    found = rows(store, "SELECT ?who ?o WHERE { ?who :says <<( :bob :knows ?o )>> }")
    assert found == Counter({(IRI(EX + "alice"), IRI(EX + "carol")): 1,
                             (IRI(EX + "erin"), IRI(EX + "bob")): 1,
                             (IRI(EX + "dan"), t("carol", "likes", Literal("tea"))): 1})


def test_a_variable_twice_in_a_triple_term_must_be_one_term(store):
    found = rows(store, "SELECT ?who WHERE { ?who :says <<( ?x :knows ?x )>> }")
    assert found == Counter({(IRI(EX + "erin"),): 1})


def test_nested_triple_term_patterns_and_joins_with_the_bgp(store):
    found = rows(store, "SELECT ?who ?drink WHERE "
                        "{ ?who :says <<( :bob :knows <<( :carol :likes ?drink )>> )>> }")
    assert found == Counter({(IRI(EX + "dan"), Literal("tea")): 1})
    joined = rows(store, "SELECT ?who WHERE { ?who :says <<( ?s :knows ?o )>> . ?s :knows ?o }")
    assert joined == Counter({(IRI(EX + "alice"),): 1})


def test_reifiers_and_annotations_in_patterns(store):
    assert rows(store, "SELECT ?r ?src WHERE { :bob :knows :carol ~ ?r {| :source ?src |} }") == \
        Counter({(IRI(EX + "claim1"), IRI(EX + "web")): 1})
    assert rows(store, "SELECT ?c WHERE { << :bob :knows ?x >> :certainty ?c }") == \
        Counter({(Literal("0.9", "http://www.w3.org/2001/XMLSchema#decimal"),): 1})


def test_functions_on_triple_terms(store):
    result = rows(store, """SELECT ?s ?p ?o ?same ?is ?not WHERE {
        :alice :says ?t .
        BIND(SUBJECT(?t) AS ?s) BIND(PREDICATE(?t) AS ?p) BIND(OBJECT(?t) AS ?o)
        BIND(TRIPLE(?s, ?p, ?o) = ?t AS ?same) BIND(isTRIPLE(?t) AS ?is) BIND(isTRIPLE(?s) AS ?not) }""")
    true, false = (Literal(v, "http://www.w3.org/2001/XMLSchema#boolean") for v in ("true", "false"))
    assert result == Counter({(IRI(EX + "bob"), IRI(EX + "knows"), IRI(EX + "carol"), true, true, false): 1})
    errors = rows(store, "SELECT ?x WHERE { :frank :says ?t BIND(SUBJECT(?t) AS ?x) }")
    assert errors == Counter({(None,): 1})  # SUBJECT of an IRI is an error: unbound
    assert rows(store, "SELECT ?t WHERE { BIND(TRIPLE(\"lit\", :p, :o) AS ?t) }") == Counter({(None,): 1})
    expr = rows(store, "SELECT ?t WHERE { BIND(<<( :a :b 1 )>> AS ?t) }")
    assert expr == Counter({(t("a", "b", Literal("1", "http://www.w3.org/2001/XMLSchema#integer")),): 1})


def test_values_and_filters_with_triple_terms(store):
    found = rows(store, "SELECT ?who WHERE { VALUES ?t { <<( :bob :knows :carol )>> } ?who :says ?t }")
    assert found == Counter({(IRI(EX + "alice"),): 1})
    ordered = [row[0] for row in store.query(PREFIX + "SELECT ?o WHERE { ?s :says ?o } ORDER BY ?o").rows()]
    assert ordered[0] == IRI(EX + "nothing") and all(isinstance(o, TripleTerm) for o in ordered[1:])


def test_construct_and_updates_build_triple_terms(store):
    built = store.query(PREFIX + "CONSTRUCT { ?who :claims <<( ?s :knows ?o )>> } "
                                 "WHERE { ?who :says <<( ?s :knows ?o )>> FILTER(isIRI(?o)) }")
    assert set(built.triples()) == {(IRI(EX + "alice"), IRI(EX + "claims"), t("bob", "knows", "carol")),
                                    (IRI(EX + "erin"), IRI(EX + "claims"), t("bob", "knows", "bob"))}
    store.update(PREFIX + "INSERT { ?o :quotedBy ?who ; :about <<( ?who :said ?o )>> } "
                          "WHERE { ?who :says ?o FILTER(isIRI(?o)) }")
    assert (IRI(EX + "nothing"), IRI(EX + "about"), t("frank", "said", "nothing")) in set(store.triples())
    store.update(PREFIX + "DELETE WHERE { ?who :says <<( :bob :knows ?x )>> }")
    left = {s for s, p, _ in store.triples() if p == IRI(EX + "says")}
    assert left == {IRI(EX + "frank")}
    store.update(PREFIX + "INSERT DATA { :g :h :i ~ :r2 {| :note \"n\" |} . :j :k <<( :l :m _:n )>> }")
    triples = set(store.triples())
    assert (IRI(EX + "r2"), REIFIES, t("g", "h", "i")) in triples
    assert any(isinstance(o, TripleTerm) and isinstance(o.object, BNode) for _, _, o in triples)


@pytest.mark.parametrize("fmt", ["json", "xml", "tsv", "csv"])
def test_result_formats_carry_triple_terms(store, fmt):
    result = store.query(PREFIX + "SELECT ?who ?t WHERE { ?who :says ?t } ORDER BY ?who")
    variables, expected = list(result.variables), list(result.rows())
    written = b"".join(write_select(fmt, variables, expected))
    assert read_select(fmt, written) == (variables, [list(r) for r in expected]) or fmt == "csv"
    if fmt == "csv":  # CSV keeps only text: a triple term is its N-Triples spelling
        _, back = read_select(fmt, written)
        assert [r[1] for r in back] == [r[1] if isinstance(r[1], TripleTerm) else Literal(r[1].value)
                                        for r in expected]


def test_the_plan_cache_never_mixes_up_constants_inside_triple_terms(store):
    # the same shape with other constants inside the triple term: each answered by its own
    for obj, who in (("carol", "alice"), ("bob", "erin"), ("zed", None)):
        found = rows(store, f"SELECT ?who WHERE {{ ?who :says <<( :bob :knows :{obj} )>> }}")
        assert found == (Counter({(IRI(EX + who),): 1}) if who else Counter())
        reified = rows(store, f'SELECT ?r WHERE {{ ?r rdf:reifies <<( :bob :knows :{obj} )>> }}')
        assert reified == (Counter({(IRI(EX + "claim1"),): 1}) if obj == "carol" else Counter())


@pytest.mark.parametrize("text", [
    "SELECT * WHERE { <<( ?s ?p ?o )>> . }",
    "SELECT * WHERE { ?s ?p <<( ?a :b ( 1 ) )>> }",
    "SELECT * WHERE { BIND(<<( \"lit\" :b :c )>> AS ?t) }",
    "SELECT * WHERE { ?s :p/:q ?o {| :a :b |} }",
    "SELECT * WHERE { BIND(<<( [] :p :o )>> AS ?t) }",
    "SELECT * WHERE { VALUES ?t { <<( <<( :a :b :c )>> :b :c )>> } }",
    "SELECT * WHERE { << :a :b :c >> :p :o >> }",
    "SELECT * WHERE { :a :b :c {| |} }",
    'SELECT ("x"@en--up AS ?v) WHERE {}',
    'VERSION """1.2""" SELECT * WHERE {}',
])
def test_malformed_triple_terms_are_syntax_errors(text):
    with pytest.raises(SparqlSyntaxError):
        parse_query(PREFIX + text)


def test_blank_nodes_of_reifiers_are_refused_where_deletes_need_ground_triples():
    with pytest.raises(SparqlSyntaxError):
        parse_update(PREFIX + "DELETE DATA { :a :b :c {| :d :e |} }")
    parse_update(PREFIX + "DELETE DATA { :a :b :c ~ :r {| :d :e |} }")


def test_generated_triple_term_patterns_agree_with_a_naive_match():
    rng = random.Random(7)
    names = [IRI(EX + n) for n in "abcd"]
    data = []
    for i in range(120):
        inner = TripleTerm(rng.choice(names), rng.choice(names[:2]), rng.choice(names))
        data.append((IRI(f"{EX}r{i % 17}"), IRI(EX + "says"), inner))
    store = Store()
    store.add(data)
    for _ in range(25):
        s, p, o = (rng.choice([None, rng.choice(names)]) for _ in range(3))
        spell = lambda term, var: f"<{term.value}>" if term else var  # noqa: E731
        inside = f"{spell(s, '?s')} {spell(p, '?p')} {spell(o, '?o')}"
        query = f"SELECT ?r ?s ?p ?o WHERE {{ ?r <{EX}says> <<( {inside} )>> }}"
        got = Counter(tuple(row) for row in store.query(query).rows())
        want = Counter((r, None if s else inner.subject, None if p else inner.predicate,
                        None if o else inner.object)
                       for r, _, inner in set(data)
                       if (s is None or inner.subject == s) and (p is None or inner.predicate == p)
                       and (o is None or inner.object == o))
        assert got == want, query
