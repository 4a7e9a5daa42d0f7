"""Loads build the compact store (term arrays, CSR graphs) without Spark,
and answer as Oxigraph does over the same documents."""

from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pyoxigraph as ox
import pytest

from benchmarks.generate import generate
from engine.api import Store
from engine.loader.local_load import build_store_directory
from engine.rdf import IRI, Literal, RdfSyntaxError, canonical_nquads, format_term, split_nquads
from engine.rdf.terms import XSD_INTEGER
from engine.sparql.results import write_select, write_select_ids
from engine.store import CompactGraph, LayeredGraph
from engine.store.layout import HASH_IDS, TERMS
from engine.store.trimmed_graph import TrimmedGraph

SN = "http://rivulet.example.org/sn/"
QUERIES = [
    f"PREFIX sn: <{SN}> SELECT ?u ?n ?a WHERE {{ ?u sn:name ?n ; sn:age ?a FILTER(?a > 60) }}",
    f"PREFIX sn: <{SN}> SELECT ?f ?n WHERE {{ ?u sn:knows ?f . ?f sn:name ?n }}",
    f"PREFIX sn: <{SN}> SELECT ?p (COUNT(?l) AS ?c) WHERE {{ ?l sn:likes ?p }} GROUP BY ?p",
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
    "SELECT ?g ?s WHERE { GRAPH ?g { ?s ?p ?o } }",
]
ODD = """@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a ex:says "tab\\there, \\"quoted\\" and a space"@EN-gb ;
     ex:n "1"^^xsd:integer, "2.5"^^xsd:decimal ;
     ex:knows [ ex:name "anonymous" ] .
"""
#: lexical forms a store keeps as written (Oxigraph's store would rewrite them)
NUMBERS = """@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a ex:n "01"^^xsd:integer, "2.5e0"^^xsd:double .
"""
TRIG = """@prefix ex: <http://example.org/> .
ex:g1 { ex:a ex:in "graph one" . ex:b ex:in ex:a }
ex:g2 { ex:a ex:in "graph two \\" with <angles> and a quote" }
ex:a ex:top "default" .
"""


