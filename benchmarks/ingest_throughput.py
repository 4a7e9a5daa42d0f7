"""HTTP ingest throughput (triples/s) with 0, 1, 10 and 100 registered continuous queries.

A real uvicorn server in a child process (:mod:`benchmarks.lsbench_server`)
holds the LSBench stored data (``--triples``, default 1M). For each number of
queries a fresh server gets the two streams ``poststream`` and
``postlikestream`` declared and that many windowed C-SPARQL queries
(``[RANGE 1s STEP 100ms]``) registered, and one SSE reader per query
subscribes to ``GET /queries/{q}/events``. Then one client posts
pre-generated bodies of timestamped N-Triples as fast as the server answers:
the streams' items at the paper's rates (``--scale 1``), one body per stream
and 100 ms of application time, each ending with a heartbeat at the step's
end, so every pair of bodies closes one window of every query (the POST that
closes it returns once those windows are evaluated). Throughput is the
triples the server accepted over the wall time from the first POST to the
last answer; the bodies are formatted before the clock starts, so the
client's own formatting is not measured.

Every window is checked: each query's reader must receive one event per
closed window, sequence numbers 1, 2, ... with no gap, window ends one STEP
apart from the first window holding data to the last heartbeat, and the
server must report as many windows for the query. After the posting the
queries are unregistered, which ends their event streams, so the readers
also see any event too many.

    python -m benchmarks.ingest_throughput [--triples 1000000] [--seconds 10] [--queries 0,1,10,100]
                                           [--no-write] [--py-spy DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.lsbench_data import (
    COUNTRIES,
    DBP,
    DEFAULT_SEED,
    FOAF,
    SIOC,
    SOCIAL_GRAPH,
    STREAMS,
    TAG_COUNT,
    VOCAB,
    Item,
    LSBenchData,
    StreamGenerator,
    generate,
    scaled_rates,
)
from benchmarks.lsbench_queries import RANGE_MS, STEP_MS
from benchmarks.lsbench_server import lsbench_server
from engine.rdf import format_term
from engine.stream.batch_format import MEDIA_TYPE as BATCH_MEDIA_TYPE

HEADING = "HTTP ingest throughput with registered queries"
#: the streams fed; every query reads one or both
FED_STREAMS = ("poststream", "postlikestream")
DEFAULT_QUERY_COUNTS = (0, 1, 10, 100)
#: seconds one POST may take (it evaluates every window it closes)
POST_TIMEOUT_S = 300.0
#: seconds the readers may take to connect, and to see their streams end at the close
CONNECT_TIMEOUT_S = 60.0
END_TIMEOUT_S = 120.0

PREFIXES = (
    f"PREFIX sib:  <{VOCAB}>\n"
    f"PREFIX sioc: <{SIOC}>\n"
    f"PREFIX foaf: <{FOAF}>\n"
    f"PREFIX dbp:  <{DBP}>\n"
)


# ------------------------------------------------------------------ queries
@dataclass(frozen=True)
class IngestQuery:
    """One registered query: its name, family, the streams it reads, its registration."""

    name: str
    family: str
    streams: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Family:
    """A kind of query; ``where(data, k)`` is the body (after SELECT) for constant number k."""

    name: str
    streams: tuple[str, ...]
    about: str
    select: str
    where: Callable[[LSBenchData, int], str]

    def query(self, data: LSBenchData, k: int) -> IngestQuery:
        name = f"{self.name}_{k}"
        window = f"[RANGE {RANGE_MS // 1000}s STEP {STEP_MS}ms]"
        sources = "".join(f"FROM STREAM <{STREAMS[s].iri.value}> {window}\n" for s in self.streams)
        text = (f"REGISTER QUERY {name} AS\n{PREFIXES}{self.select}\n{sources}FROM <{SOCIAL_GRAPH}>\n"
                f"{self.where(data, k)}\n")
        return IngestQuery(name, self.name, self.streams, text)


def _user(data: LSBenchData, k: int) -> str:
    """The user of activity rank k (0 is the most active), as an IRI in brackets."""
    return format_term(data.users.terms[k % len(data.users.terms)])


def _forum(data: LSBenchData, k: int) -> str:
    """The forum of popularity rank k."""
    return format_term(data.forums.terms[k % len(data.forums.terms)])


FAMILIES: tuple[Family, ...] = (
    Family(
        "channel_buzz", ("poststream", "postlikestream"),
        "L6 on one channel: its new posts liked by friends of its subscribers, "
        "top 20 posts by distinct fans",
        "SELECT ?post (COUNT(DISTINCT ?friend) AS ?fans)",
        lambda d, k: (f"WHERE {{\n  {_forum(d, k)} sioc:container_of ?post .\n"
                      f"  ?user sioc:subscriber_of {_forum(d, k)} .\n  ?user foaf:knows ?friend .\n"
                      "  ?friend sib:like ?post .\n}\nGROUP BY ?post ORDER BY DESC(?fans) ?post LIMIT 20"),
    ),
    Family(
        "friend_likes", ("postlikestream",),
        "likes given by one user's friends, per friend",
        "SELECT ?friend (COUNT(?post) AS ?likes)",
        lambda d, k: (f"WHERE {{\n  {_user(d, k)} foaf:knows ?friend .\n  ?friend sib:like ?post .\n}}\n"
                      "GROUP BY ?friend ORDER BY DESC(?likes) ?friend"),
    ),
    Family(
        "local_trending", ("postlikestream",),
        "top 10 posts liked by the users of one country and gender",
        "SELECT ?post (COUNT(?user) AS ?likes)",
        lambda d, k: (f"WHERE {{\n  ?user foaf:based_near dbp:{COUNTRIES[k % len(COUNTRIES)]} .\n"
                      f"  ?user sioc:account_of ?person .\n"
                      f"  ?person foaf:gender \"{('female', 'male')[k // len(COUNTRIES) % 2]}\" .\n"
                      "  ?user sib:like ?post .\n}\nGROUP BY ?post ORDER BY DESC(?likes) ?post LIMIT 10"),
    ),
    Family(
        "tag_countries", ("poststream",),
        "new posts with one hashtag, per country of their creators",
        "SELECT ?country (COUNT(?post) AS ?posts)",
        lambda d, k: (f"WHERE {{\n  ?post sib:hashtag dbp:Topic_{k % TAG_COUNT} .\n"
                      "  ?user sioc:creator_of ?post .\n  ?user foaf:based_near ?country .\n}\n"
                      "GROUP BY ?country ORDER BY DESC(?posts) ?country"),
    ),
    Family(
        "friend_feed", ("poststream",),
        "L3 with tags: new posts of one user's friends and their hashtags",
        "SELECT ?friend ?post ?tag",
        lambda d, k: (f"WHERE {{\n  {_user(d, k)} foaf:knows ?friend .\n  ?friend sioc:creator_of ?post .\n"
                      "  OPTIONAL { ?post sib:hashtag ?tag }\n}"),
    ),
)


def continuous_queries(data: LSBenchData, count: int) -> list[IngestQuery]:
    """``count`` queries, the families in turn, each family's constants by rank:
    query j is family ``j % 5`` with constant number ``j // 5``."""
    return [FAMILIES[j % len(FAMILIES)].query(data, j // len(FAMILIES)) for j in range(count)]


# ------------------------------------------------------------------- bodies
@dataclass(frozen=True)
class Body:
    """One POST: a stream's items of ``[close - STEP, close)`` and a heartbeat at ``close``."""

    stream: str
    close_ms: int
    data: bytes
    triples: int


def _body(items: list[Item], close: int) -> bytes:
    """Timestamped N-Triples (engine/stream/batch_format.py), the heartbeat line last."""
    lines = [f"{ts} {format_term(s)} {format_term(p)} {format_term(o)} .\n"
             for ts, triples in items for s, p, o in triples]
    lines.append(f"{close}\n")
    return "".join(lines).encode()


def stream_bodies(data: LSBenchData, seconds: float, scale: float, seed: int = DEFAULT_SEED) -> list[Body]:
    """The bodies of ``seconds`` of application time, per 100 ms step the
    posts' body, then the likes' (whose items point at recent posts)."""
    rates = {name: rate for name, rate in scaled_rates(scale).items() if name in FED_STREAMS}
    generator = StreamGenerator(data, rates, seed)
    bodies = []
    for _ in range(round(seconds * 1000 / STEP_MS)):
        close = generator.now + STEP_MS
        items = generator.advance(close)
        for name in FED_STREAMS:
            # an item (the body's lines of one timestamp) is a graph: a triple it
            # repeats is one triple of it (engine/stream/batch_rows.py)
            distinct = len({(ts, triple) for ts, triples in items[name] for triple in triples})
            bodies.append(Body(name, close, _body(items[name], close), distinct))
    return bodies


def expected_closes(bodies: Sequence[Body], streams: Sequence[str]) -> tuple[int, int] | None:
    """First and last close of a query reading ``streams``: its clock starts
    with the first window holding an item of one of them; the last heartbeat
    closes the last. None if its streams carry no item."""
    first = min((b.close_ms for b in bodies if b.stream in streams and b.triples), default=None)
    if first is None:
        return None
    return first, max(b.close_ms for b in bodies if b.stream in streams)


# ---------------------------------------------------------------- SSE reader
@dataclass(frozen=True)
class Received:
    event_id: str | None
    sequence: int
    start_ms: int
    end_ms: int
    rows: int


class EventCollector:
    """The SSE streams of many queries, read in one asyncio loop on its own
    thread (one connection per query); each stream is read until the server
    ends it (the query unregistered), so events too many are seen too."""

    def __init__(self, base: str, names: Sequence[str]) -> None:
        self.base = base
        self.names = list(names)
        self.events: dict[str, list[Received]] = {n: [] for n in self.names}
        self.failures: dict[str, str] = {}
        self.ended: set[str] = set()
        self._pending = len(self.names)
        self._connected = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sse-readers", daemon=True)
        self._done = None

    def start(self) -> None:
        """Connect every reader (the server subscribes it before it answers)."""
        if not self.names:
            return
        self._thread.start()
        self._done = asyncio.run_coroutine_threadsafe(self._read_all(), self._loop)
        if not self._connected.wait(CONNECT_TIMEOUT_S):
            raise RuntimeError(f"{self._pending} SSE readers not connected in {CONNECT_TIMEOUT_S} s")
        if self.failures:
            raise RuntimeError(f"cannot read the events: {self.failures}")

    def finish(self, timeout: float = END_TIMEOUT_S) -> None:
        """Wait until every stream has ended; note those that did not."""
        if self._done is None:
            self._loop.close()
            return
        problem = f"the event stream did not end within {timeout:g} s"
        try:
            self._done.result(timeout)
        except TimeoutError:
            self._done.cancel()
        except Exception as exc:  # not one reader's error (those are noted): the loop's
            problem = f"the readers failed: {type(exc).__name__}: {exc}"
        for name in self.names:
            if name not in self.ended and name not in self.failures:
                self.failures[name] = problem
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    def _connected_one(self) -> None:
        self._pending -= 1  # on the loop's thread only
        if self._pending == 0:
            self._connected.set()

    async def _read_all(self) -> None:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        timeout = httpx.Timeout(CONNECT_TIMEOUT_S, read=None)
        async with httpx.AsyncClient(base_url=self.base, timeout=timeout, limits=limits) as client:
            await asyncio.gather(*(self._read(client, name) for name in self.names))

    async def _read(self, client: httpx.AsyncClient, name: str) -> None:
        connected = False
        try:
            async with client.stream("GET", f"/queries/{name}/events",
                                     headers={"Accept": "text/event-stream"}) as response:
                response.raise_for_status()
                connected = True
                self._connected_one()
                received = self.events[name]
                event_id: str | None = None
                data: list[str] = []
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        event_id = line[3:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].removeprefix(" "))
                    elif not line and data:  # a blank line ends an event (SSE)
                        event = orjson.loads("\n".join(data))
                        window = event["window"]
                        received.append(Received(event_id, event["sequence"], window["start_ms"],
                                                 window["end_ms"], event["rows"]))
                        event_id, data = None, []
            self.ended.add(name)
        except (httpx.HTTPError, orjson.JSONDecodeError, KeyError) as exc:
            self.failures[name] = f"{type(exc).__name__}: {exc}"
            if not connected:
                self._connected_one()


def check_events(events: Sequence[Received], closes: tuple[int, int] | None) -> list[str]:
    """What is wrong with one query's events (empty: one per window, in order, no gap)."""
    expected = 0 if closes is None else (closes[1] - closes[0]) // STEP_MS + 1
    for k, e in enumerate(events[:expected]):
        end = closes[0] + k * STEP_MS
        if (e.sequence, e.event_id, e.end_ms, e.start_ms) != (k + 1, str(k + 1), end, end - RANGE_MS):
            return [f"event {k + 1}: sequence {e.sequence} (id {e.event_id}), window "
                    f"[{e.start_ms}, {e.end_ms}); expected window [{end - RANGE_MS}, {end})"]
    if len(events) != expected:
        return [f"{len(events)} events for {expected} windows"]
    return []


# --------------------------------------------------------------- one run
@dataclass
class Run:
    """One number of registered queries: what was posted, how fast, what arrived."""

    queries: int
    triples: int = 0
    wall_s: float = 0.0
    windows_fired: int = 0
    expected: int = 0
    received: int = 0
    problems: list[str] = field(default_factory=list)
    #: wall time of each POST (parse, ingest and the windows it closes), ms
    post_ms: list[float] = field(default_factory=list)
    #: per family, the rows of every event received
    rows: dict[str, list[int]] = field(default_factory=lambda: collections.defaultdict(list))

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.wall_s

    @property
    def checked(self) -> bool:
        return not self.problems


def declare_streams(client: httpx.Client) -> None:
    for name in FED_STREAMS:
        spec = STREAMS[name]
        client.put(f"/streams/{name}", json={"iri": spec.iri.value,
                                            "timing": sorted(spec.timing)}).raise_for_status()


def measure(base: str, bodies: Sequence[Body], queries: Sequence[IngestQuery],
            on_posting=None) -> Run:
    """Register ``queries`` on the fresh server at ``base``, subscribe to each,
    post ``bodies`` one after the other, then check every query's events.
    ``on_posting(started: bool)`` is called just before and after the timed part."""
    run = Run(len(queries))
    with httpx.Client(base_url=base, timeout=POST_TIMEOUT_S) as client:
        declare_streams(client)
        for query in queries:
            client.post("/queries", content=query.text,
                        headers={"Content-Type": "application/sparql-query"}).raise_for_status()
        collector = EventCollector(base, [q.name for q in queries])
        try:
            collector.start()
            if on_posting:
                on_posting(True)
            headers = {"Content-Type": BATCH_MEDIA_TYPE}
            started = time.perf_counter()
            for body in bodies:
                sent = time.perf_counter()
                response = client.post(f"/streams/{body.stream}", content=body.data, headers=headers)
                run.post_ms.append((time.perf_counter() - sent) * 1000)
                response.raise_for_status()
                summary = response.json()
                run.triples += summary["triples"]
                run.windows_fired += summary["windows_fired"]
                if summary["triples"] != body.triples:
                    run.problems.append(f"{body.stream} at {body.close_ms}: {summary['triples']} triples "
                                        f"accepted of {body.triples}")
            run.wall_s = time.perf_counter() - started
            if on_posting:
                on_posting(False)
            for query in queries:
                closes = expected_closes(bodies, query.streams)
                expected = 0 if closes is None else (closes[1] - closes[0]) // STEP_MS + 1
                run.expected += expected
                reported = client.get(f"/queries/{query.name}").json()["windows_reported"]
                if reported != expected:
                    run.problems.append(f"{query.name}: the server reports {reported} windows of {expected}")
                client.delete(f"/queries/{query.name}").raise_for_status()
        finally:
            collector.finish()
    if run.windows_fired != run.expected:
        run.problems.append(f"{run.windows_fired} windows fired for {run.expected} expected")
    for query in queries:
        events = collector.events[query.name]
        run.received += len(events)
        run.rows[query.family].extend(e.rows for e in events)
        if query.name in collector.failures:
            run.problems.append(f"{query.name}: {collector.failures[query.name]}")
        run.problems.extend(f"{query.name}: {p}"
                            for p in check_events(events, expected_closes(bodies, query.streams)))
    return run


# ---------------------------------------------------------------- profiling
class Profiler:
    """py-spy recording the server process while the bodies are posted
    (collapsed stacks, one file per number of queries), if ``out_dir`` is set."""

    def __init__(self, out_dir: Path | None, pid: int, queries: int) -> None:
        self.out = None if out_dir is None else out_dir / f"ingest_{queries}q.txt"
        self.pid = pid
        self._process: subprocess.Popen | None = None

    def __call__(self, starting: bool) -> None:
        if self.out is None:
            return
        if starting:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            py_spy = Path(sys.executable).with_name("py-spy")
            self._process = subprocess.Popen([str(py_spy if py_spy.exists() else "py-spy"), "record",
                                              "--pid", str(self.pid), "--format", "raw", "--rate", "200",
                                              "--nonblocking",
                                              "--output", str(self.out)], stdout=subprocess.DEVNULL)
            time.sleep(1.0)  # py-spy attaches
        elif self._process is not None:
            self._process.send_signal(signal.SIGINT)
            self._process.wait(timeout=120)
            print(top_frames(self.out), flush=True)


def top_frames(path: Path, count: int = 12) -> str:
    """The functions most often on the CPU (self) and on the stack (total) in a
    py-spy raw profile (``frame;frame;... samples`` per line)."""
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        samples += int(n)
        own[frames[-1]] += int(n)
        for frame in set(frames):
            total[frame] += int(n)
    lines = [f"  {path.name}: {samples} samples"]
    for title, counter in (("self", own), ("total", total)):
        lines.append(f"  top {title}:")
        lines += [f"    {n / samples:6.1%}  {frame}" for frame, n in counter.most_common(count)]
    return "\n".join(lines)


# ------------------------------------------------------------------- report
HEADERS = ["registered queries", "triples posted", "wall s", "triples/s", "x real time",
           "POST median ms", "POST p99 ms", "events expected", "events received", "all checked?"]


def report(runs: list[Run], data: LSBenchData, bodies: Sequence[Body], args: argparse.Namespace) -> str:
    stream_s = len(bodies) // len(FED_STREAMS) * STEP_MS / 1000
    rows = [[r.queries, r.triples, r.wall_s, r.triples_per_s, stream_s / r.wall_s,
             statistics.median(r.post_ms), statistics.quantiles(r.post_ms, n=100)[98],
             r.expected, r.received, "yes" if r.checked else "NO"] for r in runs]
    widest = max(runs, key=lambda r: r.queries)
    families = [[f.name, " + ".join(f.streams), f.about,
                 float(statistics.median(widest.rows[f.name])) if widest.rows.get(f.name) else "-"]
                for f in FAMILIES]
    rates = ", ".join(f"{name} {STREAMS[name].paper_triples_per_s * args.scale:,.0f}" for name in FED_STREAMS)
    return (
        f"Machine: {machine_description()}; load average {args.load:.1f} before the run (the "
        f"machine is shared: other work lowers the figures).\n\n"
        f"Server: `rivulet`'s app under uvicorn in a child process, {len(data):,} stored triples "
        f"(`benchmarks.lsbench_data`, seed {args.seed}). Client: one producer posting, one after the "
        f"other, {len(bodies):,} pre-formatted bodies of timestamped N-Triples: {stream_s:g} s of "
        f"application time of `poststream` and `postlikestream` at {args.scale:g} x the paper's rates "
        f"({rates} triples/s), one body per stream and 100 ms, each ending with a heartbeat at the "
        f"step's end, so every step closes one window of every query (its POST returns once they are "
        f"evaluated). *triples/s* is triples accepted / wall time from the first POST to the last "
        f"answer; *x real time* is application time / wall time (1 keeps up with the paper's rates); "
        f"*POST* is one body's round trip (its ~1,000 or ~8,600 triples read, ingested, and the "
        f"windows it closes evaluated). "
        f"A fresh server per row.\n\n"
        f"Queries: C-SPARQL `[RANGE 1s STEP 100ms]`, each also reading the social graph (`FROM`); "
        f"query j is family j mod 5 with the constant (channel, user, country and gender, hashtag) of "
        f"rank j div 5, so the 100 are 20 of each. Every window is checked: one SSE reader per query "
        f"must receive one `window` event per closed window, sequence 1, 2, ... with no gap and "
        f"window ends 100 ms apart, the server must report as many windows, and after the queries "
        f"are unregistered (which ends their event streams) no event may be left over.\n\n"
        + markdown_table(HEADERS, rows)
        + f"\n\nThe query families (rows per window: median over the events of the {widest.queries}-query "
          "run):\n\n"
        + markdown_table(["family", "streams", "what it asks", "rows / window"], families)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000, help="stored triples")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--seconds", type=float, default=10.0, help="application time posted")
    parser.add_argument("--scale", type=float, default=1.0, help="stream rates / the paper's")
    parser.add_argument("--queries", default=",".join(map(str, DEFAULT_QUERY_COUNTS)),
                        help="numbers of registered queries, comma-separated")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    parser.add_argument("--py-spy", type=Path, metavar="DIR",
                        help="profile the server with py-spy while posting; raw profiles in DIR")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.queries.split(",")]
    args.load = os.getloadavg()[0]

    started = time.perf_counter()
    data = generate(args.triples, args.seed)
    bodies = stream_bodies(data, args.seconds, args.scale, args.seed)
    print(f"{len(data):,} stored triples; {len(bodies)} bodies of {sum(b.triples for b in bodies):,} "
          f"triples ({sum(len(b.data) for b in bodies) / 1e6:.0f} MB) generated in "
          f"{time.perf_counter() - started:.1f}s", flush=True)
    runs = []
    for count in counts:
        queries = continuous_queries(data, count)
        with lsbench_server(args.triples, args.seed) as (base, server):
            run = measure(base, bodies, queries, Profiler(args.py_spy, server.pid, count))
        runs.append(run)
        print(f"  {count} queries: {run.triples:,} triples in {run.wall_s:.1f}s = "
              f"{run.triples_per_s:,.0f} triples/s; events {run.received:,} of {run.expected:,}; "
              f"{'checked' if run.checked else 'PROBLEMS: ' + '; '.join(run.problems[:5])}", flush=True)
    body = report(runs, data, bodies, args)
    print()
    print(body)
    if not args.no_write:
        write_section(HEADING, body)
    if not all(r.checked for r in runs):
        raise SystemExit("some windows were not reported as expected")


if __name__ == "__main__":
    main()
