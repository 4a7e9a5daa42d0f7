"""The coordinator's log: each commit's terms and changes, before any shard sees it.

A commit is logged here first (and flushed), then sent to every shard, and
acknowledged once every shard has logged and applied its part. The record
holds the spellings of the term IDs the commit introduces, so a restarted
coordinator gives every stored term the ID the shards hold; and the whole
commit, so that a shard that missed commits (the coordinator died between
shards) is brought up to date at the next start. Recovery reads the terms
back into the dictionary in log order and returns the commits.

One record per commit, LSN = version, in ``engine.durability.wal`` frames.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

from engine.cluster.shard_ops import Op, op_ids
from engine.durability.wal import WriteAheadLog, read_segment
from engine.rdf import format_term, parse_term


class CoordinatorLog:
    """Commits logged at ``directory``; terms above ``base_terms`` IDs (those
    of the loaded store) are spelled in the first record that uses them."""

    def __init__(self, directory: Path, terms, base_terms: int, sync: bool = True) -> None:
        self.directory = directory
        self.terms = terms
        self.base_terms = base_terms
        directory.mkdir(parents=True, exist_ok=True)
        self._spelled: set[int] = set()
        self.version = 0
        for version, spelled, _ in self.records():
            for term_id, spelling in spelled:
                terms.restore(term_id, parse_term(spelling))
                self._spelled.add(term_id)
            self.version = version
        self.wal = WriteAheadLog(directory, self.version + 1, sync)

    def records(self) -> Iterator[tuple[int, list[tuple[int, str]], list[Op]]]:
        """(version, new terms, ops) of every logged commit, in order."""
        for path in sorted(self.directory.glob("*.log")):
            for _, payload in read_segment(path):
                yield pickle.loads(payload)

    def commits_after(self, version: int) -> Iterator[tuple[int, list[Op]]]:
        for logged, _, ops in self.records():
            if logged > version:
                yield logged, ops

    def log(self, version: int, ops: list[Op]) -> None:
        """Log commit ``version`` and wait until it is durable."""
        ids = op_ids(ops)
        new = [int(i) for i in ids[ids > self.base_terms] if int(i) not in self._spelled]
        spelled = [(i, format_term(self.terms.decode(i))) for i in new]
        lsn = self.wal.append(pickle.dumps((version, spelled, ops), protocol=5))
        if lsn != version:
            raise RuntimeError(f"coordinator log at LSN {lsn} for commit {version}")
        self.wal.wait_durable(lsn)
        self._spelled.update(new)

    def close(self) -> None:
        self.wal.close()


__all__ = ["CoordinatorLog"]
