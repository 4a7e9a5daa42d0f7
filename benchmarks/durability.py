"""The throughput cost of durability: the same writes against an in-memory server and a durable one.

``rivulet serve --data-dir DIR`` makes every acknowledged write survive a
crash: with ``--sync always`` each write is fsynced before its answer, with
``--sync none`` it is only handed to the operating system (it survives a
process kill, not a power cut). Both cost something on every write; this
script measures how much, so that the choice between the modes (and the
claim that one of them is cheap enough) rests on figures from this machine.

The server runs as a child process (client and server must not share an
interpreter lock), once per mode, one mode after the other:

- ``memory``: no ``--data-dir`` (nothing survives a restart): the baseline;
- ``sync always``: ``--data-dir`` and ``--sync always``;
- ``sync none``: ``--data-dir`` and ``--sync none``.

For each mode it sends small ``INSERT DATA`` updates from one client, then
the same number from four clients at once (where a server that commits
several clients' writes with one fsync shows it), then batches of 100
timestamped triples to a declared stream. Every request is a fixed count, so
every mode does the same work; each phase also stops at a time limit so a
very slow mode cannot hold the run (the table then says how many were sent).
The clients are threads over ``http.client`` keep-alive connections: lean
enough that the server, not the client, is what is measured.

    python -m benchmarks.durability                       # 2000 updates, 300 batches a mode, ~1-3 min
    python -m benchmarks.durability --updates 500 --batches 100     # quick check

The table goes to standard output (markdown); ``docs/benchmarks.md`` is not
rewritten unless ``--write`` is given. The rest of this module is the
child-process server that ``tests/durability`` drives as well.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import machine_description, markdown_table, write_section

HEADING = "The cost of durability"
HOST = "127.0.0.1"
#: the ``rivulet`` command of the environment running this script
RIVULET = Path(sys.executable).parent / "rivulet"
#: seconds a server may take from spawn to its first answer (a recovery replays the log)
STARTUP_TIMEOUT_S = 120.0
#: seconds between two attempts while a server starts: recovery times are reported, so poll often
POLL_S = 0.01
#: seconds a stopped server may take to exit before it is killed
STOP_TIMEOUT_S = 20.0
#: seconds one request may take (an fsync on a busy disk can be slow, but not this slow)
REQUEST_TIMEOUT_S = 60.0
#: seconds one phase may run before it stops short of its count
PHASE_LIMIT_S = 45.0
STREAM_BASE_MS = 1_700_000_000_000
EX = "http://example.org/durability/"


def free_port() -> int:
    """A port free on loopback now; the child binds it a moment later (a race
    another process could win, which then shows as a start-up failure)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def serve_help() -> str:
    """``rivulet serve --help``: which options this checkout's server has."""
    done = subprocess.run([str(RIVULET), "serve", "--help"], capture_output=True, text=True, timeout=60)
    return done.stdout


def has_data_dir() -> bool:
    """Whether the server can keep its data (``--data-dir``): the durability
    test and the durable modes need it, an older server has none."""
    return "--data-dir" in serve_help()


class ServerDidNotStart(RuntimeError):
    """The child exited or did not answer in time; the message ends with its log."""


