"""The ``rivulet`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from endpoint import backup_command, cluster_command, recover_command, replay_command, serve
from endpoint.command_errors import run_command
from endpoint.load_command import add_parser as add_load_parser
from endpoint.version import rivulet_version
from engine.api import Store
from engine.rdf import RdfSyntaxError, format_term
from engine.sparql.results import write_boolean, write_select


def _load(store: Store, files: list[str]) -> None:
    for name in files:
        try:
            store.load(Path(name))
        except RdfSyntaxError as exc:  # the parser's line and column, in which file
            raise RdfSyntaxError(f"{name}: {exc}") from None


def _query(args: argparse.Namespace) -> int:
    store = Store()
    _load(store, args.data)
    result = store.query(args.query)
    out = sys.stdout.buffer
    if result.form == "SELECT":
        for chunk in write_select(args.format, result.variables, result.rows()):
            out.write(chunk)
    elif result.form == "ASK":
        out.write(write_boolean(args.format, bool(result.boolean)))
    else:
        for s, p, o in result.triples():
            out.write(f"{format_term(s)} {format_term(p)} {format_term(o)} .\n".encode())
    out.flush()
    return 0


def _explain(args: argparse.Namespace) -> int:
    """``rivulet query --explain``: the query's plan as JSON (see docs/http-api.md, EXPLAIN)."""
    store = Store()
    _load(store, args.data)
    explained = store.explain(store.prepare(args.query), analyze=args.analyze)
    sys.stdout.write(json.dumps(explained, indent=2) + "\n")
    return 0


def _query_or_explain(args: argparse.Namespace) -> int:
    return _explain(args) if args.explain or args.analyze else _query(args)


def build_parser() -> argparse.ArgumentParser:
    """The whole ``rivulet`` command line, apart from running it: tests/deploy
    checks every command written in the deployment manifests against it."""
    parser = argparse.ArgumentParser(
        prog="rivulet", description="SPARQL 1.1 and continuous RDF stream queries"
    )
    parser.add_argument("--version", action="version", version=f"rivulet {rivulet_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    query = commands.add_parser("query", help="run one SPARQL query over RDF files")
    query.add_argument("query", help="the query text")
    query.add_argument("--data", action="append", default=[], help="RDF file to load (repeatable)")
    query.add_argument("--format", default="tsv", choices=["json", "xml", "csv", "tsv"])
    query.add_argument("--explain", action="store_true",
                       help="print the query's plan as JSON instead of its answer, with each step's "
                            "estimated rows")
    query.add_argument("--analyze", action="store_true",
                       help="with or without --explain: run the query and print its plan with each "
                            "step's estimated and actual rows and time")
    query.set_defaults(run=_query_or_explain)
    serve.add_parser(commands)
    cluster_command.add_parser(commands)
    add_load_parser(commands)
    replay_command.add_parser(commands)
    backup_command.add_parser(commands)
    recover_command.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
