"""The write-ahead log: numbered records appended to segment files, with group commit.

Each record is framed as ``length, CRC-32, LSN`` (little-endian 4 + 4 + 8
bytes) and its payload. A record is written (``os.write``, so a killed
process loses nothing it wrote) under the caller's lock, which fixes the
log's order; the caller then waits for it to be durable *outside* that lock.
With ``sync`` on, the first waiter flushes the segment to disk (``fsync``)
for every record written so far, and the writers that queued behind it find
their record already durable: one flush per group, not per write.

A crash can leave the last record of the last segment torn (partly written).
Such a record was never acknowledged, since acknowledgement waits for the
write (and the flush). Reading a log back, and telling a torn tail (cut
before anything is appended) from damage (which stops recovery), is
:mod:`engine.durability.log_scan`'s job.

Segments are named by the first LSN they may hold. A checkpoint rotates to a
new segment, and once the checkpoint is recorded, removes the older ones.
"""

from __future__ import annotations

import os
import struct
import threading
import zlib
from pathlib import Path

#: a record's header: payload length, CRC-32 (of the LSN then the payload), LSN
HEADER = struct.Struct("<IIQ")
SUFFIX = ".log"


def segment_name(first_lsn: int) -> str:
    return f"{first_lsn:020d}{SUFFIX}"


def frame(lsn: int, payload: bytes) -> bytes:
    """One record as it is stored."""
    lsn_bytes = lsn.to_bytes(8, "little")
    return HEADER.pack(len(payload), zlib.crc32(payload, zlib.crc32(lsn_bytes)), lsn) + payload


def fsync_directory(directory: Path) -> None:
    """Make a file's creation, rename or removal in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class WriteAheadLog:
    """Appends records to the current segment of ``directory``."""

    def __init__(self, directory: Path, next_lsn: int, sync: bool = True) -> None:
        self.directory = directory
        self.sync = sync
        directory.mkdir(parents=True, exist_ok=True)
        self._append_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._written = next_lsn - 1
        self._durable = next_lsn - 1
        #: bytes appended since the last rotation (the checkpoint trigger)
        self.bytes_since_rotation = 0
        self._fd = self._open_segment(next_lsn)

    def _open_segment(self, first_lsn: int) -> int:
        path = self.directory / segment_name(first_lsn)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if self.sync:
            fsync_directory(self.directory)
        return fd

    @property
    def last_lsn(self) -> int:
        """The LSN of the last record written."""
        return self._written

    def append(self, payload: bytes) -> int:
        """Write one record; returns its LSN (not yet durable: see :meth:`wait_durable`)."""
        with self._append_lock:
            lsn = self._written + 1
            data = frame(lsn, payload)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            self._written = lsn
            self.bytes_since_rotation += len(data)
            return lsn

    def wait_durable(self, lsn: int) -> None:
        """Return once record ``lsn`` is on disk (at once without ``sync``)."""
        if not self.sync or self._durable >= lsn:
            return
        with self._sync_lock:
            if self._durable >= lsn:
                return  # a flush by an earlier waiter covered it
            target = self._written
            os.fsync(self._fd)
            self._durable = target

    def rotate(self) -> int:
        """Start a new segment after the last record written; returns the
        LSN it starts with. The caller holds whatever stops appends."""
        with self._sync_lock, self._append_lock:
            if self.sync:
                os.fsync(self._fd)
                self._durable = self._written
            os.close(self._fd)
            first = self._written + 1
            self._fd = self._open_segment(first)
            self.bytes_since_rotation = 0
            return first

    def segments(self) -> list[Path]:
        """The segment files, oldest first."""
        return sorted(self.directory.glob("*" + SUFFIX))

    def close(self) -> None:
        with self._sync_lock, self._append_lock:
            if self.sync:
                os.fsync(self._fd)
            os.close(self._fd)
