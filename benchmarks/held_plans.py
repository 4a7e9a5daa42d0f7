"""Plans made once: LSBench L2/L3 engine latency, and how often Strider's trigger re-planned.

A continuous query keeps the orders of its patterns from window to window
(:mod:`engine.sparql.plan.held_orders`) and plans again only when the
window's workload moves past the threshold. This runs the chosen LSBench
queries alone at the paper's rates (``benchmarks.lsbench_latency``'s engine
path) and reports, beside the latency, the orders each query made, how many
of them were re-plans set off by the trigger, and how many of those chose
another order. It also reports the CPU time of each window's evaluation
(the thread's, around ``RunningQuery.evaluate``): on a shared machine the
latency moves with the other jobs, the CPU time much less. For the "before"
figures run it over an engine without held orders (``PYTHONPATH`` at a
directory linking this ``benchmarks`` beside that ``engine``; the counts are
then not reported).

    python -m benchmarks.held_plans [--triples 1000000] [--queries L2,L3] [--windows 150]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np

from benchmarks.lsbench_data import DEFAULT_SEED, generate
from benchmarks.lsbench_latency import engine_latencies
from benchmarks.lsbench_queries import QUERIES, LSBenchQuery
from benchmarks.lsbench_server import load_store
from engine.stream.running_query import RunningQuery


def timed_evaluations(cpu_ms: dict[str, list[float]]) -> None:
    """Record each window evaluation's thread CPU time (ms) per query name."""
    evaluate = RunningQuery.evaluate

    def timed(self, *args, **kwargs):
        started = time.thread_time()
        try:
            return evaluate(self, *args, **kwargs)
        finally:
            cpu_ms[self.spec.name].append((time.thread_time() - started) * 1000)

    RunningQuery.evaluate = timed


def held_counts(running) -> str:
    """Orders made by the full and the incremental path of ``running``."""
    holders = [getattr(running, "plans", None)]
    if getattr(running, "incremental", None) is not None:
        holders += getattr(running.incremental, "plans", [])
    holders = [h for h in holders if h is not None]
    if not holders:
        return "no held orders"
    plans, replans, changed = (sum(getattr(h, n) for h in holders) for n in ("plans", "replans", "changed"))
    return f"orders made {plans}, re-plans {replans}, of which changed the order {changed}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--queries", default="L2,L3", help="comma-separated LSBench query names")
    parser.add_argument("--windows", type=int, default=150, help="timed windows per query")
    args = parser.parse_args(argv)
    names = args.queries.split(",")
    queries = [q for q in QUERIES if q.name in names]
    started = time.perf_counter()
    data = generate(args.triples, DEFAULT_SEED)
    store = load_store(data)
    print(f"{len(data):,} stored triples loaded in {time.perf_counter() - started:.1f}s", flush=True)
    counts: dict[str, str] = {}
    cpu_ms: dict[str, list[float]] = defaultdict(list)
    timed_evaluations(cpu_ms)

    def finished(query: LSBenchQuery, running) -> None:
        counts[query.name] = held_counts(running)

    results = engine_latencies(store, data, 1.0, args.windows, DEFAULT_SEED, queries, finished)
    for name, result in results.items():
        cpu = cpu_ms[name]
        print(f"{name}: latency median {result.median_ms:.3f} ms, p99 {result.p99_ms:.3f} ms; "
              f"evaluation CPU median {np.median(cpu):.3f} ms, p99 {np.percentile(cpu, 99):.3f} ms "
              f"({len(cpu)} evaluations); {counts[name]}")


if __name__ == "__main__":
    main()
