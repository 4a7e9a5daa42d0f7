"""Serving LSBench-shaped data at scale beside the Oxigraph server: the varied one-shot mix, then checkpoints.

Issue 28 item 5 asks for the one-shot mix of :mod:`benchmarks.varied_serving`
at 100M triples beside the Oxigraph server, and for checkpoints at 100M. A
100M store takes a quarter of an hour to load either way, so the stores are
built once from the N-Quads file of :mod:`benchmarks.scale_load` (same
workdir, same file name, generated only when missing) and kept beside it for
the next runs (``--rebuild`` builds one again). Then, one server after the
other (the machine has two cores):

- start-up of ``rivulet serve --data-dir D`` and of the writable ``oxigraph
  serve --location L`` on the kept stores: seconds to the first answer, and the
  memory of the server's process tree;
- the four small queries of varied_serving in the LSBench vocabulary, each
  request about a user drawn at random from a sample the Oxigraph server gives
  once (the same users for both), by GET and by a POSTed form: latency of one
  client, the throughput of 1 and 4 clients; total rows compared. Every
  pattern sits in an explicit ``GRAPH`` block, so the queries mean the same
  whatever a server's default graph is;
- on Rivulet only, with the server still running: an ``INSERT DATA`` of 1,000
  new triples and a ``DELETE DATA`` of 1,000 stored ones in the social graph
  (``sioc:subscriber_of``, which no query of the mix reads), then ``POST
  /admin/checkpoint``; the server tree's RSS is sampled every 0.1 s around each
  of them. A query then finds none of the deleted triples and all the new ones.
  The changes are undone and checkpointed again (also timed), so the kept data
  directory holds the file's triples for the next run.

    python -m benchmarks.scale_serving                  # 100M triples; both loads the first time
    python -m benchmarks.scale_serving --triples 200000 --runs 50 --seconds 2 --mix 200 --no-write \\
        --workdir /tmp/scale-serving-small
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.cluster_scaling import PREFIXES, write_nquads
from benchmarks.lsbench_data import DEFAULT_SEED, FORUM, HISTORY_GRAPH, SIOC, SOCIAL_GRAPH, USER, generate
from benchmarks.scale_load import Sampler, tree_rss_mb
from benchmarks.serving import (
    ACCEPT,
    BIN,
    HOST,
    Memory,
    RawClient,
    Throughput,
    Timing,
    _mem,
    _ratio,
    check,
    display,
    free_port,
    get_request,
    oxigraph_version,
    run_clients,
    running,
    tree_memory,
    wait_until_answering,
)
from benchmarks.varied_serving import METHODS, WARMUP, request, time_varied

#: scale_load's default: its generated files are reused, not made again
WORKDIR = Path("/tmp/rivulet-scale-load")
#: users asked of the Oxigraph server once, to draw each request's user from
SAMPLE = 20_000
#: triples inserted, and triples deleted, before the checkpoint
WRITES = 1_000
#: the subjects of the inserted triples (new users) start with this
NEW_USER = USER + "bench-"
#: the predicate of the written triples: no query of the mix reads it
SUBSCRIBER_OF = SIOC + "subscriber_of"
#: seconds a store may take to build (a 100M load took 830-1,000 s on a quiet machine)
BUILD_TIMEOUT_S = 4 * 3600.0

#: name -> (what it asks, text over ``{user}``, ``{social}`` and ``{history}``, the graphs' IRIs)
TEMPLATES = {
    "attributes": ("a user's person and country, the person's gender and birthday",
                   "SELECT ?person ?country ?gender ?birthday WHERE {{ GRAPH {social} {{ "
                   "{user} sioc:account_of ?person ; foaf:based_near ?country . "
                   "?person foaf:gender ?gender ; foaf:birthday ?birthday }} }}"),
    "friends": ("a user's friends (foaf:knows) and the country of each",
                "SELECT ?friend ?country WHERE {{ GRAPH {social} {{ "
                "{user} foaf:knows ?friend . ?friend foaf:based_near ?country }} }}"),
    "friends_posts": ("what a user's friends created (posts and albums, history graph), LIMIT 50",
                      "SELECT ?friend ?post WHERE {{ GRAPH {social} {{ {user} foaf:knows ?friend }} "
                      "GRAPH {history} {{ ?friend sioc:creator_of ?post }} }} LIMIT 50"),
    "likes_count": ("COUNT of the likes on what a user created",
                    "SELECT (COUNT(?fan) AS ?likes) WHERE {{ GRAPH {history} {{ "
                    "{user} sioc:creator_of ?post . ?fan sib:like ?post }} }}"),
}


def query_text(name: str, user: str) -> str:
    return PREFIXES + TEMPLATES[name][1].format(user=f"<{user}>", social=f"<{SOCIAL_GRAPH}>",
                                                history=f"<{HISTORY_GRAPH}>")


# ------------------------------------------------------------------ data and stores
def data_file(args: argparse.Namespace) -> Path:
    """``--data``, or scale_load's LSBench-shaped file of ``--triples``, written once (via a
    ``.partial`` name, so an interrupted write is not taken for the file next time)."""
    if args.data:
        return args.data
    path = args.workdir / f"lsbench-{args.triples}.nq"
    if not path.exists():
        partial = path.with_name(path.name + ".partial")
        started = time.perf_counter()
        write_nquads(generate(args.triples), partial)
        os.replace(partial, path)
        print(f"generated {path} in {time.perf_counter() - started:.1f} s", flush=True)
    return path


def disk_gb(directory: Path) -> float:
    """Bytes under ``directory``, a file hard-linked twice counted once (a checkpoint links
    the graphs unchanged since the one before)."""
    sizes = {(st.st_dev, st.st_ino): st.st_size for f in directory.rglob("*") if f.is_file()
             for st in (f.stat(),)}
    return sum(sizes.values()) / 1e9


def build_rivulet(data: Path, location: Path, log: Path) -> tuple[float, float]:
    """(seconds, peak tree MB) of ``rivulet serve --data-dir D --data FILE`` until it answers;
    the server is stopped then, the data directory kept."""
    port = free_port()
    command = [sys.executable, "-m", "endpoint.cli", "serve", "--data-dir", str(location),
               "--data", str(data), "--host", HOST, "--port", str(port)]
    started = time.perf_counter()
    with running(command, log) as process:
        sampler = Sampler(process.pid)
        try:
            wait_until_answering(process, port, get_request("/sparql", "ASK {}", port), BUILD_TIMEOUT_S, log)
            return time.perf_counter() - started, sampler.stop()
        finally:
            sampler.stop()


def build_oxigraph(data: Path, location: Path, log: Path) -> tuple[float, float]:
    """(seconds, peak tree MB) of ``oxigraph load --location L --file FILE``."""
    command = [str(BIN / "oxigraph"), "load", "--location", str(location), "--file", str(data)]
    started = time.perf_counter()
    with running(command, log) as process:
        sampler = Sampler(process.pid)
        try:
            code = process.wait(timeout=BUILD_TIMEOUT_S)
        finally:
            peak = sampler.stop()
    if code != 0:
        raise RuntimeError(f"oxigraph load exited with {code}; see {log}")
    return time.perf_counter() - started, peak


BUILDERS = {"rivulet": ("rivulet-data-dir", build_rivulet), "oxigraph": ("oxigraph", build_oxigraph)}


def stores(data: Path, workdir: Path, rebuild: Sequence[str]) -> dict[str, dict]:
    """Each server's store beside the data, built when missing or asked for. A build's figures
    go to ``<stem>.stores.json`` once it succeeds, so a store without them (a build cut short)
    is built again, and a later run can still report how long the kept one took."""
    record_path = workdir / f"{data.stem}.stores.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    out = {}
    for name, (suffix, build) in BUILDERS.items():
        location = workdir / f"{data.stem}.{suffix}"
        if name in rebuild or name not in record or not location.exists():
            record.pop(name, None)
            record_path.write_text(json.dumps(record, indent=1))
            shutil.rmtree(location, ignore_errors=True)
            print(f"building the {name} store in {location}", flush=True)
            try:
                seconds, peak = build(data, location, workdir / f"{data.stem}.{name}-build.log")
            except BaseException:
                shutil.rmtree(location, ignore_errors=True)
                raise
            record[name] = {"load_s": seconds, "peak_mb": peak, "built": datetime.date.today().isoformat()}
            record_path.write_text(json.dumps(record, indent=1))
            figures = {**record[name], "this_run": True}
        else:
            figures = {**record[name], "this_run": False}
        figures["location"], figures["disk_gb"] = location, disk_gb(location)
        print(f"  {name}: {'built' if figures['this_run'] else 'kept from ' + figures['built']}: "
              f"load {figures['load_s']:.1f} s, peak RSS {figures['peak_mb']:,.0f} MB (process tree), "
              f"{figures['disk_gb']:.2f} GB on disk", flush=True)
        out[name] = figures
    return out


# ------------------------------------------------------------------ serving
@dataclass
class Step:
    """One write or checkpoint: client seconds, the server's own seconds (a checkpoint's
    answer), and the server tree's RSS before it and at its highest while it ran."""

    name: str
    seconds: float
    rss_before_mb: float
    peak_mb: float
    server_s: float | str = "-"


