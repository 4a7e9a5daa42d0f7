"""Reading a log back: its whole records, a torn tail to cut, or damage to stop at.

A log is a directory of segments (``<first LSN>.log``) of framed records
(:func:`engine.durability.wal.frame`) whose LSNs follow one another, one
segment after the other. Reading it back tells three things apart:

- **whole records**: the checksum matches and the LSN is one more than the
  one before (the first record of a segment has the LSN of its name);
- **a torn tail**: the bytes after the last whole record of the *last*
  segment, when they are what a write cut short leaves and no whole record
  follows them: a record that runs past the end of the file (a killed
  process wrote a prefix of it), or one whose bytes end in zeros (what an OS
  crash leaves of pages not yet written; no payload ends in a zero byte:
  JSON and pickles do not). A write is acknowledged only once it is written
  whole (and flushed, with ``sync``), so a torn tail was never acknowledged:
  :func:`cut_torn_tail` cuts it before anything is appended (new records
  behind it would be lost at every later reading, which stops there);
- **damage**: anything else. A bad record that a whole record follows, a
  bad record in a segment that is not the last, a whole last record with a
  wrong checksum (it may have been acknowledged), an LSN that does not follow
  its predecessor, a segment missing between two others or after the
  checkpoint. Every record from the damage on would be lost, so reading
  stops there and says what would be lost (:class:`Damage`); nothing after
  it is replayed, and the operator decides (``rivulet recover``).

Records at or before ``after`` (held by a checkpoint, or compacted) are not
returned, and damage among them loses nothing: a crash may leave such
segments behind before their removal.
"""

from __future__ import annotations

import logging
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.durability.wal import HEADER, SUFFIX, segment_name

log = logging.getLogger("rivulet.durability")


@dataclass(frozen=True)
class LogRecord:
    """One whole record and where it starts."""

    lsn: int
    payload: bytes
    segment: Path
    offset: int


@dataclass(frozen=True)
class Segment:
    """One segment as read: its whole records before any damage or tear."""

    path: Path
    #: the LSN its name says it starts with
    first_lsn: int
    size: int
    #: the LSNs of its first and last whole record read (None: none)
    lsns: tuple[int, int] | None


@dataclass(frozen=True)
class TornTail:
    """Bytes at the end of the last segment that a write cut short."""

    segment: Path
    offset: int
    size: int


@dataclass(frozen=True)
class Damage:
    """Where the log stops being whole, and what replaying stops at."""

    segment: Path
    offset: int
    #: what is wrong there
    what: str
    #: the first LSN that would be lost (the one the log should hold at ``offset``)
    first_lost: int
    #: the whole records found after the damage (in this segment and the later ones)
    found_after: list[LogRecord] = field(default_factory=list)
    #: bytes from ``offset`` to the end of the log
    lost_bytes: int = 0

    @property
    def last_lost(self) -> int:
        """The highest LSN that would be lost (the newest record found after the damage)."""
        return max([self.first_lost] + [r.lsn for r in self.found_after])

    def describe(self) -> str:
        lost = (f"LSN {self.first_lost}" if self.last_lost == self.first_lost
                else f"LSNs {self.first_lost} to {self.last_lost}")
        return (f"{self.segment.name} at byte {self.offset}: {self.what}; {lost} would be lost "
                f"({len(self.found_after)} whole records found after the damage, {self.lost_bytes} bytes)")


class LogDamaged(RuntimeError):
    """A log (or a file of logged records) is damaged before its tail."""

    def __init__(self, message: str, damage: Damage | None = None) -> None:
        super().__init__(message)
        self.damage = damage


@dataclass
class LogScan:
    """What :func:`scan_log` read."""

    directory: Path
    after: int
    segments: list[Segment]
    #: the whole records above ``after``, in LSN order, up to the damage if any
    records: list[LogRecord]
    torn: TornTail | None = None
    damage: Damage | None = None

    @property
    def last_lsn(self) -> int:
        """The LSN of the last whole record kept (``after`` if none)."""
        return self.records[-1].lsn if self.records else self.after


