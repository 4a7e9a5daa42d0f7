"""Throughput of the varied-constant mix with writes on, beside a writable Oxigraph server.

:mod:`benchmarks.varied_serving` measures servers that are only read. Here
both servers take writes while they are read: a trickle client POSTs one
small SPARQL Update (``INSERT DATA`` of one triple, never about the users
the queries ask about) every ``1 / --writes-per-second`` seconds, while
four client processes (``--clients``) cycle through the mix of
:mod:`benchmarks.varied_serving` (its four queries, a user drawn at random
per request, by GET). The servers:

- the Oxigraph server, writable (``oxigraph serve``; updates to ``/update``);
- ``rivulet serve --data-dir D`` with ``--processes 1`` and ``--processes 2``
  (one writer, one reader following its log: :mod:`endpoint.reader_processes`).

Each configuration runs ``--repeats`` times, the configurations alternated
(a shared machine's load changes over the minutes); the table gives the
median, the ratio to Oxigraph's median and the writes acknowledged.

    python -m benchmarks.writing_serving                      # 1M triples
    python -m benchmarks.writing_serving --triples 200000 --seconds 5 --repeats 1 --no-write
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.generate import DEFAULT_SEED
from benchmarks.serving import (
    ACCEPT,
    BIN,
    HOST,
    WORKDIR,
    RawClient,
    data_file,
    free_port,
    get_request,
    oxigraph_version,
    run_clients,
    running,
    wait_until_answering,
)
from benchmarks.varied_serving import TEMPLATES, query_text
from benchmarks.varied_serving import _users as users_of

HEADING = "Several processes with writes on, beside the Oxigraph server"
#: seconds of 1-client warm-up before each measured run
WARMUP_S = 3.0


@dataclass
class Config:
    name: str
    #: server processes (Rivulet); 0: the Oxigraph server
    processes: int
    per_second: list[float] = field(default_factory=list)
    writes: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def update_request(path: str, field_name: str, text: str, port: int) -> bytes:
    body = urllib.parse.urlencode({field_name: text}).encode("ascii")
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: {ACCEPT}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode("ascii") + body


def trickle(port: int, path: str, per_second: float, first: int, stop, results) -> None:
    """One writer client: an INSERT DATA of one new triple every 1/per_second s, until ``stop``."""
    written = failed = 0
    with RawClient(HOST, port) as client:
        k = first
        next_at = time.monotonic()
        while not stop.is_set():
            text = f"INSERT DATA {{ <urn:bench:write:{k}> <urn:bench:written> {k} }}"
            status, _ = client.request(update_request(path, "update", text, port))
            written, failed = (written + 1, failed) if status in (200, 204) else (written, failed + 1)
            k += 1
            next_at += 1 / per_second
            stop.wait(max(0.0, next_at - time.monotonic()))
    results.put((written, failed))


def wait_for_processes(log: Path, processes: int, timeout: float) -> None:
    """Wait until every server process said its application started (readers start after the writer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.read_text(errors="replace").count("Application startup complete") >= processes:
            return
        time.sleep(0.1)
    raise RuntimeError(f"not all {processes} server processes started within {timeout:g} s; see {log}")


def measure_once(config: Config, command: list[str], query_path: str, update_path: str, port: int,
                 mix: list[bytes], args: argparse.Namespace, log: Path, first_write: int) -> None:
    context = multiprocessing.get_context("fork")
    with running(command, log) as process:
        ask = get_request(query_path, "ASK {}", port)
        wait_until_answering(process, port, ask, args.startup_timeout, log)
        if config.processes > 1:
            wait_for_processes(log, config.processes, args.startup_timeout)
        run_clients(port, mix, 1, WARMUP_S)
        stop, results = context.Event(), context.Queue()
        writer = context.Process(target=trickle, daemon=True,
                                 args=(port, update_path, args.writes_per_second, first_write, stop, results))
        writer.start()
        t = run_clients(port, mix, args.clients, args.seconds)
        stop.set()
        written, failed = results.get(timeout=60)
        writer.join(timeout=10)
    config.per_second.append(t.per_second)
    config.writes.append(written)
    config.failed.append(t.failed + failed)
    print(f"  {config.name}: {t.per_second:,.0f} q/s with {args.clients} clients, {written} writes "
          f"acknowledged, {t.failed + failed} failed; load {os.getloadavg()[0]:.1f}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--mix", type=int, default=4000, help="requests in the throughput mix")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of each throughput run")
    parser.add_argument("--clients", type=int, default=4, help="reading client processes")
    parser.add_argument("--writes-per-second", type=float, default=20.0, help="the trickle's rate")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each configuration, alternated")
    parser.add_argument("--startup-timeout", type=float, default=600.0)
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help="data cache, stores and server logs")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.runs = 0
    load = os.getloadavg()[0]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the servers
    data, _ = data_file(args.triples, args.seed, args.workdir)
    users = users_of(args, "GET mix", args.mix)
    names = list(TEMPLATES)
    oxigraph_dir = Path(tempfile.mkdtemp(prefix="oxigraph-w-", dir=args.workdir))
    rivulet_dir = Path(tempfile.mkdtemp(prefix="rivulet-w-", dir=args.workdir)) / "data"
    configs = [Config("oxigraph", 0), Config("rivulet, 1 process", 1), Config("rivulet, 2 processes", 2)]
    try:
        oxigraph = str(BIN / "oxigraph")
        started = time.perf_counter()
        with running([oxigraph, "load", "--location", str(oxigraph_dir), "--file", str(data)],
                     args.workdir / "oxigraph-w-load.log") as process:
            if process.wait(timeout=args.startup_timeout) != 0:
                raise RuntimeError("oxigraph load failed")
        print(f"oxigraph load: {time.perf_counter() - started:.1f}s", flush=True)
        for repeat in range(args.repeats):
            for config in configs:
                port = free_port()
                if config.processes == 0:
                    command = [oxigraph, "serve", "--location", str(oxigraph_dir), "--bind", f"{HOST}:{port}"]
                    paths = ("/query", "/update")
                else:
                    command = [str(BIN / "rivulet"), "serve", "--data-dir", str(rivulet_dir),
                               "--data", str(data), "--host", HOST, "--port", str(port),
                               "--processes", str(config.processes)]
                    paths = ("/sparql", "/sparql")
                mix = [get_request(paths[0], query_text(names[i % len(names)], u), port)
                       for i, u in enumerate(users)]
                log = args.workdir / f"writing-{config.processes}.log"
                log.unlink(missing_ok=True)
                first = (repeat * len(configs) + configs.index(config)) * 1_000_000
                measure_once(config, command, *paths, port, mix, args, log, first)
    finally:
        shutil.rmtree(oxigraph_dir, ignore_errors=True)
        shutil.rmtree(rivulet_dir.parent, ignore_errors=True)
    body = report(args, argv, configs, load)
    print()
    print(body)
    if not args.no_write:
        write_section(HEADING, body)


