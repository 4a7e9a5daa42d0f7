"""A checkpoint's extra memory does not grow with the store.

A server process (a child, so its resident memory is its own) opens a data
directory holding a loaded store of 300,000 triples, takes in a few hundred
updates (a delta in the loaded graph and a new default graph), and takes a
checkpoint; its peak resident memory during the checkpoint (``VmHWM``, reset
just before) minus its resident memory before must stay under a bound that
is a fraction of what spelling the store as text and parsing it again cost
(about 30 times the store's size on disk). The bound is generous: the chunks
a checkpoint works in are about 10 MB. Figures at 1M and 10M triples:
``python -m benchmarks.checkpoint_memory`` (docs/benchmarks.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from engine.durability import DataDirectory
from tests.endpoint.rivulet_process import REPO

EX = "http://example.org/"
TRIPLES = 300_000
#: MB a checkpoint may add to the process's peak resident memory
EXTRA_MB = 48
CHILD = """
import re, sys
from pathlib import Path
from engine.durability import DataDirectory

def kb(field):
    return int(re.search(rf"^{field}:\\s+(\\d+) kB", Path("/proc/self/status").read_text(), re.M).group(1))

data = DataDirectory.open(Path(sys.argv[1]), checkpoint_mb=100000)
def updates(first, count):
    for i in range(first, first + count):
        data.store.update(f'INSERT DATA {{ <{EX}new/{i}> <{EX}p1> "update {i}" . '
                          f'GRAPH <{EX}big> {{ <{EX}s{i}> <{EX}p2> <{EX}new/{i}> }} }}')
updates(0, 20)
data.checkpoint()  # a first one: whatever a checkpoint loads the first time is loaded
updates(20, 300)
Path("/proc/self/clear_refs").write_text("5")
before = kb("VmRSS")
data.checkpoint()
print(kb("VmHWM") - before)
"""


def store_file(path: Path) -> Path:
    rng = np.random.default_rng(7)
    s, p, o = (rng.integers(0, n, TRIPLES).tolist() for n in (60_000, 20, 90_000))
    literal = (rng.random(TRIPLES) < 0.4).tolist()
    lines = [f'<{EX}s{a}> <{EX}p{b}> {chr(34) + str(c) + chr(34) if lit else f"<{EX}o{c}>"} <{EX}big> .\n'
             for a, b, c, lit in zip(s, p, o, literal)]
    path.write_text("".join(lines))
    return path


def test_a_checkpoint_of_a_loaded_store_with_changes_needs_a_bounded_amount_of_memory(tmp_path):
    data = DataDirectory.open(tmp_path / "data", initial_files=[store_file(tmp_path / "store.nq")])
    data.close()
    files = [f for f in (tmp_path / "data" / "checkpoints").rglob("*") if f.is_file()]
    store_mb = sum(f.stat().st_size for f in files) / 2**20
    done = subprocess.run([sys.executable, "-c", f"EX = {EX!r}\n" + CHILD, str(tmp_path / "data")],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    extra_mb = int(done.stdout.split()[-1]) / 1024
    print(f"a checkpoint of a {store_mb:.1f} MB store: {extra_mb:.1f} MB more memory")
    assert extra_mb < EXTRA_MB, f"a checkpoint of a {store_mb:.1f} MB store took {extra_mb:.1f} MB more"