@dataclass
class Served:
    """What one server did: start-up, memory, the mix, and (Rivulet) the writes."""

    name: str
    command: str
    startup_s: float = 0.0
    memory: dict[str, Memory] = field(default_factory=dict)
    timings: dict[str, Timing] = field(default_factory=dict)
    throughput: dict[tuple[str, int], Throughput] = field(default_factory=dict)
    writes: list[Step] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)


@contextmanager
def serving(run: Served, command: list[str], path: str, port: int, log: Path,
            timeout: float) -> Iterator[int]:
    """The server started and answering (its start-up and memory recorded): yields its pid."""
    started = time.perf_counter()
    with running(command, log) as process:
        wait_until_answering(process, port, get_request(path, "ASK {}", port), timeout, log)
        run.startup_s = time.perf_counter() - started
        run.memory["start-up"] = tree_memory(process.pid)
        print(f"  {run.name}: answering after {run.startup_s:.1f} s; {_mem(run.memory['start-up'])}",
              flush=True)
        yield process.pid
        run.memory["the end"] = tree_memory(process.pid)


def sample_users(port: int) -> list[str]:
    """Up to ``SAMPLE`` user IRIs from the Oxigraph server (its index order follows term hashes,
    so the first ones are spread over the numbering), sorted so draws do not depend on it."""
    text = (PREFIXES + f"SELECT ?u WHERE {{ GRAPH <{SOCIAL_GRAPH}> {{ ?u sioc:account_of ?p }} }} "
            f"LIMIT {SAMPLE}")
    with RawClient(HOST, port) as client:
        status, body = client.request(get_request("/query", text, port))
    if status != 200:
        raise RuntimeError(f"the user sample: HTTP {status}: {body[:300]!r}")
    users = sorted(b["u"]["value"] for b in json.loads(body)["results"]["bindings"])
    if not users:
        raise RuntimeError("no user in the social graph")
    return users


