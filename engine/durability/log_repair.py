"""``rivulet recover``: a data directory's log checked, and on request cut before its damage.

A damaged log stops the server (:mod:`~engine.durability.log_scan`): the
operator either restores a backup or chooses to lose the records from some
LSN on. :func:`inspect` reads the directory without changing it;
:func:`plan_truncation` says exactly what ``--truncate-at LSN`` would drop
(the records with that LSN and after, per kind, and the bytes), and
:func:`truncate` does it:

1. the dropped bytes are kept under ``DIR/dropped-log/from-lsn-<LSN>/``
   (the cut-off end of a segment, and the later segments, moved whole), so
   nothing is destroyed;
2. the catalog forgets what the dropped records did (streams declared and
   queries registered from that LSN on, drops of streams and queries from
   then on);
3. the later segments are moved away, then the segment holding the cut is
   truncated there (and flushed).

A crash in between leaves a directory that ``rivulet recover`` can be run on
again with the same LSN.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from engine.catalog import Catalog
from engine.durability import records
from engine.durability.directory_lock import DirectoryLock
from engine.durability.log_scan import LogRecord, LogScan, scan_log
from engine.durability.wal import fsync_directory

#: where the dropped bytes go, inside the data directory
DROPPED = "dropped-log"
#: the kinds of record, as an operator counts them
KIND_NAMES = {"tx": "transactions", "batch": "stream batches", "declare": "stream declarations",
              "drop": "stream drops", "register": "query registrations",
              "unregister": "query unregistrations",
              "deliveries": "remembered message identities"}


@dataclass
class LogReport:
    """A data directory's log as :func:`inspect` found it."""

    path: Path
    checkpoint_lsn: int
    scan: LogScan

    def lines(self) -> list[str]:
        scan = self.scan
        out = [f"data directory {self.path}", f"checkpoint: LSN {self.checkpoint_lsn}"
               + ("" if self.checkpoint_lsn else " (none yet: the log holds everything)"),
               f"segments ({len(scan.segments) + _uncounted(scan)}):"]
        for segment in scan.segments:
            held = (f"LSNs {segment.lsns[0]} to {segment.lsns[1]}" if segment.lsns else "no whole record")
            out.append(f"  {segment.path.name}  {segment.size} bytes  {held}")
        if scan.damage is not None:
            for later in _segments_after(scan):
                out.append(f"  {later.name}  {later.stat().st_size} bytes  (after the damage)")
        records_after = (f"LSNs {scan.records[0].lsn} to {scan.records[-1].lsn}" if scan.records
                         else "no record")
        out.append(f"whole records after the checkpoint: {records_after}")
        if scan.torn is not None:
            torn = scan.torn
            out.append(f"torn tail: {torn.segment.name} at byte {torn.offset} ({torn.size} bytes, never "
                       "acknowledged): the server cuts it at its next start")
        if scan.damage is None:
            out.append("state: whole: `rivulet serve` starts on it")
        else:
            out.append(f"state: DAMAGED: {scan.damage.describe()}")
            out.append(f"the server refuses to start; `rivulet recover --data-dir {self.path} --truncate-at "
                       f"{scan.damage.first_lost}` shows what keeping the records before the damage drops "
                       "(add --yes to do it), or restore a backup")
        return out


@dataclass
class Truncation:
    """What ``--truncate-at lsn`` drops, and where the log is cut."""

    report: LogReport
    lsn: int
    #: the segment cut, and the byte it is cut at (None: nothing to cut)
    cut: tuple[Path, int] | None
    later_segments: list[Path]
    dropped: list[LogRecord]
    dropped_bytes: int
    #: the catalog's rows the cut changes: streams removed, queries removed, queries undropped,
    #: streams undropped
    catalog: tuple[list[str], list[str], list[str], list[str]] = ([], [], [], [])
    warnings: list[str] = field(default_factory=list)

    def kinds(self) -> Counter:
        return Counter(_kind(record) for record in self.dropped)

    def lines(self, done: bool) -> list[str]:
        verb = "dropped" if done else "would drop"
        kinds = self.kinds()
        counted = ", ".join(f"{name}: {kinds[kind]}" for kind, name in KIND_NAMES.items())
        if kinds["unreadable"]:
            counted += f", unreadable: {kinds['unreadable']}"
        span = (f" (LSNs {self.dropped[0].lsn} to {self.dropped[-1].lsn})" if self.dropped else "")
        out = [f"--truncate-at {self.lsn}: keeps the records below LSN {self.lsn}; {verb} "
               f"{len(self.dropped)} whole records{span}: {counted}; and {self.dropped_bytes} bytes of log"]
        damage = self.report.scan.damage
        if damage is not None:
            out.append(f"  with the damaged bytes at {damage.segment.name} byte {damage.offset} "
                       "(no whole record there)")
        if self.cut is not None:
            out.append(f"  {self.cut[0].name} cut at byte {self.cut[1]}")
        out.extend(f"  {segment.name} removed" for segment in self.later_segments)
        streams, queries, undropped, redeclared = self.catalog
        if streams or queries or undropped or redeclared:
            out.append(f"  the catalog: streams {streams or '-'} and queries {queries or '-'} forgotten, "
                       f"streams {redeclared or '-'} declared and queries {undropped or '-'} registered "
                       "again")
        out.extend(f"  warning: {warning}" for warning in self.warnings)
        if done:
            out.append(f"the dropped bytes are kept in {self.report.path / DROPPED / f'from-lsn-{self.lsn}'} "
                       "(remove it once no longer needed)")
        elif self.cut is not None or self.later_segments:
            out.append("nothing was changed: add --yes to do it")
        return out


