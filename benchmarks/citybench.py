"""CityBench driver: every C-SPARQL query of CityBench as written, K = 1, 10, 100 copies.

Every file of ``csparql_query/`` in ``../shared/datasets/citybench`` is
registered as written, behind a ``REGISTER QUERY name AS`` head, K times
under K names (CityBench's ``queryDuplicates``), over CityBench's static
documents (loaded under the IRIs its ``FROM`` clauses name) and the Aarhus
streams annotated from their CSV rows as CityBench's annotators do
(``benchmarks.citybench_data``), one row per stream every ``--row-ms``.

Each query runs in a forked child (so one query's memory or a runaway join
cannot take the others down; ``--timeout`` bounds it). Per K: a fresh stream
engine over the same store, the feed from its first row, K registrations
and subscriptions, then steps of the GCD of the query's STEPs (the step's
items, then a heartbeat at its end on each stream the query reads): RANGE/STEP
warm-up steps, then ``--steps`` steps that close a window. Measured:

* *latency*: wall time of the heartbeats that close a window (every copy's
  event is queued when they return), median and p99;
* *load*: the whole step's wall time (ingest and heartbeats) over its STEP;
* *memory*: the growth of the process's resident set over the run (sampled
  after every step) above what it was before the K registrations, and the
  process's resident high-water mark (``ru_maxrss``: it sees what a window's
  evaluation held for a moment, which the samples miss; it never goes down,
  so at K = 10 it is at least K = 1's);
* *complete*: every copy got one event per instant the query is due at
  (SEMANTICS.md, computed by the test suite's window oracle), numbered 1, 2,
  ..., with no window error, and as many rows as the first copy; at K = 1,
  every window's bounds and rows equal pyoxigraph's answer to the query
  (its FROM clauses dropped) over exactly that window's triples and the
  static graphs the query names (``tests.stream.window_oracle``).

A query the engine refuses, or that fails or times out, is reported with its
error, never dropped.

    python -m benchmarks.citybench [--ks 1,10,100] [--steps 10] [--queries Q1,Q5] [--profile DIR] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import math
import multiprocessing
import os
import resource
import statistics
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pyoxigraph as ox

from benchmarks import StepFigures, machine_description, markdown_table, write_section
from benchmarks.citybench_data import (
    CITYBENCH,
    STATIC,
    CityFeed,
    citybench_store,
    local_name,
    query_graphs,
    query_windows,
    without_from,
)
from benchmarks.lsbench_composite import oxigraph_quads
from engine.rdf import IRI, BNode
from tests.stream.window_oracle import OracleQuery, OracleWindow, StreamRecord, window_bounds

QUERIES = CITYBENCH / "csparql_query"
DOC = Path(__file__).resolve().parent.parent / "docs" / "citybench.md"
HEADING = "Results"
DEFAULT_KS = (1, 10, 100)
#: the graph of the peer store that holds one window's triples while the oracle evaluates it
WINDOW_GRAPH = ox.NamedNode("urn:rivulet:citybench:window")


@dataclass
class CityRun(StepFigures):
    """One query at one K."""

    query: str
    k: int
    step_ms: int = 0
    latency_s: list[float] = field(default_factory=list)
    step_s: list[float] = field(default_factory=list)
    rss_growth_mb: float = 0.0
    #: the process's resident high-water mark after the run (the store, loaded before the fork, included)
    peak_rss_mb: float = 0.0
    events: int = 0
    rows: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: windows compared with pyoxigraph's answer (K = 1)
    checked: int = 0
    #: why the query has no figures (refused, failed, timed out)
    error: str | None = None
    missing: list[str] = field(default_factory=list)


def query_names() -> list[str]:
    """Every query file, in natural order (Q1, Q1_5_win_1, Q1_win_1, Q2, ... Q12, then the others)."""
    def key(path: Path):
        head, _, rest = path.stem.partition("_")
        return (0, int(head[1:]), rest) if head[:1] == "Q" and head[1:].isdigit() else (1, 0, path.stem)

    return [p.stem for p in sorted(QUERIES.glob("*.txt"), key=key)]


def peer_store() -> ox.Store:
    """CityBench's static documents in pyoxigraph, parsed by pyoxigraph, in the
    same named graphs as the engine's."""
    store = ox.Store()
    for document, graph in STATIC.items():
        store.load(path=str(CITYBENCH / "dataset" / document), format=ox.RdfFormat.TURTLE,
                   to_graph=ox.NamedNode(graph))
    return store


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


XSD = "http://www.w3.org/2001/XMLSchema#"
#: numeric datatypes compared by value, each with what reads its lexical form as one
NUMERIC = {XSD + "decimal": lambda text: Decimal(text).normalize(), XSD + "double": float,
           XSD + "float": float, XSD + "integer": int}