def draw(users: Sequence[str], seed: int, what: str, count: int) -> list[str]:
    """``count`` users drawn at random, the same for both servers."""
    rng = random.Random(f"{seed}/{what}")
    return [rng.choice(users) for _ in range(count)]


def mix(run: Served, port: int, path: str, users: Sequence[str], args: argparse.Namespace) -> None:
    """varied_serving's latency and throughput runs, over these templates and users."""
    with RawClient(HOST, port) as client:
        for method in METHODS:
            for name in TEMPLATES:
                drawn = draw(users, args.seed, f"{method} {name}", args.runs + WARMUP)
                raws = [request(method, path, query_text(name, u), port) for u in drawn]
                t = run.timings[f"{method} {name}"] = time_varied(client, raws[WARMUP:], raws[:WARMUP])
                print(f"    {method} {name}: rows {t.rows}, median {t.median_ms:.3f} ms, "
                      f"p99 {t.p99_ms:.3f} ms{'; ERROR ' + t.error if t.error else ''}", flush=True)
    names = list(TEMPLATES)
    for method in METHODS:
        drawn = draw(users, args.seed, f"{method} mix", args.mix)
        raws = [request(method, path, query_text(names[i % len(names)], u), port)
                for i, u in enumerate(drawn)]
        for clients in args.clients:
            t = run.throughput[(method, clients)] = run_clients(port, raws, clients, args.seconds)
            print(f"    {method}, {clients} clients: {t.per_second:,.0f} q/s ({t.answers:,} answers, "
                  f"{t.failed} failed){'; ERRORS ' + '; '.join(t.errors) if t.errors else ''}", flush=True)