def inspect(path: Path, catalog: Catalog) -> LogReport:
    """The state of ``path``'s log (changes nothing)."""
    last = catalog.last_checkpoint()
    checkpoint_lsn = last.lsn if last is not None else 0
    return LogReport(path, checkpoint_lsn, scan_log(path / "wal", checkpoint_lsn))


def plan_truncation(report: LogReport, lsn: int, catalog: Catalog) -> Truncation:
    """What keeping the records below ``lsn`` drops; ``ValueError`` if ``lsn``
    is not a place the log can be cut (at or below the checkpoint, or past
    the first record that is not whole)."""
    scan = report.scan
    damage = scan.damage
    highest = damage.first_lost if damage is not None else scan.last_lsn + 1
    if lsn <= report.checkpoint_lsn:
        raise ValueError(f"--truncate-at {lsn}: records up to LSN {report.checkpoint_lsn} are in the "
                         "checkpoint, so the log cannot be cut there; give an LSN above it "
                         "(or restore a backup)")
    if lsn > highest:
        raise ValueError(f"--truncate-at {lsn}: the log holds whole records in order only below LSN {highest}"
                         + (" (the damage)" if damage is not None else "")
                         + f"; give an LSN from {report.checkpoint_lsn + 1} to {highest}")
    kept_after = [r for r in scan.records if r.lsn >= lsn]
    if kept_after:
        cut: tuple[Path, int] | None = (kept_after[0].segment, kept_after[0].offset)
    elif damage is not None:
        cut = (damage.segment, damage.offset)
    elif scan.torn is not None:
        cut = (scan.torn.segment, scan.torn.offset)
    else:
        cut = None
    later = _segments_after_cut(scan, cut)
    dropped = kept_after + (damage.found_after if damage is not None else [])
    dropped_bytes = sum(p.stat().st_size for p in later)
    if cut is not None:
        size = cut[0].stat().st_size
        if cut[1] >= size and cut[0] not in later:
            cut = None
        else:
            dropped_bytes += size - cut[1]
    plan = Truncation(report, lsn, cut, later, dropped, dropped_bytes, _catalog_effects(catalog, lsn))
    plan.warnings = _lost_definitions(scan.records, dropped, lsn, catalog)
    return plan


def truncate(plan: Truncation, catalog: Catalog) -> None:
    """Do what ``plan`` says (see the module's docstring for the order)."""
    target = plan.report.path / DROPPED / f"from-lsn-{plan.lsn}"
    target.mkdir(parents=True, exist_ok=True)
    cut = plan.cut if plan.cut is not None and plan.cut[0] not in plan.later_segments else None
    if cut is not None:  # (a segment cut at its first byte goes whole, with the later ones)
        segment, offset = cut
        with segment.open("rb") as source:
            source.seek(offset)
            tail = source.read()
        with open(target / f"{segment.name}.from-byte-{offset}", "wb") as out:
            out.write(tail)
            out.flush()
            os.fsync(out.fileno())
    catalog.forget_log_from(plan.lsn)
    for segment in reversed(plan.later_segments):
        os.replace(segment, target / segment.name)
    fsync_directory(target)
    if cut is not None:
        fd = os.open(cut[0], os.O_WRONLY)
        try:
            os.ftruncate(fd, cut[1])
            os.fsync(fd)
        finally:
            os.close(fd)
    fsync_directory(plan.report.path / "wal")


