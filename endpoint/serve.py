"""``rivulet serve``: load data, then serve it over HTTP with uvicorn.

Files given with ``--data`` (and ``--demo``) are loaded by a child process
into a store directory (the compact format ``rivulet load`` writes, built
without Spark: ``engine.loader.local_load``), which the server then maps:
the parse's transient memory goes away with the child, and with
``--processes N`` every server process maps the same files, sharing them
through the page cache. Without ``--store`` that directory is temporary and
removed when the server stops.
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import uvicorn

from endpoint import connection_deadlines as connections
from endpoint.app import create_app
from endpoint.collector import settle_after_start_up
from endpoint.demo import RIVERS as DEMO_DATA
from endpoint.http_protocol import http_protocol
from endpoint.log_format import LOG_FORMATS, configure_logging
from endpoint.settings import Settings
from endpoint.shutdown import CloseOnce, serve_until_stopped
from engine.api import Store
from engine.rdf import RdfSyntaxError

log = logging.getLogger("rivulet.endpoint")

TOKEN_VARIABLE = "RIVULET_UPDATE_TOKEN"
#: the catalog URL when --catalog is not given (the name migrations/env.py reads too)
CATALOG_VARIABLE = "RIVULET_CATALOG"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``serve`` subcommand."""
    serve = subparsers.add_parser(
        "serve", help="serve the endpoint, streams and continuous queries over HTTP",
        description="Serve the console (/), /sparql (SPARQL 1.1 Protocol), /store (Graph Store "
                    "HTTP Protocol), /streams and /queries (continuous queries, Server-Sent Events).")
    add_serve_options(serve)
    serve.add_argument("--cluster", metavar="ADDRESS",
                       help="serve a store sharded over a Ray cluster: 'auto' (the cluster this node "
                            "belongs to), ray://HOST:PORT, or 'local' (start one here); needs --data-dir "
                            "(see 'rivulet cluster up')")
    add_cluster_options(serve)
    serve.set_defaults(run=run)


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """The options of a sharded store (``serve --cluster``, ``cluster up``)."""
    parser.add_argument("--shards", type=int, metavar="N",
                        help="shards of the cluster's store (default: those --store was loaded in, else 3)")
    parser.add_argument("--transport", choices=("auto", "tcp", "rdma", "ray"), default="auto",
                        help="how small query steps read shards in place: 'auto' (RDMA where a device "
                             "exists, else TCP), 'tcp', 'rdma' (with the other read steps sent over TCP), "
                             "or 'ray' (every step is a Ray call to the shards)")


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    """The options ``serve`` and ``cluster up`` share."""
    serve.add_argument("--data", action="append", default=[], metavar="FILE",
                       help="RDF file to load at start (repeatable; syntax from the suffix; "
                            ".trig and .nq fill named graphs)")
    serve.add_argument("--demo", action="store_true",
                       help="load the demo dataset installed with the package (European rivers and "
                            "gauge readings; what 'make run' serves)")
    serve.add_argument("--store", metavar="DIR", help="open a store written by 'rivulet load'")
    serve.add_argument("--data-dir", metavar="DIR",
                       help="keep everything in DIR (checkpoints, write-ahead log, catalog) and recover "
                            "from it at start; --data and --demo are loaded only into a new DIR "
                            "(default: in memory, nothing survives a restart)")
    serve.add_argument("--catalog", metavar="URL",
                       help=f"catalog database URL, e.g. postgresql+psycopg://user@host/db (or set "
                            f"${CATALOG_VARIABLE}, which keeps a password out of the process list) (default: "
                            "SQLite in the data directory)")
    serve.add_argument("--sync", choices=("always", "none"), default="always",
                       help="'always' (default): every acknowledged write is on disk before its answer; "
                            "'none': written to the operating system only (survives a killed server, "
                            "not a power cut)")
    serve.add_argument("--checkpoint-mb", type=float, default=64.0, metavar="MB",
                       help="take a checkpoint in the background once the log holds this many MB "
                            "(default 64)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--timeout", type=float, default=30.0,
                       help="seconds a query, an update or a window of a continuous query may run before "
                            "it is stopped (503; a window is reported as failed) (default 30)")
    serve.add_argument("--grace-period", type=float, default=5.0, metavar="S",
                       help="on SIGTERM or SIGINT, seconds the queries, updates and windows then running "
                            "may go on before they are stopped and the server exits (default 5)")
    serve.add_argument("--workers", type=int, default=8,
                       help="engine calls running at once in worker threads, per process (default 8)")
    serve.add_argument("--processes", type=int, default=1,
                       help="server processes sharing the port (default 1): with --data-dir, one writer "
                            "(writes, streams, continuous queries) and readers following its log; else "
                            "they share the memory-mapped store and need --read-only")
    serve.add_argument("--access-log", action="store_true", help="log every request (default: off)")
    serve.add_argument("--log-format", choices=LOG_FORMATS, default="text",
                       help="'text' (default) or 'json': one JSON object per line (time, level, logger, "
                            "message, exception), uvicorn's lines included")
    serve.add_argument("--max-body", type=float, default=64, metavar="MB",
                       help="largest request body accepted, in MB (default 64; 413 above it)")
    serve.add_argument("--max-rows", type=int, default=10_000_000, metavar="N",
                       help="most rows one step of a query, an update or a window may produce (default "
                            "10,000,000; 503 above it, a window is reported as failed; 0: no limit)")
    serve.add_argument("--read-only", action="store_true", help="refuse updates and graph store writes")
    serve.add_argument("--update-token", metavar="TOKEN",
                       help=f"require 'Authorization: Bearer TOKEN', or HTTP Basic credentials whose "
                            f"password is TOKEN, for writes (or set ${TOKEN_VARIABLE})")
    serve.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                       help="allow this origin by CORS, '*' for any (repeatable; default: no CORS)")
    serve.add_argument("--service-alias", action="append", default=[], metavar="IRI=URL",
                       help="send SERVICE <IRI> to URL instead (repeatable; its URL may be any address)")
    serve.add_argument("--outbound-allow", action="append", default=[], metavar="HOST|CIDR",
                       help="let SERVICE and LOAD call this host or network although it is not a public "
                            "address (repeatable; loopback, private and link-local are refused otherwise)")
    serve.add_argument("--no-service", action="store_true", help="refuse every SERVICE call (403)")
    serve.add_argument("--keep-alive-timeout", type=seconds, default=connections.DEFAULT_KEEP_ALIVE_TIMEOUT,
                       metavar="SECONDS",
                       help="close a connection with no request under way (before its first one or "
                            "between two) after this many seconds (default "
                            f"{connections.DEFAULT_KEEP_ALIVE_TIMEOUT:g})")
    serve.add_argument("--request-timeout", type=seconds, default=connections.DEFAULT_REQUEST_TIMEOUT,
                       metavar="SECONDS",
                       help="a request's head and body must arrive within this many seconds of its first "
                            "byte, plus one per 64 KiB of body received, else 408 and the connection is "
                            f"closed (default {connections.DEFAULT_REQUEST_TIMEOUT:g})")
    serve.add_argument("--send-timeout", type=seconds, default=connections.DEFAULT_SEND_TIMEOUT,
                       metavar="SECONDS",
                       help="cut off a client that takes nothing of what the server writes to it for this "
                            "many seconds; an event-stream subscriber is then dropped (default "
                            f"{connections.DEFAULT_SEND_TIMEOUT:g})")
    serve.add_argument("--union-default-graph", action="store_true",
                       help="a query naming no dataset (no FROM, no default-graph-uri) reads the merge of "
                            "the default graph and every named graph as its default graph; updates still "
                            "write the default graph itself (default: off)")
    serve.add_argument("--base-url", metavar="URL",
                       help="the server's public base URL, for the IRIs and Location headers it makes "
                            "(default: the address clients connect to; never the Host header)")


