"""``rivulet load FILES... --out DIR``: the bulk load as a CLI subcommand.

``endpoint.cli`` registers it with :func:`add_parser`; ``python -m
endpoint.load_command`` runs it on its own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    """Register ``load`` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "load", help="bulk-load RDF files into a store directory (a Spark job)",
        description="Load N-Triples / N-Quads (split by line) and Turtle / RDF-XML (per file) into a "
                    "sharded store that `rivulet serve --store DIR` opens memory-mapped.",
    )
    parser.add_argument("files", nargs="+", type=Path, help="RDF files (.nt .nq .ttl .rdf ...; .gz too)")
    parser.add_argument("--out", required=True, type=Path, help="store directory to create")
    parser.add_argument("--master", default="local[*]",
                        help="Spark master: local[*] (default), spark://host:7077, yarn, k8s://...")
    parser.add_argument("--shards", type=int, default=1, help="vertex-hash partitions to write (default 1)")
    parser.add_argument("--graph", help="load triples into this named graph (IRI) instead of the default")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="skip and count malformed lines instead of aborting")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="extra Spark setting (repeatable), e.g. spark.driver.memory=8g")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from engine.loader.parse_lines import LoadError
    from engine.loader.spark_job import LoadOptions, load

    conf = dict(item.split("=", 1) for item in args.conf)
    options = LoadOptions(files=args.files, out=args.out, master=args.master, shards=args.shards,
                          graph=args.graph, skip_invalid=args.skip_invalid,
                          progress=not args.no_progress, spark_conf=conf)
    try:
        report = load(options)
    except LoadError as exc:
        print(f"rivulet load: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rivulet")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["load", *(sys.argv[1:] if argv is None else argv)])
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
