"""A reader's copy of a data directory following its writer's log
(:mod:`engine.durability.log_follower`), in one process: a real
:class:`DataDirectory` writes, a :class:`LogFollower` reads the same files."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from engine.api import Store
from engine.durability import DataDirectory
from engine.durability.log_follower import FellBehind, LogFollower
from engine.durability.wal import HEADER


def rows(store: Store, query: str = "SELECT ?s ?o { ?s <urn:p> ?o }") -> set[tuple[str, ...]]:
    return {tuple(str(v) for v in row) for row in store.query(query).rows()}


def graph_rows(store: Store) -> set[tuple[str, ...]]:
    return rows(store, "SELECT ?g ?s ?o { GRAPH ?g { ?s <urn:p> ?o } }")


def random_update(rng: random.Random, k: int) -> str:
    """An update of a few random operations (inserts, deletes, named graphs)."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        if choice < 0.6:
            triples = " ".join(f"<urn:s{rng.randrange(30)}> <urn:p> {rng.randrange(5)} ."
                               for _ in range(rng.randint(1, 8)))
            parts.append(f"INSERT DATA {{ {triples} }}")
        elif choice < 0.9:
            parts.append(f"DELETE WHERE {{ <urn:s{rng.randrange(30)}> <urn:p> ?o }}")
        else:
            parts.append(f"INSERT DATA {{ GRAPH <urn:g{k % 3}> {{ <urn:x{k}> <urn:p> {k} }} }}")
    return " ; ".join(parts)


@pytest.fixture
def data(tmp_path: Path):
    directory = DataDirectory.open(tmp_path / "data", checkpoint_mb=1000)
    yield directory
    directory.close()


def test_a_follower_matches_the_writer_after_every_catch_up_across_checkpoints(data):
    rng = random.Random(28)
    follower = LogFollower.open(data.path)
    try:
        for k in range(60):
            data.store.update(random_update(rng, k))
            if rng.random() < 0.15:
                follower.catch_up()  # at most one checkpoint between two catch-ups (see the last test)
                data.checkpoint()  # a new segment; the old one is removed while the follower reads it
            if rng.random() < 0.3:
                follower.catch_up()
                assert follower.applied == data.wal.last_lsn
                assert rows(follower.store) == rows(data.store)
                assert graph_rows(follower.store) == graph_rows(data.store)
        follower.catch_up()
        assert rows(follower.store) == rows(data.store)
    finally:
        follower.close()
    late = LogFollower.open(data.path)  # a new reader starts from the newest checkpoint and the log after it
    try:
        assert late.applied == data.wal.last_lsn
        assert rows(late.store) == rows(data.store) and graph_rows(late.store) == graph_rows(data.store)
    finally:
        late.close()


def test_a_record_being_written_is_not_applied_until_it_is_whole(data):
    follower = LogFollower.open(data.path)
    try:
        data.store.update("INSERT DATA { <urn:a> <urn:p> 1 }")
        follower.catch_up()
        before = rows(data.store)
        segment = data.wal.segments()[-1]
        whole = segment.read_bytes()
        data.store.update("INSERT DATA { <urn:b> <urn:p> 2 . <urn:c> <urn:p> 3 }")
        record = segment.read_bytes()[len(whole):]
        after = rows(data.store)
        # the segment as a reader may find it while the write is under way: growing prefixes of the record
        cuts = {1, HEADER.size - 1, HEADER.size, HEADER.size + 1, len(record) // 2, len(record) - 1}
        for cut in sorted(cuts):
            os.truncate(segment, len(whole))
            with open(segment, "r+b") as out:
                out.seek(len(whole))
                out.write(record[:cut])
            follower.catch_up()
            assert follower.applied == data.wal.last_lsn - 1
            assert rows(follower.store) == before
        with open(segment, "r+b") as out:
            out.seek(len(whole))
            out.write(record)
        follower.catch_up()
        assert follower.applied == data.wal.last_lsn
        assert rows(follower.store) == after and len(after) == 3
    finally:
        follower.close()


def test_a_follower_two_checkpoints_behind_says_it_fell_behind(data):
    follower = LogFollower.open(data.path)  # reading the first segment
    try:
        data.store.update("INSERT DATA { <urn:a> <urn:p> 1 }")
        data.checkpoint()  # a second segment; the first is removed (the follower keeps it open)
        data.store.update("INSERT DATA { <urn:b> <urn:p> 2 }")
        data.checkpoint()  # a third; the second is removed before the follower opened it
        data.store.update("INSERT DATA { <urn:c> <urn:p> 3 }")
        with pytest.raises(FellBehind):
            follower.catch_up()
    finally:
        follower.close()
    again = LogFollower.open(data.path)  # what the server does with such a reader: start it again
    try:
        assert rows(again.store) == rows(data.store) and len(rows(again.store)) == 3
    finally:
        again.close()
