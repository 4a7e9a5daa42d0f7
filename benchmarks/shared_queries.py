"""Many registered continuous queries on one stream: LSBench L2/L3, K constants.

A deployment registers many queries of few shapes: the same join with a
different constant each. Here K = 1, 10, 100, 1000 queries read the
poststream at 1x the Wukong+S rates (10,000 triples/s) and join it with the
stored social graph through a constant person: half are L2-shaped (the posts
of one person's account), half L3-shaped (the posts of that account's
friends), each with its own person, drawn from the ``sioc:account_of``
persons of the stored graph with a bias to active users (so that windows
have rows). The first pair keep the paper's ``sibp:p864`` and ``sibp:p3514``.

For each K: register the K queries and subscribe to each, then feed the
stream in 100 ms steps (``RANGE/STEP`` warm-up steps, then ``--steps`` timed
ones); a step is one ``ingest`` of the step's items and one ``heartbeat`` at
its end, which fires every query's window. The *work* of a step is the wall
time of those two calls (``--cpu-clock``: the main thread's CPU time);
*load* is work / stream time (below 1, the engine keeps up in real time).
After every step each subscription is drained, and
at the end each must hold exactly one event per step, for that step's window,
with sequence numbers 1, 2, ... in order. Then the queries are unregistered
and the next K starts on the same engine (stream time goes on). The garbage
collector runs as in ``rivulet serve`` (:mod:`endpoint.collector`), from the
point where a server would start serving: the store loaded, no query yet.

A K whose steps take over ``--slow-step`` seconds is fed only
``MIN_TIMED_STEPS`` timed steps and reported as not keeping up.

    python -m benchmarks.shared_queries [--triples 1000000] [--ks 1,10,100,1000] [--steps 30] [--no-write]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.generate import _zipf_weights
from benchmarks.lsbench_data import (
    ACCOUNT_OF,
    DEFAULT_SEED,
    HISTORY_GRAPH,
    L2_PERSON,
    L3_PERSON,
    SOCIAL_GRAPH,
    STREAMS,
    LSBenchData,
    StreamGenerator,
    generate,
    scaled_rates,
)
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS, LSBenchQuery
from endpoint.collector import YOUNG_THRESHOLD, as_in_a_server
from engine.rdf import IRI, format_term

HEADING = "Many registered queries (LSBench L2/L3)"
STREAM = "poststream"
WARMUP_STEPS = RANGE_MS // STEP_MS
MIN_TIMED_STEPS = 3
DEFAULT_KS = (1, 10, 100, 1000)
#: the query shapes, alternating (query k is SHAPES[k % 2]), and the constant each names
SHAPES: tuple[LSBenchQuery, ...] = tuple(q for q in QUERIES if q.name in ("L2", "L3"))
PAPER_CONSTANTS = {"L2": "sibp:p864", "L3": "sibp:p3514"}
#: activity bias of the drawn persons (the stream's creators are Zipf 0.8 over the same ranks)
DRAW_ALPHA = 0.8


@dataclass
class KResult:
    """One K: the timed steps' work, and what the subscriptions received."""

    k: int
    register_s: float = 0.0
    step_s: list[float] = field(default_factory=list)
    steps_fed: int = 0
    events_checked: int = 0
    rows: int = 0
    nonempty_windows: int = 0
    stopped: bool = False
    problems: list[str] = field(default_factory=list)
    #: per query, the (sequence, window end, rows) of each event received
    events: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    #: the window closes of the steps fed, in order
    closes: list[int] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.step_s) * 1000

    @property
    def p99_ms(self) -> float:
        return float(np.percentile(self.step_s, 99)) * 1000

    @property
    def load(self) -> float:
        return sum(self.step_s) / (len(self.step_s) * STEP_MS / 1000)

    @property
    def keeps_up(self) -> str:
        if self.stopped:
            return f"no (stopped after {len(self.step_s)} timed steps)"
        return "yes" if self.load < 1 else "no"


# ------------------------------------------------------------------ queries
def persons_by_rank(data: LSBenchData) -> list[IRI]:
    """The ``sioc:account_of`` persons of the stored social graph, indexed by
    the activity rank of their user (0: the user who posts most)."""
    block = next(b for b in data.social if b.predicate == ACCOUNT_OF)
    persons: list[IRI | None] = [None] * len(data.users.terms)
    for s, o in zip(block.s.tolist(), block.o.tolist()):
        persons[s] = block.objects.terms[o]
    return [p for p in persons if p is not None]