class ServerProcess:
    """``rivulet serve`` as a child process in its own process group, so that
    a kill reaches the whole server (any helper it forked too) and a Ctrl-C
    of the driver does not reach it before the driver has cleaned up.

    Its standard output and error are appended to ``log_path``: the tail is
    what a failure to start (or to recover) shows."""

    def __init__(self, args: Sequence[str], log_path: Path, port: int | None = None) -> None:
        self.args = list(args)
        self.log_path = log_path
        self.port = port or free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self, since: float | None = None, timeout: float = STARTUP_TIMEOUT_S) -> float:
        """Spawn the server and wait until it answers; seconds from ``since``
        (default: the spawn) to the first answer."""
        began = time.monotonic() if since is None else since
        self.spawn()
        return self.wait_until_up(began, timeout)

    def spawn(self) -> None:
        """Start the child without waiting for it (a crash test may kill it while it recovers)."""
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== start {self.starts}: serve {' '.join(self.args)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [str(RIVULET), "serve", "--host", HOST, "--port", str(self.port), *self.args],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )

    def wait_until_up(self, since: float, timeout: float) -> float:
        """Poll ``GET /streams`` (answered by every server, any mode) until a 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise ServerDidNotStart(f"the server exited with {code} before answering\n{self.log_tail()}")
            try:
                connection = http.client.HTTPConnection(HOST, self.port, timeout=2)
                try:
                    connection.request("GET", "/streams")
                    if connection.getresponse().status == 200:
                        return time.monotonic() - since
                finally:
                    connection.close()
            except OSError:
                pass
            time.sleep(POLL_S)
        raise ServerDidNotStart(f"the server did not answer within {timeout:.0f} s\n{self.log_tail()}")

    def terminate(self) -> None:
        """SIGTERM without waiting: a clean shutdown starts (and a kill may follow it)."""
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """SIGKILL the server's process group: no handler runs, nothing is flushed."""
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), then SIGKILL if it has not exited in time."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Phase:
    """One workload of one mode: per-request latencies and the wall time of the whole phase."""

    mode: str
    workload: str
    planned: int
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    units_per_request: int = 1

    @property
    def rate(self) -> float:
        return len(self.latencies) * self.units_per_request / self.seconds if self.seconds else 0.0

    def percentile_ms(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Client:
    """One keep-alive connection; ``send`` times one request and checks its status."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT_S)

    def send(self, method: str, path: str, body: bytes, content_type: str, expect: int) -> float:
        started = time.perf_counter()
        self.connection.request(method, path, body=body, headers={"Content-Type": content_type})
        response = self.connection.getresponse()
        text = response.read()
        elapsed = time.perf_counter() - started
        if response.status != expect:
            raise RuntimeError(f"{method} {path}: {response.status} {text[:200]!r}")
        return elapsed

    def close(self) -> None:
        self.connection.close()


def update_body(client_number: int, n: int) -> bytes:
    """A small INSERT DATA of two new triples (every update adds, none is a no-op)."""
    subject = f"<{EX}c{client_number}/u{n}>"
    text = f'INSERT DATA {{ {subject} <{EX}n> {n} . {subject} <{EX}label> "update {n}" }}'
    return urllib.parse.urlencode({"update": text}).encode()


def run_updates(port: int, phase: Phase, clients: int) -> None:
    """``phase.planned`` updates split over ``clients`` threads, each with its own connection."""
    share = [phase.planned // clients + (1 if i < phase.planned % clients else 0) for i in range(clients)]
    deadline = time.monotonic() + PHASE_LIMIT_S
    lock = threading.Lock()
    start_together = threading.Barrier(clients + 1)

    def work(number: int) -> None:
        client = Client(port)
        mine: list[float] = []
        try:
            start_together.wait(timeout=30)
            for n in range(share[number]):
                if time.monotonic() > deadline:
                    break
                mine.append(client.send("POST", "/sparql", update_body(number + 10 * clients, n),
                                        "application/x-www-form-urlencoded", 204))
        except Exception as exc:  # noqa: BLE001 - reported in the table, the other clients go on
            with lock:
                phase.failures.append(f"client {number}: {exc}")
        finally:
            client.close()
            with lock:
                phase.latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    start_together.wait(timeout=30)
    started = time.perf_counter()
    for thread in threads:
        thread.join(timeout=PHASE_LIMIT_S + REQUEST_TIMEOUT_S)
    phase.seconds = time.perf_counter() - started


def run_stream(port: int, phase: Phase, batch: int) -> None:
    """Declare a stream, then ``phase.planned`` batches of ``batch`` timestamped
    triples, timestamps increasing (10 ms between items, so windows would close)."""
    client = Client(port)
    try:
        client.send("PUT", "/streams/bench", f'{{"iri": "{EX}stream"}}'.encode(), "application/json", 201)
        deadline = time.monotonic() + PHASE_LIMIT_S
        started = time.perf_counter()
        for b in range(phase.planned):
            if time.monotonic() > deadline:
                break
            ts = STREAM_BASE_MS + b * batch * 10
            lines = [f'{ts + i * 10} <{EX}s/b{b}/t{i}> <{EX}reading> "{i}" .' for i in range(batch)]
            phase.latencies.append(client.send("POST", "/streams/bench", "\n".join(lines).encode(),
                                               "application/x-timestamped-ntriples", 202))
        phase.seconds = time.perf_counter() - started
    except Exception as exc:  # noqa: BLE001 - reported in the table
        phase.failures.append(str(exc))
    finally:
        client.close()


def warm_up(port: int) -> None:
    """A few requests of each kind, so that the first timed ones do not pay
    lazy imports and first-use caches (which are the same in every mode)."""
    client = Client(port)
    try:
        for n in range(30):
            client.send("POST", "/sparql", update_body(99, n), "application/x-www-form-urlencoded", 204)
        client.send("PUT", "/streams/warm", f'{{"iri": "{EX}warm"}}'.encode(), "application/json", 201)
        for b in range(10):
            body = "\n".join(f'{1000 + b * 100 + i} <{EX}w/{b}/{i}> <{EX}v> "1" .' for i in range(100))
            client.send("POST", "/streams/warm", body.encode(), "application/x-timestamped-ntriples", 202)
    finally:
        client.close()


MODES = {
    "memory": [],
    "sync always": ["--sync", "always"],
    "sync none": ["--sync", "none"],
}


def measure_mode(mode: str, args: argparse.Namespace, work_dir: Path) -> list[Phase]:
    """Start one server in ``mode``, run the three phases, stop it."""
    serve_args = list(MODES[mode])
    if serve_args:
        data_dir = work_dir / mode.replace(" ", "-")
        serve_args = ["--data-dir", str(data_dir), *serve_args]
    server = ServerProcess(serve_args, work_dir / "server.log")
    phases = [Phase(mode, "update, 1 client", args.updates), Phase(mode, "update, 4 clients", args.updates),
              Phase(mode, f"stream batch of {args.batch}", args.batches, units_per_request=args.batch)]
    try:
        server.start()
        warm_up(server.port)
        run_updates(server.port, phases[0], 1)
        run_updates(server.port, phases[1], 4)
        run_stream(server.port, phases[2], args.batch)
    finally:
        server.stop()
    return phases


def filesystem_of(path: Path) -> str:
    """The mount's file system type (an fsync on tmpfs costs nothing: the reader must know)."""
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                parts = line.split()
                if len(parts) > 2 and str(path.resolve()).startswith(parts[1]) and len(parts[1]) > len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def fsync_ms(directory: Path, count: int = 200) -> float:
    """Median ms of one 200-byte append + fsync in ``directory``: what ``--sync always``
    pays at least per write on this disk (a virtual disk may acknowledge from a cache)."""
    path = directory / "fsync-probe"
    times = []
    with open(path, "ab") as f:
        for _ in range(count):
            started = time.perf_counter()
            f.write(b"x" * 200)
            f.flush()
            os.fsync(f.fileno())
            times.append(time.perf_counter() - started)
    path.unlink()
    return 1000 * sorted(times)[len(times) // 2]


def report(phases: list[Phase], args: argparse.Namespace, work_dir: Path) -> str:
    baseline = {p.workload: p.rate for p in phases if p.mode == "memory"}
    rows = []
    for p in phases:
        unit = "triples/s" if p.units_per_request > 1 else "updates/s"
        ratio = p.rate / baseline[p.workload] if baseline.get(p.workload) else float("nan")
        sent = f"{len(p.latencies):,}" + ("" if len(p.latencies) == p.planned else f" of {p.planned:,}")
        rows.append([p.mode, p.workload, sent, f"{p.rate:,.0f} {unit}", round(ratio, 3),
                     p.percentile_ms(0.5), p.percentile_ms(0.99)])
    table = markdown_table(["mode", "workload", "requests", "rate", "rate / memory", "median ms", "p99 ms"],
                           rows)
    failures = [f"- {p.mode}, {p.workload}: {f}" for p in phases for f in p.failures]
    lines = [
        f"`python -m benchmarks.durability --updates {args.updates} --batches {args.batches} "
        f"--batch {args.batch}` on {machine_description()}; data directory on {filesystem_of(work_dir)}, "
        f"where a 200-byte append + fsync takes {fsync_ms(work_dir):.2f} ms (median).",
        "",
        "Each mode is one `rivulet serve` child process; latencies are per request as the client saw "
        "them (keep-alive connections), the rate is requests (or triples) over the phase's wall time.",
        "",
        table,
    ]
    if failures:
        lines += ["", "Failures:", *failures]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=2000, help="updates per update phase (default 2000)")
    parser.add_argument("--batches", type=int, default=300, help="stream batches (default 300)")
    parser.add_argument("--batch", type=int, default=100, help="triples per stream batch (default 100)")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated modes among {', '.join(MODES)} (default all)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the data directories go (default a temporary directory, removed)")
    parser.add_argument("--write", action="store_true",
                        help="also rewrite this section of docs/benchmarks.md")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown modes {unknown}; known: {list(MODES)}")
    if any(MODES[m] for m in modes) and not has_data_dir():
        sys.exit("this server has no --data-dir option yet: only the memory mode can run (--modes memory)")
    work_dir = Path(tempfile.mkdtemp(prefix="rivulet-durability-", dir=args.dir))
    try:
        phases: list[Phase] = []
        for mode in modes:
            print(f"measuring {mode} ...", file=sys.stderr, flush=True)
            phases.extend(measure_mode(mode, args, work_dir))
        text = report(phases, args, work_dir)
        print(text)
        if args.write:
            write_section(HEADING, text)
        if any(p.failures for p in phases):
            sys.exit(1)
    except ServerDidNotStart as exc:
        sys.exit(f"a server did not start: {exc}")
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
