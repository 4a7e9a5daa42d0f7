"""A server's durable state in one directory: checkpoints, the log, the catalog.

Layout::

    DIR/catalog.sqlite             the catalog (unless another URL is given)
    DIR/checkpoints/<LSN>/         store directories, one per checkpoint (the newest is used)
    DIR/wal/<first LSN>.log        log segments
    DIR/wal/<LSN>.carry            stream batches older than the checkpoint that pending windows still read
    DIR/RETAIN                     a backup's shared lock: nothing is removed while it copies

The catalog names a checkpoint relative to DIR (older versions wrote
absolute paths: a directory's own ``checkpoints/<LSN>`` wins), so a copied
or moved directory opens where it lands.

Start-up (:meth:`DataDirectory.open`) is recovery: the newest checkpoint
the catalog names is mapped; the streams and queries that existed then are
declared and registered again and resumed where that checkpoint left them
(next window, last event number, the previous window's rows, the retained
events); the stream batches the pending windows still read are replayed
(their stored triples are in the checkpoint already; the windows need their
timing triples); the stored stream rows those windows read as of their
close are put back apart from the base, with their timestamps
(:mod:`~engine.durability.checkpoint_layers`); then every log record after
the checkpoint is applied in order: transactions, batches (which fire the
windows that were due, with the same numbers), declarations, drops and
(un)registrations. Only then does the server accept requests, with the
store and the stream engine journaling to the log.

A checkpoint (:meth:`DataDirectory.checkpoint`, run by a background thread
when the log passes a size) holds the stream engine's lock and the store's
write lock only to take a snapshot, note the engine's progress and start a
new log segment; writing the store directory, the carried batches and the
catalog row happens outside them, so readers and writers go on. The catalog
row is the commit point: a crash before it leaves the previous checkpoint
and its log in force, and whatever the crash left half done is removed at
the next start (:mod:`~engine.durability.leftovers`). An operator's request
(``POST /admin/checkpoint``) runs the same :meth:`DataDirectory.take_checkpoint`.

A store whose data other processes keep durable (a cluster's shards and the
coordinator's log, ``engine.cluster``) is given to :meth:`DataDirectory.open`
as it is: the directory then keeps only the streams, the queries and their
progress (its log holds no transactions, its checkpoints no store
directory), and recovery replays the stream batches that pending windows
read into it. A batch is logged here first, durably, then committed to that
store (:class:`BatchLedger`); one whose commit never came (the process died
between the two) is committed by the recovery, so windows and stored graph
agree.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import orjson

from engine.api import Store
from engine.catalog import Catalog
from engine.durability import records
from engine.durability.checkpoint import write_checkpoint
from engine.durability.checkpoint_layers import restore_layers
from engine.durability.directory_lock import DirectoryLock
from engine.durability.leftovers import CARRY_SUFFIX, CHECKPOINTS, checkpoint_path, remove_leftovers
from engine.durability.log_scan import Damage, LogDamaged, read_frames, recover_log, scan_log
from engine.durability.retention import removal_allowed
from engine.durability.wal import WriteAheadLog, frame, fsync_directory
from engine.rdf import format_term, parse_term, statement_lines
from engine.store import Change
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.running_query import QueryProgress
from engine.stream.spelled_batch import SpelledBatch

log = logging.getLogger("rivulet.durability")


@dataclass(frozen=True)
class CheckpointReport:
    """What one checkpoint request did (the admin request answers with it)."""

    lsn: int
    triples: int
    seconds: float
    #: False when nothing was logged since the last checkpoint (``lsn`` is that one's)
    taken: bool


class BatchLedger(Protocol):
    """What a store kept durable elsewhere (a cluster's) knows of the
    stream batches logged here: this log decides a batch, that store commits
    its stored part next, naming the batch's position here."""

    def before_batch(self) -> None:
        """Raise if a batch logged now could not be committed."""

    def batch_logged(self, position: int, data: bool) -> None:
        """The batch at ``position`` is logged; with ``data``, a commit is to follow."""

    def holds_batch(self, position: int) -> bool:
        """Whether the batch logged at ``position`` was committed."""


@dataclass
class Recovery:
    """What a start-up found and did (logged, and shown by tests)."""

    checkpoint_lsn: int
    records_replayed: int
    batches_carried: int
    seconds: float


class DataDirectory:
    """The durable home of one server's store, streams and queries."""

    def __init__(self, path: Path, catalog: Catalog, store: Store, engine: StreamEngine,
                 wal: WriteAheadLog, checkpoint_bytes: int, keeps_store: bool = True) -> None:
        self.path = path
        #: whether this directory keeps the store too (its transactions, checkpoints of its graphs)
        self.keeps_store = keeps_store
        self.catalog = catalog
        self.store = store
        self.engine = engine
        self.wal = wal
        self.checkpoint_bytes = checkpoint_bytes
        self.recovery: Recovery | None = None
        #: this process's hold on the directory (see :mod:`~engine.durability.directory_lock`)
        self.lock: DirectoryLock | None = None
        #: wall-clock time the newest checkpoint was recorded (None before the first)
        self.checkpointed_at: float | None = None
        #: the checkpoint directory the store was opened from: its files are mapped (and
        #: later checkpoints link to them), so it stays until the process ends
        self.mapped: Path | None = None
        self._checkpoint_lock = threading.Lock()
        self._closed = threading.Event()
        self._checkpointer: threading.Thread | None = None

    # ------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: Path, catalog_url: str | None = None, sync: bool = True,
             checkpoint_mb: float = 64.0, initial_files: list[Path] | None = None,
             engine_options: dict | None = None, store: Store | None = None) -> DataDirectory:
        """Open (creating if new) the data directory ``path`` and recover its
        state. ``initial_files`` are loaded only into a new directory (as its
        first checkpoint). ``store``: a store that keeps its own data durable
        (a cluster's); this directory then keeps its streams and queries only."""
        started = time.monotonic()
        path.mkdir(parents=True, exist_ok=True)
        lock = DirectoryLock(path)
        try:
            return cls._recover_locked(path, lock, started, catalog_url, sync, checkpoint_mb, initial_files,
                                       engine_options, store)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _recover_locked(cls, path: Path, lock: DirectoryLock, started: float, catalog_url: str | None,
                        sync: bool, checkpoint_mb: float, initial_files: list[Path] | None,
                        engine_options: dict | None, store: Store | None) -> DataDirectory:
        (path / CHECKPOINTS).mkdir(exist_ok=True)
        catalog = Catalog(catalog_url) if catalog_url else Catalog.for_directory(path)
        last = catalog.last_checkpoint()
        keeps_store = store is None
        if keeps_store and last is None and initial_files:
            name = f"{0:020d}"
            directory = path / CHECKPOINTS / name
            shutil.rmtree(directory, ignore_errors=True)
            from engine.loader.local_load import build_store_directory

            manifest = build_store_directory(initial_files, directory)
            fsync_directory(directory.parent)
            catalog.record_checkpoint(0, f"{CHECKPOINTS}/{name}", manifest.triples, [], {}, {})
            log.info("new data directory %s: loaded %d triples from %s", path, manifest.triples,
                     ", ".join(map(str, initial_files)))
            last = catalog.last_checkpoint()
        elif keeps_store and initial_files:
            log.info("data directory %s exists: the --data files are not loaded again "
                     "(add data with the Graph Store protocol, LOAD or rivulet load)", path)
        checkpoint_lsn = last.lsn if last is not None else 0
        mapped = checkpoint_path(path, last.directory) if keeps_store and last is not None else None
        if keeps_store:
            store = Store.open(mapped) if mapped is not None else Store()
        later = _read_log(path, catalog, checkpoint_lsn)
        engine = StreamEngine(store, **(engine_options or {}))
        replayed, carried, last_lsn = _recover(catalog, store, engine, path / "wal", checkpoint_lsn, later,
                                               keeps_store, mapped)
        engine.reset_counters()  # the replay counted its batches and windows: this process starts at 0
        if last is not None:
            catalog.forget_checkpoints_before(last.lsn)  # a crash may have come before a checkpoint's cleanup
        with removal_allowed(path) as allowed:  # unless a backup is copying: then the next checkpoint
            removed = remove_leftovers(path, last.lsn if last is not None else None) if allowed else []
        if removed:
            log.info("data directory %s: removed what no checkpoint needs (left by a crash or a backup): %s",
                     path, ", ".join(removed))
        wal = WriteAheadLog(path / "wal", max(last_lsn, checkpoint_lsn) + 1, sync)
        data = cls(path, catalog, store, engine, wal, int(checkpoint_mb * 2**20), keeps_store)
        data.mapped = mapped
        data.lock = lock
        data.checkpointed_at = last.created_at if last is not None else None
        if keeps_store:
            store.quad_store.journal = data
        engine.journal = data
        data.recovery = Recovery(checkpoint_lsn, replayed, carried, time.monotonic() - started)
        log.info("data directory %s: checkpoint %d, %d log records replayed, %d stream batches "
                 "carried, in %.2f s", path, checkpoint_lsn, replayed, carried, data.recovery.seconds)
        return data

    # ------------------------------------------------------------ journal
    def write(self, quad_store, changes: list[Change]) -> int:
        """The store's journal: log one transaction (under its write lock)."""
        return self._append(records.transaction_record(quad_store.terms, changes))

    def wait_durable(self, position: int) -> None:
        self.wal.wait_durable(position)

    def log_batch(self, name: str, batch: SpelledBatch, deliveries: Sequence[str] = ()) -> int:
        ledger: BatchLedger | None = None if self.keeps_store else self.store.quad_store
        if ledger is not None:
            ledger.before_batch()
        lsn = self._append(records.batch_record(name, batch, deliveries))
        if ledger is not None:  # the record decides: on disk before the commit it decides
            self.wal.wait_durable(lsn)
            ledger.batch_logged(lsn, bool(batch.counts.any()))
        return lsn

    def log_declare(self, definition: StreamDefinition) -> int:
        lsn = self._append(records.declare_record(definition))
        self.catalog.save_stream(definition.name, definition.to_json(), lsn)
        return lsn

    def log_drop(self, name: str) -> int:
        lsn = self._append(records.drop_record(name))
        self.catalog.drop_stream(name, lsn)
        return lsn

    def log_register(self, name: str, text: str, base: str | None) -> int:
        lsn = self._append(records.register_record(text, base))
        self.catalog.save_query(name, text, base, lsn)
        return lsn

    def log_unregister(self, name: str) -> int:
        lsn = self._append(records.unregister_record(name))
        self.catalog.drop_query(name, lsn)
        return lsn

    def _append(self, payload: bytes) -> int:
        lsn = self.wal.append(payload)
        if self.wal.bytes_since_rotation > self.checkpoint_bytes:
            self._start_checkpointer()
        return lsn

    # --------------------------------------------------------- checkpoints
    def _start_checkpointer(self) -> None:
        if self._checkpointer is not None and self._checkpointer.is_alive():
            return
        if self._closed.is_set():
            return
        self._checkpointer = threading.Thread(target=self._checkpoint_quietly, name="rivulet-checkpoint",
                                              daemon=True)
        self._checkpointer.start()

    def _checkpoint_quietly(self) -> None:
        try:
            self.checkpoint()
        except Exception:  # the log keeps everything; the next trigger tries again
            log.exception("checkpoint failed; the log still holds every write")

    def checkpoint(self) -> int:
        """Fold the log into a new checkpoint; returns its LSN."""
        return self.take_checkpoint().lsn

    def take_checkpoint(self) -> CheckpointReport:
        """Fold the log into a new checkpoint (unless nothing was logged since
        the last one) and say what was done."""
        with self._checkpoint_lock:
            started = time.monotonic()
            quad_store = self.store.quad_store
            with self.engine.lock(), quad_store.write_lock():
                snapshot = quad_store.snapshot()
                lsn = self.wal.last_lsn
                last = self.catalog.last_checkpoint()
                if last is not None and last.lsn >= lsn:  # nothing logged since
                    return CheckpointReport(last.lsn, last.triples, time.monotonic() - started, False)
                view = quad_store.terms.checkpoint_view() if self.keeps_store else None
                self.wal.rotate()
                remembered = self._carry_deliveries()
                states = self.engine.streams.items()
                streams = {name: (state.watermark, state.log.total) for name, state in states}
                oldest = {name: state.log.first_ts() for name, state in states}
                queries = {name: running.progress() for name, running in self.engine.queries.items()}
                graphs = [format_term(quad_store.terms.decode(g)) for g in snapshot.named_graph_ids()]
                retained = dict(quad_store.retained_timestamps())
                numbers = {state.number: name for name, state in states}
            if remembered is not None:
                self.wal.wait_durable(remembered)
            name = f"{lsn:020d}"
            directory = self.path / CHECKPOINTS / name
            if self.keeps_store and not directory.exists():
                manifest = write_checkpoint(snapshot, view, directory, retained, numbers)
                triples = manifest.triples
            else:
                triples = sum(len(g) for g in snapshot.graphs.values())
            carried = self._write_carry(lsn, oldest)
            fsync_directory(directory.parent)
            self.catalog.record_checkpoint(
                lsn, f"{CHECKPOINTS}/{name}" if self.keeps_store else "", triples, graphs, streams,
                {name: (p.next_index, p.sequence, pickle.dumps(p.previous_rows), pickle.dumps(p.events))
                 for name, p in queries.items()})
            self.checkpointed_at = time.time()
            self._forget_before(lsn)
            seconds = time.monotonic() - started
            log.info("checkpoint %d: %d triples, %d stream batches carried, in %.2f s", lsn, triples,
                     carried, seconds)
            return CheckpointReport(lsn, triples, seconds, True)

    def _carry_deliveries(self) -> int | None:
        """Start the new log segment with the message identities each stream
        remembers (:mod:`~engine.stream.deliveries`): the batches that logged
        them are folded into the checkpoint, and a broker may still deliver
        those messages again after a restart. Returns the last record's LSN."""
        last = None
        for name, state in self.engine.streams.items():
            if len(state.deliveries):
                last = self.wal.append(records.deliveries_record(name, list(state.deliveries)))
        return last

    def log_bytes(self) -> int:
        """Bytes in the log segments on disk: what a restart would replay
        (with the carried batches) and what the next checkpoint folds in."""
        size = 0
        for segment in self.wal.segments():
            try:
                size += segment.stat().st_size
            except FileNotFoundError:  # removed by a checkpoint meanwhile
                continue
        return size

    def _write_carry(self, lsn: int, oldest: dict[str, int | None]) -> int:
        """Write the batches up to ``lsn`` that pending windows still read
        (items at or after their stream's oldest transient triple)."""
        previous = self.catalog.last_checkpoint()
        carried, later = _records(self.path / "wal", previous.lsn if previous else None, upto=lsn)
        kept_of: dict[str, list[tuple[int, bytes]]] = defaultdict(list)
        for record_lsn, payload in carried + later:
            if record_lsn > lsn:
                continue
            record = records.decode(payload)
            if record["k"] == "drop":  # the batches before it were another stream's of that name
                kept_of.pop(record["n"], None)
            if record["k"] != "batch" or oldest.get(record["s"]) is None:
                continue
            items = [item for item in record["i"] if item[0] >= oldest[record["s"]]]
            if items:
                framed = frame(record_lsn, orjson.dumps({**record, "i": items}))
                kept_of[record["s"]].append((record_lsn, framed))
        kept = [framed for _, framed in sorted(f for frames in kept_of.values() for f in frames)]
        target = self.path / "wal" / f"{lsn:020d}{CARRY_SUFFIX}"
        partial = target.with_name(target.name + ".partial")
        with open(partial, "wb") as out:
            out.write(b"".join(kept))
            out.flush()
            os.fsync(out.fileno())
        partial.rename(target)
        return len(kept)

    def _forget_before(self, lsn: int) -> None:
        """Remove what the checkpoint ``lsn`` replaces: older segments, carry
        files and checkpoint directories, but the one this process maps, and
        nothing while a backup copies (see :mod:`~engine.durability.retention`:
        the next checkpoint or start removes them)."""
        self.catalog.forget_checkpoints_before(lsn)
        with removal_allowed(self.path) as allowed:
            if not allowed:
                log.info("checkpoint %d: a backup is copying; older files are removed later", lsn)
                return
            keep = {self.mapped.name} if self.mapped is not None else set()
            remove_leftovers(self.path, lsn, keep)

    def close(self) -> None:
        """Stop checkpointing and close the log (everything written is durable)."""
        self._closed.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
        if self.keeps_store:
            self.store.quad_store.journal = None
        self.engine.journal = None
        self.wal.close()
        self.catalog.close()
        if self.lock is not None:
            self.lock.release()