def shared_queries(data: LSBenchData, k: int, seed: int = DEFAULT_SEED) -> list[LSBenchQuery]:
    """K queries, L2- and L3-shaped in turn (``L2_k0``, ``L3_k1``, ``L2_k2``...),
    each with a different person: the paper's two first, then persons drawn
    without replacement, weighted towards active users."""
    persons = persons_by_rank(data)
    if k > len(persons):
        raise ValueError(f"{k} queries need {k} persons; the stored graph has {len(persons)}")
    pinned = [L2_PERSON[0], L3_PERSON[0]][:k]
    free = np.setdiff1d(np.arange(len(persons)), pinned)
    weights = _zipf_weights(len(persons), DRAW_ALPHA)[free]
    drawn = np.random.default_rng(seed + 2).choice(free, size=k - len(pinned), replace=False,
                                                   p=weights / weights.sum())
    out = []
    for i, rank in enumerate(pinned + drawn.tolist()):
        shape = SHAPES[i % len(SHAPES)]
        constant = PAPER_CONSTANTS[shape.name]
        assert constant in shape.where
        out.append(dataclasses.replace(shape, name=f"{shape.name}_k{i}",
                                       where=shape.where.replace(constant, format_term(persons[rank]))))
    return out


# ------------------------------------------------------------------- engine
def load_store(data: LSBenchData):
    """The stored graphs in a fresh Store: social (read by FROM) and history."""
    from engine.api import Store

    store = Store()
    store.add(data.social_triples(), graph=SOCIAL_GRAPH)
    store.add(data.history_triples(), graph=HISTORY_GRAPH)
    return store


def new_engine(store):
    """A stream engine over ``store`` with the poststream declared."""
    from engine.stream import StreamDefinition, StreamEngine

    engine = StreamEngine(store)
    spec = STREAMS[STREAM]
    engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    return engine


def run_k(engine, generator: StreamGenerator, queries: Sequence[LSBenchQuery], warmup: int = WARMUP_STEPS,
          steps: int = 30, slow_step_s: float = 5.0,
          clock: Callable[[], float] = time.perf_counter) -> KResult:
    """Register ``queries``, feed ``warmup + steps`` steps of the poststream,
    check every subscription's events, unregister; the timed steps' work
    (measured by ``clock``: wall time, or the thread's CPU time on a busy machine)."""
    result = KResult(len(queries))
    started = time.perf_counter()
    subscriptions = {}
    for query in queries:
        engine.register(query.registration())
        subscriptions[query.name] = engine.subscribe(query.name)
    result.register_s = time.perf_counter() - started
    result.events = {name: [] for name in subscriptions}
    gc.collect()
    try:
        for i in range(warmup + steps):
            close = generator.now + STEP_MS
            items = generator.advance(close)[STREAM]
            started = clock()
            if items:
                engine.ingest(STREAM, items)
            engine.heartbeat(STREAM, close)
            work = clock() - started
            result.closes.append(close)
            for name, subscription in subscriptions.items():
                result.events[name].extend((e.sequence, e.end_ms, e.count) for e in subscription.drain())
            if i >= warmup:
                result.step_s.append(work)
                if len(result.step_s) >= MIN_TIMED_STEPS and statistics.median(result.step_s) > slow_step_s:
                    result.stopped = True
                    break
    finally:
        for query in queries:
            engine.unregister(query.name)
    result.steps_fed = len(result.closes)
    result.problems = check_events(result.events, result.closes)
    result.problems += [f"{name}: subscription dropped" for name, s in subscriptions.items() if s.dropped]
    result.events_checked = sum(len(e) for e in result.events.values())
    timed = [row for events in result.events.values() for _, _, row in events[warmup:]]
    result.rows, result.nonempty_windows = sum(timed), sum(1 for r in timed if r)
    return result


def check_events(events: dict[str, list[tuple[int, int, int]]], closes: Sequence[int]) -> list[str]:
    """What is wrong with the events received: each query must have exactly one
    event per window closed, in order, numbered 1, 2, ..."""
    expected = [(i + 1, close) for i, close in enumerate(closes)]
    problems = []
    for name, received in events.items():
        got = [(sequence, end) for sequence, end, _ in received]
        if got != expected:
            first = next((i for i, (g, e) in enumerate(zip(got, expected)) if g != e),
                         min(len(got), len(expected)))
            problems.append(f"{name}: {len(got)} events for {len(expected)} windows; first difference at "
                            f"#{first}: got {got[first] if first < len(got) else None}, expected "
                            f"{expected[first] if first < len(expected) else None}")
    return problems


