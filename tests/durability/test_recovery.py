"""Recovery of a data directory, in process: what was acknowledged comes back,
streams and queries resume exactly where they stopped, a torn record is dropped.

A "crash" here is dropping a DataDirectory without closing it (:func:`crash`):
everything it acknowledged was written to the log with os.write, and its
lock on the directory is gone, as in a killed process.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from engine.api import Store
from engine.durability import DataDirectory, DirectoryInUse
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine

EX = "http://example.org/"
STREAM = IRI(f"{EX}stream/s")
COUNTS = (f"REGISTER QUERY counts AS SELECT ?v (COUNT(*) AS ?n) FROM STREAM <{STREAM.value}> "
          f"[RANGE 3s STEP 1s] WHERE {{ ?x <{EX}v> ?v }} GROUP BY ?v")
NEW = (f"REGISTER ISTREAM fresh AS SELECT ?x FROM NAMED WINDOW <{EX}w> ON <{STREAM.value}> "
       f"[RANGE PT2S STEP PT1S] WHERE {{ WINDOW <{EX}w> {{ ?x <{EX}v> ?v }} }}")


def crash(data: DataDirectory) -> None:
    """What a killed process leaves of ``data``: what it wrote, and no lock on
    the directory (the kernel releases it); nothing is closed or flushed."""
    data.lock.release()


def contents(store: Store) -> set[tuple]:
    rows = store.query("SELECT * { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }").rows()
    return {tuple(map(str, row)) for row in rows}


def test_acknowledged_writes_survive_a_crash_with_and_without_a_checkpoint(tmp_path):
    data = DataDirectory.open(tmp_path, checkpoint_mb=1000)
    data.store.update(f'INSERT DATA {{ <{EX}a> <{EX}p> "one", _:b . GRAPH <{EX}g> {{ <{EX}a> <{EX}p> 2 }} }}')
    data.store.replace_graph(f"{EX}h", [(IRI(f"{EX}c"), IRI(f"{EX}p"), Literal("three"))])
    data.store.update(f"CREATE GRAPH <{EX}empty>")
    before = contents(data.store)
    crash(data)
    reopened = DataDirectory.open(tmp_path)
    assert contents(reopened.store) == before and reopened.recovery.records_replayed == 3
    assert IRI(f"{EX}empty") in reopened.store.named_graphs()
    reopened.checkpoint()
    # a blank node stored before the checkpoint is deleted after it
    reopened.store.update("DELETE { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(isBlank(?o)) }")
    reopened.store.drop_graph(f"{EX}h")
    after = contents(reopened.store)
    assert len(after) == len(before) - 2
    crash(reopened)
    again = DataDirectory.open(tmp_path)
    assert contents(again.store) == after
    assert again.recovery.checkpoint_lsn > 0 and again.recovery.records_replayed == 2
    assert IRI(f"{EX}empty") in again.store.named_graphs()


def test_a_streamed_triple_deleted_before_a_checkpoint_stays_deleted(tmp_path):
    """The batch that brought it is carried over the checkpoint (a pending
    window still reads it) and replayed at recovery for that window only."""
    data = DataDirectory.open(tmp_path, checkpoint_mb=1000)
    data.engine.declare_stream(StreamDefinition("s", STREAM))
    queue = data.engine.register(COUNTS).subscribe()
    triple = (IRI(f"{EX}x"), IRI(f"{EX}v"), Literal("gone"))
    data.engine.ingest("s", [(500, [triple]), (1000, [])])
    data.store.update(f'DELETE DATA {{ GRAPH <{STREAM.value}> {{ <{EX}x> <{EX}v> "gone" }} }}')
    data.checkpoint()
    data.engine.heartbeat("s", 2000)
    before = contents(data.store)
    windows = [[tuple(map(str, r)) for r in e.rows] for e in queue.drain()]
    assert not any('"gone"' in row for row in before)
    crash(data)
    again = DataDirectory.open(tmp_path)
    assert again.recovery.batches_carried > 0
    assert contents(again.store) == before
    # the window still saw the triple, as it did before the crash
    replayed = [[tuple(map(str, r)) for r in e.rows] for e in again.engine.subscribe("counts", 0).replay]
    assert replayed == windows == [[('"gone"', '"1"^^<http://www.w3.org/2001/XMLSchema#integer>')]] * 2


def test_a_torn_last_record_is_dropped_and_the_rest_recovered(tmp_path):
    data = DataDirectory.open(tmp_path)
    data.store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 1 }}")
    data.store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 2 }}")
    segment = data.wal.segments()[-1]
    whole = segment.read_bytes()
    data.store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 3 }}")
    torn = segment.read_bytes()[: len(whole) + (len(segment.read_bytes()) - len(whole)) // 2]
    segment.write_bytes(torn)  # the third record half written when the power went
    crash(data)
    reopened = DataDirectory.open(tmp_path)
    values = {row[0] for row in reopened.store.query(f"SELECT ?o {{ <{EX}a> <{EX}p> ?o }}").rows()}
    assert values == {Literal("1", "http://www.w3.org/2001/XMLSchema#integer"),
                      Literal("2", "http://www.w3.org/2001/XMLSchema#integer")}
    reopened.store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 4 }}")  # the log goes on after the tear
    crash(reopened)
    assert len(DataDirectory.open(tmp_path).store) == 3


def _batches(seed: int, count: int) -> list[list[tuple[int, list]]]:
    rng = random.Random(seed)
    ts, out = 0, []
    for _ in range(count):
        items = []
        for _ in range(rng.randint(1, 4)):
            ts += rng.randint(50, 600)
            subject, value = IRI(f"{EX}x{rng.randint(0, 30)}"), Literal(str(rng.randint(0, 3)))
            items.append((ts, [(subject, IRI(f"{EX}v"), value)]))
        out.append(items)
    return out


def _events(engine: StreamEngine, name: str, after: int = 0) -> list[tuple]:
    return [(event.sequence, event.start_ms, event.end_ms, sorted(tuple(map(str, row)) for row in event.rows))
            for event in engine.subscribe(name, after).replay]


@pytest.mark.parametrize("checkpoint_every", [0, 7])
def test_queries_resume_at_the_next_window_as_if_the_server_never_stopped(tmp_path, checkpoint_every):
    """Windows after each crash equal those of a run without crashes: same
    numbers, same rows, none twice, none skipped (ISTREAM needs the previous
    window's rows, kept by the checkpoint)."""
    batches = _batches(5, 60)
    reference = StreamEngine(Store(), retain_events=10_000)
    reference.declare_stream(StreamDefinition("s", STREAM))
    reference.register(COUNTS)
    reference.register(NEW)
    for items in batches:
        reference.ingest("s", items)
    expected = {name: _events(reference, name) for name in ("counts", "fresh")}
    assert len(expected["counts"]) > 40 and len(expected["fresh"]) > 40

    path = Path(tmp_path)
    data = DataDirectory.open(path, engine_options={"retain_events": 10_000})
    data.engine.declare_stream(StreamDefinition("s", STREAM))
    data.engine.register(COUNTS)
    data.engine.register(NEW)
    for n, items in enumerate(batches, 1):
        data.engine.ingest("s", items)
        if checkpoint_every and n % checkpoint_every == 0:
            data.checkpoint()
        if n % 9 == 0:  # crash, and start again from the directory
            crash(data)
            data = DataDirectory.open(path, engine_options={"retain_events": 10_000})
    for name in ("counts", "fresh"):
        assert _events(data.engine, name) == expected[name], name
    assert data.engine.streams["s"].watermark == batches[-1][-1][0]


def test_the_output_stream_of_a_register_stream_query_keeps_its_watermark(tmp_path):
    """It had no catalog row, so a checkpoint lost its watermark: after a
    restart it held triples but had no watermark at all."""
    data = DataDirectory.open(tmp_path)
    data.engine.declare_stream(StreamDefinition("s", STREAM))
    data.engine.register(f"REGISTER STREAM derived AS CONSTRUCT {{ ?x <{EX}seen> ?v }} FROM STREAM "
                         f"<{STREAM.value}> [RANGE 1s STEP 1s] WHERE {{ ?x <{EX}v> ?v }}")
    for items in _batches(3, 12):
        data.engine.ingest("s", items)
    output = next(state for state in data.engine.streams.values() if state.definition.name != "s")
    assert output.watermark is not None
    data.checkpoint()
    crash(data)
    reopened = DataDirectory.open(tmp_path)
    assert reopened.engine.streams[output.definition.name].watermark == output.watermark


def test_a_second_server_cannot_open_a_directory_in_use(tmp_path):
    data = DataDirectory.open(tmp_path)
    with pytest.raises(DirectoryInUse, match=f"pid {os.getpid()}"):
        DataDirectory.open(tmp_path)
    data.store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 1 }}")  # the first one goes on
    data.close()
    assert len(DataDirectory.open(tmp_path).store) == 1  # closed: the next one may open it
