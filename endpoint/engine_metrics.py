"""The engine's numbers for ``/metrics``, read when Prometheus scrapes.

The store, the stream engine and the worker pool already keep what an
operator watches (sizes, per-stream counts and watermarks, per-query window
statistics, subscribers, cancellations); this collector turns their current
state into metric families at scrape time, so nothing is recorded twice and
no monitoring code runs on the engine's paths. It reads without taking the
engine's lock: a scrape may see one counter a batch ahead of another, never
a wrong value.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from endpoint.workers import Workers
from engine.api import Store
from engine.stream import StreamEngine
from engine.stream.window_stats import SecondsHistogram

#: the reasons a query is cancelled, always exposed (at 0 too) so that rates work from the start
CANCELLATION_REASONS = ("time_limit", "client_gone", "shutdown")
#: why a window of a continuous query fails, always exposed for the queries registered
WINDOW_FAILURES = ("time_limit", "row_limit", "error")


class EngineCollector(Collector):
    """Store, streams, continuous queries, cancellations and the data directory."""

    def __init__(self, store: Store, streams: StreamEngine, workers: Workers) -> None:
        self.store = store
        self.streams = streams
        self.workers = workers

    def collect(self) -> Iterator[Metric]:
        yield from self._store()
        yield from self._streams()
        yield from self._queries()
        yield from self._cancellations()
        yield from self._data_directory()
        yield from self._cluster()

    def _store(self) -> Iterator[Metric]:
        snapshot = self.store.quad_store.snapshot()
        yield GaugeMetricFamily("rivulet_store_triples", "Triples in the store, all graphs (stream-absorbed "
                                "ones included)", value=sum(len(g) for g in snapshot.graphs.values()))
        yield GaugeMetricFamily("rivulet_store_terms", "Terms in the store's dictionary (transient stream "
                                "terms included)", value=len(self.store.terms))
        yield GaugeMetricFamily("rivulet_store_named_graphs", "Named graphs in the store",
                                value=len(snapshot.named_graph_ids()))

    def _streams(self) -> Iterator[Metric]:
        items = CounterMetricFamily("rivulet_stream_items", "Stream items ingested (heartbeats apart)",
                                    labels=["stream"])
        triples = CounterMetricFamily("rivulet_stream_triples", "Triples ingested by a stream",
                                      labels=["stream"])
        late = CounterMetricFamily("rivulet_stream_late_items", "Items refused because their batch held "
                                   "an item older than the stream's watermark", labels=["stream"])
        transient = GaugeMetricFamily("rivulet_stream_transient_triples", "Triples in a stream's transient "
                                      "log (kept while a window may read them)", labels=["stream"])
        lag = GaugeMetricFamily("rivulet_stream_watermark_lag_seconds", "Wall-clock time minus the stream's "
                                "watermark (meaningful when producers stamp items with the wall clock)",
                                labels=["stream"])
        now = time.time()
        for name, state in list(self.streams.streams.items()):
            items.add_metric([name], state.items)
            triples.add_metric([name], state.triples)
            late.add_metric([name], state.late_items)
            transient.add_metric([name], len(state.log))
            watermark = state.watermark
            if watermark is not None:
                lag.add_metric([name], now - watermark / 1000)
        yield from (items, triples, late, transient, lag)

    def _queries(self) -> Iterator[Metric]:
        windows = CounterMetricFamily("rivulet_continuous_query_windows", "Windows a continuous query "
                                      "reported (since this process started)", labels=["query"])
        evaluation = HistogramMetricFamily("rivulet_continuous_query_evaluation_seconds", "Time to "
                                           "evaluate one window of a continuous query", labels=["query"])
        delay = HistogramMetricFamily("rivulet_continuous_query_window_delay_seconds", "From the arrival "
                                      "of the item or heartbeat that closed a window to its result being "
                                      "ready", labels=["query"])
        subscribers = GaugeMetricFamily("rivulet_continuous_query_subscribers", "SSE subscribers connected "
                                        "to a continuous query", labels=["query"])
        drops = CounterMetricFamily("rivulet_continuous_query_subscriber_drops", "SSE subscribers dropped "
                                    "for not reading", labels=["query"])
        failed = CounterMetricFamily("rivulet_continuous_query_failed_windows", "Windows reported as failed "
                                     "(time_limit: --timeout; row_limit: --max-rows; error: anything else "
                                     "the evaluation raised)", labels=["query", "reason"])
        for name, running in list(self.streams.queries.items()):
            stats = running.stats
            windows.add_metric([name], stats.windows)
            _add_histogram(evaluation, name, stats.evaluation)
            _add_histogram(delay, name, stats.delay)
            subscribers.add_metric([name], len(running.broadcast))
            drops.add_metric([name], running.broadcast.dropped)
            for reason in WINDOW_FAILURES:
                failed.add_metric([name, reason], running.failures[reason])
        yield from (windows, evaluation, delay, subscribers, drops, failed)

    def _cancellations(self) -> Iterator[Metric]:
        family = CounterMetricFamily("rivulet_query_cancellations", "Queries and updates cancelled while "
                                     "running, by reason (time_limit: --timeout; client_gone: the client "
                                     "disconnected; shutdown: still running at the end of the grace period)",
                                     labels=["reason"])
        for reason in CANCELLATION_REASONS:
            family.add_metric([reason], self.workers.cancellations[reason])
        yield family

    def _data_directory(self) -> Iterator[Metric]:
        """With --data-dir the engine journals to the data directory."""
        directory = self.streams.journal
        if directory is None:
            return
        # imported here: only a server with a data directory has loaded the durability layer
        from engine.durability import DataDirectory

        if not isinstance(directory, DataDirectory):
            return
        yield GaugeMetricFamily("rivulet_data_log_bytes", "Bytes of write-ahead log on disk (replayed at "
                                "start; folded into the next checkpoint)", value=directory.log_bytes())
        if directory.checkpointed_at is not None:
            yield GaugeMetricFamily("rivulet_data_checkpoint_age_seconds", "Seconds since the newest "
                                    "checkpoint was recorded", value=time.time() - directory.checkpointed_at)


    def _cluster(self) -> Iterator[Metric]:
        """A store on a cluster's shards reports its shards, commits and calls."""
        figures = getattr(self.store.quad_store, "figures", None)
        if figures is None:
            return
        report = figures()
        yield GaugeMetricFamily("rivulet_cluster_shards", "Shards the store is partitioned into",
                                value=report["shards"])
        yield GaugeMetricFamily("rivulet_cluster_version", "The commit every shard has applied (the "
                                "snapshot queries read)", value=report["version"])
        yield CounterMetricFamily("rivulet_cluster_commits", "Commits published since start (a write, or "
                                  "a stream batch)", value=report["commits"])
        yield CounterMetricFamily("rivulet_cluster_commit_seconds", "Seconds commits took: logged at the "
                                  "coordinator, applied and logged by every shard",
                                  value=report["commit_seconds"])
        yield GaugeMetricFamily("rivulet_cluster_log_compacted_version", "The last commit the "
                                "coordinator's log no longer keeps (every shard checkpointed past it)",
                                value=report["log_compacted_version"])
        yield GaugeMetricFamily("rivulet_cluster_writes_stuck", "1 when writes are refused until the "
                                "coordinator restarts (a logged commit did not reach every shard)",
                                value=int(report["writes_stuck"]))
        calls = CounterMetricFamily("rivulet_cluster_shard_calls", "Calls to shards by kind (read: query "
                                    "steps; write: commits, reports) and path (tcp: the step transport; "
                                    "ray: actor calls)", labels=["kind", "path"])
        for kind in ("read", "write"):
            for path in ("tcp", "ray"):
                calls.add_metric([kind, path], report["calls"].get((kind, path), 0))
        yield calls
        yield CounterMetricFamily("rivulet_cluster_in_place_steps", "Query steps that read the shards' "
                                  "arrays in place instead of calling them", value=report["in_place_steps"])
        info = GaugeMetricFamily("rivulet_cluster_transport", "The transports in use (value 1)",
                                 labels=["in_place", "fork_join"])
        info.add_metric([report["in_place_transport"] or "none", report["fork_join_transport"]], 1)
        yield info


def _add_histogram(family: HistogramMetricFamily, name: str, histogram: SecondsHistogram) -> None:
    counts = histogram.cumulative()
    bounds = [floatToGoString(b) for b in histogram.bounds] + ["+Inf"]
    family.add_metric([name], list(zip(bounds, counts, strict=True)), histogram.total_seconds)
