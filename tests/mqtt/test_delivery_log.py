"""The identities of the messages a stream ingested survive a crash and a
checkpoint (the data directory's log keeps them), and a stream remembers
only the newest ones. No broker: the source's dedupe rests on this."""

from __future__ import annotations

import random

from engine.durability import DataDirectory
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition
from engine.stream.deliveries import RecentDeliveries
from engine.stream.spelled_batch import SpelledBatch

EX = "http://example.org/"


def crash(data: DataDirectory) -> None:
    """What a killed process leaves: what it wrote, and no lock on the directory."""
    data.lock.release()


def item(k: int) -> tuple[int, list]:
    return 1000 + k, [(IRI(f"{EX}m{k}"), IRI(f"{EX}p"), Literal(str(k)))]


def test_identities_survive_a_crash_and_a_checkpoint(tmp_path):
    path = tmp_path / "data"
    data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
    source = {"broker": "mqtt://h", "topic": "t"}
    data.engine.declare_stream(StreamDefinition("s", IRI(f"{EX}s"), source=source))
    batches = [[item(k) for k in range(at, at + 3)] for at in range(0, 30, 3)]
    for number, batch in enumerate(batches[:5]):
        identities = [f"id-{number}-{k}" for k in range(3)]
        data.engine.ingest("s", SpelledBatch.of_items(batch), deliveries=identities)
    data.engine.ingest("s", SpelledBatch.of_items([item(40)]))  # over HTTP: no identity
    crash(data)

    data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
    remembered = data.engine.streams["s"].deliveries
    assert list(remembered) == [f"id-{n}-{k}" for n in range(5) for k in range(3)]
    assert data.engine.streams["s"].definition.source == source
    data.checkpoint()  # folds the batches that logged them
    data.engine.ingest("s", SpelledBatch.of_items([item(50)]), deliveries=["late-one"])
    crash(data)

    data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
    assert list(data.engine.streams["s"].deliveries)[-2:] == ["id-4-2", "late-one"]
    assert len(data.engine.streams["s"].deliveries) == 16
    data.checkpoint()
    data.checkpoint()  # a checkpoint right after another carries them again
    data.close()
    data = DataDirectory.open(path, sync=False, checkpoint_mb=1000)
    assert len(data.engine.streams["s"].deliveries) == 16 and data.engine.streams["s"].watermark == 1050
    data.close()


def test_a_stream_remembers_the_newest_identities_only():
    rng = random.Random(30)
    recent = RecentDeliveries(capacity=50)
    added: list[str] = []
    for _ in range(40):
        batch = [f"m{rng.randrange(200)}" for _ in range(rng.randrange(1, 9))]
        recent.add(batch)
        for identity in batch:
            if identity in added:
                added.remove(identity)
            added.append(identity)
    assert list(recent) == added[-50:]
    assert all(identity in recent for identity in added[-50:])
    assert not any(identity in recent for identity in added[:-50])
