"""Spark's own log, kept out of ``rivulet load``'s terminal.

Spark's JVM logs to its standard error: warnings at start, and for one bad
input line the Python traceback of every task that met it, some 95 lines
before the load's one-line message. The JVM is started by PySpark as a child
process that inherits this process's standard error, so pointing file
descriptor 2 at a log file while the session starts sends everything the JVM
(and the Python workers it forks) writes there, for the whole session; this
process's own messages and progress bar, written after, still reach the
terminal.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def new_log() -> Path:
    """A new, empty file for one load's Spark log."""
    handle, name = tempfile.mkstemp(prefix="rivulet-load-spark-", suffix=".log")
    os.close(handle)
    return Path(name)


@contextmanager
def stderr_to(path: Path) -> Iterator[None]:
    """Within the block, file descriptor 2 (what a child process inherits as
    its standard error) writes to ``path``; restored after."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with path.open("ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
