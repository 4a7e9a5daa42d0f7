"""Queries whose windows have different STEPs, and count windows over items
that repeat triples, resume after checkpoints and crashes with the events of
a run that never stopped (issue 26, items 1 and 5).

A multi-STEP query's clock is one number (its next instant over the STEPs'
greatest common divisor), kept by the catalog as a single-STEP query's next
window index; a count window numbers each item's distinct triples, and the
batches a checkpoint carries must be counted the same way when they are
replayed. The streams' watermarks move apart (one lags by up to seconds), so
the carried batches and the windows pending at a crash differ per stream.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.api import Store
from engine.durability import DataDirectory
from engine.rdf import IRI
from engine.stream import StreamDefinition, StreamEngine

EX = "http://example.org/"
QUERIES = {
    "two_steps": f"REGISTER QUERY two_steps AS SELECT ?a ?c FROM STREAM <{EX}s1> [RANGE 2s STEP 1500ms] "
                 f"FROM STREAM <{EX}s2> [RANGE 700ms STEP 400ms] WHERE {{ ?a <{EX}p> ?b . ?b <{EX}q> ?c }}",
    "named": f"REGISTER ISTREAM named AS SELECT ?a ?b FROM NAMED WINDOW <{EX}w1> ON <{EX}s1> "
             f"[RANGE PT1S STEP PT0.25S] FROM NAMED WINDOW <{EX}w2> ON <{EX}s2> [RANGE PT3S STEP PT1S] "
             f"WHERE {{ WINDOW <{EX}w1> {{ ?a <{EX}p> ?b }} WINDOW <{EX}w2> {{ ?b <{EX}p> ?a }} }}",
    "count": f"REGISTER QUERY count AS SELECT ?s ?o FROM STREAM <{EX}s2> [TRIPLES 5] "
             f"WHERE {{ ?s <{EX}q> ?o }}",
}


def crash(data: DataDirectory) -> None:
    """What a killed process leaves: what it wrote, and no lock on the directory."""
    data.lock.release()


def _posts(seed: int, count: int) -> list[tuple[str, list]]:
    """Posts to s1 and s2, s2 lagging behind s1 by up to 3 s; items of 1-4
    triples over few vertices, an item often repeating one of its triples."""
    rng = random.Random(seed)
    clocks = {"s1": 0, "s2": 0}
    posts = []
    for _ in range(count):
        name = "s2" if clocks["s2"] + 3_000 < clocks["s1"] or rng.random() < 0.4 else "s1"
        items = []
        for _ in range(rng.randint(1, 3)):
            clocks[name] += rng.randint(20, 400)
            triples = [(IRI(f"{EX}v{rng.randint(0, 5)}"), IRI(EX + rng.choice("pq")),
                        IRI(f"{EX}v{rng.randint(0, 5)}")) for _ in range(rng.randint(1, 3))]
            items.append((clocks[name], triples + triples[:rng.randint(0, 2)]))
        posts.append((name, items))
    return posts


def _events(engine: StreamEngine, name: str) -> list[tuple]:
    return [(event.sequence, event.start_ms, event.end_ms, event.windows,
             sorted(tuple(map(str, row)) for row in event.rows))
            for event in engine.subscribe(name, 0).replay]


def _declare(engine: StreamEngine) -> None:
    for name in ("s1", "s2"):
        engine.declare_stream(StreamDefinition(name, IRI(EX + name)))


@pytest.mark.parametrize("checkpoint_every", [0, 5])
def test_multi_step_and_count_windows_resume_as_if_the_server_never_stopped(tmp_path, checkpoint_every):
    posts = _posts(3, 70)
    reference = StreamEngine(Store(), retain_events=10_000)
    _declare(reference)
    for text in QUERIES.values():
        reference.register(text)
    for name, items in posts:
        reference.ingest(name, items)
    expected = {name: _events(reference, name) for name in QUERIES}
    assert all(len(events) > 20 for events in expected.values()), {n: len(e) for n, e in expected.items()}

    path = Path(tmp_path)
    options = {"retain_events": 10_000}
    data = DataDirectory.open(path, engine_options=options)
    _declare(data.engine)
    for text in QUERIES.values():
        data.engine.register(text)
    carried = 0
    for n, (name, items) in enumerate(posts, 1):
        data.engine.ingest(name, items)
        if checkpoint_every and n % checkpoint_every == 0:
            data.checkpoint()
        if n % 9 == 0:  # crash, and start again from the directory
            crash(data)
            data = DataDirectory.open(path, engine_options=options)
            carried += data.recovery.batches_carried
    for name in QUERIES:
        assert _events(data.engine, name) == expected[name], name
    assert carried > 0 or not checkpoint_every
