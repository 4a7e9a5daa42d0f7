"""The in-process ingest-steps benchmark reads, encodes and absorbs every triple it times."""

from benchmarks.ingest_steps import measure


def test_every_step_is_timed_over_the_bodies() -> None:
    triples, spent = measure(2_000, 0.3)
    assert triples > 1_000
    assert set(spent) == {"read", "encode", "absorb"} and all(s > 0 for s in spent.values())