# ---------------------------------------------------------------- recovery
def _read_log(path: Path, catalog: Catalog, checkpoint_lsn: int) -> list[tuple[int, bytes]]:
    """The log records after the checkpoint, once the log is fit to append
    to: a torn tail is cut, damage refuses the start (:class:`LogDamaged`,
    saying what would be lost and what the operator can do). The catalog
    forgets what records the log does not hold did to it (a crash of the
    OS can lose a record that was written, never acknowledged, after its
    catalog row was)."""
    try:
        scan = recover_log(path / "wal", checkpoint_lsn)
    except LogDamaged as exc:
        raise LogDamaged(damaged_message(path, exc.damage), exc.damage) from None
    streams, queries, undropped, redeclared = catalog.forget_log_from(scan.last_lsn + 1)
    if streams or queries or undropped or redeclared:
        log.warning("the catalog named records after the log's last (LSN %d), never acknowledged: "
                    "streams %s and queries %s forgotten, streams %s and queries %s no longer dropped",
                    scan.last_lsn, streams, queries, redeclared, undropped)
    return [(record.lsn, record.payload) for record in scan.records]


def damaged_message(path: Path, damage: Damage) -> str:
    """What an operator is told when the log of ``path`` is damaged."""
    return (f"the log of data directory {path} is damaged: {damage.describe()}. Nothing was changed: "
            "starting would lose or misorder acknowledged writes. See the damage with "
            f"`rivulet recover --data-dir {path}`; keep the records before it with `rivulet recover "
            f"--data-dir {path} --truncate-at {damage.first_lost}` (a dry run; add --yes to do it), "
            "or restore a backup")


