"""``rivulet backup``: a consistent copy of a data directory, taken while its server runs.

Copying the newest checkpoint alone loses every write since it; copying the
files one by one while the server writes can pair a catalog with a log that
does not continue it. The copy here is what a crash at the moment the
backup started would have left, or later:

1. a shared lock on ``RETAIN`` (:mod:`~engine.durability.retention`) keeps
   the server from removing any checkpoint, carry file or log segment until
   the copy ends (a checkpoint may still be taken; its removals wait);
2. the catalog is copied first, every row in one transaction (from SQLite or
   PostgreSQL, through :class:`~engine.catalog.Catalog`), into the copy's own
   SQLite catalog; its newest checkpoint row says which checkpoint the copy
   starts from, and only that row is kept, naming the directory relative to
   the copy;
3. that checkpoint's directory and carry file are copied (neither changes
   once written), then every log segment holding records after it, oldest
   first, each up to its last whole record. Segments are listed once: a
   record written after its segment was copied is not in the copy, and
   neither is any segment started later, so the log copied is a prefix of
   the log, gap-free.

Every write acknowledged before the backup started was in the log (or in a
checkpoint) when the catalog was read, so it is in the copy; a write
acknowledged during the backup may or may not be, and if one is, so is
every write logged before it. The copy is written to ``DEST.partial`` and
renamed to ``DEST`` when complete: ``rivulet serve --data-dir DEST`` opens
it like any data directory (recovery replays the copied log).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from engine.catalog import Catalog
from engine.catalog.catalog import CATALOG_FILE
from engine.durability.checkpoint import PARTIAL
from engine.durability.leftovers import CARRY_SUFFIX, CHECKPOINTS, SINKS, WAL, checkpoint_path
from engine.durability.log_scan import LogDamaged, scan_log
from engine.durability.retention import retained

log = logging.getLogger("rivulet.durability")


@dataclass(frozen=True)
class BackupReport:
    """What a backup copied."""

    #: the checkpoint the copy starts from (None: the directory had none yet)
    checkpoint_lsn: int | None
    #: the last log record copied (the checkpoint's LSN when none after it)
    last_lsn: int
    segments: int
    bytes: int
    seconds: float


def backup(data_dir: Path, dest: Path, catalog_url: str | None = None) -> BackupReport:
    """Copy the data directory ``data_dir`` (its catalog at ``catalog_url``,
    default its own SQLite file) to the new data directory ``dest``."""
    started = time.monotonic()
    if not (data_dir / WAL).is_dir() or (catalog_url is None and not (data_dir / CATALOG_FILE).exists()):
        raise FileNotFoundError(f"{data_dir} is not a data directory (no {WAL}/ or {CATALOG_FILE})")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} exists and is not empty: a backup is written to a new directory")
    work = dest.with_name(dest.name + PARTIAL)
    shutil.rmtree(work, ignore_errors=True)
    try:
        lsn, last_lsn, segments = _copy(data_dir, work, catalog_url)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)  # a failed backup leaves nothing behind
        raise
    work.rename(dest)
    size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    report = BackupReport(lsn, last_lsn, segments, size, time.monotonic() - started)
    log.info("backup of %s to %s: checkpoint %s, log records up to %d, %d bytes, in %.2f s", data_dir, dest,
             lsn, last_lsn, size, report.seconds)
    return report


def _copy(data_dir: Path, work: Path, catalog_url: str | None) -> tuple[int | None, int, int]:
    """Copy into ``work``; returns (checkpoint LSN, last LSN copied, segments copied)."""
    (work / CHECKPOINTS).mkdir(parents=True)
    (work / WAL).mkdir()
    with retained(data_dir):
        source = Catalog(catalog_url) if catalog_url else Catalog.for_directory(data_dir)
        try:
            rows = source.export_rows()
        finally:
            source.close()
        checkpoint = max(rows["checkpoints"], key=lambda row: row["lsn"], default=None)
        lsn = checkpoint["lsn"] if checkpoint is not None else None
        if checkpoint is not None and checkpoint["directory"]:
            copied = checkpoint_path(data_dir, checkpoint["directory"])
            shutil.copytree(copied, work / CHECKPOINTS / copied.name)
            checkpoint["directory"] = f"{CHECKPOINTS}/{copied.name}"
        rows["checkpoints"] = [checkpoint] if checkpoint is not None else []
        carry = f"{lsn:020d}{CARRY_SUFFIX}" if lsn is not None else None
        if carry is not None and (data_dir / WAL / carry).exists():
            shutil.copyfile(data_dir / WAL / carry, work / WAL / carry)
        segments, last_lsn = _copy_log(data_dir / WAL, work / WAL, lsn)
        if (data_dir / SINKS).exists():
            shutil.copyfile(data_dir / SINKS, work / SINKS)
    target = Catalog.for_directory(work)
    try:
        target.import_rows(rows)
    finally:
        target.close()
    _sync_tree(work)
    return lsn, last_lsn, segments


def _copy_log(wal: Path, target: Path, lsn: int | None) -> tuple[int, int]:
    """Copy the segments holding records after ``lsn``, each whole up to its
    last whole record (a record being written as it is read is left out, as
    a crash then would have torn it); returns (segments copied, last LSN
    copied). A damaged log is not copied: :class:`LogDamaged` says where."""
    scan = scan_log(wal, lsn or 0)
    if scan.damage is not None:
        raise LogDamaged(f"the log in {wal} is damaged, so no backup was taken: {scan.damage.describe()} "
                         "(see 'A damaged log' in docs/operations.md)", scan.damage)
    segments = scan.segments
    copied = 0
    for i, segment in enumerate(segments):
        if lsn is not None and i + 1 < len(segments) and segments[i + 1].first_lsn <= lsn + 1:
            continue  # every record in it is in the checkpoint
        torn = scan.torn is not None and scan.torn.segment == segment.path
        end = scan.torn.offset if torn else segment.size
        with open(segment.path, "rb") as source:
            data = source.read(end)
        with open(target / segment.path.name, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        copied += 1
    return copied, scan.last_lsn


def _sync_tree(root: Path) -> None:
    """Flush every file and directory of the copy to disk."""
    for folder, _, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
