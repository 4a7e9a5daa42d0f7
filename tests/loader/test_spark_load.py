"""The Spark bulk load and the memory-mapped store it writes.

The Spark tests run real jobs in local mode on small files, with one session
for the module. The store tests build CSR shards with the loader's writer and
check the mapped graph against the in-memory MemoryGraph, pattern by pattern.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.api import Store
from engine.loader.parse_lines import LoadError
from engine.loader.writer import write_partition
from engine.rdf import IRI, BNode, Literal, canonical, format_term
from engine.store import CompactGraph, MemoryGraph
from engine.store.layout import DIRECTIONS, Manifest
from engine.store.term_hash import hash_strings, term_hash

DATA = Path(__file__).parent / "data"
EX = "http://example.org/"


# ------------------------------------------------------------------ no Spark
def test_vectorised_hash_equals_the_lookup_hash():
    texts = ["", "a", "abcdefgh", "abcdefghi", "<http://example.org/a-long-iri/with/segments>",
             '"caf\u00e9 \u2603"@fr', "x" * 1000, "_:b1"]
    encoded = [t.encode() for t in texts]
    offsets = np.cumsum([0] + [len(b) for b in encoded])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    assert hash_strings(data, offsets).tolist() == [term_hash(t) for t in texts]
    assert len(set(hash_strings(data, offsets).tolist())) == len(texts)


def test_canonical_spelling_is_format_terms():
    assert canonical('"caf\\u00E9\\t\\"x\\""^^<http://www.w3.org/2001/XMLSchema#string>') == '"café\t\\"x\\""'
    assert canonical("<http://example.org/\\u00E9t\\u00E9>") == "<http://example.org/été>"
    assert canonical('"1"^^<http://www.w3.org/2001/XMLSchema#integer>') == \
        format_term(Literal("1", "http://www.w3.org/2001/XMLSchema#integer"))


def _write_store(root: Path, s, p, o, shards: int) -> CompactGraph:
    """Write one default graph with the loader's writer, as the Spark job would."""
    n_terms = int(max(s.max(), p.max(), o.max()))
    g = np.zeros(len(s), dtype=np.int64)
    for d, (vertex, neighbour) in zip(DIRECTIONS, ((s, o), (o, s))):
        for k in range(shards):
            sel = vertex % shards == k
            edges = np.stack([g[sel], vertex[sel], p[sel], neighbour[sel]])
            write_partition(root, d, k, shards, n_terms, edges)
    return CompactGraph.open(root, 0, shards, len(MemoryGraph(s, p, o)))


@pytest.mark.parametrize("shards", [1, 3])
def test_compact_graph_answers_like_the_memory_graph(tmp_path, shards):
    rng = np.random.default_rng(7)
    n = 3000
    s, p, o = rng.integers(1, 300, n), rng.integers(1, 6, n), rng.integers(1, 300, n)
    s = np.concatenate([s, s[:50]])  # duplicates are dropped
    p, o = np.concatenate([p, p[:50]]), np.concatenate([o, o[:50]])
    base, mem = _write_store(tmp_path, s, p, o, shards), MemoryGraph(s, p, o)
    assert len(base) == len(mem)
    for probe in [(5, None, None), (None, 2, None), (None, None, 7), (5, 2, None), (None, 3, 9),
                  (int(s[0]), int(p[0]), int(o[0])), (int(s[0]), None, int(o[0])), (None, None, None),
                  (5, 99, None), (-1, None, None)]:
        assert base.count(*probe) == mem.count(*probe), probe
    for pred in (None, 2, 99):
        assert base.degree_stats(pred) == mem.degree_stats(pred), pred
    rows = 40
    cols = {"s": rng.integers(-2, 300, rows), "p": rng.integers(0, 7, rows), "o": rng.integers(1, 300, rows)}
    for bound in [("s",), ("p",), ("o",), ("s", "p"), ("p", "o"), ("s", "o"), ("s", "p", "o")]:
        args = [cols[k] if k in bound else None for k in ("s", "p", "o")]
        got, want = base.match(*args, rows), mem.match(*args, rows)
        assert np.all(np.diff(got[0]) >= 0), "rows come back in input order"
        key = lambda r: sorted(zip(*(a.tolist() for a in r)))  # noqa: E731
        assert key(got) == key(want), bound
    assert sorted(zip(base.s.tolist(), base.p.tolist(), base.o.tolist())) == \
        sorted(zip(mem.s.tolist(), mem.p.tolist(), mem.o.tolist()))
    assert base.contains(cols["s"], cols["p"], cols["o"]).tolist() == \
        mem.contains(cols["s"], cols["p"], cols["o"]).tolist()
    assert base.contains(s[:20], p[:20], o[:20]).all()