def seconds(text: str) -> float:
    """A duration option: a number of seconds above 0."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text!r}")
    return value


def data_files(args: argparse.Namespace) -> list[Path]:
    """The files to load at start: each --data, then the installed demo dataset with --demo."""
    return [Path(name) for name in args.data] + ([DEMO_DATA] if args.demo else [])


def build_store(args: argparse.Namespace) -> tuple[Store, Path | None]:
    """The store the options describe, and the store directory it maps (if
    any): --store opened, and --data (and --demo) loaded into it; without
    --store the files are loaded into a temporary store directory by a child
    process (see the module docstring)."""
    files = data_files(args)
    directory = Path(args.store) if args.store else None
    if directory is not None:
        store = Store.open(directory)
        for path in files:
            before = len(store)
            try:
                read = store.load(path)
            except (RdfSyntaxError, OSError) as exc:
                raise SystemExit(f"rivulet serve: could not load the data: {path}: {exc}") from None
            log.info("loaded %d triples (%d statements read) from %s", len(store) - before, read, path)
    elif files:
        directory = Path(tempfile.mkdtemp(prefix="rivulet-store-")) / "store"
        atexit.register(shutil.rmtree, directory.parent, True)
        load_in_child(files, directory)
        store = Store.open(directory)
    else:
        store = Store()
    _add_service_aliases(store, args)
    return store, directory


def _add_service_aliases(store: Store, args: argparse.Namespace) -> None:
    for alias in args.service_alias:
        iri, sep, url = alias.partition("=")
        if not sep or not iri or not url:
            raise SystemExit(f"--service-alias expects IRI=URL, got {alias!r}")
        store.service_endpoints[iri] = url


def load_in_child(files: list[Path], directory: Path) -> None:
    """Build the store directory in a forked child; its error (a syntax
    error names the file, line and column) stops the server's start."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_load, args=(files, directory, sender), name="rivulet-load")
    child.start()
    sender.close()
    try:
        outcome, detail = receiver.recv()
    except EOFError:  # the child died without a word (killed, out of memory)
        child.join()
        outcome, detail = "error", f"the loading process ended with exit code {child.exitcode}"
    child.join()
    if outcome == "error":
        raise SystemExit(f"rivulet serve: could not load the data: {detail}")
    log.info("loaded %s", detail)


