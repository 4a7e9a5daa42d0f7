"""The coordinator's log: each commit's terms and changes, before any shard sees it.

A commit is logged here first (and flushed), then sent to every shard, and
acknowledged once every shard has logged and applied its part. The record
holds the spellings of the term IDs the commit introduces, so a restarted
coordinator gives every stored term the ID the shards hold; and the whole
commit, so that a shard that missed commits (the coordinator died between
shards) is brought up to date at the next start. Recovery reads the terms
back into the dictionary in log order and returns the commits.

A commit that absorbs a stream batch also names the batch: its position in
the coordinator's streams log (``engine.durability``), where the batch was
logged first. Batches are committed in the order they are logged there, so
the highest position named (:attr:`CoordinatorLog.last_batch`) tells a
restarted coordinator which logged batches never got their commit.

One record per commit, LSN = version, in ``engine.durability.wal`` frames.

The log does not grow without bound: once every shard has checkpointed past
a version, no shard can need the commits up to it again, and
:meth:`CoordinatorLog.compact` replaces them by what a restart still needs
of them: the spellings of the terms they introduced and which graphs they
changed (``compacted.json``, written atomically before any segment goes).
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engine.cluster.shard_ops import Op, op_ids
from engine.durability.directory_lock import DirectoryLock
from engine.durability.log_scan import LogDamaged, recover_log, scan_log
from engine.durability.wal import WriteAheadLog, fsync_directory
from engine.rdf import format_term, is_value, parse_term

COMPACTED = "compacted.json"
#: bytes of log after which the coordinator tries to compact it
DEFAULT_COMPACT_BYTES = 64 << 20


@dataclass
class Changes:
    """What the commits up to ``version`` changed, as a restart needs it:
    per graph the last commit that changed it (graphs absent: as loaded), and
    the graphs streams append to (None: not known, take every graph)."""

    version: int = 0
    changed_at: dict[int, int] = field(default_factory=dict)
    stream_fed: set[int] | None = field(default_factory=set)
    #: the streams-log position of the last batch committed (0: none)
    last_batch: int = 0


class CoordinatorLog:
    """Commits logged at ``directory``; terms above ``base_terms`` IDs (those
    of the loaded store) are spelled in the first record that uses them."""

    def __init__(self, directory: Path, terms, base_terms: int, sync: bool = True,
                 compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        self.directory = directory
        self.terms = terms
        self.base_terms = base_terms
        self.compact_bytes = compact_bytes
        directory.mkdir(parents=True, exist_ok=True)
        #: one coordinator writes this log (a second one is refused)
        self.lock = DirectoryLock(directory)
        self._spelled: set[int] = set()
        try:
            #: what the compacted commits changed (the state before the first record)
            self.compacted = self._read_compacted()
            self.version = self.compacted.version
            #: the streams-log position of the last stream batch committed
            self.last_batch = self.compacted.last_batch
            recover_log(directory, self.compacted.version)  # a torn tail is cut, damage refused
            for version, spelled, _, batch in self.records():
                for term_id, spelling in spelled:
                    terms.restore(term_id, parse_term(spelling))
                    self._spelled.add(term_id)
                self.version = version
                self.last_batch = max(self.last_batch, batch or 0)
            self.wal = WriteAheadLog(directory, self.version + 1, sync)
        except BaseException:
            self.lock.release()
            raise

    def _read_compacted(self) -> Changes:
        path = self.directory / COMPACTED
        if not path.exists():
            return Changes()
        data = json.loads(path.read_text())
        for term_id, spelling in data["terms"]:
            self.terms.restore(term_id, parse_term(spelling))
            self._spelled.add(term_id)
        fed = data["stream_fed"]
        return Changes(data["version"], {int(g): v for g, v in data["changed_at"].items()},
                       None if fed is None else set(fed), data["last_batch"])

    def records(self) -> Iterator[tuple[int, list[tuple[int, str]], list[Op], int | None]]:
        """(version, new terms, ops, the batch it absorbs or None) of every
        logged commit after the compacted ones, in order."""
        scan = scan_log(self.directory, self.compacted.version)  # a crash may leave compacted segments behind
        if scan.damage is not None:
            raise LogDamaged(f"the coordinator log in {self.directory} is damaged: {scan.damage.describe()}",
                             scan.damage)
        for record in scan.records:
            yield pickle.loads(record.payload)

    def commits_after(self, version: int) -> Iterator[tuple[int, list[Op]]]:
        for logged, _, ops, _ in self.records():
            if logged > version:
                yield logged, ops

    def log(self, version: int, ops: list[Op], batch: int | None = None) -> None:
        """Log commit ``version`` (absorbing the stream batch at position
        ``batch`` of the streams log, if given) and wait until it is durable."""
        ids = op_ids(ops)
        # a value ID spells itself (engine.rdf.value_ids): only dictionary IDs are logged
        new = [int(i) for i in ids[(ids > self.base_terms) & ~is_value(ids)] if int(i) not in self._spelled]
        spelled = [(i, format_term(self.terms.decode(i))) for i in new]
        lsn = self.wal.append(pickle.dumps((version, spelled, ops, batch), protocol=5))
        if lsn != version:
            raise RuntimeError(f"coordinator log at LSN {lsn} for commit {version}")
        self.wal.wait_durable(lsn)
        self._spelled.update(new)
        if batch is not None:
            self.last_batch = max(self.last_batch, batch)

    def wants_compaction(self) -> bool:
        """Whether the log grew enough since the last try to compact it."""
        return self.wal.bytes_since_rotation >= self.compact_bytes

    def compact(self, upto: int, changes: Changes) -> int:
        """Start a new segment; then, if ``upto`` (every shard has a
        checkpoint at or past it) is past what was compacted, drop the
        segments whose commits are all at or before it, after writing the
        terms they spelled and ``changes`` (the coordinator's view now; the
        later commits, replayed at a restart, change it in the same way).
        The caller stops commits meanwhile. Returns the segments dropped."""
        first_kept = self.wal.rotate()
        upto = min(upto, first_kept - 1)
        if upto <= self.compacted.version:
            return 0
        spelled = sorted(self._spelled)
        data = {"version": upto, "terms": [[i, format_term(self.terms.decode(i))] for i in spelled],
                "changed_at": {str(g): v for g, v in changes.changed_at.items()},
                "stream_fed": None if changes.stream_fed is None else sorted(changes.stream_fed),
                "last_batch": changes.last_batch}
        target = self.directory / COMPACTED
        partial = target.with_name(COMPACTED + ".partial")
        with open(partial, "w", encoding="utf-8") as out:
            json.dump(data, out)
            out.flush()
            os.fsync(out.fileno())
        partial.rename(target)
        fsync_directory(self.directory)
        self.compacted = Changes(upto, dict(changes.changed_at),
                                 None if changes.stream_fed is None else set(changes.stream_fed),
                                 changes.last_batch)
        segments = self.wal.segments()
        dropped = 0
        for segment, following in zip(segments, segments[1:]):
            if int(following.name.split(".")[0]) - 1 <= upto:  # its last record is at or before upto
                segment.unlink()
                dropped += 1
        return dropped

    def close(self) -> None:
        self.wal.close()
        self.lock.release()


__all__ = ["CoordinatorLog"]