# --------------------------------------------------------------------- Spark
@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("rivulet-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _load(spark, files, out, **options):
    from engine.loader.spark_job import LoadOptions, load

    return load(LoadOptions([DATA / f for f in files], out, progress=False, **options), spark)


def _answers(store: Store, query: str):
    """Rows with blank nodes anonymised: labels differ between loaders."""
    result = store.query(query)
    if result.form == "ASK":
        return result.boolean
    return sorted(tuple("_" if isinstance(t, BNode) else format_term(t) if t else None for t in row)
                  for row in result.rows())


QUERIES = [
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
    "SELECT ?n WHERE { <http://example.org/alice> <http://xmlns.com/foaf/0.1/name> ?n }",
    "SELECT ?who ?age WHERE { ?who <http://example.org/age> ?age FILTER(?age > 30) }",
    "SELECT ?p ?o WHERE { <http://example.org/bob> ?p ?o }",
    "SELECT ?s ?p WHERE { ?s ?p <http://example.org/alice> }",
    "SELECT ?a ?c WHERE { ?a <http://xmlns.com/foaf/0.1/knows>/<http://xmlns.com/foaf/0.1/knows> ?c }",
    "SELECT (SUM(?age) AS ?total) WHERE { ?x <http://example.org/age> ?age }",
    "SELECT ?x WHERE { ?x <http://example.org/note> \"caf\u00e9\\tand \\\"quotes\\\"\\nnew line\"@fr }",
    "SELECT ?s WHERE { ?s <http://example.org/\u00e9t\u00e9> \"summer\" }",
    "SELECT ?l WHERE { <http://example.org/paris> <http://example.org/label> ?l FILTER(lang(?l) = 'en') }",
    "ASK { ?x <http://xmlns.com/foaf/0.1/name> \"Dan\" }",
]


def test_load_gives_the_same_answers_as_data_loaded_in_memory(spark, tmp_path):
    report = _load(spark, ["people.nt", "places.ttl"], tmp_path / "store", shards=3)
    memory = Store()
    for name in ("people.nt", "places.ttl"):
        memory.load(DATA / name)
    assert report.triples == len(memory) == 18
    assert report.shards == 3 and report.invalid_lines == 0
    assert report.store_bytes > 0 and report.string_bytes > 0
    assert sorted(p.name for p in (tmp_path / "store" / "shards").iterdir()) == ["0", "1", "2"]
    opened = Store.open(tmp_path / "store")
    assert len(opened) == 18
    for query in QUERIES:
        assert _answers(opened, query) == _answers(memory, query), query
    # the overlay: updates after open work, new terms included
    opened.update('INSERT DATA { <http://example.org/zoe> <http://example.org/age> 51 }')
    assert ("<http://example.org/zoe>",) in _answers(
        opened, "SELECT ?x WHERE { ?x <http://example.org/age> ?a FILTER(?a > 50) }")


def test_many_dictionary_ranges_write_the_same_store(spark, tmp_path, monkeypatch):
    """The number of hash ranges grows with the input (a range task's memory
    must not): a load cut into up to 64 ranges, most of them empty, writes the
    same files byte for byte as one cut into the default few."""
    from engine.loader import dictionary_build

    files = ["people.nt", "graphs.nq"]  # line files: their blank-node labels are kept
    _load(spark, files, tmp_path / "few")
    text_bytes = sum((DATA / f).stat().st_size for f in files)
    monkeypatch.setattr(dictionary_build, "RANGE_INPUT_BYTES", -(-text_bytes // 64))
    assert dictionary_build.range_bits([DATA / f for f in files], 2) == 6
    _load(spark, files, tmp_path / "many")
    few, many = (_files(tmp_path / name) for name in ("few", "many"))
    assert few.keys() == many.keys() and len(few) > 10
    assert [name for name in few if few[name] != many[name] and name.name != "manifest.json"] == []


def _files(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_blank_nodes_of_different_files_stay_apart(spark, tmp_path):
    _load(spark, ["people.nt", "people.nt"], tmp_path / "store")
    opened = Store.open(tmp_path / "store")
    carols = _answers(opened, 'SELECT ?c WHERE { ?c <http://xmlns.com/foaf/0.1/name> "Carol" }')
    assert len(carols) == 2


def test_quads_and_graph_option(spark, tmp_path):
    _load(spark, ["graphs.nq"], tmp_path / "store", graph=EX + "g0")
    opened = Store.open(tmp_path / "store")
    assert sorted(g.value for g in opened.named_graphs()) == [EX + "g0", EX + "g1", EX + "g2"]
    rows = _answers(opened, "SELECT ?g ?w WHERE { GRAPH ?g { ?s <http://example.org/says> ?w } }")
    assert rows == [(f"<{EX}g0>", '"yo"'), (f"<{EX}g1>", '"hello"'), (f"<{EX}g1>", '"hey"'),
                    (f"<{EX}g2>", '"hi"')]
    assert _answers(opened, "SELECT ?s WHERE { ?s ?p ?o }") == []


def test_a_bad_line_aborts_with_file_and_line(spark, tmp_path):
    with pytest.raises(LoadError, match=r"broken\.nt:4: malformed"):
        _load(spark, ["broken.nt"], tmp_path / "store")
    assert list(tmp_path.iterdir()) == [], "a failed load leaves nothing behind"


def test_skip_invalid_counts_and_reports(spark, tmp_path):
    report = _load(spark, ["broken.nt"], tmp_path / "store", skip_invalid=True)
    assert report.invalid_lines == 2 and report.triples == 3
    assert sorted(s.split(": ")[0].rsplit("/", 1)[-1] for s in report.invalid_samples) == \
        ["broken.nt:4", "broken.nt:6"]
    assert Manifest.read(tmp_path / "store").invalid_lines == 2
    opened = Store.open(tmp_path / "store")
    assert opened.terms.lookup(Literal("two")) > 0
    assert opened.terms.lookup(IRI(EX + "nowhere")) == 0
    # stream terms go to the overlay and can be freed; loaded terms never are
    terms = opened.terms
    loaded, fresh = terms.lookup(Literal("two")), terms.encode_transient(IRI(EX + "reading/1"))
    assert terms.encode_transient(Literal("two")) == loaded and fresh > len(terms) - 1 > loaded
    assert terms.decode(fresh) == IRI(EX + "reading/1") and terms.lookup_pinned(IRI(EX + "reading/1")) == 0
    ids = np.array([loaded, fresh])
    terms.hold(ids)
    assert terms.release(ids) == 1 and terms.lookup(IRI(EX + "reading/1")) == 0
    assert terms.decode(loaded) == Literal("two")


def test_bad_escapes_and_relative_iris_are_bad_lines_with_their_numbers(spark, tmp_path):
    """They used to end in a Spark traceback without a line (escapes) or be stored (relative IRIs)."""
    with pytest.raises(LoadError, match=r"broken_escapes\.nt:2: malformed"):
        _load(spark, ["broken_escapes.nt"], tmp_path / "refused")
    report = _load(spark, ["broken_escapes.nt"], tmp_path / "store", skip_invalid=True)
    assert report.invalid_lines == 3 and report.triples == 2
    assert sorted(s.split(": ")[0].rsplit("/", 1)[-1] for s in report.invalid_samples) == \
        ["broken_escapes.nt:2", "broken_escapes.nt:3", "broken_escapes.nt:4"]
    opened = Store.open(tmp_path / "store")
    assert opened.terms.lookup(Literal("caf\u00e9")) > 0 and opened.terms.lookup(Literal("relative")) == 0


def test_existing_output_is_not_overwritten(spark, tmp_path):
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "keep.txt").write_text("mine")
    with pytest.raises(LoadError, match="already exists"):
        _load(spark, ["people.nt"], tmp_path / "store")
    assert (tmp_path / "store" / "keep.txt").read_text() == "mine"


def test_lines_that_are_not_utf8_are_bad_lines_with_their_numbers(spark, tmp_path):
    """They used to end in a UnicodeDecodeError traceback that --skip-invalid did not skip."""
    with pytest.raises(LoadError, match=r"broken_utf8\.nt:2: malformed .*bad \\xff\\xfe here"):
        _load(spark, ["broken_utf8.nt"], tmp_path / "refused")
    report = _load(spark, ["broken_utf8.nt"], tmp_path / "store", skip_invalid=True)
    assert report.invalid_lines == 2 and report.triples == 2
    assert sorted(s.split(": ")[0].rsplit("/", 1)[-1] for s in report.invalid_samples) == \
        ["broken_utf8.nt:2", "broken_utf8.nt:4"]
    opened = Store.open(tmp_path / "store")
    assert opened.terms.lookup(Literal("fine")) > 0


def test_rdf12_triple_terms_load_from_ntriples_and_turtle(spark, tmp_path):
    """Lines with triple terms (nested, with spaces and quotes in literals)
    are beyond the line patterns: read by the statement parser; a triple term
    as a subject is still a bad line with its number."""
    ex = "http://example.org/"
    claim = f'<<( <{ex}bob> <{ex}knows> <<( <{ex}carol> <{ex}says> "a )>> \\"b\\"" )>> )>>'
    lines = [f"<{ex}alice> <{ex}says> {claim} .", f"<{ex}plain> <{ex}p> <{ex}o> .",
             f"<{ex}dan> <{ex}says> <<( <{ex}bob> <{ex}knows> <{ex}erin> )>> ."]
    (tmp_path / "claims.nt").write_text("\n".join(lines) + "\n")
    (tmp_path / "more.ttl").write_text(f"PREFIX : <{ex}>\n:bob :knows :erin ~ :r {{| :source :web |}} .\n")
    report = _load(spark, [tmp_path / "claims.nt", tmp_path / "more.ttl"], tmp_path / "store")
    assert report.triples == 6 and report.invalid_lines == 0
    opened = Store.open(tmp_path / "store")
    memory = Store()
    memory.load(tmp_path / "claims.nt")
    memory.load(tmp_path / "more.ttl")
    for query in (f"SELECT ?who ?x WHERE {{ ?who <{ex}says> <<( <{ex}bob> <{ex}knows> ?x )>> }}",
                  "SELECT ?r ?t WHERE { ?r <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> ?t }",
                  f"SELECT ?o WHERE {{ ?s <{ex}says> <<( ?b ?k <<( ?c ?p ?o )>> )>> }}"):
        assert _answers(opened, query) == _answers(memory, query) != [], query
    triple_subject = f"<<( <{ex}a> <{ex}b> <{ex}c> )>> <{ex}p> <{ex}o> .\n"
    (tmp_path / "bad.nt").write_text(f"<{ex}a> <{ex}b> <{ex}c> .\n" + triple_subject)
    with pytest.raises(LoadError, match=r"bad\.nt:2: malformed"):
        _load(spark, [tmp_path / "bad.nt"], tmp_path / "refused")


def test_blank_nodes_inside_triple_terms_of_different_files_stay_apart(spark, tmp_path):
    ex = "http://example.org/"
    lines = f"<{ex}a> <{ex}says> <<( _:b <{ex}knows> _:b )>> .\n_:b <{ex}name> \"B\" .\n"
    (tmp_path / "one.nt").write_text(lines)
    _load(spark, [tmp_path / "one.nt", tmp_path / "one.nt"], tmp_path / "store")
    opened = Store.open(tmp_path / "store")
    query = f"SELECT ?t ?x WHERE {{ ?t <{ex}name> \"B\" . ?a <{ex}says> <<( ?t <{ex}knows> ?x )>> }}"
    rows = list(opened.query(query).rows())
    assert len(rows) == 2 and all(t == x for t, x in rows)  # each file's _:b, joined with itself only