def _load(files: list[Path], directory: Path, sender) -> None:
    from engine.loader.local_load import build_store_directory

    try:
        manifest = build_store_directory(files, directory)
    except Exception as exc:  # reported by the parent, which stops
        sender.send(("error", str(exc)))
        return
    sender.send(("ok", f"{manifest.triples} triples, {manifest.terms} terms from "
                       + ", ".join(str(f) for f in files)))


#: the environment variable that hands a worker process its configuration
WORKER_CONFIG = "RIVULET_WORKER_CONFIG"


def worker_app():
    """The application of one of several server processes (uvicorn's
    ``factory``): the parent passes the store directory and the settings."""
    config = json.loads(os.environ[WORKER_CONFIG])
    store = Store.open(config["store"])
    store.service_endpoints.update(config["service_endpoints"])
    given = config["settings"]
    settings = Settings(**{**given, "cors_origins": tuple(given["cors_origins"]),
                           "outbound_allowed": tuple(given["outbound_allowed"])})
    app = create_app(store, settings)
    settle_after_start_up()
    return app


def run(args: argparse.Namespace) -> int:
    uvicorn_logging = configure_logging(args.log_format)
    settings = Settings(
        query_timeout=args.timeout,
        workers=args.workers,
        read_only=args.read_only,
        update_token=args.update_token or os.environ.get(TOKEN_VARIABLE) or None,
        cors_origins=tuple(args.cors),
        max_body_bytes=int(args.max_body * 2**20),
        max_rows=args.max_rows or None,
        outbound_allowed=tuple(args.outbound_allow),
        service=not args.no_service,
        base_url=args.base_url,
        union_default_graph=args.union_default_graph,
    )
    if args.processes > 1 and not args.read_only and not args.data_dir:
        raise SystemExit("rivulet serve: --processes above 1 needs --read-only (updates, streams and "
                         "continuous queries live in one process)")
    if args.processes > 1 and args.cluster:
        raise SystemExit("rivulet serve: --processes above 1 cannot be combined with --cluster")
    if args.processes > 1 and args.store and data_files(args):
        raise SystemExit("rivulet serve: with --processes above 1, give either --store or --data: files "
                         "added to an opened store live in one process's memory")
    data = None
    cluster = None
    if args.cluster:
        from endpoint.cluster_command import open_cluster

        cluster = _refusing_a_directory_in_use(open_cluster, args)
        store, directory, streams = cluster.store, None, cluster.streams
    elif args.data_dir:
        if args.store:
            raise SystemExit("rivulet serve: --data-dir cannot be combined with --store")
        data = _refusing_a_directory_in_use(open_data_directory, args)
        store, directory, streams = data.store, None, data.engine
    else:
        if args.catalog:
            raise SystemExit("rivulet serve: --catalog needs --data-dir")
        log.warning("no --data-dir: the store, streams and queries live in memory; nothing "
                    "written survives a restart")
        store, directory = build_store(args)
        streams = None
    host = f"[{args.host}]" if ":" in args.host else args.host
    base = f"http://{host}:{args.port}"
    banner = (f"Rivulet: {len(store)} triples; console at {base}/ ; SPARQL endpoint {base}/sparql "
              f"(graph store /store, streams /streams, continuous queries /queries)")
    if args.log_format == "json":  # a container's log collector reads every line of output as JSON
        log.info("%s", banner)
    else:
        print(banner, flush=True)
    common = uvicorn_options(args, uvicorn_logging)
    if args.processes > 1 and data is not None:  # one writer, readers following its log
        from endpoint.reader_processes import serve_writer_and_readers

        return serve_writer_and_readers(args, settings, data, common, CloseOnce(data, data.close))
    if args.processes > 1:
        if directory is None:
            raise SystemExit("rivulet serve: --processes above 1 needs data (--data, --demo or --store)")
        os.environ[WORKER_CONFIG] = json.dumps({
            "store": str(directory), "settings": asdict(settings),
            "service_endpoints": dict(store.service_endpoints)})
        # a worker starts by importing the engine and mapping the store: on a loaded machine that
        # takes longer than uvicorn's 5 s health check, which then kills and restarts it in a loop
        uvicorn.run("endpoint.serve:worker_app", factory=True, workers=args.processes,
                    timeout_worker_healthcheck=WORKER_HEALTHCHECK_S, **common)
        return 0
    closing = CloseOnce(cluster.data, cluster.close) if cluster else CloseOnce(data, data and data.close)
    if directory is not None and not args.store:
        closing = _removing_the_copy(closing, directory.parent)
    try:
        serve_until_stopped(create_app(store, settings, streams), args.grace_period, closing, **common)
    finally:
        closing()
    return 0


