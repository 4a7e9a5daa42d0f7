"""One-shot serving beside the Oxigraph server: start-up, memory, latency and throughput over HTTP.

The other benchmarks compare engines inside one Python process. A user meets
a *server*: they point it at a data file, wait until it answers, and send it
short queries over HTTP, often from several clients at once. This script
measures exactly that, for Rivulet (``rivulet serve --data F``) and the
Oxigraph server (``oxigraph load`` then ``oxigraph serve-read-only``), in one
run, on the same generated N-Triples file:

- start-up: spawn (and, for Oxigraph, its separate load) until the first
  query answers 200;
- resident memory of the server and all its descendant processes, as RSS and
  as PSS (forked or mmap-sharing workers share pages, which RSS counts once
  per process), after start-up and after each load phase;
- one client's latency per query, median and p99, from a lean keep-alive
  client on a raw socket (an HTTP library would cost more than the servers);
- throughput of 1 and 4 client processes, each with its own connection,
  cycling through the small queries for a fixed time;
- optionally (``--minutes``), Rivulet's RSS sampled under minutes of 4-client
  load, to show it stays flat.

The servers run one after the other (the machine is small: two servers and
four clients at once would measure each other), each in its own process group,
stopped at the end also on errors. Row counts are compared between the two.

    python -m benchmarks.serving                                  # 1M triples, ~3 min today
    python -m benchmarks.serving --sizes 1000000,10000000         # both sizes
    python -m benchmarks.serving --triples 200000 --seconds 3 --no-write   # quick check
    python -m benchmarks.serving --rivulet-args "--read-only" --minutes 5
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.generate import DEFAULT_SEED, Constants, generate
from benchmarks.queries import PREFIXES, TEMPLATES

HEADING = "Serving beside the Oxigraph server"
ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WORKDIR = Path(tempfile.gettempdir()) / "rivulet-serving-bench"
HOST = "127.0.0.1"
ACCEPT = "application/sparql-results+json"
#: seconds a server may take from spawn (or a load) to its first answer
STARTUP_TIMEOUT_S = 600.0
#: seconds one request may take before the client gives up
REQUEST_TIMEOUT_S = 120.0
#: seconds between two attempts while a server starts
POLL_S = 0.01
#: warm-up per query: this many runs, or this many seconds, whichever ends first
WARMUP_RUNS, WARMUP_S = 20, 1.0
#: seconds between two memory samples under load
SAMPLE_EVERY_S = 5.0
#: seconds the load clients may take beyond their run to connect and report
CLIENT_GRACE_S = 60.0
#: seconds a stopped server may take to exit before it is killed
STOP_TIMEOUT_S = 30.0
MAX_LINE = 65536


# ------------------------------------------------------------------- data
def data_file(triples: int, seed: int, workdir: Path) -> tuple[Path, Constants]:
    """The N-Triples file of the generated graph and its query constants, cached
    under ``workdir`` by size and seed (the generator is deterministic)."""
    stem = workdir / f"sn-{triples}-s{seed}"
    path, meta = stem.with_suffix(".nt"), stem.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, Constants(**json.loads(meta.read_text()))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    graph = generate(triples, seed)
    partial = stem.with_suffix(".nt.partial")
    graph.write_ntriples(partial)
    os.replace(partial, path)
    meta.write_text(json.dumps(asdict(graph.constants)))
    print(f"generated {len(graph):,} triples into {path} in {time.perf_counter() - started:.1f}s", flush=True)
    return path, graph.constants


# ---------------------------------------------------------------- queries
@dataclass(frozen=True)
class Query:
    """One query of the mix; ``small`` ones also make the throughput mix."""

    name: str
    about: str
    text: str
    small: bool


def serving_queries(c: Constants) -> list[Query]:
    """Short lookups a served application sends all the time, then two medium ones."""
    user, tag = f"<{c.user}>", f"<{c.tag}>"
    small = [
        ("name_age", "a user's name and age",
         f"SELECT ?name ?age WHERE {{ {user} sn:name ?name ; sn:age ?age }}"),
        ("friends", "a user's friends and their names",
         TEMPLATES["friends"][1].replace("{user}", c.user)),
        ("friends_posts", "posts of a user's friends, LIMIT 50",
         f"SELECT ?friend ?post WHERE {{ {user} sn:knows ?friend . ?post sn:hasCreator ?friend }} LIMIT 50"),
        ("likes_count", "COUNT of the likes on a user's posts",
         f"SELECT (COUNT(?fan) AS ?likes) WHERE {{ ?post sn:hasCreator {user} . ?fan sn:likes ?post }}"),
        ("ask_empty", "`ASK {}`: the protocol's floor", "ASK {}"),
    ]
    medium = [
        ("fof_names", "friends of friends with their names (DISTINCT, FILTER)",
         f"SELECT DISTINCT ?fof ?name WHERE {{ {user} sn:knows ?friend . ?friend sn:knows ?fof .\n"
         f"  ?fof sn:name ?name . FILTER(?fof != {user}) }}"),
        ("tag_in_range", "posts with a tag created in the first half of 2022",
         f"SELECT ?post ?date WHERE {{ ?post sn:hasTag {tag} ; sn:created ?date .\n"
         f'  FILTER(?date >= "2022-01-01T00:00:00Z"^^xsd:dateTime '
         f'&& ?date < "2022-07-01T00:00:00Z"^^xsd:dateTime) }}'),
    ]
    return ([Query(n, a, PREFIXES + t, True) for n, a, t in small]
            + [Query(n, a, PREFIXES + t, False) for n, a, t in medium])


def get_request(path: str, query: str, port: int) -> bytes:
    """The bytes of one keep-alive ``GET path?query=...`` asking for SPARQL JSON results."""
    target = f"{path}?{urllib.parse.urlencode({'query': query})}"
    return (f"GET {target} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: {ACCEPT}\r\n"
            f"User-Agent: rivulet-bench\r\n\r\n").encode("ascii")


def result_rows(body: bytes) -> int | str:
    """Rows of a SPARQL JSON result, or the ASK answer as ``true``/``false``."""
    doc = json.loads(body)
    if "boolean" in doc:
        return "true" if doc["boolean"] else "false"
    return len(doc["results"]["bindings"])


# ------------------------------------------------------------ HTTP client
class RawClient:
    """HTTP/1.1 on one keep-alive socket: pre-encoded requests in, (status, body) out.

    Reads the status line, the headers and a Content-Length or chunked body
    (or up to the close when neither is given) through a buffered reader, so
    the per-request cost is a few C calls, not an HTTP library's machinery.
    A reused connection the server has closed is reopened once per request."""

    def __init__(self, host: str, port: int, timeout: float = REQUEST_TIMEOUT_S) -> None:
        self.address = (host, port)
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._reader = None

    def connect(self) -> None:
        self.close()
        sock = socket.create_connection(self.address, timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock, self._reader = sock, sock.makefile("rb", buffering=MAX_LINE)

    def close(self) -> None:
        if self._sock is not None:
            self._reader.close()
            self._sock.close()
            self._sock = self._reader = None

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def request(self, raw: bytes) -> tuple[int, bytes]:
        fresh = self._sock is None
        if fresh:
            self.connect()
        try:
            self._sock.sendall(raw)
            status, body, keep_alive = self._response()
        except (ConnectionError, EOFError):
            self.close()
            if fresh:
                raise
            return self.request(raw)  # the server closed an idle connection: once more, on a new one
        if not keep_alive:
            self.close()
        return status, body

    def _response(self) -> tuple[int, bytes, bool]:
        reader = self._reader
        line = reader.readline(MAX_LINE)
        if not line:
            raise EOFError("the server closed the connection")
        version, status_text = line.split(None, 2)[:2]
        status = int(status_text)
        keep_alive = version == b"HTTP/1.1"
        length, chunked = -1, False
        while True:
            header = reader.readline(MAX_LINE)
            if header in (b"\r\n", b"\n"):
                break
            if not header:
                raise EOFError("the connection closed inside the headers")
            name, _, value = header.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                keep_alive = b"keep-alive" in value.lower() or (keep_alive and b"close" not in value.lower())
        if 100 <= status < 200:
            return self._response()  # an interim answer; the real one follows
        if chunked:
            return status, self._chunked(), keep_alive
        if length >= 0:
            return status, self._exactly(length), keep_alive
        if status in (204, 304):
            return status, b"", keep_alive
        return status, reader.read(), False  # delimited by the close

    def _exactly(self, n: int) -> bytes:
        data = self._reader.read(n)
        if len(data) != n:
            raise EOFError(f"the connection closed after {len(data)} of {n} body bytes")
        return data

    def _chunked(self) -> bytes:
        parts = []
        while True:
            line = self._reader.readline(MAX_LINE)
            if not line:
                raise EOFError("the connection closed inside a chunked body")
            size = int(line.split(b";", 1)[0], 16)
            if size == 0:
                while self._reader.readline(MAX_LINE) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(self._exactly(size))
            self._exactly(2)  # CRLF after the chunk


# ----------------------------------------------------------------- memory
@dataclass(frozen=True)
class Memory:
    """RSS and PSS of a process tree, in MB."""

    processes: int
    rss_mb: float
    pss_mb: float


def _proc_stats() -> Iterator[tuple[int, str, int, int]]:
    """(pid, state, ppid, process group) of every process, from /proc/*/stat."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rpartition(")")[2].split()  # the name in parentheses may hold spaces
        yield int(entry), fields[0], int(fields[1]), int(fields[2])


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants."""
    children: dict[int, list[int]] = defaultdict(list)
    for pid, _, ppid, _ in _proc_stats():
        children[ppid].append(pid)
    out, todo = [root], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _kb(path: str, key: str) -> int:
    """The ``key:`` line of a /proc file in kB; 0 if the process is gone."""
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tree_memory(root: int) -> Memory:
    """VmRSS and Pss (smaps_rollup) summed over ``root`` and its descendants."""
    pids = process_tree(root)
    rss = sum(_kb(f"/proc/{p}/status", "VmRSS:") for p in pids)
    pss = sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids)
    return Memory(len(pids), rss / 1024, pss / 1024)


# ---------------------------------------------------------------- servers
def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    return any(group == pgid and state != "Z" for _, state, _, group in _proc_stats())


def stop(process: subprocess.Popen) -> None:
    """Stop a server started in its own session: SIGTERM to its process group,
    SIGKILL to what is left after ``STOP_TIMEOUT_S``. The group id cannot be
    reused while one of its members lives, so only our processes are signalled."""
    pgid = process.pid

    def signal_group(sig: signal.Signals) -> None:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    signal_group(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        process.poll()  # reap the leader, else it stays a zombie of the group
        if not _group_alive(pgid):
            break
        time.sleep(0.1)
    else:
        signal_group(signal.SIGKILL)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"WARNING: process {pgid} did not exit after SIGKILL", flush=True)


@contextmanager
def running(command: list[str], log: Path) -> Iterator[subprocess.Popen]:
    """``command`` in a new session (its own process group), output to ``log``; stopped on exit."""
    with open(log, "ab") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   cwd=ROOT, start_new_session=True)
    try:
        yield process
    finally:
        stop(process)


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_until_answering(process: subprocess.Popen, port: int, request: bytes, timeout: float,
                         log: Path) -> None:
    """Send ``request`` until it answers 200; fail if the server exits or takes too long."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}; {log}:\n{_tail(log)}")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(f"the server did not answer within {timeout:g} s; {log}:\n{_tail(log)}")
        try:
            with RawClient(HOST, port, timeout=min(remaining, REQUEST_TIMEOUT_S)) as client:
                if client.request(request)[0] == 200:
                    return
        except (OSError, EOFError, ValueError):
            pass  # not listening yet
        time.sleep(POLL_S)


def display(command: Sequence[str]) -> str:
    """A command as a reader would type it in the checkout."""
    return shlex.join(str(Path(c).relative_to(ROOT)) if c.startswith(str(ROOT) + "/") else c
                      for c in command)


# ---------------------------------------------------------------- latency
@dataclass
class Timing:
    """One query on one server: its rows (or ASK answer) and the timed runs."""

    rows: int | str | None = None
    samples_ms: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def median_ms(self) -> float:
        return _quantile(self.samples_ms, 0.5)

    @property
    def p99_ms(self) -> float:
        return _quantile(self.samples_ms, 0.99)


def _quantile(values: Sequence[float], q: float) -> float:
    """Nearest-rank quantile (the median of an even count is the mean of the middle two)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if q == 0.5:
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def time_query(client: RawClient, request: bytes, max_runs: int, max_seconds: float) -> Timing:
    """Rows from one answer (parsed outside the clock), a warm-up, then timed runs
    until ``max_runs`` or ``max_seconds``, whichever comes first."""
    status, body = client.request(request)
    if status != 200:
        return Timing(error=f"HTTP {status}: {body[:200]!r}")
    timing = Timing(rows=result_rows(body))
    warm_until = time.perf_counter() + WARMUP_S
    for _ in range(WARMUP_RUNS):
        client.request(request)
        if time.perf_counter() > warm_until:
            break
    samples = timing.samples_ms
    clock = time.perf_counter_ns
    deadline = clock() + int(max_seconds * 1e9)
    while len(samples) < max_runs:
        started = clock()
        status, _ = client.request(request)
        ended = clock()
        if status != 200:
            timing.error = f"HTTP {status} in a timed run"
            break
        samples.append((ended - started) / 1e6)
        if ended > deadline:
            break
    return timing


# ------------------------------------------------------------- throughput
@dataclass
class Throughput:
    """Completed 200 answers of ``clients`` processes over their run."""

    clients: int
    answers: int = 0
    failed: int = 0
    seconds: float = 0.0
    per_second: float = 0.0
    errors: list[str] = field(default_factory=list)


def _client_process(port: int, requests: Sequence[bytes], offset: int, seconds: float,
                    barrier, results) -> None:
    """One load client: connect, wait for the others, then cycle through ``requests``."""
    answers = failed = 0
    elapsed, error = 0.0, None
    try:
        with RawClient(HOST, port) as client:
            client.connect()
            barrier.wait(CLIENT_GRACE_S)
            n, i = len(requests), offset
            started = time.perf_counter()
            end = started + seconds
            while True:
                status, _ = client.request(requests[i % n])
                i += 1
                if status == 200:
                    answers += 1
                else:
                    failed += 1
                now = time.perf_counter()
                if now >= end:
                    break
            elapsed = now - started
    except Exception as exc:  # reported to the parent, which fails the row
        error = f"{type(exc).__name__}: {exc}"
        barrier.abort()  # the others (and the parent) need not wait for this one
    results.put((answers, failed, elapsed, error))


def run_clients(port: int, requests: Sequence[bytes], clients: int, seconds: float,
                on_tick: Callable[[], None] | None = None) -> Throughput:
    """``clients`` processes, each with its own keep-alive connection, for ``seconds``;
    ``on_tick`` is called every ``SAMPLE_EVERY_S`` meanwhile (memory samples)."""
    context = multiprocessing.get_context("fork")  # no threads here; cheap, nothing re-imported
    barrier, results = context.Barrier(clients + 1), context.Queue()
    workers = [context.Process(target=_client_process, daemon=True,
                               args=(port, requests, k * len(requests) // clients, seconds, barrier, results))
               for k in range(clients)]
    out = Throughput(clients)
    reports: list[tuple[int, int, float, str | None]] = []
    try:
        for w in workers:
            w.start()
        try:
            barrier.wait(CLIENT_GRACE_S)
        except threading.BrokenBarrierError:
            out.errors.append("the clients did not all connect")
        if on_tick:
            on_tick()
        deadline = time.monotonic() + seconds + CLIENT_GRACE_S
        next_tick = time.monotonic() + SAMPLE_EVERY_S
        while len(reports) < clients and time.monotonic() < deadline:
            wait = max(0.01, min(next_tick, deadline) - time.monotonic())
            try:
                reports.append(results.get(timeout=wait))
            except queue.Empty:
                pass
            if on_tick and time.monotonic() >= next_tick:
                on_tick()
                next_tick += SAMPLE_EVERY_S
        if len(reports) < clients:
            out.errors.append(f"{clients - len(reports)} clients did not report in time")
        for answers, failed, elapsed, error in reports:
            out.answers += answers
            out.failed += failed
            if elapsed:
                out.per_second += answers / elapsed
                out.seconds = max(out.seconds, elapsed)
            if error:
                out.errors.append(error)
    finally:
        for w in workers:
            w.join(5.0 if len(reports) == clients else 0.0)  # interrupted: stop them now
            if w.is_alive():
                w.terminate()
                w.join(5.0)
    return out


@dataclass
class LoadMemory:
    """Rivulet's tree RSS sampled under minutes of load: (minute, MB) pairs."""

    samples: list[tuple[float, float]]
    throughput: Throughput

    @property
    def slope_mb_per_min(self) -> float:
        """Least-squares slope of RSS over time."""
        if len(self.samples) < 2:
            return math.nan
        xs, ys = zip(*self.samples, strict=True)
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else math.nan


# --------------------------------------------------------------- one server
@dataclass
class ServerRun:
    """What one server did on one data file."""

    name: str
    commands: list[str]
    load_s: float | None = None  # a separate load step (Oxigraph's)
    serve_s: float = 0.0
    memory: dict[str, Memory] = field(default_factory=dict)
    timings: dict[str, Timing] = field(default_factory=dict)
    throughput: dict[int, Throughput] = field(default_factory=dict)
    under_load: LoadMemory | None = None

    @property
    def startup_s(self) -> float:
        return (self.load_s or 0.0) + self.serve_s


def exercise(run: ServerRun, command: list[str], path: str, queries: Sequence[Query],
             args: argparse.Namespace, port: int, log: Path, minutes: float = 0.0) -> None:
    """Start ``command``, wait for its first answer, then measure memory, latency and throughput."""
    requests = {q.name: get_request(path, q.text, port) for q in queries}
    started = time.perf_counter()
    with running(command, log) as process:
        wait_until_answering(process, port, requests["ask_empty"], args.startup_timeout, log)
        run.serve_s = time.perf_counter() - started
        run.memory["start-up"] = memory = tree_memory(process.pid)
        print(f"  {run.name}: answering after {run.startup_s:.1f}s; {_mem(memory)}", flush=True)
        with RawClient(HOST, port) as client:
            for q in queries:
                t = time_query(client, requests[q.name], args.max_runs, args.max_seconds)
                run.timings[q.name] = t
                print(f"    {q.name}: rows {t.rows}, median {t.median_ms:.3f} ms, p99 {t.p99_ms:.3f} ms, "
                      f"{len(t.samples_ms)} runs{'; ERROR ' + t.error if t.error else ''}", flush=True)
        run.memory["latency runs"] = tree_memory(process.pid)
        mix = [requests[q.name] for q in queries if q.small]
        for clients in args.clients:
            run.throughput[clients] = t = run_clients(port, mix, clients, args.seconds)
            print(f"    {clients} clients: {t.per_second:,.0f} q/s ({t.answers:,} answers, {t.failed} failed)"
                  f"{'; ERRORS ' + '; '.join(t.errors) if t.errors else ''}", flush=True)
        run.memory["throughput runs"] = tree_memory(process.pid)
        print(f"  {run.name}: after the load {_mem(run.memory['throughput runs'])}", flush=True)
        if minutes > 0:
            run.under_load = memory_under_load(process.pid, port, mix, max(args.clients), minutes)


def memory_under_load(pid: int, port: int, mix: Sequence[bytes], clients: int, minutes: float) -> LoadMemory:
    """The tree's RSS every ``SAMPLE_EVERY_S`` during ``minutes`` of ``clients``-client load."""
    samples: list[tuple[float, float]] = []
    started = time.monotonic()

    def sample() -> None:
        samples.append(((time.monotonic() - started) / 60, tree_memory(pid).rss_mb))
        print(f"    {samples[-1][0]:5.2f} min: RSS {samples[-1][1]:,.0f} MB", flush=True)

    throughput = run_clients(port, mix, clients, minutes * 60, on_tick=sample)
    if (time.monotonic() - started) / 60 - samples[-1][0] > 1 / 60:
        sample()  # the end, unless a tick just took it
    return LoadMemory(samples, throughput)


#: what is measured once a server answers: ``exercise`` or another of its signature
Measure = Callable[..., None]


def oxigraph(data: Path, queries: Sequence[Query], args: argparse.Namespace, workdir: Path,
             measure: Measure = exercise) -> ServerRun:
    """``oxigraph load`` into a fresh directory, then ``serve-read-only`` on it."""
    binary = str(BIN / "oxigraph")
    port = free_port()
    location = Path(tempfile.mkdtemp(prefix="oxigraph-", dir=workdir))
    log = workdir / f"oxigraph-{data.stem}.log"
    log.unlink(missing_ok=True)
    load = [binary, "load", "--location", str(location), "--file", str(data)]
    serve = [binary, "serve-read-only", "--location", str(location), "--bind", f"{HOST}:{port}"]
    run = ServerRun("oxigraph", [display(load), display(serve)])
    try:
        started = time.perf_counter()
        with running(load, log) as process:
            try:
                code = process.wait(timeout=args.startup_timeout)
            except subprocess.TimeoutExpired as exc:
                raise RuntimeError(f"oxigraph load took over {args.startup_timeout:g} s") from exc
        if code != 0:
            raise RuntimeError(f"oxigraph load exited with {code}; {log}:\n{_tail(log)}")
        run.load_s = time.perf_counter() - started
        print(f"  oxigraph: loaded in {run.load_s:.1f}s", flush=True)
        measure(run, serve, "/query", queries, args, port, log)
    finally:
        shutil.rmtree(location, ignore_errors=True)
    return run


def rivulet(data: Path, queries: Sequence[Query], args: argparse.Namespace, workdir: Path,
            measure: Measure = exercise) -> ServerRun:
    """``rivulet serve --data`` plus ``--rivulet-args``."""
    port = free_port()
    serve = [str(BIN / "rivulet"), "serve", "--data", str(data), "--host", HOST, "--port", str(port),
             *shlex.split(args.rivulet_args)]
    run = ServerRun("rivulet", [display(serve)])
    log = workdir / f"rivulet-{data.stem}.log"
    log.unlink(missing_ok=True)
    measure(run, serve, "/sparql", queries, args, port, log, args.minutes)
    return run


# ----------------------------------------------------------------- report
def _mem(m: Memory) -> str:
    return f"{m.processes} processes, RSS {m.rss_mb:,.0f} MB, PSS {m.pss_mb:,.0f} MB"


def _ratio(ours: float, theirs: float) -> float | str:
    return ours / theirs if theirs and not math.isnan(ours) and not math.isnan(theirs) else "-"


def check(ox: Timing, riv: Timing) -> str:
    """``ok`` when both servers return as many rows (or the same ASK answer)."""
    if ox.error or riv.error:
        return "ERROR " + "; ".join(f"{n}: {t.error}" for n, t in (("oxigraph", ox), ("rivulet", riv))
                                    if t.error)
    return "ok" if ox.rows == riv.rows else f"WARNING {ox.rows} vs {riv.rows} rows"


def size_report(triples: int, data: Path, queries: Sequence[Query], ox: ServerRun, riv: ServerRun) -> str:
    startup = [[r.name, "-" if r.load_s is None else r.load_s, r.serve_s, r.startup_s] for r in (ox, riv)]
    memory = [[r.name, phase, m.processes, m.rss_mb, m.pss_mb]
              for r in (ox, riv) for phase, m in r.memory.items()]
    latency = []
    for q in queries:
        a, b = ox.timings[q.name], riv.timings[q.name]
        latency.append([q.name, a.rows if a.rows is not None else "-", a.median_ms, b.median_ms,
                        _ratio(b.median_ms, a.median_ms), a.p99_ms, b.p99_ms, _ratio(b.p99_ms, a.p99_ms),
                        f"{len(a.samples_ms)} / {len(b.samples_ms)}", check(a, b)])
    throughput = []
    for clients, a in ox.throughput.items():
        b = riv.throughput[clients]
        problems = "; ".join(a.errors + b.errors) or "-"
        throughput.append([clients, a.per_second, b.per_second, _ratio(b.per_second, a.per_second),
                           f"{a.failed} / {b.failed}", problems])
    text = (f"### {triples:,} triples\n\n"
            f"Data: `{data}`. Commands (ports picked free for the run):\n\n"
            + "".join(f"    {c}\n" for c in ox.commands + riv.commands)
            + "\nStart-up (s): Oxigraph's load is its own process before the server starts; *serve* is "
              "spawn until the first query (`ASK {}`) answers 200.\n\n"
            + markdown_table(["server", "load s", "serve s", "start-up s"], startup)
            + "\n\nMemory of the server and all its descendants (MB), after start-up and after each "
              "load phase:\n\n"
            + markdown_table(["server", "after", "processes", "RSS MB", "PSS MB"], memory)
            + "\n\nOne client, latency per query (ms); ratio = rivulet / oxigraph, below 1 means Rivulet "
              "is faster; runs = timed runs oxigraph / rivulet; check compares row counts:\n\n"
            + markdown_table(["query", "rows", "oxigraph median", "rivulet median", "ratio",
                              "oxigraph p99", "rivulet p99", "p99 ratio", "runs", "check"], latency)
            + "\n\nThroughput of the small-query mix (completed 200 answers per second, all clients); "
              "ratio = rivulet / oxigraph, above 1 means Rivulet serves more:\n\n"
            + markdown_table(["client processes", "oxigraph q/s", "rivulet q/s", "ratio",
                              "non-200 oxigraph / rivulet", "problems"], throughput))
    if riv.under_load:
        u = riv.under_load
        rss = [mb for _, mb in u.samples]
        text += ("\n\nRivulet's RSS under load, sampled every 5 s "
                 f"({u.throughput.clients} clients, {u.throughput.per_second:,.0f} q/s):\n\n"
                 + markdown_table(["minutes", "samples", "first MB", "last MB", "max MB", "slope MB/min"],
                                  [[u.samples[-1][0], len(rss), rss[0], rss[-1], max(rss),
                                    u.slope_mb_per_min]]))
    return text


def report(sections: Sequence[str], queries: Sequence[Query], args: argparse.Namespace) -> str:
    mix = markdown_table(["query", "what it asks", "in the throughput mix"],
                         [[q.name, q.about, "yes" if q.small else "no"] for q in queries])
    return (f"`python -m benchmarks.serving {shlex.join(args.argv)}`. Machine: {machine_description()}; "
            f"oxigraph server {args.oxigraph_version}; load average {args.load:.1f} before the run "
            f"(the machine is shared: other work slows both servers).\n\n"
            f"One-shot serving of a generated N-Triples file (`benchmarks.generate`, seed {args.seed}), "
            "the two servers one after the other, each in its own process group. Client: a keep-alive "
            "HTTP/1.1 client on a raw socket sending pre-encoded `GET ?query=` requests with `Accept: "
            f"{ACCEPT}` and reading the whole body. Latency: per query a warm-up "
            f"({WARMUP_RUNS} runs or {WARMUP_S:g} s), then up to {args.max_runs} runs or "
            f"{args.max_seconds:g} s. Throughput: {' and '.join(map(str, args.clients))} client processes, "
            f"each with its own connection, cycling through the small queries for {args.seconds:g} s. "
            "RSS is VmRSS, PSS is smaps_rollup's Pss (shared pages divided among the processes "
            "sharing them), both summed over the server and its descendants.\n\n"
            + mix + "\n\n" + "\n\n".join(sections))


def oxigraph_version() -> str:
    try:
        out = subprocess.run([str(BIN / "oxigraph"), "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def _glued(argv: list[str]) -> list[str]:
    """``--rivulet-args --read-only`` as ``--rivulet-args=--read-only``: argparse takes a
    value starting with a dash for an option of its own."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--rivulet-args":
            out[i:i + 2] = [f"--rivulet-args={out[i + 1]}"]
            break
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--sizes", help="comma-separated sizes, e.g. 1000000,10000000 (overrides --triples)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of each throughput run")
    parser.add_argument("--clients", default="1,4", help="client processes of the throughput runs")
    parser.add_argument("--max-runs", type=int, default=2000, help="timed runs per query at most")
    parser.add_argument("--max-seconds", type=float, default=5.0, help="timed seconds per query at most")
    parser.add_argument("--minutes", type=float, default=0.0,
                        help="also sample Rivulet's RSS under this many minutes of load")
    parser.add_argument("--rivulet-args", default="", help="extra arguments of 'rivulet serve' (one string)")
    parser.add_argument("--startup-timeout", type=float, default=STARTUP_TIMEOUT_S)
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help="data cache, stores and server logs")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    parser.add_argument("--heading", default=HEADING,
                        help="the section of docs/benchmarks.md to rewrite (one per Rivulet set-up)")
    argv = _glued(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    args.clients = [int(c) for c in args.clients.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [args.triples]
    args.load = os.getloadavg()[0]
    args.oxigraph_version = oxigraph_version()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the servers

    sections, queries = [], []
    for triples in sizes:
        data, constants = data_file(triples, args.seed, args.workdir)
        queries = serving_queries(constants)
        print(f"{triples:,} triples: {data}; constants {constants}", flush=True)
        ox = oxigraph(data, queries, args, args.workdir)
        riv = rivulet(data, queries, args, args.workdir)
        for q in queries:
            if check(ox.timings[q.name], riv.timings[q.name]) != "ok":
                print(f"WARNING: {q.name}: {check(ox.timings[q.name], riv.timings[q.name])}", flush=True)
        sections.append(size_report(triples, data, queries, ox, riv))
    body = report(sections, queries, args)
    print()
    print(body)
    if not args.no_write:
        write_section(args.heading, body)


if __name__ == "__main__":
    main()