def locked(path: Path) -> DirectoryLock:
    """The directory's lock (:class:`DirectoryInUse` while a server has it open)."""
    return DirectoryLock(path)


# ----------------------------------------------------------------- helpers
def _kind(record: LogRecord) -> str:
    try:
        return records.decode(record.payload)["k"]
    except Exception:  # a whole record whose payload is not a data directory's
        return "unreadable"


def _registration_name(record: dict) -> str | None:
    """The name a logged registration registers (None: it does not parse, so it registered nothing)."""
    from engine.sparql.syntax import parse_registration

    try:
        return parse_registration(record["t"], record["b"]).name
    except Exception:
        return None


def _uncounted(scan: LogScan) -> int:
    return len(_segments_after(scan)) if scan.damage is not None else 0


def _segments_after(scan: LogScan) -> list[Path]:
    """The segments after the one the damage is in (not read into ``scan.segments``)."""
    damage = scan.damage
    if damage is None:
        return []
    read = {segment.path for segment in scan.segments} | {damage.segment}
    return [p for p in sorted(scan.directory.glob("*.log")) if p not in read and p.name > damage.segment.name]


def _segments_after_cut(scan: LogScan, cut: tuple[Path, int] | None) -> list[Path]:
    if cut is None:
        return []
    if cut[1] == 0:  # the whole segment goes
        return [p for p in sorted(scan.directory.glob("*.log")) if p.name >= cut[0].name]
    return [p for p in sorted(scan.directory.glob("*.log")) if p.name > cut[0].name]


def _catalog_effects(catalog: Catalog, lsn: int) -> tuple[list[str], list[str], list[str], list[str]]:
    rows = catalog.streams(include_dropped=True)
    streams = sorted(row.name for row in rows if row.declared_lsn >= lsn)
    redeclared = sorted(row.name for row in rows
                        if row.dropped_lsn is not None and row.dropped_lsn >= lsn and row.declared_lsn < lsn)
    queries = catalog.queries(include_dropped=True)
    removed = sorted(row.name for row in queries if row.registered_lsn >= lsn)
    undropped = sorted(row.name for row in queries
                       if row.dropped_lsn is not None and row.dropped_lsn >= lsn and row.registered_lsn < lsn)
    return streams, removed, undropped, redeclared


def _lost_definitions(kept: list[LogRecord], dropped: list[LogRecord], lsn: int,
                      catalog: Catalog) -> list[str]:
    """What the catalog cannot put back: it holds a stream's newest definition
    and a query's newest registration only, so when a dropped record
    redeclared a stream, or registered anew a name whose registration it had
    dropped just before, the earlier one is known only if a kept record holds it."""
    kept_names = {_subject(r) for r in kept if r.lsn < lsn}
    subjects = [(r, _subject(r)) for r in dropped]
    declared_before = {row.name for row in catalog.streams(include_dropped=True)
                       if row.declared_lsn < lsn and (row.dropped_lsn is None or row.dropped_lsn >= lsn)}
    warnings, seen = [], set()
    for record, (kind, name) in subjects:
        if kind == "drop":  # a declaration after it is a new stream, with a row of its own
            seen.add(("declare", name))
        if kind not in ("declare", "unregister") or (kind, name) in seen:
            continue
        seen.add((kind, name))
        if kind == "declare" and name in declared_before and ("declare", name) not in kept_names:
            warnings.append(f"stream {name!r} was declared again at LSN {record.lsn} (dropped); the catalog "
                            "keeps the definition that declaration gave: if it changed the stream, declare "
                            f"the stream again with its earlier definition (PUT /streams/{name})")
        registered_again = any(other.lsn > record.lsn and subject == ("register", name)
                               for other, subject in subjects)
        if kind == "unregister" and registered_again and ("register", name) not in kept_names:
            warnings.append(f"query {name!r} was unregistered at LSN {record.lsn} and registered again "
                            "(both dropped); the catalog no longer holds the registration it had before: "
                            "register it again")
    return warnings


def _subject(record: LogRecord) -> tuple[str, str | None]:
    """(kind, the stream or query it is about) of a declaration, a drop or an (un)registration."""
    kind = _kind(record)
    if kind not in ("declare", "drop", "register", "unregister"):
        return kind, None
    payload = records.decode(record.payload)
    if kind == "declare":
        return kind, payload["d"]["name"]
    return kind, payload["n"] if kind in ("drop", "unregister") else _registration_name(payload)
