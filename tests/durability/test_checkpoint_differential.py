"""Checkpoints against the store they were taken from: random stores, checkpointed and
reopened, hold the same quads with the same spellings, and every term keeps its ID.

Each seed builds a store the way a server does (a mapped base loaded from a
file or none, updates adding terms of every kind, blank nodes, deletes that
rebuild a graph in memory, bulk loads that build compact graphs, graph drops
and replacements, stream batches absorbed as timestamped deltas that a
pending window still needs apart), checkpoints it, "crashes" and reopens it,
and compares, for several rounds, so that later checkpoints start from a
mapped one (hard links, the merge of a mapped graph with its deltas, the
dictionary's appended terms and holes). The chunk sizes are made tiny so that
every chunk boundary of the writers is crossed many times.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from engine.durability import DataDirectory, checkpoint_terms
from engine.rdf import IRI, XSD, BNode, Literal, Term, format_term
from engine.store import DEFAULT_GRAPH, csr_stream
from engine.stream import StreamDefinition
from tests.durability.test_recovery import crash

EX = "http://example.org/"
STREAM = IRI(f"{EX}stream")
TIMING = IRI(f"{EX}at")
WINDOW = (f"REGISTER QUERY pending AS SELECT (COUNT(*) AS ?n) FROM STREAM <{STREAM.value}> "
          f"[RANGE 10s STEP 1s] WHERE {{ ?x ?p ?o }}")
GRAPHS = [None, f"{EX}g1", f"{EX}g2", f"{EX}g/é"]


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch):
    monkeypatch.setattr(csr_stream, "CHUNK", 61)
    monkeypatch.setattr(csr_stream, "INDEX_GROUP", 37)
    monkeypatch.setattr(checkpoint_terms, "TERM_CHUNK", 97)
    monkeypatch.setattr(checkpoint_terms, "HASH_CHUNK", 29)


def random_term(rng: random.Random, position: str) -> Term:
    """A subject, predicate or object of any kind the store can hold."""
    if position == "p":
        return IRI(f"{EX}p{rng.randint(0, 12)}")
    roll = rng.random()
    if roll < 0.35 or position == "s" and roll < 0.8:
        return IRI(f"{EX}{rng.choice(['', 'é/', 'a%20b/'])}n{rng.randint(0, 400)}")
    if roll < 0.5 or position == "s":
        return BNode(f"b{rng.randint(0, 60)}")
    kind = rng.randrange(10)
    n = rng.randint(-10**20, 10**20) if rng.random() < 0.1 else rng.randint(-50, 500)
    return [
        Literal(f"text {n} with \"quotes\", \\ and\nnew lines, é 𝄞"),
        Literal(f"hello {n}", lang=rng.choice(["en", "de-ch", "fr"])),
        Literal(str(n), XSD + "integer"),
        Literal(f"{n}.25", XSD + "decimal"),
        Literal(rng.choice(["1.5E3", "NaN", "INF", "-0.0E0", f"{n}E1"]), XSD + "double"),
        Literal(rng.choice(["true", "false"]), XSD + "boolean"),
        Literal(f"2026-11-{rng.randint(10, 28)}T10:00:00Z", XSD + "dateTime"),
        Literal(f"v{n}", f"{EX}datatype"),
        Literal(""),
        Literal("x" * rng.randint(60, 300)),
    ][kind]


def random_triples(rng: random.Random, count: int) -> list[tuple[Term, Term, Term]]:
    return [(random_term(rng, "s"), random_term(rng, "p"), random_term(rng, "o")) for _ in range(count)]


def quads(data: DataDirectory) -> dict[str, set[tuple[str, str, str]]]:
    """Every graph's triples, spelled (named graphs by name, empty ones included)."""
    quad_store = data.store.quad_store
    terms = quad_store.terms
    out = {}
    for graph_id, graph in quad_store.snapshot().graphs.items():
        name = "" if graph_id == DEFAULT_GRAPH else format_term(terms.decode(graph_id))
        columns = [terms.decode_many(np.asarray(c)) for c in (graph.s, graph.p, graph.o)]
        out[name] = {tuple(map(format_term, triple)) for triple in zip(*columns, strict=True)}
    if not out.get(""):
        out.pop("", None)  # an empty default graph is no graph
    return out


