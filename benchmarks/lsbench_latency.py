"""LSBench L1-L6 latency at the paper's stream rates: heartbeat that closes a window -> its event.

Wukong+S reports, per query, the time from a window's close to its result.
Here the close is explicit: the producer sends the data of ``[t - 100 ms, t)``,
then a heartbeat at ``t``, and the clock runs from sending that heartbeat to
receiving the window's event. Two ways:

* engine: ``StreamEngine.heartbeat(stream, t)`` -> its return, the event taken
  from the query's subscription queue;
* HTTP: a real uvicorn server in a child process (so that client and server
  do not share one interpreter lock); ``POST /streams/{s}`` with the heartbeat
  -> the ``window`` event read by an httpx client from
  ``GET /queries/{q}/events`` (SSE);
* composite: the same streams on pyoxigraph plus a window graph kept current
  every step (``benchmarks.lsbench_composite``), its upkeep counted.

Each query runs alone (registered, timed, unregistered), so its latency does
not include the other five's evaluations; stream time goes on from one query
to the next. The streams run at the paper's rates (``--scale 1``, the
default; a smaller scale is for quick looks); the report gives the ingest
load (ingest wall time / stream time, below 1 = sustained).
Latencies are medians and 99th percentiles over ``--windows`` windows after
``RANGE/STEP`` warm-up windows (so every timed window is full).

    python -m benchmarks.lsbench_latency [--triples 1000000] [--windows 50] [--no-http] [--no-composite]
"""

from __future__ import annotations

import argparse
import gc
import queue
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import orjson

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.lsbench_composite import composite_latencies
from benchmarks.lsbench_data import (
    DEFAULT_SEED,
    STREAMS,
    Item,
    LSBenchData,
    StreamGenerator,
    generate,
    scaled_rates,
)
from benchmarks.lsbench_queries import QUERIES, STEP_MS, LSBenchQuery
from benchmarks.lsbench_server import load_store, lsbench_server
from benchmarks.lsbench_timing import WARMUP_WINDOWS, Latencies
from benchmarks.query_latency import size_label
from engine.rdf import format_term
from engine.stream.batch_format import MEDIA_TYPE as BATCH_MEDIA_TYPE

LSBENCH_DOC = Path(__file__).resolve().parent.parent / "docs" / "lsbench.md"
EVENT_TIMEOUT_S = 60.0
#: the engine-level clock: wall time, or the main thread's CPU time (``--cpu-clock``)
_clock = time.perf_counter


# ------------------------------------------------------------------- engine
def engine_latencies(store, data: LSBenchData, scale: float, windows: int, seed: int,
                     queries: Sequence[LSBenchQuery] = QUERIES,
                     finished: Callable[[LSBenchQuery, object], None] | None = None) -> dict[str, Latencies]:
    """Per query of ``queries``, its engine latencies; ``finished(query,
    running)`` is told of each before it is unregistered."""
    from engine.stream import StreamDefinition, StreamEngine

    engine = StreamEngine(store)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    generator = StreamGenerator(data, scaled_rates(scale), seed)
    out: dict[str, Latencies] = {}
    for query in queries:
        arrivals: dict[int, tuple[float, int]] = {}
        running = engine.register(query.registration())
        subscription = running.subscribe()
        result = out[query.name] = Latencies()
        gc.collect()
        for i in range(WARMUP_WINDOWS + windows):
            close = generator.now + STEP_MS
            items = generator.advance(close)
            started = _clock()
            for name in query.streams:
                if items[name]:
                    engine.ingest(name, items[name])
            for name in query.streams[:-1]:
                engine.heartbeat(name, close)
            sent = _clock()
            engine.heartbeat(query.streams[-1], close)
            _record(subscription, arrivals)
            if i >= WARMUP_WINDOWS:
                received, rows = arrivals[close]
                result.samples_ms.append((received - sent) * 1000)
                result.rows.append(rows)
                result.ingest_s += _clock() - started
                result.stream_s += STEP_MS / 1000
        if finished is not None:
            finished(query, running)
        engine.unregister(query.name)
        _progress("engine", query, result)
    return out


