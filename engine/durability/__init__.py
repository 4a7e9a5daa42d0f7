"""Durability: a data directory holding checkpoints, a write-ahead log and the catalog.

- :mod:`~engine.durability.wal`: the log (framing, appending, group commit).
- :mod:`~engine.durability.log_scan`: reading a log back: whole records, a torn tail, damage.
- :mod:`~engine.durability.log_repair`: ``rivulet recover``: a log's state, cutting it before damage.
- :mod:`~engine.durability.records`: what each record holds and how it is applied again.
- :mod:`~engine.durability.checkpoint`: a store snapshot written as a compact store directory,
  in bounded memory (its dictionary: :mod:`~engine.durability.checkpoint_terms`).
- :mod:`~engine.durability.leftovers`: what no checkpoint needs, removed after each one and at start.
- :mod:`~engine.durability.retention`: a backup holding back those removals while it copies.
- :mod:`~engine.durability.backup`: a consistent copy of a data directory while its server runs.
- :mod:`~engine.durability.data_directory`: recovery at start, journaling, checkpoints.
- :mod:`~engine.durability.directory_lock`: one process at a time in a directory with a log.

This layer sits above the store, the stream engine and the catalog: they
know only the journal protocols they call (``engine.store.Journal``,
``engine.stream.stream_engine.StreamJournal``).
"""

from engine.durability.data_directory import DataDirectory, Recovery
from engine.durability.directory_lock import DirectoryInUse
from engine.durability.log_scan import LogDamaged

__all__ = ["DataDirectory", "DirectoryInUse", "LogDamaged", "Recovery"]
