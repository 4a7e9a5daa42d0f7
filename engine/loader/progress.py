"""The load's progress bar and its per-stage clock.

A driver thread polls Spark's status tracker twice a second: the bar shows
the load step, the tasks of the running Spark stages, and the triples encoded
so far (an accumulator the tasks add to when they finish, so it moves in
steps of one input split). The same polling notes when each Spark stage was
first and last seen running, which is how the report splits the time.
"""

from __future__ import annotations

import threading
import time

from pyspark.sql import SparkSession
from tqdm import tqdm

POLL_SECONDS = 0.25


class Progress:
    def __init__(self, spark: SparkSession, triples, enabled: bool) -> None:
        self._sc = spark.sparkContext
        self._triples = triples
        self._step = "starting"
        self._bar = tqdm(unit=" triples", unit_scale=True, disable=None if enabled else True,
                         dynamic_ncols=True, mininterval=0.5)
        #: (step, Spark stage id) -> [first seen, last seen]
        self.stage_times: dict[tuple[str, int], list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def step(self, name: str) -> None:
        """Name the load step the next Spark jobs belong to."""
        self._step = name
        self._bar.set_description(name, refresh=False)

    def _poll(self) -> None:
        tracker = self._sc.statusTracker()
        while not self._stop.wait(POLL_SECONDS):
            now = time.perf_counter()
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is None:
                    continue
                done += info.numCompletedTasks
                total += info.numTasks
                seen = self.stage_times.setdefault((self._step, stage_id), [now, now])
                seen[1] = now
            self._bar.update(max(0, self._triples.value - self._bar.n))
            self._bar.set_postfix_str(f"tasks {done}/{total}" if total else "driver", refresh=False)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._bar.update(max(0, self._triples.value - self._bar.n))
        self._bar.close()

    def stage_seconds(self) -> dict[str, float]:
        """Seconds per Spark stage, named by step and order within the step."""
        out: dict[str, float] = {}
        counters: dict[str, int] = {}
        for (step, _), (first, last) in sorted(self.stage_times.items(), key=lambda kv: kv[1][0]):
            counters[step] = counters.get(step, 0) + 1
            out[f"{step} / spark stage {counters[step]}"] = last - first
        return out
