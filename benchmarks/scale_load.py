"""Loading LSBench-shaped data at scale: time and peak memory of each way in, beside Oxigraph.

For one N-Quads file, in rounds, each way of loading it runs as its own
processes while a sampler adds up the resident memory of the whole process
tree every 0.1 s (Spark's JVM and Python workers, the server's loading child):

- ``rivulet load FILE --out DIR`` (Spark, ``local[*]``), then the start-up of
  ``rivulet serve --store DIR`` (until ``GET /streams`` answers);
- ``rivulet serve --data-dir D --data FILE`` on a new ``D``: the first load,
  inside the server, until it answers (its RSS once loaded too);
- ``oxigraph load --location L --file FILE``, then the start-up of
  ``oxigraph serve-read-only`` on ``L``.

With ``--before DIR`` (a checkout of older code, built in place) every round
runs the rivulet commands of both checkouts, alternated, so a before/after
pair sees the same machine load. Prints a markdown table of medians.

    python -m benchmarks.scale_load --triples 10000000 --rounds 3
    python -m benchmarks.scale_load --data lsbench-100m.nq --rounds 1 --skip spark
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import machine_description, markdown_table

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
#: seconds any one load or start-up may take
LIMIT_S = 3600.0


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, in MB."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, StopIteration):
            continue
    return total / 1024


class Sampler:
    """The highest tree RSS of a process seen so far, sampled in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_mb, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, tree_rss_mb(self.pid))
            self._stop.wait(0.1)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_mb


@dataclass
class Figures:
    load_s: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    startup_s: list[float] = field(default_factory=list)
    serving_mb: list[float] = field(default_factory=list)


def _env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout), "SPARK_LOCAL_IP": HOST}