# ------------------------------------------------------------------ writes and checkpoints
def _post(port: int, path: str, body: bytes, content_type: str | None, timeout: float) -> tuple[int, bytes]:
    typed = f"Content-Type: {content_type}\r\n" if content_type else ""
    raw = (f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: {ACCEPT}\r\n"
           f"{typed}Content-Length: {len(body)}\r\n"
           f"User-Agent: rivulet-bench\r\n\r\n").encode("ascii") + body
    with RawClient(HOST, port, timeout=timeout) as client:
        return client.request(raw)


def timed_write(pid: int, port: int, name: str, path: str, body: str, content_type: str | None,
                timeout: float) -> tuple[Step, bytes]:
    """One POST, timed, the server tree's RSS sampled every 0.1 s while it runs."""
    before = tree_rss_mb(pid)
    sampler = Sampler(pid)
    try:
        started = time.perf_counter()
        status, answer = _post(port, path, body.encode("utf-8"), content_type, timeout)
        seconds = time.perf_counter() - started
    finally:
        peak = sampler.stop()
    if status not in (200, 204):
        raise RuntimeError(f"{name}: HTTP {status}: {answer[:300]!r}")
    step = Step(name, seconds, before, peak)
    print(f"    {name}: {seconds:.2f} s, RSS {before:,.0f} MB before, peak {peak:,.0f} MB", flush=True)
    return step, answer


def _select(port: int, text: str, timeout: float) -> list[dict]:
    """The bindings of a SELECT on Rivulet, POSTed (a VALUES block of 1,000 pairs is too long for a URL)."""
    with RawClient(HOST, port, timeout=timeout) as client:
        status, body = client.request(request("POST", "/sparql", PREFIXES + text, port))
    if status != 200:
        raise RuntimeError(f"HTTP {status}: {body[:300]!r}")
    return json.loads(body)["results"]["bindings"]


def _pairs(triples: Sequence[tuple[str, str]]) -> str:
    return " ".join(f"<{u}> <{SUBSCRIBER_OF}> <{f}> ." for u, f in triples)