def _removing_the_copy(closing: Callable[[], None], temporary: Path) -> Callable[[], None]:
    """``closing``, then the removal of the store ``--data`` was loaded into
    for this run: at the stop itself, since uvicorn ends the process by the
    signal that stopped it, which skips ``atexit`` (a stop by SIGTERM left a
    copy of the store in the temporary directory at every restart). Its
    files stay readable while mapped."""
    def stopped() -> None:
        closing()
        shutil.rmtree(temporary, ignore_errors=True)

    return stopped


#: seconds a worker process (--processes with --read-only) may take to answer uvicorn's health check
WORKER_HEALTHCHECK_S = 60


def uvicorn_options(args, uvicorn_logging: dict) -> dict:
    """uvicorn's options for the server's address, log and connection deadlines."""
    # HttpProtocol: requests offering an upgrade to h2c (Java clients) answered whole in HTTP/1.1;
    # idle, slow and unread connections closed (endpoint/connection_deadlines.py)
    return {"host": args.host, "port": args.port, "log_level": "info", "access_log": args.access_log,
            "http": http_protocol(args.request_timeout, args.send_timeout),
            "timeout_keep_alive": args.keep_alive_timeout, **uvicorn_logging}


def _refusing_a_directory_in_use(open_directory, args: argparse.Namespace):
    """``open_directory(args)``; another server using the directory, or a
    damaged log, is a clear refusal (exit status 1 and why), not a traceback."""
    from engine.durability import DirectoryInUse, LogDamaged

    try:
        return open_directory(args)
    except (DirectoryInUse, LogDamaged) as exc:
        raise SystemExit(f"rivulet serve: {exc}") from None


def window_limits(args: argparse.Namespace) -> dict:
    """The stream engine's bounds on each window (the options of
    :class:`~engine.stream.StreamEngine`): a query's, recovery included."""
    return {"timeout": args.timeout, "max_rows": args.max_rows or None}


def open_data_directory(args: argparse.Namespace):
    """Recover the data directory (loading --data/--demo into a new one)."""
    from engine.durability import DataDirectory

    catalog = args.catalog or os.environ.get(CATALOG_VARIABLE) or None
    data = DataDirectory.open(Path(args.data_dir), catalog, sync=args.sync == "always",
                              checkpoint_mb=args.checkpoint_mb, initial_files=data_files(args),
                              engine_options=window_limits(args))
    _add_service_aliases(data.store, args)
    return data