def _record(subscription, arrivals: dict[int, tuple[float, int]]) -> None:
    """Note when each window's event was taken from the queue, and its rows."""
    received = _clock()
    for event in subscription.drain():
        arrivals[event.end_ms] = (received, event.count)


# --------------------------------------------------------------------- HTTP
def http_wired() -> bool:
    """Whether ``create_app`` serves the stream and query routes yet."""
    from endpoint.app import create_app
    from engine.api import Store

    return any(getattr(r, "path", None) == "/queries" for r in create_app(Store()).routes)


def _batch(items: list[Item]) -> bytes:
    """Items as timestamped N-Triples (engine/stream/batch_format.py)."""
    return "".join(f"{ts} {format_term(s)} {format_term(p)} {format_term(o)} .\n"
                   for ts, triples in items for s, p, o in triples).encode()


class EventReader(threading.Thread):
    """Reads one query's SSE stream; queues ``(window end, receipt time, rows)``."""

    def __init__(self, base: str, name: str) -> None:
        super().__init__(daemon=True)
        self.client = httpx.Client(base_url=base, timeout=httpx.Timeout(10.0, read=None))
        self.name = name
        self.events: queue.Queue[tuple[int, float, int]] = queue.Queue()
        self.ready = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            with self.client.stream("GET", f"/queries/{self.name}/events") as response:
                response.raise_for_status()
                self.ready.set()
                data: list[str] = []
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        data.append(line[5:].removeprefix(" "))
                    elif not line and data:  # a blank line ends an event (SSE)
                        received = time.perf_counter()
                        event = orjson.loads("\n".join(data))
                        data = []
                        self.events.put((event["window"]["end_ms"], received, event["rows"]))
        except (httpx.HTTPError, RuntimeError, orjson.JSONDecodeError) as exc:  # stop(), or the server
            self.failure = exc
            self.ready.set()

    def wait_for(self, close: int) -> tuple[float, int]:
        while True:
            try:
                end, received, rows = self.events.get(timeout=EVENT_TIMEOUT_S)
            except queue.Empty:
                raise RuntimeError(f"no event for window {close} of {self.name}: {self.failure}") from None
            if end == close:
                return received, rows

    def stop(self) -> None:
        self.client.close()


def http_latencies(data: LSBenchData, triples: int, scale: float, windows: int,
                   seed: int) -> dict[str, Latencies]:
    with lsbench_server(triples, seed) as (base, _):
        client = httpx.Client(base_url=base, timeout=60.0)
        for spec in STREAMS.values():
            client.put(f"/streams/{spec.name}", json={"iri": spec.iri.value,
                                                       "timing": sorted(spec.timing)}).raise_for_status()
        generator = StreamGenerator(data, scaled_rates(scale), seed)
        out = {q.name: _http_query(client, base, q, generator, windows) for q in QUERIES}
        client.close()
        return out


def _http_query(client: httpx.Client, base: str, query: LSBenchQuery, generator: StreamGenerator,
                windows: int) -> Latencies:
    client.post("/queries", content=query.registration(),
                headers={"Content-Type": "application/sparql-query"}).raise_for_status()
    reader = EventReader(base, query.name)
    reader.start()
    reader.ready.wait(30)
    if reader.failure is not None:
        raise RuntimeError(f"cannot read the events of {query.name}: {reader.failure}")
    result = Latencies()
    for i in range(WARMUP_WINDOWS + windows):
        close = generator.now + STEP_MS
        items = generator.advance(close)
        started = time.perf_counter()
        for name in query.streams:
            if items[name]:
                client.post(f"/streams/{name}", content=_batch(items[name]),
                            headers={"Content-Type": BATCH_MEDIA_TYPE}).raise_for_status()
        for name in query.streams[:-1]:
            client.post(f"/streams/{name}", headers={"X-Timestamp": str(close)}).raise_for_status()
        sent = time.perf_counter()
        client.post(f"/streams/{query.streams[-1]}", headers={"X-Timestamp": str(close)}).raise_for_status()
        received, rows = reader.wait_for(close)
        if i >= WARMUP_WINDOWS:
            result.samples_ms.append((received - sent) * 1000)
            result.rows.append(rows)
            result.ingest_s += time.perf_counter() - started
            result.stream_s += STEP_MS / 1000
    reader.stop()
    client.delete(f"/queries/{query.name}").raise_for_status()
    _progress("http", query, result)
    return result


