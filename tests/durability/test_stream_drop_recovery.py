"""A dropped stream stays dropped after a crash and after a checkpoint, and a
stream declared again under its name comes back as that new stream, with
its own data only (issue 26, item 6).

Seeded workloads over two stream names (declarations, batches, counting
queries registered and unregistered, drops, refused drops, declarations
again after a drop, checkpoints, crashes) are run against a data directory
and, as the oracle, against an in-memory engine that never restarts. After
every crash the recovered streams (definition, watermark, triples logged),
queries and stored graphs must be the oracle's, and at the end every
query's events too: a checkpoint that carried the
batches of a dropped stream over to the new stream of its name, or a
catalog row that confused the two, shows here.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.api import Store
from engine.durability import DataDirectory
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine

EX = "http://example.org/"
NAMES = ("s", "t")


def crash(data: DataDirectory) -> None:
    """What a killed process leaves: what it wrote, and no lock on the directory."""
    data.lock.release()


def definition(name: str, incarnation: int) -> StreamDefinition:
    # every incarnation has the same IRI (so the queries' text is the same) but its own graph
    return StreamDefinition(name, IRI(f"{EX}stream/{name}"), timing=frozenset({f"{EX}t"}),
                            graph=IRI(f"{EX}graph/{name}/{incarnation}"))


def registration(query: str, name: str) -> str:
    return (f"REGISTER QUERY {query} AS SELECT ?v (COUNT(*) AS ?n) FROM STREAM <{EX}stream/{name}> "
            f"[RANGE 2s STEP 1s] FROM <{EX}graph/{name}/0> WHERE {{ {{ ?x <{EX}t> ?v }} UNION "
            f"{{ ?x <{EX}v> ?v }} }} GROUP BY ?v")


def state_of(engine: StreamEngine) -> dict:
    """Per stream: its graph (which declaration it is), watermark and triples
    logged; and the queries. (The rows kept for windows are not compared: a
    checkpoint carries the items windows need, where a process that never
    stopped frees whole chunks, so more may stay; the events show whether
    the windows read the same.)"""
    streams = {name: (s.definition.stored_graph.value, s.watermark, s.log.total)
               for name, s in engine.streams.items()}
    return {**streams, "queries": sorted(engine.queries)}


def stored(store: Store) -> set[tuple]:
    return {tuple(map(str, row)) for row in store.query("SELECT * { GRAPH ?g { ?s ?p ?o } }").rows()}


def events_of(engine: StreamEngine) -> dict[str, list]:
    return {name: [(e.sequence, e.start_ms, e.end_ms, sorted(tuple(map(str, r)) for r in e.rows))
                   for e in q.subscribe(0).replay] for name, q in engine.queries.items()}


def run(seed: int, path: Path, steps: int = 50) -> dict:
    rng = random.Random(seed)
    oracle = StreamEngine(Store())
    data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
    incarnations = dict.fromkeys(NAMES, -1)
    clock = dict.fromkeys(NAMES, 0)  # each stream's next timestamp
    figures = {"drops": 0, "refused drops": 0, "crashes": 0, "checkpoints": 0, "redeclared": 0}
    serial = 0

    def both(call) -> bool:
        """Make the write against the oracle and the data directory: both refuse it or neither."""
        try:
            call(oracle)
            accepted = True
        except Exception:
            accepted = False
        try:
            call(data.engine)
            assert accepted, "the data directory accepted a write the oracle refused"
        except AssertionError:
            raise
        except Exception as exc:
            assert not accepted, f"the data directory refused a write the oracle accepted: {exc}"
        return accepted

    try:
        for _ in range(steps):
            serial += 1
            roll = rng.random()
            name = rng.choice(NAMES)
            alive = name in oracle.streams
            if not alive and roll < 0.5:
                incarnations[name] += 1
                figures["redeclared"] += incarnations[name] > 0
                clock[name] = rng.randint(0, 3) * 1000  # often before the old stream's watermark
                both(lambda e, n=name: e.declare_stream(definition(n, incarnations[n])))
            elif alive and roll < 0.45:
                items = []
                for k in range(rng.randint(1, 4)):
                    clock[name] += rng.randint(0, 700)
                    predicate = "t" if k % 2 else "v"
                    items.append((clock[name], [(IRI(f"{EX}x{rng.randint(0, 3)}"), IRI(f"{EX}{predicate}"),
                                                 Literal(f"{name}{incarnations[name]}-{serial}-{k}"))]))
                both(lambda e, n=name, i=items: e.ingest(n, i))
            elif alive and roll < 0.6:
                both(lambda e, n=name, q=f"q{serial}": e.register(registration(q, n)))
            elif roll < 0.72 and oracle.queries:
                query = rng.choice(sorted(oracle.queries))
                both(lambda e, q=query: e.unregister(q))
            elif alive and roll < 0.85:
                dropped = both(lambda e, n=name: e.drop_stream(n))
                figures["drops" if dropped else "refused drops"] += 1
            elif roll < 0.92:
                data.checkpoint()
                figures["checkpoints"] += 1
            else:
                crash(data)
                data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
                figures["crashes"] += 1
                assert state_of(data.engine) == state_of(oracle)
                assert stored(data.store) == stored(oracle.store)
        crash(data)
        data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
        assert state_of(data.engine) == state_of(oracle)
        assert stored(data.store) == stored(oracle.store)
        assert events_of(data.engine) == events_of(oracle)
    finally:
        data.close()
        oracle.close()
    return figures


@pytest.mark.parametrize("seed", range(4))
def test_drops_and_declarations_again_survive_crashes_and_checkpoints(seed, tmp_path):
    figures = run(seed, tmp_path)
    assert figures["drops"] and figures["crashes"] + figures["checkpoints"], figures


def test_a_checkpoint_carries_the_new_streams_batches_only(tmp_path):
    """The old stream's batches, logged before the checkpoint, are not read
    as the new stream's by the recovery (they are later in time than its
    own, so they would make its first batch late)."""
    data = DataDirectory.open(tmp_path, sync=False)
    engine = data.engine
    engine.declare_stream(definition("s", 0))
    engine.ingest("s", [(50_000, [(IRI(f"{EX}x"), IRI(f"{EX}t"), Literal("old"))])])
    engine.drop_stream("s")
    engine.declare_stream(definition("s", 1))
    engine.register(registration("q", "s"))
    engine.ingest("s", [(100, [(IRI(f"{EX}x"), IRI(f"{EX}t"), Literal("new"))])])
    data.checkpoint()
    expected = state_of(engine)
    crash(data)
    data = DataDirectory.open(tmp_path, sync=False)
    try:
        assert state_of(data.engine) == expected
        assert data.recovery.batches_carried == 1
        data.engine.heartbeat("s", 1000)
        (event,) = data.engine.query("q").subscribe(0).replay
        assert [(row[0].lexical, row[1].lexical) for row in event.rows] == [("new", "1")]
    finally:
        data.close()


def test_a_drop_whose_record_the_log_lost_is_forgotten_by_the_catalog(tmp_path):
    """An OS crash can lose a written record whose catalog row was committed:
    the drop was never acknowledged, so the stream is back, and stays after a
    checkpoint; a declaration of the name after it, lost too, is gone."""
    from tests.durability.test_log_faults import frames

    data = DataDirectory.open(tmp_path, sync=False)
    data.engine.declare_stream(definition("s", 0))
    data.engine.ingest("s", [(1000, [(IRI(f"{EX}x"), IRI(f"{EX}v"), Literal("kept"))])])
    segment = data.wal.segments()[-1]
    data.engine.drop_stream("s")
    lost_from = frames(segment)[-1][1]
    data.engine.declare_stream(definition("s", 1))
    crash(data)
    with segment.open("r+b") as out:
        out.truncate(lost_from)  # the drop's and the declaration's records lost, their rows kept
    data = DataDirectory.open(tmp_path, sync=False)
    try:
        assert state_of(data.engine) == {"s": (f"{EX}graph/s/0", 1000, 1), "queries": []}
        data.checkpoint()
    finally:
        data.close()
    data = DataDirectory.open(tmp_path, sync=False)
    try:
        assert state_of(data.engine) == {"s": (f"{EX}graph/s/0", 1000, 1), "queries": []}
        assert [row.declared_lsn for row in data.catalog.streams(include_dropped=True)] == [1]
    finally:
        data.close()