def _run(command: list[str], checkout: Path, log: Path) -> tuple[float, float]:
    """(seconds, peak tree MB) of a command run to its end."""
    started = time.perf_counter()
    with open(log, "ab") as out:
        process = subprocess.Popen(command, cwd=checkout, env=_env(checkout), stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        sampler = Sampler(process.pid)
        code = process.wait(timeout=LIMIT_S)
    peak = sampler.stop()
    if code != 0:
        raise RuntimeError(f"{command[:3]} exited with {code}; see {log}")
    return time.perf_counter() - started, peak


def _answers(port: int, path: str) -> bool:
    try:
        connection = http.client.HTTPConnection(HOST, port, timeout=2)
        try:
            connection.request("GET", path)
            return connection.getresponse().status == 200
        finally:
            connection.close()
    except OSError:
        return False


def _serve(command: list[str], checkout: Path, log: Path, port: int, path: str) -> tuple[float, float, float]:
    """(seconds until it answers, peak tree MB until then, tree MB once answering) of a server."""
    started = time.perf_counter()
    with open(log, "ab") as out:
        process = subprocess.Popen(command, cwd=checkout, env=_env(checkout), stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    sampler = Sampler(process.pid)
    try:
        while not _answers(port, path):
            if process.poll() is not None:
                raise RuntimeError(f"{command[:3]} exited with {process.returncode}; see {log}")
            if time.perf_counter() - started > LIMIT_S:
                raise RuntimeError(f"{command[:3]} did not answer within {LIMIT_S:.0f} s")
            time.sleep(0.1)
        seconds = time.perf_counter() - started
        time.sleep(1.0)
        return seconds, sampler.stop(), tree_rss_mb(process.pid)
    finally:
        sampler.stop()
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def rivulet_spark(data: Path, checkout: Path, work: Path, figures: Figures) -> None:
    store = work / "store"
    shutil.rmtree(store, ignore_errors=True)
    log = work / "rivulet-load.log"
    seconds, peak = _run([sys.executable, "-m", "endpoint.cli", "load", str(data), "--out", str(store),
                          "--no-progress"], checkout, log)
    port = _free_port()
    startup, _, serving = _serve([sys.executable, "-m", "endpoint.cli", "serve", "--store", str(store),
                                  "--host", HOST, "--port", str(port)], checkout, log, port, "/streams")
    shutil.rmtree(store, ignore_errors=True)
    _add(figures, seconds, peak, startup, serving)


def rivulet_data_dir(data: Path, checkout: Path, work: Path, figures: Figures) -> None:
    directory = work / "data-dir"
    shutil.rmtree(directory, ignore_errors=True)
    port = _free_port()
    seconds, peak, serving = _serve(
        [sys.executable, "-m", "endpoint.cli", "serve", "--data-dir", str(directory), "--data", str(data),
         "--host", HOST, "--port", str(port)], checkout, work / "rivulet-serve.log", port, "/streams")
    shutil.rmtree(directory, ignore_errors=True)
    _add(figures, seconds, peak, seconds, serving)


def oxigraph(data: Path, checkout: Path, work: Path, figures: Figures) -> None:
    location = work / "oxigraph"
    shutil.rmtree(location, ignore_errors=True)
    log = work / "oxigraph.log"
    binary = str(BIN / "oxigraph")
    seconds, peak = _run([binary, "load", "--location", str(location), "--file", str(data)], checkout, log)
    port = _free_port()
    startup, _, serving = _serve([binary, "serve-read-only", "--location", str(location), "--bind",
                                  f"{HOST}:{port}"], checkout, log, port, "/query?query=ASK%7B%7D")
    shutil.rmtree(location, ignore_errors=True)
    _add(figures, seconds, peak, startup, serving)


def _add(figures: Figures, seconds: float, peak: float, startup: float, serving: float) -> None:
    figures.load_s.append(seconds)
    figures.peak_mb.append(peak)
    figures.startup_s.append(startup)
    figures.serving_mb.append(serving)
    print(f"    load {seconds:.1f} s, peak {peak:,.0f} MB, start-up {startup:.1f} s, "
          f"serving {serving:,.0f} MB", flush=True)


WAYS = {"spark": ("rivulet load (Spark), then serve --store", rivulet_spark),
        "data-dir": ("rivulet serve --data-dir D --data FILE (first load)", rivulet_data_dir),
        "oxigraph": ("oxigraph load, then serve-read-only", oxigraph)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="N-Quads file (default: LSBench-shaped, --triples)")
    parser.add_argument("--triples", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of older code to alternate with")
    parser.add_argument("--skip", nargs="*", default=[], choices=sorted(WAYS))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/rivulet-scale-load"))
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    data = args.data
    if data is None:
        from benchmarks.cluster_scaling import write_nquads
        from benchmarks.lsbench_data import generate

        data = args.workdir / f"lsbench-{args.triples}.nq"
        if not data.exists():
            write_nquads(generate(args.triples), data)
    checkouts = {"": ROOT, **({" (before)": args.before.resolve()} if args.before else {})}
    results: dict[str, Figures] = {}
    loads = []
    for r in range(args.rounds):
        for key, (label, way) in WAYS.items():
            if key in args.skip:
                continue
            for suffix, checkout in checkouts.items():
                if key == "oxigraph" and suffix:
                    continue
                print(f"round {r + 1}: {label}{suffix}", flush=True)
                way(data, checkout, args.workdir, results.setdefault(label + suffix, Figures()))
                loads.append(os.getloadavg()[0])
    med = statistics.median
    rows = [[name, len(f.load_s), round(med(f.load_s), 1), round(med(f.peak_mb)), round(med(f.startup_s), 1),
             round(med(f.serving_mb))] for name, f in results.items()]
    print(f"\n{data.name} ({data.stat().st_size / 1e9:.2f} GB); {machine_description()}; "
          f"load average during the runs {min(loads):.1f}-{max(loads):.1f}\n")
    print(markdown_table(["way in", "runs", "load s", "peak RSS MB (process tree)", "start-up s",
                          "RSS serving MB"], rows))


if __name__ == "__main__":
    main()
