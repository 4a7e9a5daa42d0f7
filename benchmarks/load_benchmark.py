"""Bulk load: ``rivulet load`` on generated N-Triples, with peers beside it.

For each size: the load end to end (Spark session start included) and per
step and Spark stage, the bytes of the opened store per triple (graph arrays,
term ID arrays, strings apart), and the time ``Store.open`` takes in a fresh
process (median of 5), against pyoxigraph's ``bulk_load`` of the same file
and a plain Spark read + count of it (the floor for reading the file).

    python -m benchmarks.load_benchmark                       # 1M and 10M, ~10 min
    python -m benchmarks.load_benchmark --triples 1000000 --repeat 1 --no-write
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import machine_description, markdown_table, write_section
from benchmarks.generate import generate

ROOT = Path(__file__).resolve().parent.parent


def _data(workdir: Path, triples: int) -> Path:
    path = workdir / f"sn-{triples}.nt"
    if not path.exists():
        generate(triples).write_ntriples(path)
    return path


def _rivulet(data: Path, out: Path, master: str):
    from engine.loader.spark_job import LoadOptions, load

    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    report = load(LoadOptions([data], out, master=master, progress=False))
    return time.perf_counter() - start, report


def _open_seconds(store: Path, repeat: int = 5) -> tuple[float, float]:
    """Median (open, first point query) seconds, each in a fresh interpreter."""
    code = (
        "import sys, time\nfrom engine.api import Store\n"
        "t = time.perf_counter(); s = Store.open(sys.argv[1]); t1 = time.perf_counter()\n"
        "q = 'SELECT ?o WHERE { <http://rivulet.example.org/sn/user/1> ?p ?o }'\n"
        "n = len(list(s.query(q).rows())); t2 = time.perf_counter()\n"
        "print(t1 - t, t2 - t1)\n"
    )
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _oxigraph(data: Path, workdir: Path) -> float:
    import pyoxigraph

    target = workdir / "oxigraph"
    shutil.rmtree(target, ignore_errors=True)
    start = time.perf_counter()
    store = pyoxigraph.Store(str(target))
    store.bulk_load(path=str(data), format=pyoxigraph.RdfFormat.N_TRIPLES)
    store.flush()
    seconds = time.perf_counter() - start
    del store
    shutil.rmtree(target, ignore_errors=True)
    return seconds


def _spark_count(data: Path, master: str) -> float:
    from engine.loader.spark_job import spark_session

    with spark_session(master, {}) as spark:
        spark.read.text(str(data)).count()  # warm-up: JVM and file cache
        start = time.perf_counter()
        spark.read.text(str(data)).count()
        return time.perf_counter() - start


def run(sizes: list[int], repeat: int, workdir: Path, master: str) -> str:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    workdir.mkdir(parents=True, exist_ok=True)
    summary, stages = [], []
    for triples in sizes:
        data = _data(workdir, triples)
        loads = repeat if triples < 5_000_000 else 1
        runs = [_rivulet(data, workdir / "store", master) for _ in range(loads)]
        seconds = statistics.median(r[0] for r in runs)
        report = sorted(runs, key=lambda r: r[0])[len(runs) // 2][1]
        open_s, query_s = _open_seconds(workdir / "store")
        oxigraph = _oxigraph(data, workdir)
        spark_count = _spark_count(data, master)
        n = report.triples
        summary.append([f"{triples:,}", len(runs), seconds, n / seconds, report.store_bytes / n,
                        report.term_bytes / n, (report.store_bytes + report.term_bytes) / n,
                        report.string_bytes / n, open_s * 1000, query_s * 1000, oxigraph, n / oxigraph,
                        spark_count])
        parts = {**report.steps, **report.stages}
        stages.append([f"{triples:,}"] + [f"{name}: {sec:.1f} s" for name, sec in parts.items()])
        print(summary[-1], parts, flush=True)
        shutil.rmtree(workdir / "store", ignore_errors=True)
    table = markdown_table(
        ["triples", "runs", "load s", "triples/s", "graph B/t", "term ids B/t", "total B/t (no strings)",
         "strings B/t", "open ms", "first query ms", "oxigraph bulk_load s", "oxigraph triples/s",
         "spark read+count s"], summary)
    stage_lines = "\n".join(f"- {row[0]}: " + "; ".join(row[1:]) for row in stages)
    return (f"`python -m benchmarks.load_benchmark`, master `{master}`, 1 shard; {machine_description()}.\n\n"
            f"{table}\n\nWhere the time goes (steps, then the Spark stages inside them; the rest of the end "
            f"to end time is starting Spark and its Python workers):\n\n{stage_lines}\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="loads per size below 5M (median)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/rivulet-load-bench"))
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    body = run(args.triples, args.repeat, args.workdir, args.master)
    print(body)
    if not args.no_write:
        write_section("Bulk load", body)


if __name__ == "__main__":
    main()
