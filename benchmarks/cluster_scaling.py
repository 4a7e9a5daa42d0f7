"""One node against three shards on Ray: one-shot and continuous LSBench queries.

The same LSBench stored data (``benchmarks.lsbench_data``) is written once to
an N-Quads file, then built with ``engine.loader.local_load`` into a 1-shard
and a 3-shard store directory (each build timed). Four set-ups read it:

* ``1 node``: ``Store.open`` of the 1-shard directory (memory-mapped, in process);
* ``3 shards, ray``: the 3-shard directory on three Ray shard actors, the
  coordinator in this process, transport "ray" (every step a Ray call);
* ``3 shards, tcp``: the same, transport "tcp": a step of at most 256 keys
  on a graph as loaded reads the owners' CSR arrays in place over TCP, the
  other read steps fork-join over TCP (the step mix is reported);
* ``3 shards, auto``: transport "auto", the default: in place only where
  three TCP round trips cost less than one fork-join step (measured at start).

For each: one-shot queries over the stored graphs (a point lookup, a 2-hop
neighbourhood, a selective join, a scan-heavy aggregate), each run up to
``--repeat`` times within ``--budget`` seconds, single client: median, p99,
queries/s; and the LSBench continuous queries L1-L6 on a ``StreamEngine``
over the store, at the paper's stream rates as ``benchmarks.lsbench_latency``
feeds them (each query alone; data of ``[t - 100 ms, t)``, then the heartbeat
at ``t``): per window the latency from the closing heartbeat to the event,
the query's own evaluation time (``RunningQuery.last_evaluation_ms``) and the
ingest throughput of the step's items.

On one small machine the three shard processes, Ray and the coordinator
share the cores: this measures the cost of the distributed data path, not a
scale-out speed-up.

    python -m benchmarks.cluster_scaling --triples 1000000 --out benchmarks/results/cluster_scaling_1m.json
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import machine_description, markdown_table
from benchmarks.lsbench_data import (
    DEFAULT_SEED,
    FOAF,
    HISTORY_GRAPH,
    PERSON,
    SIOC,
    SOCIAL_GRAPH,
    START_MS,
    STREAMS,
    USER,
    VOCAB,
    StreamGenerator,
    generate,
    scaled_rates,
)
from benchmarks.lsbench_queries import QUERIES, RANGE_MS, STEP_MS
from benchmarks.lsbench_timing import WARMUP_WINDOWS

#: how far apart in stream time the continuous queries run (each alone)
QUERY_SPACING_MS = 3_600_000

PREFIXES = (f"PREFIX sib: <{VOCAB}>\nPREFIX sibu: <{USER}>\nPREFIX sibp: <{PERSON}>\n"
            f"PREFIX sioc: <{SIOC}>\nPREFIX foaf: <{FOAF}>\n")
BOTH = f"FROM <{SOCIAL_GRAPH}>\nFROM <{HISTORY_GRAPH}>\n"
#: LSBench-style one-shot queries over the stored graphs; constants are the
#: users and persons lsbench_data pins (so they have answers at any size)
ONE_SHOT = {
    "point lookup (sibu:u6496 ?p ?o)":
        f"{PREFIXES}SELECT ?g ?p ?o WHERE {{ GRAPH ?g {{ sibu:u6496 ?p ?o }} }}",
    "2-hop knows from sibu:u6496":
        f"{PREFIXES}SELECT DISTINCT ?f2\nFROM <{SOCIAL_GRAPH}>\n"
        "WHERE { sibu:u6496 foaf:knows ?f . ?f foaf:knows ?f2 }",
    "selective join (p864's posts' tags)":
        f"{PREFIXES}SELECT ?post ?tag WHERE {{ GRAPH <{SOCIAL_GRAPH}> {{ ?user sioc:account_of sibp:p864 }}\n"
        f"  GRAPH <{HISTORY_GRAPH}> {{ ?user sioc:creator_of ?post . ?post sib:hashtag ?tag }} }}",
    "COUNT per predicate (scan)":
        f"{PREFIXES}SELECT ?p (COUNT(*) AS ?n) WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }} GROUP BY ?p",
}
#: the point lookup with both graphs merged into the default graph by FROM
#: (reported apart: the merge, not the lookup, dominates it)
FROM_BOTH = f"{PREFIXES}SELECT ?p ?o\n{BOTH}WHERE {{ sibu:u6496 ?p ?o }}"
SETUPS = ("1 node", "3 shards, ray", "3 shards, tcp", "3 shards, auto")


# ------------------------------------------------------------------ data
def write_nquads(data, path: Path) -> int:
    """The stored graphs as N-Quads (the pools' N-Triples spellings)."""
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for blocks, graph in ((data.social, SOCIAL_GRAPH), (data.history, HISTORY_GRAPH)):
            g = f" <{graph}> .\n"
            for b in blocks:
                subjects = np.asarray(b.subjects.spellings, dtype=object)[b.s]
                objects = np.asarray(b.objects.spellings, dtype=object)[b.o]
                middle = f" <{b.predicate.value}> "
                for start in range(0, len(subjects), 200_000):
                    out.write("".join(s + middle + o + g for s, o in
                                      zip(subjects[start:start + 200_000], objects[start:start + 200_000])))
                written += len(subjects)
    return written


# ---------------------------------------------------------------- one-shot
def _percentiles(samples: list[float]) -> dict:
    return {"median_ms": statistics.median(samples), "p99_ms": float(np.percentile(samples, 99)),
            "runs": len(samples)}


def one_shot(store, repeat: int, budget_s: float) -> dict[str, dict]:
    out = {}
    for name, text in ONE_SHOT.items():
        def run(text: str = text) -> int:
            return len(list(store.query(text).rows()))

        started = time.perf_counter()
        rows = run()  # warm-up (parse cache, first-use costs)
        first = time.perf_counter() - started
        samples = []
        began = time.perf_counter()
        while len(samples) < repeat and (len(samples) < 3 or time.perf_counter() - began < budget_s):
            t = time.perf_counter()
            run()
            samples.append((time.perf_counter() - t) * 1000)
        wall = time.perf_counter() - began
        out[name] = {**_percentiles(samples), "rows": rows, "warmup_ms": first * 1000,
                     "queries_per_s": len(samples) / wall}
        print(f"    {name:<38} median {out[name]['median_ms']:8.3g} ms  p99 {out[name]['p99_ms']:8.3g} ms"
              f"  {out[name]['queries_per_s']:8.3g} q/s  ({len(samples)} runs, {rows} rows)", flush=True)
    rows = len(list(store.query(FROM_BOTH).rows()))
    samples = []
    for _ in range(3):
        t = time.perf_counter()
        list(store.query(FROM_BOTH).rows())
        samples.append((time.perf_counter() - t) * 1000)
    out["_from_both_point_lookup"] = {**_percentiles(samples), "rows": rows}
    print(f"    (point lookup with FROM social FROM history: median {statistics.median(samples):.3g} ms, "
          f"{rows} rows)", flush=True)
    return out


# -------------------------------------------------------------- continuous
def continuous(store, data, scale: float, windows: int, budget_s: float, seed: int) -> dict[str, dict]:
    """L1-L6 each alone, as ``lsbench_latency.engine_latencies`` runs them,
    plus the evaluation time and ingest rate of every timed window."""
    from engine.stream import StreamDefinition, StreamEngine

    engine = StreamEngine(store)
    for spec in STREAMS.values():
        engine.declare_stream(StreamDefinition(spec.name, spec.iri, timing=spec.timing))
    out = {}
    for number, query in enumerate(QUERIES):
        # each query reads the same stream in every set-up, however many windows the
        # budget let the queries before it time: its own generator, an hour apart
        start_ms = START_MS + number * QUERY_SPACING_MS
        for name in STREAMS:
            engine.heartbeat(name, start_ms)
        generator = StreamGenerator(data, scaled_rates(scale), seed, start_ms)
        running = engine.register(query.registration())
        subscription = running.subscribe()
        latency, evaluation, ingest_rate, rows = [], [], [], []
        items_total, triples_total, ingest_s, step_s, stream_s = 0, 0, 0.0, 0.0, 0.0
        gc.collect()
        began = time.perf_counter()
        i = 0
        while i < WARMUP_WINDOWS + windows:
            close = generator.now + STEP_MS
            items = generator.advance(close)
            started = time.perf_counter()
            n_items = n_triples = 0
            for name in query.streams:
                if items[name]:
                    engine.ingest(name, items[name])
                    n_items += len(items[name])
                    n_triples += sum(len(t) for _, t in items[name])
            ingested = time.perf_counter()
            for name in query.streams[:-1]:
                engine.heartbeat(name, close)
            sent = time.perf_counter()
            engine.heartbeat(query.streams[-1], close)
            received = time.perf_counter()
            events = [e for e in subscription.drain() if e.end_ms == close]
            if not events:
                raise RuntimeError(f"{query.name}: no event for the window closing at {close}")
            if i >= WARMUP_WINDOWS:
                latency.append((received - sent) * 1000)
                evaluation.append(running.last_evaluation_ms or 0.0)
                rows.append(len(events[-1].rows))
                if n_items:
                    ingest_rate.append(n_items / (ingested - started))
                items_total += n_items
                triples_total += n_triples
                ingest_s += ingested - started
                step_s += received - started
                stream_s += STEP_MS / 1000
            i += 1
            if i >= WARMUP_WINDOWS + 10 and time.perf_counter() - began > budget_s:
                break  # bounded: at least 10 timed windows
        evaluation_json = running.to_json()["evaluation"]
        engine.unregister(query.name)
        out[query.name] = {
            "streams": list(query.streams), "windows": len(latency),
            "latency": _percentiles(latency), "evaluation": _percentiles(evaluation),
            "rows_per_window_median": statistics.median(rows), "rows_total": sum(rows), "rows": rows,
            "ingest_items_per_s_median": statistics.median(ingest_rate) if ingest_rate else None,
            "ingest_items_per_s_p1": float(np.percentile(ingest_rate, 1)) if ingest_rate else None,
            "ingest_items_per_s_overall": items_total / ingest_s if ingest_s else None,
            "ingest_triples_per_s_overall": triples_total / ingest_s if ingest_s else None,
            "load": step_s / stream_s, "engine_evaluation": evaluation_json,
        }
        r = out[query.name]
        print(f"    {query.name} latency median {r['latency']['median_ms']:.3g} ms p99 "
              f"{r['latency']['p99_ms']:.3g} ms; evaluation median {r['evaluation']['median_ms']:.3g} ms "
              f"p99 {r['evaluation']['p99_ms']:.3g} ms; ingest {r['ingest_items_per_s_overall'] or 0:,.0f} "
              f"items/s; rows/window {r['rows_per_window_median']:g}; load {r['load']:.2f}; "
              f"{r['windows']} windows", flush=True)
    engine.close()
    return out


# ------------------------------------------------------------------ set-ups
def measure(store, data, args, steps=None) -> dict:
    before = dict(steps) if steps is not None else None
    result = {"one_shot": one_shot(store, args.repeat, args.budget)}
    if steps is not None:
        result["steps_one_shot"] = {k: steps[k] - before[k] for k in steps}
        before = dict(steps)
    result["continuous"] = continuous(store, data, args.scale, args.windows, args.window_budget, args.seed)
    if steps is not None:
        result["steps_continuous"] = {k: steps[k] - before[k] for k in steps}
    return result


def on_shards(store_dir: Path, work: Path, transport: str, data, args) -> dict:
    import ray

    from engine.cluster.coordinator import open_cluster_store
    from engine.cluster.ray_shards import RayShardCalls, start_shards

    group = f"bench{int(time.time())}{transport}"
    data_dir = work / f"cluster-{transport}"
    started = time.perf_counter()
    actors = start_shards(3, str(data_dir), str(store_dir), sync=False, in_place=transport != "ray",
                          group=group)
    calls = RayShardCalls(actors)
    try:
        store = open_cluster_store(calls, data_dir, store_dir, sync=False, transport=transport)
        opened = time.perf_counter() - started
        in_place = store.quad_store.in_place
        reads = ("none" if in_place is None else
                 f"{in_place.reader.name}, round trip {in_place.read_latency * 1e6:.0f} us "
                 f"vs fork-join {in_place.fork_latency * 1e6:.0f} us")
        print(f"  3 shards ({transport}) up in {opened:.1f}s; in-place reads: {reads}", flush=True)
        result = measure(store, data, args, in_place.steps if in_place is not None else None)
        result["open_s"] = opened
        if in_place is not None:
            result["in_place_round_trip_us"] = in_place.read_latency * 1e6
            result["fork_join_call_us"] = in_place.fork_latency * 1e6
        else:
            result["steps_one_shot"] = result["steps_continuous"] = "fork-join only"
        rss = ray.get([a.__ray_call__.remote(lambda self: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
                       for a in actors])
        result["shard_peak_rss_mb"] = [r / 1024 for r in rss]
        del store
        gc.collect()
        return result
    finally:
        calls.stop()


# ------------------------------------------------------------------- report
def ratio(a, b):
    return a / b if a and b else "-"


def _same_rows(runs: list[dict]) -> str:
    """Row counts of the windows every set-up timed (the same stream data,
    seeded): "ok" when they agree window by window."""
    if any("rows" not in r for r in runs):
        return "-"
    common = min(len(r["rows"]) for r in runs)
    return "ok" if all(r["rows"][:common] == runs[0]["rows"][:common] for r in runs) else "ROWS DIFFER"


def _short(setup: str) -> str:
    """A set-up's name in a column header: "1 node", "ray", "tcp", "auto"."""
    return setup.rsplit(", ", 1)[-1]


def tables(results: dict) -> str:
    setups = results["setups"]
    one = setups["1 node"]
    sharded = SETUPS[1:]
    names = [_short(s) for s in SETUPS]
    lines = []
    rows = []
    for q in ONE_SHOT:
        base = one["one_shot"][q]
        row = [q, base["rows"]]
        for s in SETUPS:
            r = setups[s]["one_shot"][q]
            row += [r["median_ms"], r["p99_ms"]]
        row += [setups[s]["one_shot"][q]["queries_per_s"] for s in SETUPS]
        row += [ratio(setups[s]["one_shot"][q]["median_ms"], base["median_ms"]) for s in sharded]
        row.append("ok" if all(setups[s]["one_shot"][q]["rows"] == base["rows"] for s in SETUPS)
                   else "ROWS DIFFER")
        rows.append(row)
    lines.append(markdown_table(
        ["query", "rows", *(f"{n} {m}" for n in names for m in ("median ms", "p99 ms")),
         *(f"{n} q/s" for n in names), *(f"{_short(s)} / 1 node" for s in sharded), "check"], rows))
    rows = []
    for q in QUERIES:
        base = one["continuous"][q.name]
        row = [q.name, base["rows_per_window_median"]]
        for s in SETUPS:
            r = setups[s]["continuous"][q.name]
            row += [r["latency"]["median_ms"], r["latency"]["p99_ms"], r["evaluation"]["median_ms"]]
        row += [ratio(setups[s]["continuous"][q.name]["latency"]["median_ms"], base["latency"]["median_ms"])
                for s in sharded]
        row.append(_same_rows([setups[s]["continuous"][q.name] for s in SETUPS]))
        rows.append(row)
    lines.append(markdown_table(
        ["query", "rows / window", *(f"{n} {m}" for n in names for m in ("median ms", "p99 ms", "eval ms")),
         *(f"{_short(s)} / 1 node" for s in sharded), "check"], rows))
    rows = []
    for q in QUERIES:
        row = [q.name, " + ".join(q.streams)]
        for s in SETUPS:
            r = setups[s]["continuous"][q.name]
            row += [r["ingest_items_per_s_overall"], r["load"]]
        rows.append(row)
    ingest_headers = [f"{n} {m}" for n in names for m in ("items/s", "load")]
    lines.append(markdown_table(["query", "streams", *ingest_headers], rows))
    mixes = [s for s in sharded if isinstance(setups[s].get("steps_one_shot"), dict)]
    lines.append(markdown_table(["set-up", "workload", "in-place steps", "fork-join steps"], [
        [_short(s), workload, setups[s][key]["in_place"], setups[s][key]["fork_join"]]
        for s in mixes for workload, key in (("one-shot queries", "steps_one_shot"),
                                             ("continuous L1-L6", "steps_continuous"))]))
    return "\n\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--repeat", type=int, default=200,
                        help="timed runs per one-shot query (fewer if slow)")
    parser.add_argument("--budget", type=float, default=15.0, help="seconds of timed runs per one-shot query")
    parser.add_argument("--windows", type=int, default=50, help="timed windows per continuous query")
    parser.add_argument("--window-budget", type=float, default=30.0,
                        help="wall seconds per continuous query before cutting windows (at least 10 kept)")
    parser.add_argument("--scale", type=float, default=1.0, help="stream rates / the paper's")
    parser.add_argument("--work", type=Path, default=None, help="directory for the N-Quads and stores")
    parser.add_argument("--only", choices=SETUPS, action="append", help="run only these set-ups")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="cluster-scaling-", dir=args.work))
    results: dict = {"machine": machine_description(), "triples": args.triples, "seed": args.seed,
                     "scale": args.scale, "repeat": args.repeat, "budget_s": args.budget,
                     "windows": args.windows, "window_budget_s": args.window_budget,
                     "range_ms": RANGE_MS, "step_ms": STEP_MS, "warmup_windows": WARMUP_WINDOWS,
                     "queries": ONE_SHOT, "prepare_s": {}, "setups": {}}
    prep = results["prepare_s"]
    try:
        t = time.perf_counter()
        data = generate(args.triples, args.seed)
        prep["generate"] = time.perf_counter() - t
        nquads = work / "lsbench.nq"
        t = time.perf_counter()
        write_nquads(data, nquads)
        prep["write N-Quads"] = time.perf_counter() - t
        results["nquads_bytes"] = nquads.stat().st_size
        from engine.loader.local_load import build_store_directory

        dirs = {}
        for shards in (1, 3):
            t = time.perf_counter()
            manifest = build_store_directory([nquads], work / f"store-{shards}", shards=shards)
            prep[f"build {shards}-shard directory"] = time.perf_counter() - t
            dirs[shards] = work / f"store-{shards}"
            results[f"store_{shards}_triples"] = manifest.triples
            gc.collect()
        nquads.unlink()
        print("prepared: " + ", ".join(f"{k} {v:.1f}s" for k, v in prep.items()) +
              f"; {results['store_1_triples']:,} triples", flush=True)

        wanted = args.only or list(SETUPS)
        if "1 node" in wanted:
            from engine.api import Store

            print("  1 node", flush=True)
            t = time.perf_counter()
            store = Store.open(dirs[1])
            opened = time.perf_counter() - t
            results["setups"]["1 node"] = measure(store, data, args)
            results["setups"]["1 node"]["open_s"] = opened
            del store
            gc.collect()
        if any(s != "1 node" for s in wanted):
            import ray

            ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="rivulet",
                     configure_logging=False, log_to_driver=False)
            try:
                for transport in ("ray", "tcp", "auto"):
                    if f"3 shards, {transport}" in wanted:
                        results["setups"][f"3 shards, {transport}"] = on_shards(dirs[3], work, transport,
                                                                                data, args)
            finally:
                ray.shutdown()
        results["coordinator_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    if all(s in results["setups"] for s in SETUPS):
        print()
        print(tables(results))
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