def scan_log(directory: Path, after: int = 0, upto: int | None = None) -> LogScan:
    """Read the segments of ``directory`` (only those whose name is at most
    ``upto``, if given: they are closed, so a bad record there is damage, never
    a tear). Changes nothing: see :func:`cut_torn_tail`."""
    paths = sorted(directory.glob("*" + SUFFIX)) if directory.exists() else []
    if upto is not None:
        paths = [p for p in paths if _first_lsn(p) <= upto]
    scan = LogScan(directory, after, [], [])
    expected = after + 1  # the next LSN the log must hold
    for index, path in enumerate(paths):
        data = path.read_bytes()
        first = _first_lsn(path)
        later = paths[index + 1:]
        if first > after and first != expected:
            what = (f"the log holds no record {expected} to {first - 1}: a segment is missing before this one"
                    if first > expected else
                    f"this segment starts at LSN {first}, but the ones before it reach LSN {expected - 1}")
            scan.damage = _damage(path, data, 0, what, expected, expected - 1, later)
            return scan
        at, previous, kept = 0, first - 1, []
        problem = None
        while at < len(data):
            whole = _frame_at(data, at)
            if whole is None:
                problem = "bad"
                break
            lsn, payload, end = whole
            if lsn != previous + 1:
                problem = (f"the segment's first record has LSN {lsn}, not {first}" if at == 0
                           else f"a record with LSN {lsn} follows LSN {previous}")
                break
            if lsn > after:
                kept.append(LogRecord(lsn, payload, path, at))
            previous, at = lsn, end
        lsns = (first, previous) if previous >= first else None
        scan.segments.append(Segment(path, first, len(data), lsns))
        scan.records.extend(kept)
        expected = max(expected, previous + 1)
        if problem is None:
            continue
        if problem == "bad" and not later and upto is None and _is_torn(data, at, previous):
            scan.torn = TornTail(path, at, len(data) - at)
            continue
        what = problem if problem != "bad" else _what_is_bad(data, at, previous, later)
        if previous + 1 <= after and later and _first_lsn(later[0]) <= after + 1:
            log.info("%s: %s at byte %d, among records a checkpoint holds (nothing is lost)",
                     path.name, what, at)
            continue
        scan.damage = _damage(path, data, at, what, max(previous + 1, after + 1), previous, later)
        return scan
    return scan


def cut_torn_tail(torn: TornTail) -> None:
    """Cut the torn tail off its segment, durably, so that the next record
    is appended right after the last whole one."""
    fd = os.open(torn.segment, os.O_WRONLY)
    try:
        os.ftruncate(fd, torn.offset)
        os.fsync(fd)
    finally:
        os.close(fd)
    log.warning("%s: cut a torn record at byte %d (%d bytes; it was never acknowledged)",
                torn.segment.name, torn.offset, torn.size)


def recover_log(directory: Path, after: int = 0) -> LogScan:
    """Read a log to append to: cut its torn tail, refuse it if damaged
    (:class:`LogDamaged`, saying what would be lost)."""
    scan = scan_log(directory, after)
    if scan.damage is not None:
        raise LogDamaged(f"the log in {directory} is damaged: {scan.damage.describe()}", scan.damage)
    if scan.torn is not None:
        cut_torn_tail(scan.torn)
    return scan


def read_frames(path: Path) -> list[tuple[int, bytes]]:
    """Every record of a file written whole (and renamed into place), such as
    a checkpoint's carried batches: any bad record is damage."""
    data = path.read_bytes()
    out, at = [], 0
    while at < len(data):
        whole = _frame_at(data, at)
        if whole is None:
            raise LogDamaged(f"{path} is damaged at byte {at} ({len(data) - at} bytes from there "
                             "cannot be read): it was written whole, so this is not a torn write")
        lsn, payload, at = whole
        out.append((lsn, payload))
    return out


def whole_frame_at(data: bytes, at: int) -> tuple[int, bytes, int] | None:
    """``(lsn, payload, end)`` of the whole record at ``at`` of ``data``, None
    if the bytes there are no whole record (yet: a follower of a log being
    written reads a record the writer is in the middle of as none)."""
    return _frame_at(data, at)


# ----------------------------------------------------------------- reading
def _first_lsn(path: Path) -> int:
    return int(path.name.split(".")[0])