def report(args: argparse.Namespace, argv: list[str], configs: list[Config], load: float) -> str:
    base = statistics.median(configs[0].per_second)
    rows = [[c.name, statistics.median(c.per_second), statistics.median(c.per_second) / base,
             " / ".join(f"{v:,.0f}" for v in c.per_second), statistics.median(c.writes), sum(c.failed)]
            for c in configs]
    return (f"`python -m benchmarks.writing_serving {shlex.join(argv)}`. Machine: {machine_description()}; "
            f"oxigraph server {oxigraph_version()}; load average {load:.1f} before the run (the machine is "
            "shared: other work slows every server).\n\n"
            f"{args.triples:,} generated triples; {args.clients} client processes cycling for "
            f"{args.seconds:g} s through {args.mix} GET requests of the varied mix (the four queries of "
            "`benchmarks.varied_serving`, a random user each), while one more client POSTs an "
            f"`INSERT DATA` of one triple {args.writes_per_second:g} times a second. Each configuration ran "
            f"{args.repeats} times, "
            "alternated; ratio = median / Oxigraph's median. Rivulet: `rivulet serve --data-dir D --data "
            "FILE --processes N` (N = 2: one writer, one reader following its log).\n\n"
            + markdown_table(["server", "median q/s", "ratio", "runs q/s", "writes acknowledged (median)",
                              "non-2xx"], rows))


if __name__ == "__main__":
    main()