def term_ids(data: DataDirectory) -> dict[str, int]:
    """The ID of every term the store's graphs use."""
    quad_store = data.store.quad_store
    ids = set()
    for graph_id, graph in quad_store.snapshot().graphs.items():
        ids.add(graph_id)
        for column in (graph.s, graph.p, graph.o):
            ids.update(np.asarray(column).tolist())
    ids.discard(DEFAULT_GRAPH)
    return {format_term(quad_store.terms.decode(i)): i for i in ids}


def mutate(data: DataDirectory, rng: random.Random, ts: list[int]) -> None:
    """One random write of the kinds a server takes."""
    store, quad_store = data.store, data.store.quad_store
    roll = rng.random()
    graph = rng.choice(GRAPHS)
    if roll < 0.3:
        store.add(random_triples(rng, rng.randint(1, 40)), graph)
    elif roll < 0.45:  # delete some stored triples, blank nodes and all (a graph rebuilt, or its deltas cut)
        snapshot = quad_store.snapshot()
        graph_id = rng.choice(sorted(snapshot.graphs))
        stored = snapshot.graphs[graph_id]
        if len(stored):
            rows = np.array(sorted(rng.sample(range(len(stored)), min(len(stored), rng.randint(1, 30)))))
            txn = quad_store.begin()
            txn.remove(graph_id, *(np.asarray(c)[rows] for c in (stored.s, stored.p, stored.o)))
            txn.commit()
    elif roll < 0.55:  # a bulk load: a compact graph built in memory (or a delta of a loaded one)
        lines = "".join(f"{format_term(s)} {format_term(p)} {format_term(o)} .\n"
                        for s, p, o in random_triples(rng, rng.choice([50, 4500])))
        store.load(lines.encode(), "nt", graph)
    elif roll < 0.6 and graph is not None:
        store.drop_graph(graph) if rng.random() < 0.5 else store.replace_graph(graph, random_triples(rng, 5))
    elif roll < 0.65:
        store.update(f"CREATE SILENT GRAPH <{EX}empty{rng.randint(0, 3)}>")
    else:  # stream items: timeless triples absorbed as deltas a pending window still needs apart
        items = []
        for _ in range(rng.randint(1, 5)):
            ts[0] += rng.randint(1, 700)
            timing = (IRI(f"{EX}obs{ts[0]}"), TIMING, Literal(str(ts[0])))
            triples = [*random_triples(rng, rng.randint(0, 6)), timing]
            items.append((ts[0], triples))
        data.engine.ingest("s", items)


def initial_file(tmp: Path, rng: random.Random) -> list[Path]:
    path = tmp / "initial.nq"
    lines = []
    for s, p, o in random_triples(rng, 3000):
        graph = rng.choice(GRAPHS)
        lines.append(f"{format_term(s)} {format_term(p)} {format_term(o)}"
                     f"{'' if graph is None else ' <' + graph + '>'} .\n")
    path.write_text("".join(lines), encoding="utf-8")
    return [path]


@pytest.mark.parametrize("seed", range(5))
def test_a_checkpoint_reopens_as_the_store_it_was_taken_from(tmp_path, seed):
    rng = random.Random(seed)
    directory = tmp_path / "data"
    files = initial_file(tmp_path, rng) if seed % 2 == 0 else None
    data = DataDirectory.open(directory, checkpoint_mb=1000, initial_files=files)
    data.engine.declare_stream(StreamDefinition("s", STREAM, timing=frozenset({TIMING.value})))
    data.engine.register(WINDOW)
    ts = [1_000]
    for _ in range(4):
        for _ in range(rng.randint(5, 25)):
            mutate(data, rng, ts)
        if rng.random() < 0.3:
            data.checkpoint()  # one more in between: the final one then starts from it
            for _ in range(rng.randint(1, 5)):
                mutate(data, rng, ts)
        expected, ids = quads(data), term_ids(data)
        assert data.take_checkpoint().taken
        crash(data)
        data = DataDirectory.open(directory, checkpoint_mb=1000)
        assert data.recovery.records_replayed == 0  # the checkpoint alone holds the store
        assert quads(data) == expected
        assert term_ids(data) == ids  # every term kept its ID
    data.close()