def term_key(term) -> tuple | None:
    """A solution's term (the engine's or pyoxigraph's) as comparable text: its
    kind, lexical form and datatype or language; a number of the common XSD
    types by its value and datatype, since the two disagree on lexical forms
    that SPARQL leaves open: pyoxigraph stores ``"18.0"^^xsd:double`` and
    answers ``"18"`` (the engine keeps the form it was given), and writes a
    computed decimal 6 as ``6`` where the engine writes ``6.0``. A simple
    literal has xsd:string (pyoxigraph says so, the engine leaves it out); a
    blank node's label is local to each store, so all blank nodes compare equal."""
    if term is None:
        return None
    if isinstance(term, BNode | ox.BlankNode):
        return ("blank",)
    if hasattr(term, "lexical"):  # engine Literal
        lexical, datatype, language = term.lexical, term.datatype, term.lang
    elif isinstance(term, ox.Literal):
        lexical, datatype, language = term.value, term.datatype.value, term.language
    else:
        return ("node", term.value)
    datatype = "" if language else datatype or XSD + "string"
    if datatype in NUMERIC:
        try:
            lexical = repr(NUMERIC[datatype](lexical.strip()))
        except (ValueError, InvalidOperation):
            pass
    return ("literal", lexical, datatype, language or "")


def _answer(event) -> Counter:
    if event.form == "ASK":
        return Counter({(event.boolean,): 1})
    return Counter(tuple(term_key(term) for term in row) for row in event.rows)


@dataclass
class PeerOracle(OracleQuery):
    """The window oracle, evaluating in a pyoxigraph store that holds the static
    graphs once (the oracle's own evaluation would rebuild them per window)."""

    peer: ox.Store | None = None
    graphs: Sequence[str] = ()

    def evaluate(self, instant: int, streams: dict[str, StreamRecord]) -> Counter:
        content = set().union(*(streams[w.stream].between(*window_bounds(instant, w), self.since_post)
                                for w in self.windows))
        self.peer.extend(oxigraph_quads(content, WINDOW_GRAPH))
        try:
            result = self.peer.query(self.select_where, default_graph=[ox.NamedNode(g) for g in self.graphs]
                                     + [WINDOW_GRAPH])
            if isinstance(result, ox.QueryBoolean):
                return Counter({(bool(result),): 1})
            names = [v.value for v in result.variables]
            return Counter(tuple(term_key(s[name]) for name in names) for s in result)
        finally:
            self.peer.clear_graph(WINDOW_GRAPH)


