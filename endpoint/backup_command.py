"""``rivulet backup --data-dir D DEST``: a consistent copy of a data directory, its server running.

The copy (:func:`engine.durability.backup.backup`) holds every write the
server acknowledged before the backup started, is a data directory that
``rivulet serve --data-dir DEST`` opens, and can be taken while the server
runs and holds its lock on ``D``. With a PostgreSQL catalog, give its URL
(``--catalog`` or ``$RIVULET_CATALOG``, as to ``rivulet serve``): its rows are
copied into DEST's own SQLite catalog.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from endpoint.serve import CATALOG_VARIABLE


def run(args: argparse.Namespace) -> int:
    from engine.catalog import CatalogError
    from engine.durability.backup import backup
    from engine.durability.log_scan import LogDamaged

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    catalog = args.catalog or os.environ.get(CATALOG_VARIABLE) or None
    try:
        report = backup(Path(args.data_dir), Path(args.dest), catalog)
    except (FileNotFoundError, FileExistsError, CatalogError, LogDamaged) as exc:
        raise SystemExit(f"rivulet backup: {exc}") from None
    start = "no checkpoint" if report.checkpoint_lsn is None else f"checkpoint {report.checkpoint_lsn}"
    print(f"backup of {args.data_dir} in {args.dest}: {start}, log records up to {report.last_lsn} "
          f"({report.segments} segments), {report.bytes / 2**20:.1f} MB in {report.seconds:.2f} s")
    return 0


def add_parser(subparsers) -> None:
    """Register ``rivulet backup`` on the CLI."""
    parser = subparsers.add_parser(
        "backup", help="copy a data directory consistently, while its server runs",
        description="Copy the data directory of a running (or stopped) server to DEST, a new directory "
                    "that 'rivulet serve --data-dir DEST' opens, holding every write acknowledged "
                    "before the backup started.")
    parser.add_argument("dest", metavar="DEST", help="the new data directory (must not exist, or be empty)")
    parser.add_argument("--data-dir", required=True, metavar="DIR", help="the data directory to copy")
    parser.add_argument("--catalog", metavar="URL",
                        help=f"the catalog's URL when it is not DIR/catalog.sqlite (or ${CATALOG_VARIABLE}); "
                             "its rows are copied into DEST/catalog.sqlite")
    parser.set_defaults(run=run)
