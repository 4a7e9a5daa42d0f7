"""Memory under a steady stream: does the hybrid store stay flat at 50K triples/s?

Issue #4 promises that timing triples expire with the windows and that
absorbing repeated timeless triples adds nothing, so a steady stream must not
grow the process. This script streams synthetic sensor data through
:class:`engine.stream.stream_engine.StreamEngine` directly (the engine API, not
HTTP: the HTTP path is measured elsewhere) with three continuous queries over
1 s windows, and samples the process's RSS and the store's bookkeeping every
few seconds of stream time.

Two variants of the data:

* ``flat``: readings are keyed by sensor and draw their values from a fixed
  grid, and sensor metadata (timeless) repeats, so once the vocabulary is
  known nothing new enters the term dictionary: memory *can* be flat.
* ``unique``: every reading is an observation with a fresh IRI and a fresh
  literal value, as real feeds are. Those terms get permanent dictionary IDs
  (the dictionary never frees), so this variant measures that growth.

Application time is simulated: item timestamps advance by one millisecond per
``rate/1000`` triples. With ``--pace auto`` a short calibration run decides
whether the engine keeps up in real time; if it does, ingestion is paced to
the wall clock, otherwise it runs as fast as it can (same semantics, since
windows close on application time) and the sustained rate is reported.

    python -m benchmarks.stream_memory --variant flat --minutes 10
    python -m benchmarks.stream_memory --variant unique --minutes 2
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks import machine_description, markdown_table, write_section
from endpoint.sse import event_payload
from engine.api import Store
from engine.rdf import IRI, RDF_TYPE, XSD_DECIMAL, XSD_DOUBLE, Literal
from engine.store import LayeredGraph
from engine.stream import StreamDefinition, StreamEngine

EX = "http://rivulet.example.org/sensors/"
STREAM = IRI(EX + "stream")
METADATA_GRAPH = IRI(EX + "metadata")
RESULTS_DIR = Path(__file__).resolve().parent / "results"
SECTION = "Memory under a steady stream"

N_SENSORS, N_ROOMS, N_MODELS, N_VALUES = 1000, 50, 10, 1000
#: share of each item's triples that is sensor metadata (timeless)
METADATA_SHARE = 0.05
MIN_ITEM, MAX_ITEM = 50, 500
#: the process is stopped (and the run reported as aborted) beyond this RSS
RSS_LIMIT_MB = 8192
#: the first timestamp: any epoch-aligned millisecond will do
START_MS = 1_700_000_000_000

TEMPERATURE, HUMIDITY = IRI(EX + "temperature"), IRI(EX + "humidity")
MADE_BY, OBSERVED = IRI(EX + "madeBySensor"), IRI(EX + "observedProperty")
RESULT = IRI(EX + "hasSimpleResult")
LOCATED_IN, MODEL = IRI(EX + "locatedIn"), IRI(EX + "model")
TYPE, SENSOR_CLASS = IRI(RDF_TYPE), IRI(EX + "Sensor")

TIMING = {
    "flat": frozenset({TEMPERATURE.value, HUMIDITY.value}),
    "unique": frozenset({MADE_BY.value, OBSERVED.value, RESULT.value}),
}
#: how one reading of property ``{prop}`` with value ``{var}`` is matched, per variant
READING = {
    "flat": "?sensor ex:{prop} ?{var} .",
    "unique": "?obs ex:madeBySensor ?sensor ; ex:observedProperty ex:{prop} ; ex:hasSimpleResult ?{var} .",
}
QUERIES = {
    "room_avg_1s": (
        "SELECT ?room (AVG(?t) AS ?avg) (COUNT(?t) AS ?n) FROM STREAM <{stream}> [RANGE 1s STEP 1s] "
        "FROM <{graph}> WHERE {{ {temperature} ?sensor ex:locatedIn ?room }} GROUP BY ?room"
    ),
    "room_max_5s": (
        "SELECT ?room (MAX(?h) AS ?max) FROM STREAM <{stream}> [RANGE 5s STEP 1s] "
        "FROM <{graph}> WHERE {{ {humidity} ?sensor ex:locatedIn ?room }} GROUP BY ?room"
    ),
    "count_1s": "SELECT (COUNT(*) AS ?n) FROM STREAM <{stream}> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}",
}


def registrations(variant: str) -> list[str]:
    """The continuous queries of a run: two aggregate-by-room queries that join
    the window with the absorbed metadata (1 s and 5 s ranges) and a count."""
    reading = READING[variant]
    texts = []
    for name, template in QUERIES.items():
        body = template.format(
            stream=STREAM.value, graph=METADATA_GRAPH.value,
            temperature=reading.format(prop="temperature", var="t"),
            humidity=reading.format(prop="humidity", var="h"),
        )
        texts.append(f"REGISTER QUERY {name} AS PREFIX ex: <{EX}> {body}")
    return texts


class Feed:
    """Seeded synthetic sensor items; the ``unique`` variant mints a fresh
    observation IRI and a fresh literal for every reading."""

    def __init__(self, variant: str, seed: int = 20240611) -> None:
        self.variant = variant
        self.rng = np.random.default_rng(seed)
        self.sensors = [IRI(f"{EX}sensor/{i}") for i in range(N_SENSORS)]
        rooms = [IRI(f"{EX}room/{i}") for i in range(N_ROOMS)]
        models = [IRI(f"{EX}model/{i}") for i in range(N_MODELS)]
        self.values = [Literal(f"{i / 10:.1f}", XSD_DECIMAL) for i in range(N_VALUES)]
        self.metadata = [
            triple for i, sensor in enumerate(self.sensors)
            for triple in ((sensor, LOCATED_IN, rooms[i % N_ROOMS]), (sensor, MODEL, models[i % N_MODELS]),
                           (sensor, TYPE, SENSOR_CLASS))
        ]
        self.observations = 0

    def item(self) -> list[tuple]:
        """One item of 50-500 triples: readings plus ~5% repeated metadata."""
        rng = self.rng
        n = int(rng.integers(MIN_ITEM, MAX_ITEM + 1))
        n_meta = int(rng.binomial(n, METADATA_SHARE))
        meta = self.metadata
        triples = [meta[i] for i in rng.integers(0, len(meta), n_meta).tolist()]
        if self.variant == "flat":
            self._flat_readings(triples, n - n_meta)
        else:
            self._unique_readings(triples, n - n_meta)
        return triples

    def _flat_readings(self, out: list[tuple], n: int) -> None:
        sensors, values = self.sensors, self.values
        props = (TEMPERATURE, HUMIDITY)
        for s, p, v in zip(self.rng.integers(0, N_SENSORS, n).tolist(), self.rng.integers(0, 2, n).tolist(),
                           self.rng.integers(0, N_VALUES, n).tolist()):
            out.append((sensors[s], props[p], values[v]))

    def _unique_readings(self, out: list[tuple], n: int) -> None:
        """Observations of three triples each (the item's size rounds down to them)."""
        n_obs = n // 3
        sensors = self.sensors
        props = (TEMPERATURE, HUMIDITY)
        rng = self.rng
        for s, p, v in zip(rng.integers(0, N_SENSORS, n_obs).tolist(), rng.integers(0, 2, n_obs).tolist(),
                           (rng.random(n_obs) * 100).tolist()):
            obs = IRI(f"{EX}obs/{self.observations}")
            self.observations += 1
            out.append((obs, MADE_BY, sensors[s]))
            out.append((obs, OBSERVED, props[p]))
            out.append((obs, RESULT, Literal(f"{v:.6f}", XSD_DOUBLE)))


@dataclass
class Sample:
    """One row of the series; rates are over the time since the previous sample."""

    stream_s: float
    wall_s: float
    rss_mb: float
    transient_triples: int
    stored_deltas: int
    stored_triples: int
    terms: int
    windows_fired: int
    events_consumed: int
    triples_ingested: int
    rate_wall: float
    rate_engine: float
    lag_s: float
    #: the machine's 1-minute load average: a shared 2-core machine slows the engine, not its memory
    load1: float


COLUMNS = [f.name for f in dataclasses.fields(Sample)]
PRINT_HEADER = (f"{'stream s':>8} {'wall s':>7} {'RSS MB':>7} {'transient':>9} {'deltas':>6} {'stored':>7} "
                f"{'terms':>9} {'windows':>7} {'wall tr/s':>9} {'engine tr/s':>11} {'lag s':>6} {'load':>5}")


def print_sample(s: Sample) -> None:
    print(f"{s.stream_s:8.0f} {s.wall_s:7.1f} {s.rss_mb:7.1f} {s.transient_triples:9,d} {s.stored_deltas:6d} "
          f"{s.stored_triples:7,d} {s.terms:9,d} {s.windows_fired:7d} {s.rate_wall:9,.0f} "
          f"{s.rate_engine:11,.0f} {s.lag_s:6.2f} {s.load1:5.2f}", flush=True)


def rss_mb() -> float:
    """Resident set size of this process (VmRSS); tracemalloc would slow ingest down tenfold."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def stored_shape(store: Store) -> tuple[int, int]:
    """(deltas, triples) over all stored graphs: what absorption has kept."""
    graphs = store.quad_store.snapshot().graphs.values()
    deltas = sum(len(g.deltas) for g in graphs if isinstance(g, LayeredGraph))
    return deltas, sum(len(g) for g in graphs)


@dataclass
class Run:
    """A configured stream run: the engine, its queries and the event counters."""

    variant: str
    rate: int
    retain_events: int
    engine: StreamEngine = dataclasses.field(init=False)
    events: int = 0

    def __post_init__(self) -> None:
        self.store = Store()
        self.engine = StreamEngine(self.store, retain_events=self.retain_events)
        self.engine.declare_stream(StreamDefinition(
            "sensors", STREAM, timing=TIMING[self.variant], graph=METADATA_GRAPH))
        self.subscriptions = [self.engine.register(text).subscribe() for text in registrations(self.variant)]

    def _consume(self) -> None:
        """Drain the subscriptions as the SSE writer does: write each event's
        payload once."""
        for subscription in self.subscriptions:
            for event in subscription.drain():
                event_payload(event)
                self.events += 1

    def windows_fired(self) -> int:
        return sum(q.sequence for q in self.engine.queries.values())

    def stream(self, seconds: float, realtime: bool, sample_every_s: float,
               on_sample: Callable[[Sample], None]) -> bool:
        """Stream ``seconds`` of application time; ``False`` if the RSS limit stopped it."""
        feed = Feed(self.variant)
        engine, per_ms = self.engine, self.rate / 1000
        total_triples = int(seconds * self.rate)
        ingested = 0
        window_engine = 0.0
        started = last_wall = time.perf_counter()
        last_triples, next_sample = 0, sample_every_s
        while ingested < total_triples:
            stream_s = ingested / self.rate
            if realtime and (ahead := stream_s - (time.perf_counter() - started)) > 0:
                time.sleep(ahead)
            triples = feed.item()
            t0 = time.perf_counter()
            engine.ingest("sensors", [(START_MS + int(ingested / per_ms), triples)])
            self._consume()
            window_engine += time.perf_counter() - t0
            ingested += len(triples)
            if ingested / self.rate >= next_sample:
                now = time.perf_counter()
                sample = self._sample(ingested, now - started, (ingested - last_triples) / (now - last_wall),
                                      (ingested - last_triples) / window_engine)
                on_sample(sample)
                last_wall, last_triples, window_engine = now, ingested, 0.0
                next_sample += sample_every_s
                if sample.rss_mb > RSS_LIMIT_MB:
                    return False
        return True

    def _sample(self, ingested: int, wall_s: float, rate_wall: float, rate_engine: float) -> Sample:
        stream_s = ingested / self.rate
        deltas, stored = stored_shape(self.store)
        return Sample(
            stream_s=round(stream_s, 3), wall_s=round(wall_s, 3), rss_mb=round(rss_mb(), 2),
            transient_triples=sum(len(s.log) for s in self.engine.streams.values()),
            stored_deltas=deltas, stored_triples=stored, terms=len(self.store.terms),
            windows_fired=self.windows_fired(), events_consumed=self.events, triples_ingested=ingested,
            rate_wall=round(rate_wall), rate_engine=round(rate_engine), lag_s=round(wall_s - stream_s, 3),
            load1=os.getloadavg()[0],
        )


def calibrate(variant: str, rate: int, seconds: float) -> float:
    """Triples per wall second when ingesting as fast as possible (queries firing)."""
    run = Run(variant, rate, retain_events=60)
    started = time.perf_counter()
    run.stream(seconds, realtime=False, sample_every_s=seconds * 2, on_sample=lambda s: None)
    return seconds * rate / (time.perf_counter() - started)


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and its standard error."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if len(x) < 3:
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(x, y, 1)
    residuals = y - (slope * x + intercept)
    se = float(np.sqrt(np.sum(residuals**2) / (len(x) - 2) / np.sum((x - x.mean()) ** 2)))
    return float(slope), se


#: below this many MB/min a slope is allocator noise whatever its standard error
FLAT_FLOOR_MB_PER_MIN = 0.5


def summarise(variant: str, samples: list[Sample], meta: dict) -> dict:
    """The figures the report quotes: RSS at fixed times, second-half slopes, rates."""
    minutes = [s.stream_s / 60 for s in samples]
    half = [i for i, m in enumerate(minutes) if m >= minutes[-1] / 2]
    slope, se = fit([minutes[i] for i in half], [samples[i].rss_mb for i in half])
    term_slope, _ = fit([minutes[i] for i in half], [samples[i].terms for i in half])
    at = {}
    for mark in (1, 2, 5, 10):
        hit = next((s for s in samples if s.stream_s >= mark * 60 - 1e-6), None)
        at[f"rss_mb_at_{mark}min"] = hit.rss_mb if hit else None
    flat = abs(slope) <= max(2 * se, FLAT_FLOOR_MB_PER_MIN)
    return {
        "variant": variant, **meta,
        "stream_minutes": round(minutes[-1], 2), "wall_s": samples[-1].wall_s,
        "triples": samples[-1].triples_ingested, "windows_fired": samples[-1].windows_fired,
        **at, "rss_mb_final": samples[-1].rss_mb, "rss_mb_max": max(s.rss_mb for s in samples),
        "slope_mb_per_min": round(slope, 3), "slope_se": round(se, 3),
        "terms_per_min": round(term_slope), "terms_final": samples[-1].terms,
        "max_transient_triples": max(s.transient_triples for s in samples),
        "max_stored_deltas": max(s.stored_deltas for s in samples),
        "stored_triples_final": samples[-1].stored_triples,
        "median_rate_wall": statistics.median(s.rate_wall for s in samples),
        "median_rate_engine": statistics.median(s.rate_engine for s in samples),
        "rss_mb_min_half": min(samples[i].rss_mb for i in half),
        "rss_mb_max_half": max(samples[i].rss_mb for i in half),
        "max_lag_s": max(s.lag_s for s in samples),
        "median_load1": statistics.median(s.load1 for s in samples),
        "verdict": "aborted (RSS limit)" if meta.get("aborted") else ("flat" if flat else "growing"),
    }


def write_results(variant: str, samples: list[Sample], meta: dict) -> Path:
    """The series as CSV and the run's settings as JSON: the report is rebuilt
    from both, so the docs never disagree with the saved series."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"stream_memory_{variant}.csv"
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        writer.writerows(dataclasses.astuple(s) for s in samples)
    (RESULTS_DIR / f"stream_memory_{variant}.json").write_text(json.dumps(meta, indent=2) + "\n")
    return path


def load_summaries() -> list[dict]:
    """Every saved run, summarised from its series (flat first)."""
    summaries = []
    for meta_path in sorted(RESULTS_DIR.glob("stream_memory_*.json")):
        variant = meta_path.stem.removeprefix("stream_memory_")
        with meta_path.with_suffix(".csv").open(encoding="utf-8") as series:
            samples = [Sample(**{k: float(v) if "." in v else int(v) for k, v in row.items()})
                       for row in csv.DictReader(series)]
        summaries.append(summarise(variant, samples, json.loads(meta_path.read_text())))
    return summaries


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def report(summaries: list[dict]) -> str:
    """The docs section: what was run, one table row per data variant, and the details."""
    rows = [[
        s["variant"], s["stream_minutes"], s["pace"],
        *(_mb(s[f"rss_mb_at_{m}min"]) for m in (1, 2, 5, 10)),
        f"{_mb(s['rss_mb_min_half'])}-{_mb(s['rss_mb_max_half'])}",
        f"{s['slope_mb_per_min']:+.2f} ± {s['slope_se']:.2f}", f"{s['terms_per_min']:,}",
        f"{s['median_rate_wall']:,.0f}", f"{s['median_rate_engine']:,.0f}", s["verdict"],
    ] for s in summaries]
    table = markdown_table(
        ["data", "stream min", "pace", "RSS 1 min MB", "RSS 2 min", "RSS 5 min", "RSS 10 min",
         "RSS range 2nd half", "slope MB/min (2nd half)", "new terms/min", "ingest tr/s (wall)",
         "engine tr/s", "verdict"], rows)
    machines = "; ".join(sorted({s["machine"] for s in summaries}))
    details = "\n".join(
        f"- `{s['variant']}`: {s['triples']:,} triples and {s['windows_fired']:,} windows in "
        f"{s['wall_s']:,.0f} s wall (calibration {s['calibrated_rate']:,.0f} tr/s, median load average "
        f"{s['median_load1']:.1f}, at most {s['max_lag_s']:.1f} s behind the wall clock); at most "
        f"{s['max_transient_triples']:,} triples in the transient log and {s['max_stored_deltas']} stored "
        f"deltas; at the end {s['stored_triples_final']:,} stored triples and {s['terms_final']:,} terms; "
        f"{s['retain_events']} events retained per query."
        for s in summaries)
    rate = summaries[0]["rate"] if summaries else 50_000
    setup = "\n".join("- " + line for line in (
        f"One sensor stream at {rate:,} triples per second of application time, items of "
        f"{MIN_ITEM}-{MAX_ITEM} triples, one item per ingest call. Readings are timing triples; "
        f"~{METADATA_SHARE:.0%} of each item is sensor metadata drawn from a fixed set (timeless, "
        f"absorbed into `<{METADATA_GRAPH.value}>`).",
        f"`flat` readings use {N_SENSORS:,} sensor IRIs and a {N_VALUES:,}-value grid, so the vocabulary "
        "stops growing; `unique` readings are observations with a new IRI and a new `xsd:double` each.",
        "Three registered queries, each with a subscriber that serialises every event as the SSE writer "
        "does: `AVG` per room over `[RANGE 1s STEP 1s]` and `MAX` per room over `[RANGE 5s STEP 1s]`, "
        "both joined with the absorbed metadata (`FROM <graph>`), and `COUNT(*)` over `[RANGE 1s STEP 1s]`.",
        "Pace `realtime`: a 10 s calibration ran at least 1.2 times the target rate, so items are paced to "
        "the wall clock (a busy machine can still put the run behind; it then catches up as fast as it "
        "can). `max`: as fast as it goes. Windows close on application time either way, so the answers "
        "are the same.",
        "RSS is VmRSS, sampled every 5 s of stream time. The slope is a least-squares fit over the second "
        "half of the run; the verdict is \"flat\" when it is within two standard errors of 0 or under "
        f"{FLAT_FLOOR_MB_PER_MIN} MB/min. \"engine tr/s\" counts only the time spent inside `ingest` "
        "(which includes firing the windows).",
    ))
    return f"""Machine: {machines}.

`python -m benchmarks.stream_memory` drives `StreamEngine` through the engine API, not HTTP (the HTTP
path is measured elsewhere). Discussion and the ingestion profile: `docs/stream-memory.md`; series:
`benchmarks/results/stream_memory_*.csv`.

{setup}

{table}

{details}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=sorted(TIMING), default="flat")
    parser.add_argument("--minutes", type=float, default=10.0, help="application time to stream")
    parser.add_argument("--rate", type=int, default=50_000, help="triples per second of application time")
    parser.add_argument("--pace", choices=["auto", "realtime", "max"], default="auto")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds of stream time")
    parser.add_argument("--retain-events", type=int, default=60,
                        help="events kept per query for Last-Event-ID (the engine's default is 1000)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the docs section from the saved results without running")
    args = parser.parse_args(argv)
    if args.report_only:
        write_section(SECTION, report(load_summaries()))
        return 0
    if args.minutes * 60 < 6 * args.sample_every:
        parser.error("the second-half slope needs at least 6 samples: stream longer or sample more often")

    calibrated = calibrate(args.variant, args.rate, 10.0)
    realtime = args.pace == "realtime" or (args.pace == "auto" and calibrated >= 1.2 * args.rate)
    pace = "realtime" if realtime else "max"
    print(f"calibration: {calibrated:,.0f} triples/s as fast as possible; pacing: {pace}", flush=True)
    print(PRINT_HEADER, flush=True)
    samples: list[Sample] = []

    def on_sample(sample: Sample) -> None:
        samples.append(sample)
        print_sample(sample)

    run = Run(args.variant, args.rate, args.retain_events)
    completed = run.stream(args.minutes * 60, realtime, args.sample_every, on_sample)
    meta = {"rate": args.rate, "pace": pace, "calibrated_rate": round(calibrated), "aborted": not completed,
            "retain_events": args.retain_events, "machine": machine_description()}
    print(json.dumps(summarise(args.variant, samples, meta), indent=2))
    if not args.no_write:
        print(f"series: {write_results(args.variant, samples, meta)}")
        write_section(SECTION, report(load_summaries()))
    return 0 if completed else 1


if __name__ == "__main__":
    sys.exit(main())