# ------------------------------------------------------------------- report
def _progress(kind: str, query: LSBenchQuery, r: Latencies) -> None:
    print(f"  {kind:<6} {query.name}: median {r.median_ms:.3g} ms, p99 {r.p99_ms:.3g} ms, "
          f"rows/window {statistics.median(r.rows):g}, ingest load {r.load:.2f}", flush=True)


HEADERS = ["query", "streams", "rows / window", "engine median ms", "engine p99 ms", "engine load",
           "HTTP median ms", "HTTP p99 ms", "HTTP load", "composite median ms", "composite p99 ms",
           "composite / engine", "windows with other rows", "Wukong+S (paper) ms", "C-SPARQL (paper) ms"]


def report(engine: dict[str, Latencies], http: dict[str, Latencies] | None, args: argparse.Namespace,
           data: LSBenchData, composite: dict[str, Latencies] | None = None) -> str:
    rows = []
    ratios = []
    for q in QUERIES:
        e, h, c = engine[q.name], (http or {}).get(q.name), (composite or {}).get(q.name)
        ratio = c.median_ms / e.median_ms if c else None
        if ratio is not None:
            ratios.append(ratio)
        rows.append([q.name, " + ".join(q.streams), float(statistics.median(e.rows)), e.median_ms, e.p99_ms,
                     e.load, h.median_ms if h else "-", h.p99_ms if h else "-", h.load if h else "-",
                     c.median_ms if c else "-", c.p99_ms if c else "-", ratio if c else "-",
                     sum(a != b for a, b in zip(c.rows, e.rows, strict=True)) if c else "-",
                     q.paper_wukong_ms, float(q.paper_csparql_ms)])
    composite_note = (
        "*composite*: the same streams on a design built from a peer (`benchmarks.lsbench_composite`): "
        "pyoxigraph holding the stored graphs plus a window graph kept current every step (insert "
        "the new batch, delete what left the window), then queried; its latency includes that "
        "upkeep. *composite / engine* is the ratio of medians (above 1: the engine is faster); "
        f"geometric mean over L1-L6: {statistics.geometric_mean(ratios):.3g}. *windows with other "
        "rows*: timed windows whose row count differs between the two (0: they agree).\n\n"
        if ratios else "*composite*: not measured (`--no-composite`).\n\n")
    rates = ", ".join(f"{name} {spec.paper_triples_per_s * args.scale:,.0f}"
                      for name, spec in STREAMS.items())
    http_note = ("HTTP: the same rates, the items posted as timestamped N-Triples, one body per "
                 "stream and 100 ms step." if http else f"HTTP: not measured ({args.http_skipped}).")
    return (
        f"Machine: {machine_description()}.\n\n"
        f"Data: `benchmarks.lsbench_data` with {len(data):,} stored triples "
        f"({sum(len(b.s) for b in data.social):,} in the social graph the queries read with `FROM`, "
        f"the rest history), seed {args.seed}; queries `benchmarks.lsbench_queries` "
        f"(`[RANGE 1s STEP 100ms]`).\n\n"
        f"Latency: from sending the heartbeat that closes a window (after that window's data) to "
        f"receiving its event; median and 99th percentile over {args.windows} windows per query, "
        f"after {WARMUP_WINDOWS} warm-up windows. Each query runs alone. The streams run at "
        f"{args.scale:g} x the paper's rates ({rates} triples/s; only the query's own streams are "
        f"fed). {http_note} *load* is ingest wall time / stream time: below 1, this machine keeps "
        f"up with the streams in real time. The paper's figures (Wukong+S and the C-SPARQL engine, "
        f"one node, 118M stored triples, full rates, C++ with RDMA-era hardware) are for "
        f"context, not a like-for-like comparison.\n\n"
        + composite_note
        + markdown_table(HEADERS, rows)
    )