def _records(wal: Path, checkpoint_lsn: int | None,
             upto: int | None = None) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    """``(carried, later)``: the batches checkpoint ``checkpoint_lsn`` carried
    over, and the segments' records after it (only segments starting at or
    before ``upto``, if given: a newer one may be in use), each in LSN order.
    Records of a segment at or before the checkpoint are in it already (a
    crash may have come before their segment was removed). Damage raises
    :class:`LogDamaged`."""
    scan = scan_log(wal, checkpoint_lsn or 0, upto)
    if scan.damage is not None:
        raise LogDamaged(f"the log in {wal} is damaged: {scan.damage.describe()}", scan.damage)
    return _carried(wal, checkpoint_lsn), [(record.lsn, record.payload) for record in scan.records]


def _carried(wal: Path, checkpoint_lsn: int | None) -> list[tuple[int, bytes]]:
    """The batches checkpoint ``checkpoint_lsn`` carried over (pending windows read them)."""
    if checkpoint_lsn is None:
        return []
    carry = wal / f"{checkpoint_lsn:020d}{CARRY_SUFFIX}"
    return read_frames(carry) if carry.exists() else []


def _recover(catalog: Catalog, store: Store, engine: StreamEngine, wal: Path,
             checkpoint_lsn: int, later: list[tuple[int, bytes]],
             keeps_store: bool = True, checkpoint: Path | None = None) -> tuple[int, int, int]:
    """Bring ``store`` (the checkpoint, from directory ``checkpoint``) and
    ``engine`` (empty) to the state of the last log record (``later``: the
    records after the checkpoint); returns (records replayed, batches carried, last LSN).
    A store this directory does not keep (``keeps_store`` False) has every
    logged batch's stored part already, in its own order with the updates:
    the batches are replayed for their windows only."""
    present = set(store.named_graphs())
    for name in catalog.graphs():
        term = parse_term(name)
        if term not in present:
            _create_graph(store, term)
    saved_streams = {}
    for row in catalog.streams(include_dropped=True):
        alive_then = row.dropped_lsn is None or row.dropped_lsn > checkpoint_lsn
        if row.declared_lsn <= checkpoint_lsn and alive_then:
            engine.declare_stream(StreamDefinition.from_json(row.definition), number=row.declared_lsn)
            saved_streams[row.name] = (row.watermark_ms, row.triples_total)
    for row in catalog.queries(include_dropped=True):
        alive_then = row.dropped_lsn is None or row.dropped_lsn > checkpoint_lsn
        if row.registered_lsn <= checkpoint_lsn and alive_then:
            running = engine.register(row.text, row.base)
            if row.policy_state is not None:
                running.resume(QueryProgress(row.next_index, row.sequence, pickle.loads(row.policy_state),
                                             pickle.loads(row.events) if row.events else []))
    carried = [(lsn, records.decode(p)) for lsn, p in _carried(wal, checkpoint_lsn)]
    # the carried batches' triples were counted in the saved totals already (each
    # item's distinct triples: equal triples are written as equal lines)
    carried_triples: dict[str, int] = defaultdict(int)
    for _, record in carried:
        carried_triples[record["s"]] += sum(len(set(statement_lines(text)) - {""}) for _, text in record["i"])
    for name, (_, total) in saved_streams.items():
        engine.streams[name].log.total = total - carried_triples.get(name, 0)
    # the checkpoint (or, for a store kept elsewhere, that store) holds the stored
    # part of the carried batches, later updates included: their windows need their rows only
    ledger = None if keeps_store else store.quad_store
    for lsn, record in carried:
        _replay(store, engine, lsn, record, catalog, absorb=False, ledger=ledger)
    for name, (watermark, total) in saved_streams.items():
        state = engine.streams[name]
        if watermark is not None and (state.watermark is None or state.watermark < watermark):
            state.watermark = watermark
        state.log.total = max(state.log.total, total)
    if checkpoint is not None:
        # the stream rows pending windows read as of their close, within the bounds of those windows
        store.quad_store.retain_timestamps(engine.retention_bounds())
        restore_layers(checkpoint, store.quad_store,
                       {name: state.number for name, state in engine.streams.items()})
    for lsn, payload in later:
        _replay(store, engine, lsn, records.decode(payload), catalog, absorb=keeps_store, ledger=ledger)
    last_lsn = later[-1][0] if later else checkpoint_lsn
    return len(later), len(carried), last_lsn


