"""Cost per call of each way a coordinator can read a shard, on this machine.

A sharded query step reads neighbour lists that live in other processes. How
much one such read costs decides how a step must be batched, so this script
measures one call of each transport, with realistic payloads (slices of 16
int64 values from a memory-mapped array, as a CSR neighbour list):

- an in-process slice of the same array (the floor: no transport at all);
- a TCP ``gather`` (``engine.cluster.transport.tcp``) of 1 and of 64 slices,
  from 1 and from 3 shard server processes (read at once);
- a TCP step (``engine.cluster.transport.tcp_steps``, how read steps fork-join
  unless the transport is ray): a no-op, and one returning 64 slices, on 1
  and on 3 shard processes at once;
- a Ray actor method call: a no-op, and one returning 64 slices;
- a fork-join over 3 Ray actors (all called, then all awaited);
- RDMA, reported as "unavailable: <reason>" where there is no device.

Each case runs ``--warmup`` calls, then ``--calls`` timed calls; the table
gives the median and the 99th percentile in microseconds.

    python -m benchmarks.cluster_transports
    python -m benchmarks.cluster_transports --calls 500 --out /tmp/transports.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import machine_description, markdown_table
from engine.cluster.transport.base import Slices
from engine.cluster.transport.choice import describe_transports
from engine.cluster.transport.tcp import TcpRangeReader, TcpRegionServer
from engine.cluster.transport.tcp_steps import TcpStepCaller, TcpStepServer

ARRAY_LENGTH = 1_000_000  # int64 values per shard: 8 MB, memory-mapped
SLICE_LENGTH = 16  # values per slice: a typical neighbour list
VARIANTS = 32  # distinct requests per case, cycled, so no call repeats the previous one
HEADERS = ["transport", "call", "shards", "slices per shard", "median µs", "p99 µs"]


def write_arrays(directory: Path, shards: int) -> list[Path]:
    rng = np.random.default_rng(11)
    paths = []
    for shard in range(shards):
        path = directory / f"shard{shard}.npy"
        np.save(path, rng.integers(0, 2**40, ARRAY_LENGTH, dtype=np.int64))
        paths.append(path)
    return paths


def slice_bounds(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    starts = rng.integers(0, ARRAY_LENGTH - SLICE_LENGTH, n)
    return starts, starts + SLICE_LENGTH


def measure(call: Callable[[int], object], calls: int, warmup: int) -> dict[str, float]:
    """Median and p99 of one call, in microseconds; ``call(i)`` gets the call's number."""
    for i in range(warmup):
        call(i)
    samples = np.empty(calls, dtype=np.int64)
    for i in range(calls):
        began = time.perf_counter_ns()
        call(i)
        samples[i] = time.perf_counter_ns() - began
    return {"median_us": float(np.median(samples)) / 1e3, "p99_us": float(np.percentile(samples, 99)) / 1e3}


# --- TCP: shard servers in their own processes ---------------------------------------------


def serve_shard(path: str, conn: Connection) -> None:
    """A shard process: publish the memory-mapped array, answer steps on it,
    report both addresses, serve until told to stop."""
    server = TcpRegionServer()
    array = np.load(path, mmap_mode="r")
    server.publish("targets", array)
    shard = ShardActor(path)
    steps = TcpStepServer(lambda method, args: getattr(shard, method)(*args))
    conn.send((server.start(), steps.start()))
    conn.recv()
    server.stop()
    steps.stop()


def tcp_cases(paths: list[Path], calls: int, warmup: int) -> list[dict[str, Any]]:
    ctx = multiprocessing.get_context("spawn")
    processes, pipes, addresses, step_addresses = [], [], {}, {}
    try:
        for shard, path in enumerate(paths):
            parent, child = ctx.Pipe()
            process = ctx.Process(target=serve_shard, args=(str(path), child), daemon=True)
            process.start()
            processes.append(process)
            pipes.append(parent)
            if not parent.poll(60):
                raise RuntimeError(f"shard server {shard} did not start")
            addresses[shard], step_addresses[shard] = parent.recv()
        reader = TcpRangeReader(addresses)
        rows = []
        rng = np.random.default_rng(5)
        for shards in (1, 3):
            for n in (1, 64):
                variants = [
                    {s: [Slices("targets", *slice_bounds(rng, n))] for s in range(shards)}
                    for _ in range(VARIANTS)
                ]
                stats = measure(lambda i, v=variants: reader.gather(v[i % VARIANTS]), calls, warmup)
                rows.append(row("tcp", "gather", shards, n, stats))
        reader.close()
        caller = TcpStepCaller(step_addresses)
        bounds = [slice_bounds(rng, 64) for _ in range(VARIANTS)]
        for shards in (1, 3):
            noop = dict.fromkeys(range(shards), ("noop", ()))
            stats = measure(lambda i, c=noop: caller.call(c), calls, warmup)
            rows.append(row("tcp", "step (no-op)", shards, 0, stats))
            stats = measure(lambda i, s=shards: caller.call(
                {k: ("slices", bounds[i % VARIANTS]) for k in range(s)}), calls, warmup)
            rows.append(row("tcp", "step", shards, 64, stats))
        caller.close()
        return rows
    finally:
        for pipe in pipes:
            pipe.send("stop")
        for process in processes:
            process.join(timeout=10)


