"""What no checkpoint needs: removed once a checkpoint is recorded, and at every start.

A crash can come at any step of a checkpoint: while its directory is
written (``<LSN>.partial``), after it is complete but before the catalog
records it, or after that but before the older checkpoint, its carry file
and the folded log segments are removed. None of those is ever read again:
the catalog's newest row says which checkpoint is in force, and its log is
the segments holding records after it. :func:`remove_leftovers` removes
everything else, so a crash costs at most one store copy until the next
start. A directory the running server still maps (the one it started
from) is kept until it stops: the next start removes it.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from engine.durability.wal import SUFFIX

log = logging.getLogger("rivulet.durability")

CARRY_SUFFIX = ".carry"
CHECKPOINTS = "checkpoints"
WAL = "wal"
#: the broker sinks of the endpoint's connectors and where each stands
#: (written whole by a rename): not the engine's, but a backup copies it
SINKS = "sinks.json"


def checkpoint_path(data_dir: Path, recorded: str) -> Path:
    """The directory of a checkpoint as the catalog records it: relative to
    the data directory (so a copied or moved directory works wherever it
    lands), or absolute as older catalogs wrote it, in which case the data
    directory's own ``checkpoints/<name>`` wins when it exists."""
    path = Path(recorded)
    if not path.is_absolute():
        return data_dir / path
    local = data_dir / CHECKPOINTS / path.name
    return local if local.exists() else path


def remove_leftovers(data_dir: Path, lsn: int | None, keep: set[str] = frozenset()) -> list[str]:
    """Remove what the checkpoint ``lsn`` (None: there is none yet) does not
    need: other checkpoint directories (but those named in ``keep``), partial
    files, other carry files, and log segments whose records are all at or
    before ``lsn``. Returns the names removed."""
    removed: list[str] = []
    wanted = {f"{lsn:020d}"} | set(keep) if lsn is not None else set(keep)
    checkpoints = data_dir / CHECKPOINTS
    if checkpoints.is_dir():
        for entry in sorted(checkpoints.iterdir()):
            if entry.name not in wanted:
                _remove(entry)
                removed.append(f"{CHECKPOINTS}/{entry.name}")
    wal = data_dir / WAL
    if wal.is_dir():
        carry = f"{lsn:020d}{CARRY_SUFFIX}" if lsn is not None else None
        for entry in sorted(wal.iterdir()):
            if entry.name.endswith(".partial") or (entry.name.endswith(CARRY_SUFFIX) and entry.name != carry):
                _remove(entry)
                removed.append(f"{WAL}/{entry.name}")
        if lsn is not None:
            segments = sorted(wal.glob("*" + SUFFIX))
            for segment, following in zip(segments, segments[1:]):
                if int(following.name.split(".")[0]) <= lsn + 1:  # every record in it is at or before lsn
                    segment.unlink(missing_ok=True)
                    removed.append(f"{WAL}/{segment.name}")
    return removed


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)