def _replay(store: Store, engine: StreamEngine, lsn: int, record: dict, catalog: Catalog,
            absorb: bool = True, ledger: BatchLedger | None = None) -> None:
    """Apply one record again (the journals are not attached yet). The
    catalog is written again for declarations, drops and (un)registrations: a crash
    may have come between the log record and the catalog's row. A batch's
    timeless triples are absorbed again only with ``absorb``, or, for a store
    kept elsewhere (``ledger``), if that store never committed the batch."""
    kind = record["k"]
    try:
        if kind == "tx":
            records.apply_transaction(store.quad_store, record)
        elif kind == "batch":
            if record["s"] in engine.streams:
                if ledger is not None:
                    absorb = _commit_missing(ledger, lsn, record)
                engine.ingest(record["s"], records.batch_items(record), absorb=absorb, logged_at=lsn,
                              deliveries=record.get("d", ()))
        elif kind == "deliveries":
            if record["s"] in engine.streams:
                engine.streams[record["s"]].deliveries.add(record["d"])
        elif kind == "declare":
            definition = StreamDefinition.from_json(record["d"])
            engine.declare_stream(definition, number=lsn)
            catalog.save_stream(definition.name, record["d"], lsn)
        elif kind == "drop":
            engine.drop_stream(record["n"])
            catalog.drop_stream(record["n"], lsn)
        elif kind == "register":
            running = engine.register(record["t"], record["b"])
            catalog.save_query(running.spec.name, record["t"], record["b"], lsn)
        elif kind == "unregister":
            engine.unregister(record["n"])
            catalog.drop_query(record["n"], lsn)
    except Exception as exc:  # the request failed the same way and was not acknowledged
        log.warning("a logged %s was not applied again: %s", kind, exc)


def _commit_missing(ledger: BatchLedger, lsn: int, record: dict) -> bool:
    """Whether a logged batch with data is one the store kept elsewhere
    never committed (the process died after logging it here, before
    committing it there): its replay commits it now, under ``lsn``."""
    missing = any(text for _, text in record["i"]) and not ledger.holds_batch(lsn)
    ledger.batch_logged(lsn, missing)
    if missing:
        log.warning("stream batch %d (%s) was logged but never committed to the store: committing it now",
                    lsn, record["s"])
    return missing


def _create_graph(store: Store, term) -> None:
    txn = store.quad_store.begin(journaled=False)
    txn.create(store.quad_store.terms.encode(term))
    txn.commit()
