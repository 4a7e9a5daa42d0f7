"""What a checkpoint costs a running server: extra memory (peak RSS minus RSS before) and seconds.

A checkpoint folds the log into a new store directory while the server goes
on serving; it must fit in the memory the server already has. This script
measures it the way an operator would meet it:

1. a data directory is made from an N-Quads file (``rivulet serve --data-dir
   D --data FILE``, stopped once it answers), so that the server measured
   next starts from a mapped checkpoint, as after any restart, and no memory
   left over from the load hides what the checkpoint allocates;
2. ``rivulet serve --data-dir D --checkpoint-mb MB`` starts on it, and small
   ``INSERT DATA`` updates (new subjects, one of the stored named graphs and the
   default graph) fill the log up to just below ``MB``;
3. the server's peak RSS is reset (``/proc/PID/clear_refs``), its RSS read,
   and updates go on one at a time until the log passes ``MB`` and the
   background checkpoint starts; when the new checkpoint is recorded (its
   directory complete, the log folded into it), ``VmHWM`` is the peak.

The same trigger works on every server with ``--data-dir``, so a figure from
before a change and one from after it are comparable.

    python -m benchmarks.checkpoint_memory --triples 10000000      # LSBench-shaped data, ~5 min
    python -m benchmarks.checkpoint_memory --data lsbench-1m.nq   # a file of your own

Prints one markdown table row (store size on disk, triples, RSS before,
extra at peak, extra / store size, seconds).
"""

from __future__ import annotations

import argparse
import http.client
import re
import shutil
import tempfile
import time
import urllib.parse
from pathlib import Path

from benchmarks import markdown_table
from benchmarks.durability import HOST, ServerProcess

GRAPH = "http://www.ins.cwi.nl/sib/graph/social"
EX = "http://example.org/checkpoint/"
#: seconds the checkpoint may take before the run gives up
CHECKPOINT_LIMIT_S = 1800.0
#: updates sent before the log is looked at again
BETWEEN_LOOKS = 25


def status_kb(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` figure in kB (VmRSS, VmHWM)."""
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+) kB", text, re.M).group(1))


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def log_bytes(data_dir: Path) -> int:
    return sum(f.stat().st_size for f in (data_dir / "wal").glob("*.log"))


def checkpoints(data_dir: Path) -> set[str]:
    """The complete checkpoint directories (a checkpoint in progress ends in .partial)."""
    return {p.name for p in (data_dir / "checkpoints").iterdir() if p.is_dir() and "." not in p.name}


def update(connection: http.client.HTTPConnection, n: int) -> None:
    subject = f"<{EX}s{n}>"
    text = (f'INSERT DATA {{ {subject} <{EX}n> {n} ; <{EX}label> "update {n}" . '
            f'GRAPH <{GRAPH}> {{ {subject} <{EX}seen> <{EX}o{n % 97}> }} }}')
    body = urllib.parse.urlencode({"update": text}).encode()
    connection.request("POST", "/sparql", body=body,
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    response.read()
    if response.status != 204:
        raise RuntimeError(f"update {n}: {response.status}")


def measure(data: Path, work: Path, checkpoint_mb: float) -> dict:
    data_dir = work / "data"
    log = work / "server.log"
    loader = ServerProcess(["--data-dir", str(data_dir), "--data", str(data), "--checkpoint-mb", "100000"],
                           log)
    started = time.monotonic()
    loader.start(timeout=CHECKPOINT_LIMIT_S)
    loaded_s = time.monotonic() - started
    loader.stop()
    store_bytes = directory_bytes(data_dir / "checkpoints")
    server = ServerProcess(["--data-dir", str(data_dir), "--checkpoint-mb", str(checkpoint_mb)], log)
    server.start(timeout=CHECKPOINT_LIMIT_S)
    pid = server.process.pid
    connection = http.client.HTTPConnection(HOST, server.port, timeout=CHECKPOINT_LIMIT_S)
    try:
        limit = checkpoint_mb * 2**20
        n = 0
        while log_bytes(data_dir) < limit - 64 * 1024:
            for _ in range(BETWEEN_LOOKS):
                update(connection, n)
                n += 1
        before = checkpoints(data_dir)
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        rss_before = status_kb(pid, "VmRSS")
        triggered = None
        while checkpoints(data_dir) == before:
            if triggered is None:
                update(connection, n)
                n += 1
                if log_bytes(data_dir) > limit:
                    triggered = time.monotonic()
            else:
                if time.monotonic() - triggered > CHECKPOINT_LIMIT_S:
                    raise RuntimeError(f"no checkpoint within {CHECKPOINT_LIMIT_S:.0f} s\n"
                                       f"{server.log_tail()}")
                time.sleep(0.05)
        while log_bytes(data_dir) > limit:  # recorded: the folded segments are removed
            time.sleep(0.05)
        seconds = time.monotonic() - triggered
        peak = status_kb(pid, "VmHWM")
    finally:
        connection.close()
        server.stop()
    new = sorted(checkpoints(data_dir) - before)
    return {"store_bytes": store_bytes, "new_bytes": directory_bytes(data_dir / "checkpoints" / new[-1]),
            "rss_before_kb": rss_before, "peak_kb": peak, "seconds": seconds, "updates": n,
            "load_s": loaded_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="the N-Quads (or any RDF) file to start from "
                                                   "(default: LSBench-shaped data of --triples)")
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--checkpoint-mb", type=float, default=1.0)
    parser.add_argument("--label", default="", help="what the row is (before / after a change)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rivulet-checkpoint-"))
    try:
        data = args.data
        if data is None:
            from benchmarks.cluster_scaling import write_nquads
            from benchmarks.lsbench_data import generate

            data = work / "lsbench.nq"
            write_nquads(generate(args.triples), data)
        figures = measure(data, work, args.checkpoint_mb)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    extra_mb = (figures["peak_kb"] - figures["rss_before_kb"]) / 1024
    store_mb = figures["store_bytes"] / 2**20
    label = args.label or (args.data.name if args.data else f"{args.triples:,} triples")
    print(markdown_table(
        ["run", "store on disk MB", "RSS before MB", "extra at peak MB", "extra / store", "checkpoint s"],
        [[label, round(store_mb, 1), round(figures["rss_before_kb"] / 1024, 1),
          round(extra_mb, 1), round(extra_mb / store_mb, 3), round(figures["seconds"], 2)]]))
    print(f"(load {figures['load_s']:.1f} s, {figures['updates']} updates before the checkpoint; "
          f"new checkpoint {figures['new_bytes'] / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()
