"""Holding back the removal of old checkpoints and log segments while a backup copies them.

A checkpoint is committed by its catalog row; only then are the older
segments, carry files and checkpoint directories removed. A backup
(``engine.durability.backup``) copies the catalog first and then the
checkpoint it names and the segments after it, so none of those may go
while it copies. It holds a shared ``flock`` on ``RETAIN`` in the data
directory for that time; the server takes the same lock exclusively, without
waiting, to remove anything, and when a backup holds it the removal is left
to the next checkpoint (or the next start, which removes every leftover).
The kernel drops the lock of a process that dies, so a killed backup holds
nothing back.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RETAIN_FILE = "RETAIN"


def _open(directory: Path) -> int:
    return os.open(directory / RETAIN_FILE, os.O_RDWR | os.O_CREAT, 0o644)


@contextmanager
def removal_allowed(directory: Path) -> Iterator[bool]:
    """Whether old files may be removed now (no backup is copying); the
    answer holds until the block ends."""
    fd = _open(directory)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


@contextmanager
def retained(directory: Path) -> Iterator[None]:
    """Nothing is removed from ``directory`` until the block ends (waits for a
    removal in progress to finish first)."""
    fd = _open(directory)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)
