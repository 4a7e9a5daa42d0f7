"""``rivulet serve``: load data, then serve it over HTTP with uvicorn."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import uvicorn

from endpoint.app import create_app
from endpoint.demo import RIVERS as DEMO_DATA
from endpoint.settings import Settings
from engine.api import Store

log = logging.getLogger("rivulet.endpoint")

TOKEN_VARIABLE = "RIVULET_UPDATE_TOKEN"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``serve`` subcommand."""
    serve = subparsers.add_parser(
        "serve", help="serve the endpoint, streams and continuous queries over HTTP",
        description="Serve the console (/), /sparql (SPARQL 1.1 Protocol), /store (Graph Store "
                    "HTTP Protocol), /streams and /queries (continuous queries, Server-Sent Events).")
    serve.add_argument("--data", action="append", default=[], metavar="FILE",
                       help="RDF file to load at start (repeatable; syntax from the suffix; "
                            ".trig and .nq fill named graphs)")
    serve.add_argument("--demo", action="store_true",
                       help="load the demo dataset installed with the package (European rivers and "
                            "gauge readings; what 'make run' serves)")
    serve.add_argument("--store", metavar="DIR", help="open a store written by 'rivulet load'")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--timeout", type=float, default=30.0,
                       help="seconds a query may run before it is cancelled with 503 (default 30)")
    serve.add_argument("--workers", type=int, default=8,
                       help="engine calls running at once in worker threads (default 8)")
    serve.add_argument("--read-only", action="store_true", help="refuse updates and graph store writes")
    serve.add_argument("--update-token", metavar="TOKEN",
                       help=f"require 'Authorization: Bearer TOKEN' for writes (or set ${TOKEN_VARIABLE})")
    serve.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                       help="allow this origin by CORS, '*' for any (repeatable; default: no CORS)")
    serve.add_argument("--service-alias", action="append", default=[], metavar="IRI=URL",
                       help="send SERVICE <IRI> to URL instead (repeatable)")
    serve.set_defaults(run=run)


def data_files(args: argparse.Namespace) -> list[Path]:
    """The files to load at start: each --data, then the installed demo dataset with --demo."""
    return [Path(name) for name in args.data] + ([DEMO_DATA] if args.demo else [])


def build_store(args: argparse.Namespace) -> Store:
    """The store the options describe: opened from --store, then --data (and --demo) added."""
    store = Store.open(args.store) if args.store else Store()
    for path in data_files(args):
        count = store.load(path)
        log.info("loaded %d triples from %s", count, path)
    for alias in args.service_alias:
        iri, sep, url = alias.partition("=")
        if not sep or not iri or not url:
            raise SystemExit(f"--service-alias expects IRI=URL, got {alias!r}")
        store.service_endpoints[iri] = url
    return store


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    settings = Settings(
        query_timeout=args.timeout,
        workers=args.workers,
        read_only=args.read_only,
        update_token=args.update_token or os.environ.get(TOKEN_VARIABLE) or None,
        cors_origins=tuple(args.cors),
    )
    store = build_store(args)
    host = f"[{args.host}]" if ":" in args.host else args.host
    base = f"http://{host}:{args.port}"
    print(f"Rivulet: {len(store)} triples; console at {base}/ ; SPARQL endpoint {base}/sparql "
          f"(graph store /store, streams /streams, continuous queries /queries)", flush=True)
    uvicorn.run(create_app(store, settings), host=args.host, port=args.port, log_level="info")
    return 0
