"""Wall time per triple of the ingest steps, in process (no HTTP, no query):
reading the bodies of :mod:`benchmarks.ingest_throughput`, encoding their
terms, and absorbing their rows into each stream's layered graph (append
and compaction), so a change to one step is measured apart from the rest.

    python -m benchmarks.ingest_steps [--stored 20000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import time

from benchmarks.ingest_throughput import stream_bodies
from benchmarks.lsbench_data import generate
from engine.store.compact_dictionary import CompactTermDictionary
from engine.store.layered_graph import LayeredGraph
from engine.store.memory_graph import MemoryGraph
from engine.stream.batch_format import MEDIA_TYPE
from engine.stream.batch_rows import batch_rows
from engine.stream.items import read_batch


def measure(stored: int, seconds: float) -> tuple[int, dict[str, float]]:
    """``(triples, seconds per step)`` over ``seconds`` of application time."""
    bodies = stream_bodies(generate(stored), seconds, 1.0)
    spent: dict[str, float] = {}
    started = time.perf_counter()
    batches = [read_batch(body.data, MEDIA_TYPE) for body in bodies]
    spent["read"] = time.perf_counter() - started
    terms = CompactTermDictionary()
    started = time.perf_counter()
    ids = [terms.encode_spelled_transient(batch.terms) for batch in batches]
    spent["encode"] = time.perf_counter() - started
    graphs = {body.stream: LayeredGraph(MemoryGraph.empty()) for body in bodies}
    started = time.perf_counter()
    for body, batch, batch_ids in zip(bodies, batches, ids, strict=True):
        ts, s, p, o = batch_rows(batch.times, batch.counts, batch_ids)
        graph = graphs[body.stream].appended(s, p, o, ts, 0)
        graphs[body.stream] = graph.compacted({0: body.close_ms + 1})
    spent["absorb"] = time.perf_counter() - started
    return sum(body.triples for body in bodies), spent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stored", type=int, default=20_000, help="LSBench stored triples")
    parser.add_argument("--seconds", type=float, default=5.0, help="application time of bodies")
    args = parser.parse_args(argv)
    triples, spent = measure(args.stored, args.seconds)
    print(f"{triples:,} triples: " + ", ".join(f"{step} {s / triples * 1e6:.2f} us/triple"
                                                 for step, s in spent.items()))


if __name__ == "__main__":
    main()
