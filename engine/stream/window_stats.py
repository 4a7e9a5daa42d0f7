"""How a continuous query's windows went, counted for monitoring.

Per query, two distributions: how long each window took to evaluate, and
how long after its close (the arrival of the item or heartbeat that closed
it) its result was ready to send. They are plain counts in fixed buckets:
recording a window costs a bisect and a few additions under the engine's
lock, and the endpoint reads the counts when it is scraped (``/metrics``),
so no monitoring library reaches down into the engine's hot path.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import accumulate

#: upper bounds (seconds) of the buckets: 0.1 ms to 30 s, about 2.5x apart,
#: from a small query's evaluation to the server's default time limit
SECONDS_BUCKETS: tuple[float, ...] = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)


class SecondsHistogram:
    """Counts of durations per bucket (the last bucket: above every bound), and their sum."""

    def __init__(self, bounds: tuple[float, ...] = SECONDS_BUCKETS) -> None:
        self.bounds = bounds
        self._counts = [0] * (len(bounds) + 1)
        self.total_seconds = 0.0

    def observe(self, seconds: float) -> None:
        # bisect_left: a duration equal to a bound belongs to that bound's bucket ("le")
        self._counts[bisect_left(self.bounds, seconds)] += 1
        self.total_seconds += seconds

    def cumulative(self) -> list[int]:
        """Per bound, then for everything, how many durations were at most it
        (copied first: a scrape may read while the engine records)."""
        return list(accumulate(list(self._counts)))


class WindowStats:
    """The evaluation time and the report delay of one query's windows."""

    def __init__(self) -> None:
        self.evaluation = SecondsHistogram()
        self.delay = SecondsHistogram()

    def record(self, evaluation_seconds: float, delay_seconds: float) -> None:
        self.evaluation.observe(evaluation_seconds)
        self.delay.observe(max(delay_seconds, 0.0))

    @property
    def windows(self) -> int:
        """Windows recorded (reported by this process)."""
        return self.evaluation.cumulative()[-1]