def run_query(store, peer: ox.Store | None, name: str, text: str, k: int, steps: int, row_ms: int) -> CityRun:
    """Register ``k`` copies of one query as written, feed it, measure and check it."""
    from engine.stream import StreamDefinition, StreamEngine

    windows = query_windows(text)
    streams = list(dict.fromkeys(stream for stream, _, _ in windows))
    step_ms = math.gcd(*(step for _, _, step in windows))
    warmup = -(-max(r for _, r, _ in windows) // step_ms)
    run = CityRun(name, k, step_ms)
    engine = StreamEngine(store)
    for stream in streams:
        engine.declare_stream(StreamDefinition(local_name(stream), IRI(stream)))
    feed = CityFeed(store, streams, row_ms)
    run.missing = [local_name(s) for s in feed.missing()]
    records = {stream: StreamRecord() for stream in streams}
    posts = 0

    def post(stream: str, items: list) -> None:
        nonlocal posts
        records[stream].post(posts, items)
        posts += 1

    for stream in streams:  # the copies' clocks start at the first close after 0
        engine.heartbeat(local_name(stream), 0)
        post(stream, [(0, [])])
    oracle = PeerOracle([OracleWindow(s, None, r, st) for s, r, st in windows], "csparql", "RSTREAM",
                        without_from(text), peer=peer, graphs=query_graphs(text))
    names = [f"{name}_copy{i}" for i in range(k)]
    gc.collect()
    baseline = peak = rss_mb()
    try:
        subscriptions = {copy: engine.register(f"REGISTER QUERY {copy} AS {text}").subscribe()
                         for copy in names}
    except Exception as error:  # noqa: BLE001 - the engine's refusal is the finding
        run.error = f"refused: {type(error).__name__}: {error}"
        return run
    oracle.start(records, posts)
    first: list = []
    received: dict[str, list[tuple[int, int, int, object]]] = {copy: [] for copy in names}
    now, step = 0, 0
    try:
        while len(run.latency_s) < steps:
            close = now + step_ms
            items = feed(close)
            started = time.perf_counter()
            for stream in streams:
                if items.get(stream):
                    engine.ingest(local_name(stream), items[stream])
            fired = time.perf_counter()
            for stream in streams:
                engine.heartbeat(local_name(stream), close)
            done = time.perf_counter()
            for stream in streams:
                post(stream, [*items.get(stream, []), (close, [])])
            for copy, subscription in subscriptions.items():
                events = subscription.drain()
                received[copy] += [(e.sequence, e.end_ms, e.count, e.error) for e in events]
                if copy == names[0]:
                    first += events
            peak = max(peak, rss_mb())
            if step >= warmup and any(close % st == 0 for _, _, st in windows):
                run.latency_s.append(done - fired)
                run.step_s.append(done - started)
            now, step = close, step + 1
    except Exception as error:  # noqa: BLE001 - a failing evaluation is the finding
        run.error = f"failed at {now} ms: {type(error).__name__}: {error}"
        return run
    finally:
        for copy in names:
            engine.unregister(copy)
    run.rss_growth_mb = peak - baseline
    run.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    run.events = sum(len(e) for e in received.values())
    run.rows = [n for _, _, n, _ in received[names[0]]]
    run.problems = _problems(received, [(i + 1, t) for i, t in enumerate(oracle.due_instants(records))])
    if k == 1 and peer is not None and not run.problems:
        run.checked, mismatch = _against_oracle(first, oracle, records)
        if mismatch:
            run.problems.append(mismatch)
    return run


def _problems(received: dict[str, list], expected: list[tuple[int, int]]) -> list[str]:
    """Each copy must have one event per due instant, in order, no window error,
    and as many rows as the first copy at each window."""
    problems, rows = [], None
    for copy, events in received.items():
        got = [(sequence, end) for sequence, end, _, _ in events]
        if got != expected:
            at = next((i for i, (g, e) in enumerate(zip(got, expected)) if g != e),
                      min(len(got), len(expected)))
            problems.append(f"{copy}: {len(got)} events for {len(expected)} windows, "
                            f"first difference at #{at}")
        errors = [(end, error) for _, end, _, error in events if error is not None]
        if errors:
            problems.append(f"{copy}: window {errors[0][0]} ms failed: {errors[0][1]}")
        counts = [n for _, _, n, _ in events]
        if rows is None:
            rows = counts
        elif counts != rows:
            problems.append(f"{copy}: row counts differ from the first copy's")
    return problems


def _against_oracle(events: list, oracle: PeerOracle, records: dict[str, StreamRecord]
                    ) -> tuple[int, str | None]:
    """How many windows equal pyoxigraph's answer, and the first that does not."""
    expected = oracle.expected(records)
    for checked, (event, (instant, bounds, rows)) in enumerate(zip(events, expected, strict=True)):
        got_bounds = [(w.start_ms, w.end_ms) for w in event.windows]
        if event.end_ms != instant or got_bounds != bounds:
            return checked, f"window {instant} ms: bounds {got_bounds}, expected {bounds}"
        answer = _answer(event)
        if answer != rows:
            extra, lacking = answer - rows, rows - answer
            return checked, (f"window {instant} ms: {sum(answer.values())} rows, pyoxigraph "
                             f"{sum(rows.values())} (e.g. extra {next(iter(extra), None)}, "
                             f"lacking {next(iter(lacking), None)})")
    return len(events), None


# ------------------------------------------------------------ child processes
def _child(connection, store, peer, name: str, ks: Sequence[int], steps: int, row_ms: int,
           memory_gb: float, profile: Path | None) -> None:
    """Run one query at every K in this (forked) process, address space capped
    so that a runaway join fails with MemoryError instead of starving the machine."""
    limit = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    text = (QUERIES / f"{name}.txt").read_text()
    for k in ks:
        try:
            if profile is None:
                run = run_query(store, peer, name, text, k, steps, row_ms)
            else:
                run = _profiled(profile / f"{name}-K{k}.txt", store, peer, name, text, k, steps, row_ms)
        except Exception as error:  # noqa: BLE001 - reported, never dropped
            run = CityRun(name, k, error=f"driver error: {type(error).__name__}: {error}\n"
                                         f"{traceback.format_exc(limit=3)}")
        connection.send(run)
        if run.error:
            break
    connection.send(("peak_rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    connection.close()


def _profiled(out: Path, *args) -> CityRun:
    """:func:`run_query` under pyinstrument (the whole run: feed, windows and
    checks), its call tree written to ``out``."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005)
    with profiler:
        run = run_query(*args)
    out.write_text(profiler.output_text(unicode=True, color=False))
    return run


def run_all(names: Sequence[str], ks: Sequence[int], steps: int, row_ms: int, timeout_s: float,
            check: bool = True, memory_gb: float = 12.0, profile: Path | None = None
            ) -> tuple[list[CityRun], dict[str, float]]:
    """Each query in a forked child with the store (and pyoxigraph's copy) loaded once."""
    store = citybench_store()
    peer = peer_store() if check else None
    context = multiprocessing.get_context("fork")
    runs, peaks = [], {}
    for name in names:
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_child,
                                args=(sender, store, peer, name, ks, steps, row_ms, memory_gb, profile))
        child.start()
        sender.close()
        deadline = time.monotonic() + timeout_s
        got: list[CityRun] = []
        try:
            while True:
                if not receiver.poll(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError
                message = receiver.recv()
                if isinstance(message, tuple):
                    peaks[name] = message[1]
                    break
                got.append(message)
                _progress(message)
        except TimeoutError:
            child.kill()
            got.append(CityRun(name, _next_k(got, ks), error=f"did not finish within {timeout_s:g} s"))
            _progress(got[-1])
        except EOFError:
            child.join()
            got.append(CityRun(name, _next_k(got, ks),
                               error=f"the child process died (exit code {child.exitcode})"))
            _progress(got[-1])
        child.join()
        runs += got
    return runs, peaks


def _next_k(got: list[CityRun], ks: Sequence[int]) -> int:
    return ks[len(got)] if len(got) < len(ks) else ks[-1]


# ------------------------------------------------------------------- report
def _progress(run: CityRun) -> None:
    if run.error:
        print(f"{run.query} K={run.k}: {run.error}", flush=True)
    else:
        print(f"{run.query} K={run.k}: median {run.median_ms:.3g} ms, p99 {run.p99_ms:.3g} ms, "
              f"load {run.load:.3g}, +{run.rss_growth_mb:.0f} MB, events {run.events}, "
              f"problems {run.problems[:1] or 0}", flush=True)


HEADERS = ["query", "K", "STEP ms", "median ms", "p99 ms", "load", "RSS growth MB", "peak RSS MB",
           "rows / window", "complete", "= pyoxigraph (K=1)"]


def table(runs: list[CityRun]) -> str:
    rows = []
    for run in runs:
        name = run.query + (f" (no data: {', '.join(run.missing)})" if run.missing else "")
        if run.error:
            rows.append([name, run.k, *["-"] * 7, f"no: {run.error.splitlines()[0]}", "-"])
            continue
        complete = "yes" if not run.problems else f"no: {run.problems[0]}"
        oracle = f"{run.checked} windows" if run.k == 1 and run.checked and not run.problems else "-"
        rows.append([name, run.k, run.step_ms, run.median_ms, run.p99_ms, run.load, run.rss_growth_mb,
                     run.peak_rss_mb, statistics.median(run.rows) if run.rows else 0, complete, oracle])
    return markdown_table(HEADERS, rows)


def report(runs: list[CityRun], peaks: dict[str, float], args: argparse.Namespace) -> str:
    peak = ", ".join(f"{name} {mb:,.0f}" for name, mb in peaks.items())
    return (f"Machine: {machine_description()}.\n\n"
            f"Every query of `csparql_query/` as written, K copies each; one CSV row per stream every "
            f"{args.row_ms} ms; {args.steps} timed window closes per query and K after RANGE/STEP warm-up "
            f"steps; a query's child process given {args.timeout:g} s. *No data*: streams the query "
            "reads whose CSV file the dataset copy lacks (they carry only heartbeats).\n\n"
            + table(runs)
            + f"\n\nPeak RSS of each query's child process (MB, all K, the store loaded before the fork "
            f"included): {peak}.\n\n"
            "    python -m benchmarks.citybench\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)))
    parser.add_argument("--steps", type=int, default=10, help="timed window closes per query and K")
    parser.add_argument("--row-ms", type=int, default=1000, help="one CSV row per stream every")
    parser.add_argument("--queries", default="", help="query names, e.g. Q1,Q10_8 (default: all)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per query, all K")
    parser.add_argument("--memory-gb", type=float, default=12.0, help="address space of a query's process")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="write each query and K's pyinstrument profile to DIR (latencies then inflated)")
    parser.add_argument("--no-check", action="store_true", help="skip the pyoxigraph comparison at K=1")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/citybench.md")
    args = parser.parse_args(argv)
    names = [q.removesuffix(".txt") for q in args.queries.split(",") if q] or query_names()
    ks = [int(k) for k in args.ks.split(",") if k]
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    runs, peaks = run_all(names, ks, args.steps, args.row_ms, args.timeout, not args.no_check, args.memory_gb,
                          args.profile)
    body = report(runs, peaks, args)
    print()
    print(body)
    if not args.no_write:
        write_section(HEADING, body, DOC)


if __name__ == "__main__":
    main()