# --- Ray actors -----------------------------------------------------------------------------


class ShardActor:
    """What a Ray shard would do: hold the memory map, answer method calls."""

    def __init__(self, path: str) -> None:
        self.array = np.asarray(np.load(path, mmap_mode="r"))

    def noop(self) -> None:
        return None

    def slices(self, starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, ...]:
        return tuple(np.array(self.array[a:b]) for a, b in zip(starts, stops))


def ray_cases(paths: list[Path], calls: int, warmup: int) -> list[dict[str, Any]]:
    import ray  # noqa: PLC0415 - only this part needs Ray (slow to import)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        actor_class = ray.remote(ShardActor)
        actors = [actor_class.remote(str(path)) for path in paths]
        ray.get([a.noop.remote() for a in actors])  # started
        rng = np.random.default_rng(6)
        bounds = [slice_bounds(rng, 64) for _ in range(VARIANTS)]
        one = actors[0]
        cases = [
            ("actor method (no-op)", 1, 0, lambda i: ray.get(one.noop.remote())),
            ("actor method", 1, 64, lambda i: ray.get(one.slices.remote(*bounds[i % VARIANTS]))),
            ("fork-join (no-op)", 3, 0, lambda i: ray.get([a.noop.remote() for a in actors])),
            ("fork-join", 3, 64, lambda i: ray.get([a.slices.remote(*bounds[i % VARIANTS]) for a in actors])),
        ]
        return [row("ray", call, shards, n, measure(fn, calls, warmup)) for call, shards, n, fn in cases]
    finally:
        ray.shutdown()


# --- report ---------------------------------------------------------------------------------


def local_case(paths: list[Path], calls: int, warmup: int) -> dict[str, Any]:
    array = np.asarray(np.load(paths[0], mmap_mode="r"))  # as the servers hold it
    rng = np.random.default_rng(4)
    bounds = [slice_bounds(rng, 64) for _ in range(VARIANTS)]

    def call(i: int) -> np.ndarray:
        starts, stops = bounds[i % VARIANTS]
        return np.concatenate([array[a:b] for a, b in zip(starts, stops)])

    return row("in-process", "numpy slices", 1, 64, measure(call, calls, warmup))


def row(transport: str, call: str, shards: int, slices: int, stats: dict[str, float]) -> dict[str, Any]:
    return {"transport": transport, "call": call, "shards": shards, "slices": slices, **stats}


def table(rows: list[dict[str, Any]], rdma_reason: str | None) -> str:
    cells = [
        [r["transport"], r["call"], r["shards"], r["slices"], round(r["median_us"], 1), round(r["p99_us"], 1)]
        for r in rows
    ]
    if rdma_reason is not None:
        cells.append(["rdma", f"unavailable: {rdma_reason}", "", "", "", ""])
    return markdown_table(HEADERS, cells)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per case (default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first (default 200)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray cases")
    args = parser.parse_args(argv)

    transports = describe_transports()
    rdma_reason = transports["rdma"]["reason"]
    with tempfile.TemporaryDirectory(prefix="rivulet-transports-") as tmp:
        paths = write_arrays(Path(tmp), 3)
        rows = [local_case(paths, args.calls, args.warmup)]
        rows += tcp_cases(paths, args.calls, args.warmup)
        if not args.no_ray:
            rows += ray_cases(paths, args.calls, args.warmup)
    report = table(rows, rdma_reason)
    machine = machine_description()
    print(f"Cost per call ({args.calls} calls after {args.warmup} warm-up; slices of {SLICE_LENGTH} int64)")
    print(machine)
    print()
    print(report)
    if args.out is not None:
        result = {
            "machine": machine,
            "calls": args.calls,
            "warmup": args.warmup,
            "slice_length": SLICE_LENGTH,
            "transports": transports,
            "rows": rows,
            "rdma": {"available": rdma_reason is None, "reason": rdma_reason},
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