@pytest.fixture(scope="module")
def social(tmp_path_factory) -> Path:
    """A generated social graph of 20,000 triples as N-Triples."""
    path = tmp_path_factory.mktemp("data") / "social.nt"
    store = ox.Store()
    store.bulk_load(generate(20_000).ntriples(), ox.RdfFormat.N_TRIPLES)
    store.dump(str(path), ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    return path


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _ours(store: Store, query: str) -> Counter:
    rows = store.query(query).rows()
    return Counter(tuple(None if t is None else format_term(t) for t in row) for row in rows)


def _oxigraph(files: list[Path], query: str) -> Counter:
    peer = ox.Store()
    for path in files:
        peer.load(path=str(path), base_iri=path.resolve().as_uri())
    rows = Counter()
    for solution in peer.query(query, use_default_graph_as_union=False):
        rows[tuple(None if t is None else _spelled(t) for t in solution)] += 1
    return rows


def _spelled(term) -> str:
    if isinstance(term, ox.Literal):
        if term.language:
            return format_term(Literal(term.value, lang=term.language))
        return format_term(Literal(term.value, term.datatype.value))
    return str(term)


def _same_shape(ours: Counter, theirs: Counter) -> bool:
    """Blank node labels differ between engines: compare rows with labels blanked."""
    def blank(rows: Counter) -> Counter:
        out = Counter()
        for row, count in rows.items():
            out[tuple("_:" if t and t.startswith("_:") else t for t in row)] += count
        return out
    return blank(ours) == blank(theirs)


def test_a_large_load_builds_compact_arrays_and_answers_as_oxigraph(social, tmp_path):
    odd = _write(tmp_path, "odd.ttl", ODD)
    trig = _write(tmp_path, "named.trig", TRIG)
    store = Store()
    assert store.load(social) == 20_000
    graph = store.quad_store.snapshot().graph(0)
    # the triples whose object is a number with a value ID lie beside the CSR arrays
    assert isinstance(graph, LayeredGraph) and isinstance(graph.base, CompactGraph)
    assert len(graph.base) + sum(len(d.triples) for d in graph.deltas) == 20_000
    # later loads add terms after the first load's (IDs no longer hash ranks) and reuse known ones
    store.load(odd)
    store.load(trig)
    assert store.terms.arrays.hash_ids is not None
    files = [social, odd, trig]
    for query in QUERIES:
        assert _same_shape(_ours(store, query), _oxigraph(files, query)), query


def test_a_store_directory_built_without_spark_answers_as_the_loads(social, tmp_path):
    odd = _write(tmp_path, "odd.ttl", ODD)
    trig = _write(tmp_path, "named.trig", TRIG)
    manifest = build_store_directory([social, odd, trig], tmp_path / "store")
    assert manifest.shards == 1 and manifest.triples == 20_000 + 5 + 4
    assert (tmp_path / "store" / TERMS / f"{HASH_IDS}.npy").exists()
    opened = Store.open(tmp_path / "store")
    for query in QUERIES:
        assert _same_shape(_ours(opened, query), _oxigraph([social, odd, trig], query)), query
    # the opened store still takes updates (an overlay on the mapped arrays)
    opened.update('INSERT DATA { <http://example.org/new> <http://example.org/p> "fresh"@EN }')
    assert opened.query('ASK { ?s ?p "fresh"@en }').boolean is True


def test_terms_spelled_with_escapes_and_language_tags_are_the_store_terms(tmp_path):
    quads = split_nquads(canonical_nquads(ODD.encode(), "turtle"))
    spellings = quads.terms.to_pylist()
    said = format_term(Literal('tab\there, "quoted" and a space', lang="en-gb"))
    assert said in spellings
    store = Store()
    store.load(ODD.encode(), "turtle")
    assert store.terms.lookup(Literal('tab\there, "quoted" and a space', lang="EN-GB"))
    store.load(NUMBERS.encode(), "turtle", graph="http://example.org/numbers")
    numbers = store.query("SELECT ?n FROM <http://example.org/numbers> "
                          "WHERE { ?s <http://example.org/n> ?n } ORDER BY ?n")
    assert [t.lexical for (t,) in numbers.rows()] == ["01", "2.5e0"]
    values = store.query("SELECT (SUM(?n) AS ?total) FROM <http://example.org/numbers> "
                         "WHERE { ?s <http://example.org/n> ?n }")
    assert float(next(values.rows())[0].lexical) == 3.5


def test_a_malformed_document_says_where_and_loads_nothing(social):
    store = Store()
    store.load(social)
    before = len(store)
    bad = (b'<http://example.org/a> <http://example.org/b> <http://example.org/c> .\n'
           b'<http://example.org/a> "x" .\n')
    with pytest.raises(RdfSyntaxError, match="line 2"):
        store.load(bad, "nt")
    assert len(store) == before


def test_loads_after_an_update_use_the_overlay_and_stay_correct(tmp_path):
    store = Store()
    store.update('INSERT DATA { <http://example.org/x> <http://example.org/p> "before" }')
    trig = _write(tmp_path, "named.trig", TRIG)
    store.load(trig)
    assert len(store.terms.arrays) == 0  # the overlay handed out IDs first: the arrays stay empty
    assert _same_shape(_ours(store, QUERIES[4]), _oxigraph([trig], QUERIES[4]))
    assert store.query('ASK { <http://example.org/x> ?p "before" }').boolean is True


def test_json_from_id_columns_is_the_document_of_decoded_rows(social):
    store = Store()
    store.load(social)
    for query in QUERIES[:3] + ["SELECT * WHERE { OPTIONAL { <http://nothing> ?p ?o } }"]:
        result = store.query(query)
        by_ids = b"".join(write_select_ids("json", result.variables, result.id_chunks(), result.decode_ids))
        by_rows = b"".join(write_select("json", result.variables, store.query(query).rows()))
        assert orjson.loads(by_ids) == orjson.loads(by_rows), query


def test_encoded_ids_round_trip_through_the_compact_dictionary(social):
    store = Store()
    store.load(social)
    terms = store.terms
    user = IRI(SN + "user/7")
    term_id = terms.lookup(user)
    assert 0 < term_id <= len(terms.arrays)
    assert terms.decode(term_id) == user and terms.encode(user) == term_id
    ids = np.arange(1, len(terms.arrays) + 1)
    assert [terms.lookup(t) for t in terms.decode_many(ids[:500])] == ids[:500].tolist()


def test_updates_keep_a_loaded_graph_compact_and_correct(social):
    store = Store()
    store.load(social)
    knows = f"PREFIX sn: <{SN}> SELECT (COUNT(*) AS ?n) WHERE {{ ?a sn:knows ?b }}"
    before = int(next(store.query(knows).rows())[0].lexical)
    (someone,) = next(store.query(f"PREFIX sn: <{SN}> SELECT ?a WHERE {{ ?a sn:knows ?b }} LIMIT 1").rows())
    friends = _oxigraph([social], f"PREFIX sn: <{SN}> SELECT ?b WHERE {{ <{someone.value}> sn:knows ?b }}")
    store.update(f"PREFIX sn: <{SN}> DELETE WHERE {{ <{someone.value}> sn:knows ?b }}")
    after = int(next(store.query(knows).rows())[0].lexical)
    assert before - after == friends.total() > 0
    graph = store.quad_store.snapshot().graph(0)
    # the deleted triples are tombstones over the loaded arrays, not a rebuilt copy
    assert isinstance(graph, LayeredGraph) and isinstance(graph.base, TrimmedGraph)
    assert isinstance(graph.base.base, CompactGraph) and len(graph.base.gone) == friends.total()
    store.update(f"PREFIX sn: <{SN}> INSERT DATA {{ <{someone.value}> sn:knows <{SN}user/8> }}")
    assert store.query(f"PREFIX sn: <{SN}> ASK {{ <{someone.value}> sn:knows <{SN}user/8> }}").boolean is True
    store.update("DELETE WHERE { ?s ?p ?o }")
    assert len(store) == 0 and store.query("ASK { ?s ?p ?o }").boolean is False


@pytest.mark.parametrize("seed", range(3))
def test_a_column_of_every_kind_of_id_decodes_as_one_id_at_a_time(social, seed):
    """decode_many takes the overlay's IDs in one call, the compact ones
    through the cache and value IDs from their value: a shuffled column of
    all of them, with unbound (0) and repeats, decodes as decode does."""
    store = Store()
    store.load(social)
    terms = store.terms
    rng = np.random.default_rng(seed)
    compact = rng.integers(1, len(terms.arrays) + 1, 300)
    overlay = [terms.encode(IRI(f"{SN}new/{k}")) for k in range(50)]
    values = [terms.encode(Literal(str(k), XSD_INTEGER)) for k in range(-5, 45)]
    ids = rng.permutation(np.concatenate([compact, overlay, values, np.zeros(10, dtype=np.int64),
                                          compact[:20]]).astype(np.int64))
    assert len(set(overlay)) == 50 and all(i > len(terms.arrays) for i in overlay)
    assert terms.decode_many(ids) == [terms.decode(i) for i in ids.tolist()]
