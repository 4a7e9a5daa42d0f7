"""A read-only copy of a data directory that follows its writer's log.

With ``rivulet serve --processes N --data-dir DIR`` one process (the
writer) owns ``DIR``: it appends to the log and takes the checkpoints. The
other processes (readers) answer queries from a :class:`LogFollower`: the
newest checkpoint the catalog names, mapped, and then every log record after
it, applied in LSN order as the writer appends them.

Why this is consistent: a transaction is one log record and is applied in
one store transaction, whose commit publishes a new snapshot in one swap
(:mod:`engine.store.quad_store`), so a query sees a whole transaction or
none of it, and it sees them in the writer's commit order. A record is read
only once its frame is whole (length and checksum), so a write the writer
is still in the middle of is not applied until it is complete.

Segment rotation: a segment is read through a file descriptor kept open, so
a checkpoint removing it does not cut a follower short; once it holds no
more records and the segment named by the next LSN exists, the follower goes
on there (draining the old one once more first: the writer stops writing a
segment before it creates the next). A follower so far behind that the
segment it needs next was removed (two checkpoints passed it) cannot catch up
from the log: :meth:`LogFollower.follow` then stops with :class:`FellBehind`,
and the process is started again from the newest checkpoint.

Readers never write anything in the directory: they take no lock, cut no
torn tail and write no catalog row. Stream batches are applied through a
stream engine of their own for their stored triples (continuous queries are
not registered here: they run in the writer alone).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from engine.api import Store
from engine.catalog import Catalog
from engine.durability import records
from engine.durability.checkpoint_layers import restore_layers
from engine.durability.leftovers import checkpoint_path
from engine.durability.log_scan import whole_frame_at
from engine.durability.wal import SUFFIX, segment_name
from engine.rdf import parse_term
from engine.stream import StreamDefinition, StreamEngine

log = logging.getLogger("rivulet.durability")

#: seconds between two looks at the log when nothing new was found (a waiting reader wakes it sooner)
IDLE_POLL = 0.01
#: bytes read from a segment at a time
READ_SIZE = 1 << 22
#: times an opening is tried again when a checkpoint removed what it was reading
OPEN_TRIES = 5


class FellBehind(RuntimeError):
    """The log segment a follower needs next was removed by checkpoints."""


class LogFollower:
    """A store (and the stream engine absorbing its batches) kept at the
    writer's log: :attr:`applied` is the LSN of the last record applied."""

    def __init__(self, path: Path, store: Store, engine: StreamEngine, applied: int) -> None:
        self.path = path
        self.store = store
        self.engine = engine
        #: the LSN of the last record applied (every one up to it is)
        self.applied = applied
        #: set to look at the log now (a request waits for a position)
        self.wake = threading.Event()
        self._stopped = threading.Event()
        self._fd: int | None = None
        self._segment_first = applied + 1
        self._offset = 0
        self._pending = bytearray()

    # ------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: Path, catalog_url: str | None = None,
             engine_options: dict | None = None) -> LogFollower:
        """Map the newest checkpoint of the data directory ``path`` and
        apply the log after it; tried again if a checkpoint taken meanwhile
        removed what it was reading."""
        for attempt in range(OPEN_TRIES):
            try:
                return cls._open_once(path, catalog_url, engine_options)
            except (FellBehind, FileNotFoundError) as exc:
                log.info("data directory %s changed while it was opened (%s); opening again", path, exc)
                if attempt == OPEN_TRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    @classmethod
    def _open_once(cls, path: Path, catalog_url: str | None, engine_options: dict | None) -> LogFollower:
        catalog = Catalog(catalog_url) if catalog_url else Catalog.for_directory(path)
        try:
            last = catalog.last_checkpoint()
            mapped = checkpoint_path(path, last.directory) if last is not None else None
            store = Store.open(mapped) if mapped is not None else Store()
            lsn = last.lsn if last is not None else 0
            engine = StreamEngine(store, **(engine_options or {}))
            present = set(store.named_graphs())
            for name in catalog.graphs():
                term = parse_term(name)
                if term not in present:
                    txn = store.quad_store.begin(journaled=False)
                    txn.create(store.quad_store.terms.encode(term))
                    txn.commit()
            for row in catalog.streams(include_dropped=True):
                if row.declared_lsn <= lsn and (row.dropped_lsn is None or row.dropped_lsn > lsn):
                    engine.declare_stream(StreamDefinition.from_json(row.definition), number=row.declared_lsn)
            if mapped is not None:  # the rows a checkpoint keeps beside its graphs (value IDs, stream rows)
                store.quad_store.retain_timestamps(engine.retention_bounds())
                restore_layers(mapped, store.quad_store,
                               {name: state.number for name, state in engine.streams.items()})
        finally:
            catalog.close()
        follower = cls(path, store, engine, lsn)
        follower._open_segment(follower._segment_holding(lsn + 1))
        follower.catch_up()
        return follower

    def _segment_holding(self, lsn: int) -> int:
        """The first LSN of the segment that holds (or will hold) ``lsn``."""
        wal = self.path / "wal"
        firsts = sorted(int(p.name.split(".")[0]) for p in wal.glob("*" + SUFFIX)) if wal.exists() else []
        holding = [first for first in firsts if first <= lsn]
        if not holding:
            if firsts:
                raise FellBehind(f"the log holds nothing before LSN {firsts[0]}, and LSN {lsn} is needed")
            return lsn  # no segment yet: the writer creates it
        return holding[-1]

    def _open_segment(self, first: int) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._segment_first, self._offset, self._pending = first, 0, bytearray()
        try:
            self._fd = os.open(self.path / "wal" / segment_name(first), os.O_RDONLY)
        except FileNotFoundError:
            if first <= self.applied:  # a segment holding applied records was removed: the next is needed
                raise FellBehind(f"log segment {first} was removed") from None
            self._fd = None  # not created yet

    # ------------------------------------------------------------ following
    def catch_up(self) -> bool:
        """Apply every whole record the log holds now; whether any was."""
        progressed = False
        while True:
            if self._fd is None:
                self._open_segment(self._segment_first)
                if self._fd is None:  # not created yet, unless the log moved past it
                    self._check_not_passed(self._segment_first)
                    return progressed
            if self._apply_whole_records():
                progressed = True
                continue
            following = self.applied + 1
            if following == self._segment_first:
                return progressed  # the next record goes to this segment
            if (self.path / "wal" / segment_name(following)).exists():
                # the writer finished this segment before it created the next: drain it, then move on
                if not self._apply_whole_records():
                    self._open_segment(following)
                progressed = True
                continue
            if self._apply_whole_records():  # written (and rotated past) meanwhile
                progressed = True
                continue
            self._check_not_passed(following)
            return progressed

    def _check_not_passed(self, lsn: int) -> None:
        """Raise :class:`FellBehind` if the log has a segment starting after
        ``lsn`` but none holding it (checkpoints removed it unread)."""
        wal = self.path / "wal"
        if any(int(p.name.split(".")[0]) > lsn for p in wal.glob("*" + SUFFIX)):
            raise FellBehind(f"the log no longer holds LSN {lsn}")

    def _apply_whole_records(self) -> bool:
        data = os.pread(self._fd, READ_SIZE, self._offset)
        if data:
            self._offset += len(data)
            self._pending += data
        at, applied_any = 0, False
        buffer = bytes(self._pending)
        while True:
            whole = whole_frame_at(buffer, at)
            if whole is None:
                break  # a record still being written (or nothing more)
            lsn, payload, at = whole
            if lsn > self.applied:
                self._apply(lsn, records.decode(payload))
                applied_any = True
        del self._pending[:at]
        return applied_any or bool(data)

    def _apply(self, lsn: int, record: dict) -> None:
        kind = record["k"]
        try:
            if kind == "tx":
                records.apply_transaction(self.store.quad_store, record)
            elif kind == "batch" and record["s"] in self.engine.streams:
                self.engine.ingest(record["s"], records.batch_items(record), logged_at=lsn)
            elif kind == "declare":
                self.engine.declare_stream(StreamDefinition.from_json(record["d"]), number=lsn)
            elif kind == "drop":
                self.engine.drop_stream(record["n"])
            # deliveries and (un)registrations concern the writer's streams and queries only
        except Exception as exc:  # the writer's request failed the same way and was not acknowledged
            log.warning("log record %d (%s) was not applied: %s", lsn, kind, exc)
        self.applied = lsn

    def follow(self, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Apply records as they are appended until :meth:`stop` (or
        ``should_stop()``); raises :class:`FellBehind` if it cannot go on."""
        while not self._stopped.is_set() and not should_stop():
            progressed = self.catch_up()
            if not progressed:
                self.wake.wait(IDLE_POLL)
                self.wake.clear()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopped.is_set()

    def stop(self) -> None:
        self._stopped.set()
        self.wake.set()

    def close(self) -> None:
        self.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