# ------------------------------------------------------------------- report
HEADERS = ["K", "median ms / step", "p99 ms / step", "load", "keeps up?", "events checked", "rows"]


def report(results: list[KResult], args: argparse.Namespace, data: LSBenchData) -> str:
    rows = [[r.k, r.median_ms, r.p99_ms, r.load, r.keeps_up,
             f"{r.events_checked:,} ok" if not r.problems else f"{len(r.problems)} queries wrong",
             r.rows] for r in results]
    rate = STREAMS[STREAM].paper_triples_per_s * args.scale
    clock = "main thread's CPU time" if args.cpu_clock else "wall time"
    return (
        f"Machine: {machine_description()}.\n\n"
        f"Data: `benchmarks.lsbench_data` with {len(data):,} stored triples, seed {args.seed}. "
        f"Queries: K registered at once, L2- and L3-shaped in turn (`benchmarks.shared_queries`), "
        f"each joining the poststream window (`[RANGE 1s STEP 100ms]`) with the social graph through "
        f"its own `sioc:account_of` person (the paper's `sibp:p864` and `sibp:p3514` first, the others "
        f"drawn with a bias to active users). The poststream runs at {args.scale:g} x the paper's "
        f"rate ({rate:,.0f} triples/s, about {rate * STEP_MS / 1000 / STREAMS[STREAM].triples_per_item:,.0f} "
        f"posts per 100 ms step).\n\n"
        f"A step is one `ingest` of the step's posts plus the `heartbeat` that closes the step's window "
        f"and fires it for all K queries; its *work* is the {clock} of those two calls, median and 99th "
        f"percentile over {args.steps} timed steps after {WARMUP_STEPS} warm-up steps (a K whose median "
        f"step exceeds {args.slow_step:g} s is stopped after {MIN_TIMED_STEPS}). *load* is work / stream "
        f"time: below 1 the engine keeps up in real time. *events checked*: every subscription received "
        f"exactly one event per window fed (warm-up included), for that window, numbered 1, 2, ... "
        f"*rows*: rows of all K queries over the timed windows (a stopped K's cover only its timed "
        f"steps). The 1-minute load average when the run began: {args.loadavg:.1f} (other work may "
        f"share the machine). The garbage collector runs as in `rivulet serve` (`endpoint/collector.py`: "
        f"what start-up made frozen once the store is loaded, the young generation collected every "
        f"{YOUNG_THRESHOLD:,} new containers).\n\n"
        + markdown_table(HEADERS, rows)
    )


def _progress(r: KResult) -> None:
    print(f"  K={r.k}: registered in {r.register_s:.2f}s; median {r.median_ms:.3g} ms/step, "
          f"p99 {r.p99_ms:.3g} ms, load {r.load:.2f}, {r.events_checked} events, "
          f"{r.rows} rows, {r.nonempty_windows} non-empty windows"
          + (f", stopped after {len(r.step_s)} timed steps" if r.stopped else "")
          + (f"; PROBLEMS: {r.problems[:3]}" if r.problems else ""), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)), help="comma-separated Ks")
    parser.add_argument("--steps", type=int, default=30, help="timed 100 ms steps per K")
    parser.add_argument("--scale", type=float, default=1.0, help="stream rate / the paper's")
    parser.add_argument("--slow-step", type=float, default=5.0,
                        help=f"median seconds per step past which a K stops after {MIN_TIMED_STEPS} steps")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="a step's work in the main thread's CPU time (for a busy machine)")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]

    args.loadavg = os.getloadavg()[0]
    started = time.perf_counter()
    data = generate(args.triples, args.seed)
    store = load_store(data)
    print(f"{len(data):,} stored triples generated and loaded in {time.perf_counter() - started:.1f}s",
          flush=True)
    engine = new_engine(store)
    generator = StreamGenerator(data, {STREAM: scaled_rates(args.scale)[STREAM]}, args.seed)
    results = []
    with as_in_a_server():  # the collector's policy of `rivulet serve`, from where it starts serving
        for k in ks:
            results.append(run_k(engine, generator, shared_queries(data, k, args.seed), WARMUP_STEPS,
                                 args.steps, args.slow_step,
                                 time.thread_time if args.cpu_clock else time.perf_counter))
            _progress(results[-1])
    body = report(results, args, data)
    print()
    print(body)
    if any(r.problems for r in results):
        raise SystemExit("some queries did not report every window: see above")
    if not args.no_write:
        write_section(HEADING, body)


if __name__ == "__main__":
    main()