def present(port: int, triples: Sequence[tuple[str, str]], timeout: float) -> int:
    """How many of these ``sioc:subscriber_of`` triples the social graph holds."""
    values = " ".join(f"(<{u}> <{f}>)" for u, f in triples)
    rows = _select(port, f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{SOCIAL_GRAPH}> {{ "
                         f"VALUES (?u ?f) {{ {values} }} ?u <{SUBSCRIBER_OF}> ?f }} }}", timeout)
    return int(rows[0]["n"]["value"])


def checkpoints(run: Served, pid: int, port: int, timeout: float) -> None:
    """Insert and delete ``WRITES`` triples, checkpoint, check; then undo and checkpoint again."""
    rows = _select(port, f"SELECT ?u ?f WHERE {{ GRAPH <{SOCIAL_GRAPH}> {{ ?u <{SUBSCRIBER_OF}> ?f "
                         f'FILTER(!STRSTARTS(STR(?u), "{NEW_USER}")) }} }} LIMIT {WRITES}', timeout)
    stored = [(r["u"]["value"], r["f"]["value"]) for r in rows]
    tag = time.strftime("%Y%m%d%H%M%S")
    new = [(f"{NEW_USER}{tag}-{i}", f"{FORUM}f{i % 4}") for i in range(WRITES)]
    graph = f"GRAPH <{SOCIAL_GRAPH}>"

    def write(name: str, text: str) -> None:
        step, _ = timed_write(pid, port, name, "/sparql", text, "application/sparql-update", timeout)
        run.writes.append(step)

    def checkpoint(name: str) -> None:
        step, answer = timed_write(pid, port, name, "/admin/checkpoint", "", None, timeout)
        doc = json.loads(answer)
        step.server_s = doc["seconds"]
        print(f"      answer {doc}", flush=True)
        run.writes.append(step)

    def expect(when: str, triples: list[tuple[str, str]], wanted: int, what: str) -> None:
        found = present(port, triples, timeout)
        verdict = "ok" if found == wanted else "WARNING"
        run.checks.append(f"{verdict}: {when}, {found:,} of the {len(triples):,} {what} triples present "
                          f"(expected {wanted:,})")
        print(f"    {run.checks[-1]}", flush=True)

    write(f"INSERT DATA, {len(new):,} new triples", f"INSERT DATA {{ {graph} {{ {_pairs(new)} }} }}")
    write(f"DELETE DATA, {len(stored):,} stored triples", f"DELETE DATA {{ {graph} {{ {_pairs(stored)} }} }}")
    checkpoint("checkpoint")
    expect("after the checkpoint", stored, 0, "deleted")
    expect("after the checkpoint", new, len(new), "inserted")
    write("undo: DELETE DATA of the new, INSERT DATA of the deleted (one request)",
          f"DELETE DATA {{ {graph} {{ {_pairs(new)} }} }} ; INSERT DATA {{ {graph} {{ {_pairs(stored)} }} }}")
    checkpoint("checkpoint after the undo")
    expect("after the undo", stored, len(stored), "deleted")
    expect("after the undo", new, 0, "inserted")


# ------------------------------------------------------------------ report
def report(args: argparse.Namespace, data: Path, built: dict[str, dict], ox: Served, riv: Served) -> str:
    store_rows = [[name, "this run" if f["this_run"] else f"kept (built {f['built']})", f["load_s"],
                   f["peak_mb"], f["disk_gb"]] for name, f in built.items()]
    startup = [[r.name, f"`{r.command}`", r.startup_s, r.memory["start-up"].rss_mb,
                r.memory["start-up"].pss_mb, r.memory["the end"].rss_mb] for r in (ox, riv)]
    latency = []
    for key, a in ox.timings.items():
        b = riv.timings[key]
        latency.append([key, a.rows, a.median_ms, b.median_ms, _ratio(b.median_ms, a.median_ms), a.p99_ms,
                        b.p99_ms, _ratio(b.p99_ms, a.p99_ms), check(a, b)])
    throughput = [[key[0], key[1], a.per_second, riv.throughput[key].per_second,
                   _ratio(riv.throughput[key].per_second, a.per_second),
                   f"{a.failed} / {riv.throughput[key].failed}"] for key, a in ox.throughput.items()]
    about = markdown_table(["query", "what it asks"], [[n, a] for n, (a, _) in TEMPLATES.items()])
    text = (f"`python -m benchmarks.scale_serving {shlex.join(args.argv)}`. "
            f"Machine: {machine_description()}; oxigraph server {args.oxigraph_version}; "
            f"load average {args.load:.1f} before the run.\n\n"
            f"`{data.name}` ({data.stat().st_size / 1e9:.2f} GB, LSBench-shaped: `benchmarks.lsbench_data`, "
            "written by `benchmarks.cluster_scaling.write_nquads`). The stores are built once and kept: "
            "`rivulet serve --data-dir D --data FILE` until it answers (then stopped), `oxigraph load "
            "--location L --file FILE`; peak RSS of the process tree sampled every 0.1 s.\n\n"
            + markdown_table(["store", "built", "load s", "peak RSS MB (process tree)", "on disk GB"],
                             store_rows)
            + "\n\nStart-up on the kept stores, one server after the other (both writable; Rivulet with "
              f"`--timeout {args.timeout:g}` so that a slow write is not cut off): seconds from the command "
              "to the first answer of `ASK {}`, memory of the process tree (MB) then and at the end:\n\n"
            + markdown_table(["server", "command", "start-up s", "RSS MB", "PSS MB", "RSS MB at the end"],
                             startup)
            + f"\n\nEach request names a user drawn at random from {args.sample_size:,} users the Oxigraph "
              "server listed (the same users for both servers); every pattern in a `GRAPH` block. Latency: "
              f"per query and method {WARMUP} requests of other users, then {args.runs} timed requests, by "
              f"`GET ?query=` or a POSTed form, `Accept: {ACCEPT}`, one keep-alive client. Throughput: "
              f"{' and '.join(map(str, args.clients))} client processes cycling through {args.mix} mixed "
              f"requests (the four queries in turn) for {args.seconds:g} s.\n\n"
            + about
            + "\n\nOne client, latency per request (ms); ratio = rivulet / oxigraph; rows = total rows over "
              "the timed requests; check compares them:\n\n"
            + markdown_table(["method and query", "rows", "oxigraph median", "rivulet median", "ratio",
                              "oxigraph p99", "rivulet p99", "p99 ratio", "check"], latency)
            + "\n\nThroughput of the mixes (answers per second, all clients); "
              "ratio = rivulet / oxigraph:\n\n"
            + markdown_table(["method", "client processes", "oxigraph q/s", "rivulet q/s", "ratio",
                              "non-200 oxigraph / rivulet"], throughput))
    if riv.writes:
        steps = [[s.name, s.seconds, s.server_s, s.rss_before_mb, s.peak_mb] for s in riv.writes]
        text += (f"\n\nWrites and checkpoints on the running Rivulet server, in order: {WRITES:,} new "
                 "`sioc:subscriber_of` triples inserted into the social graph, as many stored ones deleted, "
                 "`POST /admin/checkpoint`; then undone in one update and checkpointed again, so the kept "
                 "data directory holds the file's triples. Seconds as the client saw them (server s: the "
                 "checkpoint's answer); RSS of the server's process tree sampled every 0.1 s:\n\n"
                 + markdown_table(["step", "seconds", "server s", "RSS MB before", "peak RSS MB"], steps)
                 + "\n\n" + "\n".join(f"- {c}" for c in riv.checks))
    return text


def main(argv: list[str] | None = None) -> tuple[Served, Served]:
    """Build or reuse the stores, serve them one after the other; the two runs, for a test."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=100_000_000)
    parser.add_argument("--data", type=Path, help="N-Quads file (default: scale_load's, of --triples)")
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help="data file, kept stores, server logs")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="of the users drawn")
    parser.add_argument("--runs", type=int, default=1000, help="timed requests per query and method")
    parser.add_argument("--mix", type=int, default=4000, help="requests in each throughput mix")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of each throughput run")
    parser.add_argument("--clients", default="1,4", help="client processes of the throughput runs")
    parser.add_argument("--rebuild", action="append", default=[], choices=sorted(BUILDERS),
                        help="build this store again (repeatable)")
    parser.add_argument("--skip-checkpoint", action="store_true", help="no writes, no checkpoints")
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="Rivulet's --timeout, and the client's for a write or checkpoint")
    parser.add_argument("--startup-timeout", type=float, default=1800.0)
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.argv = argv
    args.clients = [int(c) for c in args.clients.split(",")]
    args.load = os.getloadavg()[0]
    args.oxigraph_version = oxigraph_version()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the servers
    args.workdir.mkdir(parents=True, exist_ok=True)
    data = data_file(args)
    built = stores(data, args.workdir, args.rebuild)

    port = free_port()
    command = [str(BIN / "oxigraph"), "serve", "--location", str(built["oxigraph"]["location"]),
               "--bind", f"{HOST}:{port}"]
    ox = Served("oxigraph", display(command))
    with serving(ox, command, "/query", port, args.workdir / f"{data.stem}.oxigraph-serve.log",
                 args.startup_timeout):
        users = sample_users(port)
        args.sample_size = len(users)
        mix(ox, port, "/query", users, args)

    port = free_port()
    command = [sys.executable, "-m", "endpoint.cli", "serve", "--data-dir", str(built["rivulet"]["location"]),
               "--host", HOST, "--port", str(port), "--timeout", f"{args.timeout:g}"]
    riv = Served("rivulet", display(command))
    with serving(riv, command, "/sparql", port, args.workdir / f"{data.stem}.rivulet-serve.log",
                 args.startup_timeout) as pid:
        mix(riv, port, "/sparql", users, args)
        if not args.skip_checkpoint:
            checkpoints(riv, pid, port, args.timeout + 60)

    for key, a in ox.timings.items():
        if check(a, riv.timings[key]) != "ok":
            print(f"WARNING: {key}: {check(a, riv.timings[key])}", flush=True)
    for c in riv.checks:
        if not c.startswith("ok"):
            print(f"WARNING: {c}", flush=True)
    body = report(args, data, built, ox, riv)
    print()
    print(body)
    if not args.no_write:
        label = f"{args.triples // 1_000_000}M" if not args.data and args.triples >= 1_000_000 else data.name
        write_section(f"Serving {label} triples beside the Oxigraph server: varied constants and checkpoints",
                      body)
    return ox, riv


if __name__ == "__main__":
    main()
