"""What an LSBench latency run records per query, shared by the benchmarks that
time L1-L6 (``lsbench_latency`` for the engine and HTTP, ``lsbench_composite``
for pyoxigraph plus a window graph). Kept apart so that either can import it
without importing the other: ``lsbench_latency`` pulls in httpx and the server,
and may itself import the composite to report it side by side."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

from benchmarks.lsbench_queries import RANGE_MS, STEP_MS

#: windows run before timing starts, so that every timed window is full
WARMUP_WINDOWS = RANGE_MS // STEP_MS


@dataclass
class Latencies:
    """Timed windows of one query: latency (ms) and rows of each, and the
    wall time spent ingesting against the stream time it covered."""

    samples_ms: list[float] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    ingest_s: float = 0.0
    stream_s: float = 0.0

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def p99_ms(self) -> float:
        return float(np.percentile(self.samples_ms, 99))

    @property
    def load(self) -> float:
        return self.ingest_s / self.stream_s
