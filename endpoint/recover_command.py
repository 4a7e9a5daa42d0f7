"""``rivulet recover --data-dir DIR [--truncate-at LSN [--yes]]``: a damaged log, for an operator.

Without ``--truncate-at`` it checks the log and prints its state (the
checkpoint, each segment's LSNs, a torn tail, the first damage) and exits 1
if the log is damaged (the server would refuse to start), 0 if not. With
``--truncate-at LSN`` it says exactly what keeping only the records below
LSN drops (per kind, and bytes) and changes nothing, unless ``--yes`` is
given too (:mod:`engine.durability.log_repair`). The directory must not be
in use by a server.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from endpoint.serve import CATALOG_VARIABLE


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``recover`` on the CLI's subparsers."""
    parser = subparsers.add_parser(
        "recover", help="check a data directory's log; cut it before damage (--truncate-at LSN --yes)",
        description="Check the write-ahead log of a data directory and print its state: the checkpoint, "
                    "each segment's LSNs, a torn tail (cut by the server at its next start), the first "
                    "damage and what it would lose. Exits 1 if the log is damaged (rivulet serve refuses "
                    "to start on it), 0 if not. With --truncate-at LSN it prints what keeping only the "
                    "records below LSN would drop, per kind and in bytes, and changes nothing unless --yes "
                    "is given; the dropped bytes are kept under DIR/dropped-log/. Stop the server first.",
    )
    parser.add_argument("--data-dir", metavar="DIR", required=True,
                        help="the data directory (that of rivulet serve --data-dir)")
    parser.add_argument("--catalog", metavar="URL",
                        help=f"catalog database URL if not the directory's own (or set ${CATALOG_VARIABLE})")
    parser.add_argument("--truncate-at", metavar="LSN", type=int,
                        help="keep the records below LSN, drop LSN and every record after it (LSN must be "
                             "above the checkpoint's and at most the first damaged one)")
    parser.add_argument("--yes", action="store_true", help="with --truncate-at: do it (without: a dry run)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from engine.catalog import Catalog
    from engine.durability import DirectoryInUse
    from engine.durability.log_repair import inspect, locked, plan_truncation, truncate

    path = Path(args.data_dir)
    if not (path / "wal").is_dir() and not (path / "catalog.sqlite").exists():
        raise SystemExit(f"rivulet recover: {path} is not a data directory (no wal/ in it)")
    if args.yes and args.truncate_at is None:
        raise SystemExit("rivulet recover: --yes needs --truncate-at LSN")
    try:
        lock = locked(path)
    except DirectoryInUse as exc:
        raise SystemExit(f"rivulet recover: {exc}") from None
    url = args.catalog or os.environ.get(CATALOG_VARIABLE)
    catalog = Catalog(url) if url else Catalog.for_directory(path)
    try:
        report = inspect(path, catalog)
        print("\n".join(report.lines()))
        if args.truncate_at is None:
            return 1 if report.scan.damage is not None else 0
        try:
            plan = plan_truncation(report, args.truncate_at, catalog)
        except ValueError as exc:
            raise SystemExit(f"rivulet recover: {exc}") from None
        if args.yes:
            truncate(plan, catalog)
        print("\n".join(plan.lines(done=args.yes)))
        sys.stdout.flush()
        return 0
    finally:
        catalog.close()
        lock.release()