def _frame_at(data: bytes, at: int) -> tuple[int, bytes, int] | None:
    """``(lsn, payload, end)`` of the whole record at ``at``, None if there is none."""
    if at + HEADER.size > len(data):
        return None
    length, checksum, lsn = HEADER.unpack_from(data, at)
    end = at + HEADER.size + length
    if end > len(data):
        return None
    payload = data[at + HEADER.size:end]
    if zlib.crc32(payload, zlib.crc32(lsn.to_bytes(8, "little"))) != checksum:
        return None
    return lsn, payload, end


def _next_frame(data: bytes, start: int, previous: int) -> int | None:
    """The offset of the first whole record at or after ``start`` whose LSN
    is above ``previous`` (and no higher than the bytes left could number),
    None if none. A damaged length hides where the next record starts, so
    every offset is tried: the 8-byte words that could be an LSN are found
    at all 8 alignments at once, and only those are checked."""
    room = len(data) - start - HEADER.size
    if room < 0:
        return None
    highest = previous + room // HEADER.size + 1
    candidates = []
    for align in range(8):
        lsn_at = start + 8 + align  # the LSN field of a record starting at start + align
        count = (len(data) - lsn_at) // 8
        if count <= 0:
            continue
        words = np.frombuffer(data, dtype="<u8", count=count, offset=lsn_at)
        hits = np.flatnonzero((words > previous) & (words <= highest))
        candidates.append(start + align + hits * 8)
    for at in np.sort(np.concatenate(candidates)) if candidates else ():
        whole = _frame_at(data, int(at))
        if whole is not None and whole[0] > previous:
            return int(at)
    return None


def _is_torn(data: bytes, at: int, previous: int) -> bool:
    """Whether the bad record at ``at`` (of the last segment) is a torn tail."""
    if _next_frame(data, at + 1, previous) is not None:
        return False  # a whole record follows: damage before the tail
    if at + HEADER.size > len(data):
        return True  # not even the header was written whole
    length, checksum, lsn = HEADER.unpack_from(data, at)
    if at + HEADER.size + length > len(data):
        # runs past the end: cut short, unless the bytes to the end are a whole record whose length is damaged
        rest = data[at + HEADER.size:]
        return zlib.crc32(rest, zlib.crc32(lsn.to_bytes(8, "little"))) != checksum
    return data[-1] == 0  # written to its length: torn only if its end is pages never written


def _what_is_bad(data: bytes, at: int, previous: int, later: list[Path]) -> str:
    if at + HEADER.size > len(data):
        what = f"a record's header is cut short ({len(data) - at} bytes)"
    else:
        length = HEADER.unpack_from(data, at)[0]
        what = (f"a record's length ({length} bytes) runs past the end of the segment"
                if at + HEADER.size + length > len(data) else "a record's checksum does not match")
    if later:
        return f"{what}, in a segment that is not the last (so not a torn write)"
    if _next_frame(data, at + 1, previous) is not None:
        return f"{what}, and whole records follow it (so it is not a torn write)"
    return f"{what}, and it was written whole (so it is not a torn write: it may have been acknowledged)"


def _damage(path: Path, data: bytes, at: int, what: str, first_lost: int, previous: int,
            later: list[Path]) -> Damage:
    """The damage at ``at`` of ``path``, with every whole record found after it."""
    found = _salvage(path, data, at, previous)
    lost_bytes = len(data) - at
    for other in later:
        other_data = other.read_bytes()
        found.extend(_salvage(other, other_data, 0, _first_lsn(other) - 1))
        lost_bytes += len(other_data)
    return Damage(path, at, what, first_lost, [r for r in found if r.lsn >= first_lost], lost_bytes)


def _salvage(path: Path, data: bytes, at: int, previous: int) -> list[LogRecord]:
    """The whole records from ``at`` on (skipping bad bytes), for telling what damage loses."""
    found = []
    while at < len(data):
        whole = _frame_at(data, at)
        if whole is None or whole[0] <= previous:
            at = _next_frame(data, at + 1, previous)
            if at is None:
                break
            continue
        lsn, payload, end = whole
        found.append(LogRecord(lsn, payload, path, at))
        previous, at = lsn, end
    return found


__all__ = ["Damage", "LogDamaged", "LogRecord", "LogScan", "Segment", "TornTail", "cut_torn_tail",
           "read_frames", "recover_log", "scan_log", "segment_name", "whole_frame_at"]
