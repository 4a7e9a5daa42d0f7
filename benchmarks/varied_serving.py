"""Serving a mix whose constants vary, beside the Oxigraph server, GET and POST.

:mod:`benchmarks.serving` sends each query with one constant, over and over,
by GET: the easiest case for a server that remembers what it saw. Clients do
not query so: they ask about this user, then that one, and many (SPARQLWrapper,
rdflib, Comunica, YASGUI for long queries) POST a form. This script sends the
same four small queries (a user's name and age, their friends, posts of
their friends, a COUNT of the likes on their posts) with a user drawn at
random per request out of all the generated users, to both servers one after
the other on the same file, by GET and by POST of a form:

- one client's latency per query and method: a warm-up of other users, then
  ``--runs`` requests, each with its own random user (the same users for
  both servers, whose total rows are compared);
- throughput of 1 and 4 client processes cycling through the mixed requests
  (all four queries, random users), per method.

    python -m benchmarks.varied_serving                       # 1M triples
    python -m benchmarks.varied_serving --triples 200000 --runs 200 --seconds 3 --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import signal
import sys
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.generate import DEFAULT_SEED, SN
from benchmarks.queries import PREFIXES
from benchmarks.serving import (
    ACCEPT,
    HOST,
    WORKDIR,
    Query,
    RawClient,
    ServerRun,
    Throughput,
    Timing,
    _mem,
    _ratio,
    check,
    data_file,
    get_request,
    oxigraph,
    oxigraph_version,
    result_rows,
    rivulet,
    run_clients,
    running,
    tree_memory,
    wait_until_answering,
)

HEADING = "Varied constants beside the Oxigraph server"
METHODS = ("GET", "POST")
#: the generator makes one user per 50 triples (``benchmarks.generate``)
TRIPLES_PER_USER = 50
#: requests of other users before the timed ones, per query and method
WARMUP = 50

#: name -> (what it asks, text over ``{user}``)
TEMPLATES = {
    "name_age": ("a user's name and age",
                 "SELECT ?name ?age WHERE {{ {user} sn:name ?name ; sn:age ?age }}"),
    "friends": ("a user's friends and their names",
                "SELECT ?friend ?name WHERE {{ {user} sn:knows ?friend . ?friend sn:name ?name }}"),
    "friends_posts": ("posts of a user's friends, LIMIT 50",
                      "SELECT ?friend ?post WHERE {{ {user} sn:knows ?friend . "
                      "?post sn:hasCreator ?friend }} LIMIT 50"),
    "likes_count": ("COUNT of the likes on a user's posts",
                    "SELECT (COUNT(?fan) AS ?likes) WHERE {{ ?post sn:hasCreator {user} . "
                    "?fan sn:likes ?post }}"),
}


def query_text(name: str, user: int) -> str:
    return PREFIXES + TEMPLATES[name][1].format(user=f"<{SN}user/{user}>")


def post_request(path: str, query: str, port: int) -> bytes:
    """The bytes of one keep-alive POST of a form with the ``query`` parameter."""
    body = urllib.parse.urlencode({"query": query}).encode("ascii")
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: {ACCEPT}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
            f"User-Agent: rivulet-bench\r\n\r\n").encode("ascii") + body


def request(method: str, path: str, query: str, port: int) -> bytes:
    return (get_request if method == "GET" else post_request)(path, query, port)


def time_varied(client: RawClient, requests: Sequence[bytes], warmup: Sequence[bytes]) -> Timing:
    """Each request once, timed; rows summed over all the answers (read outside the clock)."""
    for raw in warmup:
        client.request(raw)
    timing = Timing(rows=0)
    clock = time.perf_counter_ns
    for raw in requests:
        started = clock()
        status, body = client.request(raw)
        ended = clock()
        if status != 200:
            timing.error = f"HTTP {status}: {body[:200]!r}"
            break
        timing.samples_ms.append((ended - started) / 1e6)
        rows = result_rows(body)
        timing.rows += rows if isinstance(rows, int) else 1  # type: ignore[operator]
    return timing


def measure(run: ServerRun, command: list[str], path: str, queries: Sequence[Query],
            args: argparse.Namespace, port: int, log: Path, minutes: float = 0.0) -> None:
    """Start ``command``, then time each query and method, then the throughput of the mixes."""
    ask = get_request(path, "ASK {}", port)
    started = time.perf_counter()
    with running(command, log) as process:
        wait_until_answering(process, port, ask, args.startup_timeout, log)
        run.serve_s = time.perf_counter() - started
        run.memory["start-up"] = tree_memory(process.pid)
        print(f"  {run.name}: answering after {run.startup_s:.1f}s; {_mem(run.memory['start-up'])}",
              flush=True)
        with RawClient(HOST, port) as client:
            for method in METHODS:
                for name in TEMPLATES:
                    users = _users(args, f"{method} {name}", args.runs + WARMUP)
                    raws = [request(method, path, query_text(name, u), port) for u in users]
                    t = time_varied(client, raws[WARMUP:], raws[:WARMUP])
                    run.timings[f"{method} {name}"] = t
                    print(f"    {method} {name}: rows {t.rows}, median {t.median_ms:.3f} ms, "
                          f"p99 {t.p99_ms:.3f} ms{'; ERROR ' + t.error if t.error else ''}", flush=True)
        for method in METHODS:
            users = _users(args, f"{method} mix", args.mix)
            names = list(TEMPLATES)
            mix = [request(method, path, query_text(names[i % len(names)], u), port)
                   for i, u in enumerate(users)]
            for clients in args.clients:
                t = run_clients(port, mix, clients, args.seconds)
                run.throughput[(method, clients)] = t  # type: ignore[index]
                print(f"    {method}, {clients} clients: {t.per_second:,.0f} q/s "
                      f"({t.answers:,} answers, {t.failed} failed)", flush=True)
        run.memory["after the runs"] = tree_memory(process.pid)


def _users(args: argparse.Namespace, what: str, count: int) -> list[int]:
    """``count`` users drawn at random, the same for both servers."""
    rng = random.Random(f"{args.seed}/{what}")
    return [rng.randrange(args.triples // TRIPLES_PER_USER) for _ in range(count)]


@contextmanager
def python_path(checkout: Path) -> Iterator[None]:
    """The servers started meanwhile run the code of ``checkout``."""
    ours = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(checkout)
    try:
        yield
    finally:
        if ours is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = ours


def report(args: argparse.Namespace, data: Path, runs: dict[str, ServerRun]) -> str:
    ox, riv, before = runs["oxigraph"], runs["rivulet"], runs.get("before")
    latency = []
    for key, a in ox.timings.items():
        b = riv.timings[key]
        row = [key, a.rows, a.median_ms]
        if before:
            c = before.timings[key]
            row += [c.median_ms, _ratio(c.median_ms, a.median_ms)]
        row += [b.median_ms, _ratio(b.median_ms, a.median_ms), a.p99_ms]
        if before:
            row += [before.timings[key].p99_ms]
        row += [b.p99_ms, _ratio(b.p99_ms, a.p99_ms), check(a, b)]
        latency.append(row)
    throughput = []
    for key, a in ox.throughput.items():
        b: Throughput = riv.throughput[key]
        row = [key[0], key[1], a.per_second]
        if before:
            c = before.throughput[key]
            row += [c.per_second, _ratio(c.per_second, a.per_second)]
        row += [b.per_second, _ratio(b.per_second, a.per_second), f"{a.failed} / {b.failed}"]
        throughput.append(row)
    startup = [[r.name, "-" if r.load_s is None else r.load_s, r.serve_s, r.memory["start-up"].rss_mb]
               for r in runs.values()]
    was = ["before median", "before ratio"] if before else []
    about = markdown_table(["query", "what it asks"], [[n, a] for n, (a, _) in TEMPLATES.items()])
    return (f"`python -m benchmarks.varied_serving {shlex.join(args.argv)}`. "
            f"Machine: {machine_description()}; oxigraph server {args.oxigraph_version}; "
            f"load average {args.load:.1f} before the run "
            "(the machine is shared: other work slows both servers).\n\n"
            f"{args.triples:,} generated triples (`{data.name}`, "
            f"{args.triples // TRIPLES_PER_USER:,} users); "
            "each request names a user drawn at random (the same users for every server). Client: a "
            "keep-alive HTTP/1.1 client on a raw socket, `GET ?query=` or a POSTed form "
            f"(`application/x-www-form-urlencoded`), `Accept: {ACCEPT}`. Latency: per query and method "
            f"{WARMUP} requests of other users, then {args.runs} timed requests, one per user. "
            f"Throughput: {' and '.join(map(str, args.clients))} client processes cycling through "
            f"{args.mix} mixed requests (the four queries in turn) for {args.seconds:g} s."
            + (f" *before*: Rivulet from `{args.before}`, run the same way." if before else "")
            + "\n\n" + about + "\n\n"
            + markdown_table(["server", "load s", "serve s", "RSS MB after start-up"], startup)
            + "\n\nOne client, latency per request (ms); ratio = rivulet / oxigraph; rows = total rows "
              "over the timed requests; check compares them:\n\n"
            + markdown_table(["method and query", "rows", "oxigraph median", *was, "rivulet median", "ratio",
                              "oxigraph p99", *(["before p99"] if before else []), "rivulet p99",
                              "p99 ratio", "check"], latency)
            + "\n\nThroughput of the mixes (200 answers per second, all clients); ratio = rivulet / "
              "oxigraph:\n\n"
            + markdown_table(["method", "client processes", "oxigraph q/s",
                              *(["before q/s", "before ratio"] if before else []), "rivulet q/s", "ratio",
                              "non-200 oxigraph / rivulet"], throughput))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--runs", type=int, default=1000, help="timed requests per query and method")
    parser.add_argument("--mix", type=int, default=4000, help="requests in each throughput mix")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of each throughput run")
    parser.add_argument("--clients", default="1,4", help="client processes of the throughput runs")
    parser.add_argument("--rivulet-args", default="", help="extra arguments of 'rivulet serve' (one string)")
    parser.add_argument("--startup-timeout", type=float, default=600.0)
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help="data cache, stores and server logs")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    parser.add_argument("--only", choices=("oxigraph", "rivulet"), help="run one server (a quick check)")
    parser.add_argument("--before", type=Path,
                        help="also run Rivulet from this checkout (its PYTHONPATH), e.g. a main worktree")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.argv, args.minutes = argv, 0.0
    args.clients = [int(c) for c in args.clients.split(",")]
    args.load = os.getloadavg()[0]
    args.oxigraph_version = oxigraph_version()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the servers
    data, _ = data_file(args.triples, args.seed, args.workdir)
    runs = {}
    if args.only in (None, "oxigraph"):
        runs["oxigraph"] = oxigraph(data, [], args, args.workdir, measure)
    if args.only in (None, "rivulet"):
        if args.before:
            with python_path(args.before):
                runs["before"] = rivulet(data, [], args, args.workdir, measure)
            runs["before"].name = "rivulet before"
        runs["rivulet"] = rivulet(data, [], args, args.workdir, measure)
    if "oxigraph" not in runs or "rivulet" not in runs:
        print(json.dumps({n: {k: [t.median_ms, t.p99_ms] for k, t in r.timings.items()}
                          for n, r in runs.items()}, indent=1))
        return
    body = report(args, data, runs)
    print()
    print(body)
    if not args.no_write:
        write_section(HEADING, body)


if __name__ == "__main__":
    main()