def _opened(path: Path, triples: int):
    """The store ``rivulet load`` wrote, memory-mapped; it must hold as many
    triples as the generated data (a store of other data would give windows
    that join nothing)."""
    from engine.api import Store

    store = Store.open(_checkpoint_of(path))
    if len(store) != triples:
        raise SystemExit(f"{path} holds {len(store):,} triples, the generated data {triples:,}: "
                         "load the N-Quads file of the same --triples and --seed")
    return store


def _checkpoint_of(path: Path) -> Path:
    """A store directory as it is, or the newest checkpoint of a data
    directory (``rivulet serve --data-dir``), whose store files are a
    ``rivulet load`` store's; refused when its log holds writes after it."""
    checkpoints = path / "checkpoints"
    if not checkpoints.is_dir():
        return path
    newest = max((d for d in checkpoints.iterdir() if (d / "manifest.json").is_file()), default=None)
    if newest is None:
        raise SystemExit(f"{path} holds no checkpoint")
    if any(f.stat().st_size for f in (path / "wal").glob("*.log")):
        raise SystemExit(f"{path}'s log holds writes after its checkpoint: open it with the server")
    return newest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--windows", type=int, default=50, help="timed windows per query")
    parser.add_argument("--scale", type=float, default=1.0, help="stream rates / the paper's (1: theirs)")
    parser.add_argument("--no-http", action="store_true", help="engine-level latencies only")
    parser.add_argument("--no-composite", action="store_true", help="leave out the pyoxigraph composite")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    parser.add_argument("--queries", help="comma-separated query names to run (default: all)")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="engine latencies in the main thread's CPU time (for a busy machine)")
    parser.add_argument("--store", type=Path,
                        help="open this store, `rivulet load`'s output (or a `serve --data-dir` directory) "
                             "for the same --triples and --seed "
                             "(benchmarks.scale_load writes that N-Quads file), instead of building the "
                             "store in memory: the way to 100M; engine latencies only")
    args = parser.parse_args(argv)
    if args.store and not (args.no_http and args.no_composite):
        parser.error("--store measures the engine only: add --no-http --no-composite")
    global QUERIES, _clock
    if args.queries:
        QUERIES = tuple(q for q in QUERIES if q.name in args.queries.split(","))
    if args.cpu_clock:
        _clock = time.thread_time

    started = time.perf_counter()
    data = generate(args.triples, args.seed)
    store = _opened(args.store, len(data)) if args.store else load_store(data)
    print(f"{len(data):,} stored triples generated and loaded in {time.perf_counter() - started:.1f}s",
          flush=True)
    engine = engine_latencies(store, data, args.scale, args.windows, args.seed, QUERIES)
    del store
    gc.collect()
    http = None
    args.http_skipped = "`--no-http`" if args.no_http else ""
    if not args.no_http:
        if http_wired():
            http = http_latencies(data, args.triples, args.scale, args.windows, args.seed)
        else:
            args.http_skipped = "`endpoint.app.create_app` does not serve `/streams` and `/queries` yet"
            print(f"HTTP skipped: {args.http_skipped}", flush=True)
    composite = None
    if not args.no_composite:
        gc.collect()
        composite = composite_latencies(data, args.scale, args.windows, args.seed)
    body = report(engine, http, args, data, composite)
    print()
    print(body)
    if not args.no_write:
        size = size_label(len(data))
        write_section(f"Continuous queries (LSBench, {size} stored triples, {args.scale:g} x rates)", body)
        write_section(f"Measured latency ({size} stored triples, {args.scale:g} x the paper's rates)", body,
                      LSBENCH_DOC)


if __name__ == "__main__":
    main()
