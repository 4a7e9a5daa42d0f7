"""A load read in pieces, its edges spilled and sorted by vertex ranges,
builds the same store as one read whole and sorted in memory, wherever the
pieces and ranges are cut."""

from collections import Counter
from pathlib import Path

import numpy as np
import pyoxigraph as ox
import pytest

from benchmarks.cluster_scaling import write_nquads
from benchmarks.lsbench_data import generate
from engine.api import Store
from engine.loader import spilled_csr
from engine.loader.local_load import build_store_directory
from engine.loader.spilled_csr import EdgeSpill, build_spilled
from engine.loader.term_numbering import TermNumbering
from engine.rdf import format_term
from engine.store.csr import build_adjacency

ALL = "SELECT ?g ?s ?p ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"


def _edges(rng: np.random.Generator, n: int, n_terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random edges with repeats, few predicates, and a hub vertex holding a third of them."""
    s = rng.integers(1, n_terms + 1, n)
    s[: n // 3] = 7
    p = rng.choice(np.array([2, 3, 11, n_terms]), n)
    o = rng.integers(1, n_terms + 1, n)
    repeat = rng.integers(0, n, n // 4)
    return np.r_[s, s[repeat]], np.r_[p, p[repeat]], np.r_[o, o[repeat]]


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize(("bucket", "block"), [(10**9, 10**9), (50, 37), (1, 1)])
def test_spilled_csr_arrays_equal_the_in_memory_build(tmp_path, monkeypatch, shards, bucket, block):
    monkeypatch.setattr(spilled_csr, "BUCKET_EDGES", bucket)
    monkeypatch.setattr(spilled_csr, "BLOCK_ROWS", block)
    rng = np.random.default_rng(bucket + shards)
    n_terms = 300
    s, p, o = _edges(rng, 400 if bucket > 1 else 60, n_terms)
    spill = EdgeSpill(tmp_path / "rows")
    for lo in range(0, len(s), 97):  # appended in pieces
        spill.add(s[lo : lo + 97], p[lo : lo + 97], o[lo : lo + 97])
    spill.close()
    for direction, (vertex, neighbour) in enumerate(((s, o), (o, s))):
        for shard in range(shards):
            rows = vertex % shards == shard
            target = tmp_path / f"d{direction}-s{shard}"
            written = build_spilled(spill.path, direction, shard, shards, n_terms, target, tmp_path / "work")
            expected = build_adjacency(vertex[rows], p[rows], neighbour[rows], n_terms, shards)
            assert written == len(expected["neighbours"])
            for name, array in expected.items():
                got = np.load(target / f"{name}.npy")
                assert got.dtype == array.dtype and np.array_equal(got, array), (name, direction, shard)


def test_terms_keep_their_ids_across_pieces_and_the_files_map(tmp_path):
    import pyarrow as pa

    numbering = TermNumbering(tmp_path / "strings.bin")
    first = numbering.encode(pa.array(["<http://a>", '"1"^^<http://www.w3.org/2001/XMLSchema#integer>']))
    again = numbering.encode(pa.array(["<http://b>", "<http://a>"]))
    assert first.tolist() == [1, 2] and again.tolist() == [3, 1]
    for i in range(40):  # enough pieces to merge the lookup levels
        old = [f"<http://t{i // 2}>"] if i else []  # spellings within a piece are distinct
        numbering.encode(pa.array([f"<http://t{i}>", "<http://a>", *old]))
    assert numbering.encode(pa.array(["<http://t3>", "<http://a>"])).tolist() == [7, 1]
    numbering.finish(tmp_path / "terms")
    from engine.store.compact_dictionary import TermArrays

    arrays = TermArrays.open(tmp_path / "terms")
    assert arrays.spelling(3) == "<http://b>" and arrays.spelling(7) == "<http://t3>"
    assert arrays.numeric_ids.tolist() == [2] and arrays.numeric_values.tolist() == [1.0]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """LSBench-shaped N-Quads with blank nodes used far apart in the file
    (so pieces split their statements) and statements repeated across it."""
    path = tmp_path_factory.mktemp("data") / "lsbench.nq"
    write_nquads(generate(2_000), path)
    lines = path.read_text().splitlines(keepends=True)
    rng = np.random.default_rng(5)
    extra = []
    for k in range(40):
        extra.append(f'_:b{k} <http://example.org/label> "blank {k}" .\n')
        extra.append(f"_:b{k} <http://example.org/next> _:b{(k + 1) % 40} <http://example.org/g> .\n")
    mixed = lines + extra + [lines[i] for i in rng.integers(0, len(lines), 300)]
    order = rng.permutation(len(mixed))
    path.write_text("".join(mixed[i] for i in order))
    return path


def _quads(store_dir: Path) -> Counter:
    """The store's statements, each blank node named by what it says (its
    label is the load's own)."""
    rows = [tuple(None if t is None else format_term(t) for t in row)
            for row in Store.open(store_dir).query(ALL).rows()]
    label = {row[1]: row[3] for row in rows if row[2] == "<http://example.org/label>"}
    named = lambda t: f"_:[{label[t]}]" if t is not None and t.startswith("_:") else t  # noqa: E731
    return Counter(tuple(named(t) for t in row) for row in rows)


def _oxigraph(path: Path) -> Counter:
    rows = Counter()
    for q in ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS):
        label = lambda t: f'_:["blank {t.value[1:]}"]' if isinstance(t, ox.BlankNode) else str(t)  # noqa: E731
        g = None if isinstance(q.graph_name, ox.DefaultGraph) else str(q.graph_name)
        rows[(g, label(q.subject), str(q.predicate), label(q.object))] = 1
    return rows


def test_pieces_and_ranges_of_any_size_build_the_same_store(data, tmp_path, monkeypatch):
    whole = build_store_directory([data], tmp_path / "whole", piece_statements=10**9)
    expected = _quads(tmp_path / "whole")
    assert expected == _oxigraph(data) and whole.triples == len(expected)
    monkeypatch.setattr(spilled_csr, "BUCKET_EDGES", 500)
    monkeypatch.setattr(spilled_csr, "BLOCK_ROWS", 333)
    for piece in (1, 7, 1000):
        manifest = build_store_directory([data], tmp_path / f"p{piece}", piece_statements=piece)
        assert manifest.triples == whole.triples and manifest.terms == whole.terms
        assert manifest.graphs == whole.graphs
        assert _quads(tmp_path / f"p{piece}") == expected, piece


def test_a_syntax_error_in_a_later_piece_names_the_line_and_leaves_nothing(data, tmp_path):
    bad = tmp_path / "bad.nq"
    lines = data.read_text().splitlines(keepends=True)
    bad.write_text("".join(lines[:2000]) + "<http://a> <http://b> .\n" + "".join(lines[2000:]))
    with pytest.raises(Exception, match=r"bad\.nq.*2001"):
        build_store_directory([bad], tmp_path / "store", piece_statements=100)
    assert not (tmp_path / "store").exists() and not (tmp_path / "store.partial").exists()
