"""A process killed at any step of a checkpoint leaves nothing that the next start keeps.

A checkpoint writes files, links them, renames its directory into place,
writes the carry file, records its catalog row and then removes what it
replaced. Here a forked child takes a checkpoint of a prepared data
directory and is SIGKILLed just before its N-th file-system step (an
``fsync``, ``rename``, ``link``, ``unlink``, ``rmtree`` or kernel copy), for
N among the steps a checkpoint takes (the first and last few, and an even
spread between; all of them with ``RIVULET_CHECKPOINT_KILLS=all``). After every kill the
directory is opened again (the next start) and must hold only the catalog,
the checkpoint the catalog records, its carry file, and the log segments
with records after it, and every write acknowledged before the checkpoint
must be there.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from engine.durability import DataDirectory
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition
from tests.durability.test_checkpoint_differential import quads
from tests.durability.test_recovery import crash

EX = "http://example.org/"
STREAM = IRI(f"{EX}stream")
#: a window long enough that its batches are carried over the checkpoint
PENDING = (f"REGISTER QUERY pending AS SELECT (COUNT(*) AS ?n) FROM STREAM <{STREAM.value}> "
           f"[RANGE 60s STEP 1s] WHERE {{ ?x ?p ?o }}")
#: the calls a kill lands before (module, name)
STEPS = [(os, "fsync"), (os, "rename"), (os, "link"), (os, "unlink"), (os, "copy_file_range"),
         (shutil, "rmtree")]
#: seconds a child may take for its checkpoint
CHILD_TIMEOUT_S = 60.0
#: steps killed at, besides the first and last few (all of them with RIVULET_CHECKPOINT_KILLS=all)
SPREAD = 16
CARRY_SUFFIX = ".carry"
ROOT_FILES = {"catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm", "LOCK", "RETAIN", "checkpoints",
              "wal"}


def prepare(directory: Path, tmp: Path) -> dict:
    """A data directory with a recorded checkpoint (over a mapped base), a log
    after it, and stream batches a pending window still reads; returns its quads."""
    initial = tmp / "initial.nq"
    initial.write_text("".join(f"<{EX}s{i}> <{EX}p{i % 3}> \"{i}\" <{EX}g{i % 2}> .\n"
                               for i in range(300)))
    data = DataDirectory.open(directory, checkpoint_mb=1000, initial_files=[initial])
    data.engine.declare_stream(StreamDefinition("s", STREAM))
    data.engine.register(PENDING)
    data.store.add([(IRI(f"{EX}a{i}"), IRI(f"{EX}p0"), Literal(f"new {i}")) for i in range(20)], f"{EX}g0")
    data.engine.ingest("s", [(1_000 + 100 * i, [(IRI(f"{EX}x{i}"), IRI(f"{EX}v"), Literal(str(i)))])
                             for i in range(5)])
    data.checkpoint()
    data.store.update(f'INSERT DATA {{ <{EX}b> <{EX}p1> "after" . '
                      f'GRAPH <{EX}new> {{ <{EX}b> <{EX}p2> 1 }} }}')
    data.store.update(f'DELETE DATA {{ GRAPH <{EX}g1> {{ <{EX}s1> <{EX}p1> "1" }} }}')
    data.engine.ingest("s", [(2_000, [(IRI(f"{EX}y"), IRI(f"{EX}v"), Literal("9"))])])
    expected = quads(data)
    data.close()
    return expected


def checkpoint_killed_at(directory: Path, step: int, count: Path | None = None) -> bool:
    """Fork a child that opens ``directory`` and takes a checkpoint, SIGKILLed
    before its ``step``-th file-system call; False when it finished first
    (and wrote the number of calls it made to ``count``)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into the test
        try:
            data = DataDirectory.open(directory, checkpoint_mb=1000)
            calls = [0]
            for module, name in STEPS:
                original = getattr(module, name)

                def step_then(*args, _original=original, **kwargs):
                    calls[0] += 1
                    if calls[0] == step:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return _original(*args, **kwargs)

                setattr(module, name, step_then)
            data.checkpoint()
            if count is not None:
                count.write_text(str(calls[0]))
        finally:
            os._exit(0)
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the checkpoint with a kill at step {step} did not end within {CHILD_TIMEOUT_S:.0f} s")


def assert_only_what_is_needed(directory: Path, data: DataDirectory) -> None:
    last = data.catalog.last_checkpoint()
    assert [row.lsn for row in data.catalog.checkpoints()] == [last.lsn]
    name = f"{last.lsn:020d}"
    assert {p.name for p in directory.iterdir()} <= ROOT_FILES
    assert [p.name for p in (directory / "checkpoints").iterdir()] == [name]
    wal = sorted(p.name for p in (directory / "wal").iterdir())
    assert not [n for n in wal if n.endswith(".partial")]
    assert [n for n in wal if n.endswith(CARRY_SUFFIX)] in ([], [name + CARRY_SUFFIX])
    segments = [int(n.split(".")[0]) for n in wal if n.endswith(".log")]
    # each segment but the newest holds a record after the checkpoint (it starts after it, or the next does)
    for first, following in zip(segments, segments[1:]):
        assert following > last.lsn + 1, f"segment {first} holds only records the checkpoint has: {wal}"


def test_a_kill_at_any_step_of_a_checkpoint_leaves_only_what_the_next_start_needs(tmp_path):
    template = tmp_path / "template"
    expected = prepare(template, tmp_path)
    directory = tmp_path / "data"
    shutil.copytree(template, directory)
    assert not checkpoint_killed_at(directory, 0, tmp_path / "count")
    total = int((tmp_path / "count").read_text())
    assert total >= 20  # files, links, the rename, the carry file, the catalog row, the removals
    steps = set(range(1, total + 1)) if os.environ.get("RIVULET_CHECKPOINT_KILLS") == "all" else \
        {*range(1, 5), *range(total - 3, total + 1), *(1 + i * (total - 1) // SPREAD for i in range(SPREAD))}
    for step in sorted(steps):
        shutil.rmtree(directory, ignore_errors=True)
        shutil.copytree(template, directory)
        assert checkpoint_killed_at(directory, step), f"no kill at step {step} of {total}"
        data = DataDirectory.open(directory, checkpoint_mb=1000)
        try:
            assert quads(data) == expected, f"kill at step {step}"
            assert_only_what_is_needed(directory, data)
        finally:
            crash(data)
