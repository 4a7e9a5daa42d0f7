"""LSBench data for the cluster's differential tests: the stored graphs as an
N-Quads file, and the five streams cut into batches that end with a heartbeat."""

from __future__ import annotations

from pathlib import Path

from benchmarks.cluster_scaling import write_nquads
from benchmarks.lsbench_data import START_MS, STREAMS, LSBenchData, StreamGenerator


def stored_nquads(data: LSBenchData, path: Path) -> Path:
    """``data``'s stored graphs written to ``path``."""
    write_nquads(data, path)
    return path


def stream_batches(data: LSBenchData, rates: dict[str, float], batch_ms: int, data_ms: int
                   ) -> list[tuple[str, list]]:
    """``(stream, items)`` per stream and ``batch_ms`` of stream time, in time
    order; each batch ends with a heartbeat at its end (so windows close)."""
    items = StreamGenerator(data, rates).advance(START_MS + data_ms)
    batches = []
    for end in range(START_MS + batch_ms, START_MS + data_ms + 1, batch_ms):
        for name in STREAMS:
            batch = [item for item in items[name] if end - batch_ms <= item[0] < end]
            batches.append((name, [*batch, (end, [])]))
    return batches
