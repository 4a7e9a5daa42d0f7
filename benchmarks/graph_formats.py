"""A large CONSTRUCT answer in every graph syntax, over HTTP: time to the first and the last byte.

A CONSTRUCT (or DESCRIBE, or a graph store GET) answer used to be written by
rdflib in every syntax but N-Triples: the whole graph built in memory first,
then serialised, so a client waited seconds for the first byte (about 11 s
for 200K triples as Turtle, what ``*/*`` gets). The writers of
``engine.rdf.graph_writers`` stream every syntax; this script measures what a
client sees: a ``rivulet serve --data`` child process (client and server must
not share an interpreter lock) holding a generated social network of N
triples (IRIs, strings, ``xsd:integer`` ages, ``xsd:dateTime`` dates; see
``benchmarks/generate.py``), and one keep-alive client asking for
``CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`` (with the data's prefixes) in
N-Triples, Turtle, JSON-LD and RDF/XML: after one warm-up, ``--runs`` timed
requests per syntax, median time to the first body byte and to the last.
Each body is parsed back by pyoxigraph once and must hold N triples.

    python -m benchmarks.graph_formats                       # 200K triples, ~1 min
    python -m benchmarks.graph_formats --triples 20000 --no-write   # quick check
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.generate import DEFAULT_SEED, generate
from benchmarks.serving import BIN, HOST, ROOT, free_port, running

HEADING = "Graph formats: a large CONSTRUCT over HTTP"
QUERY = """PREFIX sn: <http://rivulet.example.org/sn/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"""
#: (syntax, media type asked for, pyoxigraph's parser)
FORMATS = (
    ("N-Triples", "application/n-triples", pyoxigraph.RdfFormat.N_TRIPLES),
    ("Turtle", "text/turtle", pyoxigraph.RdfFormat.TURTLE),
    ("JSON-LD", "application/ld+json", pyoxigraph.RdfFormat.JSON_LD),
    ("RDF/XML", "application/rdf+xml", pyoxigraph.RdfFormat.RDF_XML),
)
#: seconds the server may take to load the data and answer
STARTUP_TIMEOUT_S = 300.0
#: seconds one request may take
REQUEST_TIMEOUT_S = 120.0
#: bytes asked of the socket per read
READ_SIZE = 1 << 16


@dataclass
class Measured:
    """One syntax: its answer's size and the timed runs (seconds)."""

    name: str
    media_type: str
    size: int = 0
    triples: int = 0
    first_byte: list[float] = field(default_factory=list)
    last_byte: list[float] = field(default_factory=list)


def fetch(connection: http.client.HTTPConnection, path: str, accept: str) -> tuple[float, float, bytes]:
    """(seconds to the first body byte, seconds to the last, body) of one GET."""
    started = time.perf_counter()
    connection.request("GET", path, headers={"Accept": accept})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"{accept}: HTTP {response.status}: {response.read()[:300]!r}")
    parts = [response.read1(READ_SIZE)]
    first = time.perf_counter() - started
    while chunk := response.read1(READ_SIZE):
        parts.append(chunk)
    return first, time.perf_counter() - started, b"".join(parts)


def wait_until_up(process: subprocess.Popen, port: int, log: Path) -> None:
    """Poll ``/sparql`` until it answers; fail if the server exits or takes too long."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}:\n{_tail(log)}")
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=5)
            connection.request("GET", "/sparql?query=" + urllib.parse.quote("ASK {}"))
            if connection.getresponse().status == 200:
                connection.close()
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"the server did not answer within {STARTUP_TIMEOUT_S:g} s:\n{_tail(log)}")


def _tail(log: Path, lines: int = 15) -> str:
    """The end of the server's log (it lives in a directory removed at the end)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def measure(data: Path, expected: int, runs: int, workdir: Path) -> list[Measured]:
    """Every syntax against one ``rivulet serve --data`` child process."""
    port = free_port()
    log = workdir / "rivulet-graph-formats.log"
    command = [str(BIN / "rivulet"), "serve", "--data", str(data), "--host", HOST, "--port", str(port)]
    path = "/sparql?query=" + urllib.parse.quote(QUERY)
    results = []
    with running(command, log) as process:
        wait_until_up(process, port, log)
        connection = http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT_S)
        for name, media_type, parser in FORMATS:
            found = Measured(name, media_type)
            _, _, body = fetch(connection, path, media_type)  # warm-up: plan cache, first-use imports
            found.size = len(body)
            found.triples = sum(1 for _ in pyoxigraph.parse(body, parser))
            if found.triples != expected:
                raise RuntimeError(f"{name}: {found.triples} triples read back, {expected} expected")
            for _ in range(runs):
                first, last, _ = fetch(connection, path, media_type)
                found.first_byte.append(first)
                found.last_byte.append(last)
            print(f"  {name}: first byte {statistics.median(found.first_byte):.3f} s, "
                  f"last byte {statistics.median(found.last_byte):.3f} s, {found.size:,} bytes", flush=True)
            results.append(found)
        connection.close()
    return results


def commit() -> str:
    """The checked-out commit, and whether the tree had changes beyond it."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True)
    name = head.stdout.strip() or "unknown"
    return name + (" plus uncommitted changes" if dirty.stdout.strip() else "")


def report(results: list[Measured], triples: int, runs: int) -> str:
    """The markdown section: one row per syntax, ratios to N-Triples."""
    baseline = statistics.median(results[0].last_byte)
    rows = [[m.name, m.media_type, m.size, statistics.median(m.first_byte), statistics.median(m.last_byte),
             statistics.median(m.last_byte) / baseline] for m in results]
    return (f"`python -m benchmarks.graph_formats --triples {triples}` ({machine_description()}; "
            f"commit {commit()}). `CONSTRUCT {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o }}` over {triples:,} "
            f"generated triples, one `rivulet serve --data` child process, one keep-alive client; "
            f"median of {runs} runs after a warm-up; every answer parsed back by pyoxigraph to "
            f"{triples:,} triples. Time counts from sending the request, so it includes running the "
            f"query; ratio = last byte / N-Triples' last byte.\n\n"
            + markdown_table(["syntax", "media type", "bytes", "first byte s", "last byte s", "ratio"], rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5, help="timed requests per syntax")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rivulet-graph-formats-") as tmp:
        workdir = Path(tmp)
        data = generate(args.triples, args.seed).write_ntriples(workdir / "data.nt")
        print(f"{args.triples:,} triples in {data}", flush=True)
        results = measure(data, args.triples, args.runs, workdir)
    body = report(results, args.triples, args.runs)
    print(body)
    if not args.no_write:
        write_section(HEADING, body)


if __name__ == "__main__":
    sys.exit(main())
