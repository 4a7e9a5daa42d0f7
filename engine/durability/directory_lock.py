"""One process at a time in a directory that holds a log.

Two servers appending to one write-ahead log would number their records the
same and each overwrite what the other acknowledged. So the process that
opens a data directory (or a cluster coordinator's log) takes an exclusive
advisory lock on ``LOCK`` in it, held until it closes the directory or its
process ends (the kernel releases it even after a kill -9), and a second
opener is refused at once with the holder's process ID. The lock is
``flock``: dependable on a local file system; on network file systems it
depends on the server's lock support.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = "LOCK"


class DirectoryInUse(RuntimeError):
    """Another process has the directory open."""


class DirectoryLock:
    """The exclusive lock on ``directory``, taken at construction."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_FILE
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(self._fd)
            self._fd = None
            raise DirectoryInUse(f"{directory} is in use by another process (pid {holder}): "
                                 "stop it first, or give this one another directory") from None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode("ascii"), 0)

    def release(self) -> None:
        """Let another process open the directory (closing it, or a test that
        stands for a process that died)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None
