"""The coordinator's store: the dictionary here, the triples on the shards.

It has the interface of :class:`~engine.store.quad_store.QuadStore`, so the
engine's API, the update executor and the stream engine use it unchanged:
readers take a snapshot (graph ID -> :class:`ShardedGraph` at one version);
a writer's transaction collects its changes as ops and shows them to its own
reads (:class:`PendingGraph`); ``commit`` logs the ops at the coordinator,
sends every shard its part, and publishes the next version once every shard
has applied it. Writers are serialised, as on one node.

A shard that does not answer (its process died; Ray restarts it and it
recovers from its own log) gets the commit again until it answers or
:data:`COMMIT_PATIENCE` runs out: the commit is logged here first, so it is
applied to every shard in the end, at the next start at the latest.

Streams' batches travel in the commits too: a batch's rows, split by key
(``log`` ops), go with the transaction that absorbs its timeless part, and
the stream engine's logs for this store (:attr:`stream_log_factory`) keep
only summaries. The shards log those ops themselves; the coordinator's log
leaves them out: a coordinator that starts again empties the shards' stream
logs with its first batch (:attr:`stale_stream_logs`) and sends the rows its
windows need again, from its own streams' log (``engine.durability``).

A batch is logged in that streams log first (the decision, as on one node),
then committed here, the commit naming the batch's position there
(:meth:`ShardedQuadStore.batch_logged`). A coordinator that died between
the two finds, at its next start, a logged batch past the last one its log
names (:meth:`ShardedQuadStore.holds_batch`): its recovery commits it then,
so the windows and the stored graph both have it. For that to hold, no
batch is committed after one whose commit failed (:meth:`ShardedQuadStore.before_batch`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from engine.cluster.coordinator_log import Changes, CoordinatorLog
from engine.cluster.pending_graph import PendingGraph
from engine.cluster.shard_calls import ShardCalls, ShardUnavailable, broadcast
from engine.cluster.shard_ops import STREAM_KINDS, Op, expire_op, split_ops
from engine.cluster.shard_state import VersionGap
from engine.cluster.sharded_graph import ShardedGraph, StatisticsCache
from engine.cluster.sharded_stream_log import ShardedStreamLog
from engine.store.availability import StoreUnavailable
from engine.store.graph import Graph
from engine.store.memory_graph import MemoryGraph
from engine.store.quad_store import DEFAULT_GRAPH, QuadStore, Snapshot

log = logging.getLogger("rivulet.cluster")

#: seconds a commit keeps retrying a shard that does not answer
COMMIT_PATIENCE = 60.0


@dataclass
class ShardedTransaction:
    """A write transaction at the coordinator (the methods of
    :class:`~engine.store.quad_store.Transaction`)."""

    store: ShardedQuadStore
    base: Snapshot
    journaled: bool = True
    #: the streams-log position of the stream batch this transaction absorbs (None: none)
    batch: int | None = None
    graphs: dict[int, Graph] = field(init=False)
    ops: list[Op] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.graphs = dict(self.base.graphs)

    def snapshot(self) -> Snapshot:
        return Snapshot(dict(self.graphs), self.base.version)

    def exists(self, graph_id: int) -> bool:
        return graph_id in self.graphs

    def graph(self, graph_id: int) -> Graph:
        return self.graphs.get(graph_id) or MemoryGraph.empty()

    def _pending(self, graph_id: int) -> PendingGraph:
        graph = self.graph(graph_id)
        return graph if isinstance(graph, PendingGraph) else PendingGraph(graph)

    def add(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        if len(s) == 0 and graph_id in self.graphs:
            return
        s, p, o = (np.asarray(c, dtype=np.int64) for c in (s, p, o))
        self.ops.append(Op("add", graph_id, (s, p, o)))
        self.graphs[graph_id] = self._pending(graph_id).with_added(s, p, o)

    def load(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        """A bulk load: as :meth:`add`, but an empty graph on a shard builds
        compact arrays there."""
        if len(s) == 0 and graph_id in self.graphs:
            return
        kind = "load" if len(self.graph(graph_id)) == 0 else "add"
        s, p, o = (np.asarray(c, dtype=np.int64) for c in (s, p, o))
        self.ops.append(Op(kind, graph_id, (s, p, o)))
        self.graphs[graph_id] = self._pending(graph_id).with_added(s, p, o)

    def append(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray, ts: np.ndarray,
               stream: int) -> None:
        """Stream triples, absorbed by the shards as timestamped deltas."""
        s, p, o, ts = (np.asarray(c, dtype=np.int64) for c in (s, p, o, ts))
        self.ops.append(Op("append", graph_id, (s, p, o, ts), stream))
        self.graphs[graph_id] = self._pending(graph_id).with_added(s, p, o)

    def log_stream(self, stream: int, ts: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray,
                   seq: np.ndarray, index: bool) -> None:
        """A stream batch's rows (timestamps, arrival numbers) for the shards'
        transient logs; ``index``: a query reads the stream, index them now."""
        columns = tuple(np.asarray(c, dtype=np.int64) for c in (s, p, o, ts, seq))
        if self.store.stale_stream_logs and not any(op.kind == "reset_streams" for op in self.ops):
            self.ops.append(Op("reset_streams", 0))
        self.ops.append(Op("log", 0, columns, stream, index))

    def expire_stream(self, stream: int, before_ts: int | None, before_seq: int | None) -> None:
        """Let the shards free the rows of ``stream`` no pending window reads."""
        self.ops.append(expire_op(stream, before_ts, before_seq))

    def remove(self, graph_id: int, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        if graph_id not in self.graphs or len(s) == 0:
            return
        s, p, o = (np.asarray(c, dtype=np.int64) for c in (s, p, o))
        self.ops.append(Op("remove", graph_id, (s, p, o)))
        self.graphs[graph_id] = self._pending(graph_id).with_removed(s, p, o)

    def create(self, graph_id: int) -> None:
        if graph_id not in self.graphs:
            self.ops.append(Op("create", graph_id))
            self.graphs[graph_id] = MemoryGraph.empty()

    def clear(self, graph_id: int) -> None:
        if graph_id in self.graphs:
            self.ops.append(Op("clear", graph_id))
            self.graphs[graph_id] = MemoryGraph.empty()

    def drop(self, graph_id: int) -> None:
        self.ops.append(Op("drop", graph_id))
        if graph_id == DEFAULT_GRAPH:
            self.graphs[DEFAULT_GRAPH] = MemoryGraph.empty()
        else:
            self.graphs.pop(graph_id, None)

    def compact(self, safe: dict[int, int]) -> None:
        """Nothing to do here: the shards compact their own deltas."""

    def commit(self) -> Snapshot:
        return self.store._commit(self)


class ShardedQuadStore(QuadStore):
    """The dictionary and snapshots of a store whose triples live on shards."""

    def __init__(self, terms, calls: ShardCalls, log_: CoordinatorLog | None = None, in_place=None) -> None:
        super().__init__(terms)
        self.calls = calls
        self.coordinator_log = log_
        #: in-place reads of the loaded base, for graphs no commit has touched
        self.in_place = in_place
        compacted = log_.compacted if log_ is not None else Changes()
        #: per graph, the last commit that changed it (absent: the graph is as loaded)
        self._changed_at: dict[int, int] = dict(compacted.changed_at)
        #: graphs streams append to (windows read them as of their close); None: unknown, all
        fed = compacted.stream_fed
        self._stream_fed: set[int] | None = None if fed is None else set(fed)
        #: streams keep their rows on the shards, a summary here
        self.stream_log_factory = lambda stream: ShardedStreamLog(self, stream)
        #: the shards may hold stream rows of an earlier coordinator, which this
        #: one's logs do not describe: the first batch empties their logs
        self.stale_stream_logs = True
        #: planner statistics per (graph, last change, cutoffs, call): a graph's
        #: counts hold until it changes, and windows re-plan every step
        self._statistics = StatisticsCache()
        #: why writes are refused until a restart: a logged commit that some shard
        #: never took, or a logged stream batch that was never committed
        self._stuck: str | None = None
        #: the streams-log position of the last batch logged there, until its commit is logged here
        self._logged_batch: int | None = None
        #: commits published since start, and the seconds they took (logging, every shard applying)
        self.commits = 0
        self.commit_seconds = 0.0
        self._snapshot = self._snapshot_at(self._start_version())

    def close(self) -> None:
        """Let go of what this coordinator holds: its log (and the log's
        lock) and its connections to the shards (the shards go on)."""
        if self.coordinator_log is not None:
            self.coordinator_log.close()
        caller = getattr(self.calls, "caller", None)
        if caller is not None:
            caller.close()
        if self.in_place is not None:
            self.in_place.reader.close()

    # ------------------------------------------------------------ start-up
    def _start_version(self) -> int:
        """Bring every shard to the last logged commit (a shard may have
        missed the last ones if the coordinator stopped between shards), and
        return that version."""
        versions = {info["shard"]: info["version"] for info in self.calls.info()}
        target = max(versions.values())
        if self.coordinator_log is None:
            if min(versions.values()) < target:
                raise RuntimeError(f"shards are at versions {versions}: without the coordinator's log "
                                   "they cannot be brought to one version")
            if target:  # which graphs commits touched is unknown: none is read in place
                self._changed_at.update(dict.fromkeys(self._sizes(target), target))
                self._stream_fed = None
            return target
        target = max(target, self.coordinator_log.version)
        for version, ops in self.coordinator_log.commits_after(0):
            self._note_changes(version, ops)
            late = [k for k, v in versions.items() if v < version]
            if late:
                parts = split_ops(ops, self.calls.shards)
                self.calls.fork({k: ("apply", (version, parts[k], {})) for k in late})
        return target

    def _note_changes(self, version: int, ops: list[Op]) -> None:
        """Which graphs commit ``version`` changed, and which of them streams feed."""
        for op in ops:
            if op.kind not in STREAM_KINDS:
                self._changed_at[op.graph] = version
                if op.kind == "append" and self._stream_fed is not None:
                    self._stream_fed.add(op.graph)

    def _sizes(self, version: int) -> dict[int, int]:
        totals: dict[int, int] = {}
        for sizes in broadcast(self.calls, "sizes", version).values():
            for graph_id, n in sizes.items():
                totals[graph_id] = totals.get(graph_id, 0) + n
        return totals

    def _snapshot_at(self, version: int, sizes: dict[int, int] | None = None) -> Snapshot:
        sizes = sizes if sizes is not None else self._sizes(version)
        sizes.setdefault(DEFAULT_GRAPH, 0)
        graphs = {g: self._graph(g, version, n) for g, n in sizes.items()}
        return Snapshot(graphs, version)

    def _graph(self, graph_id: int, version: int, length: int) -> ShardedGraph:
        changed_at = self._changed_at.get(graph_id)
        in_place = self.in_place if changed_at is None else None
        stream_fed = self._stream_fed is None or graph_id in self._stream_fed
        return ShardedGraph(self.calls, graph_id, version, length, in_place=in_place,
                            statistics=self._statistics, changed_at=changed_at or 0, stream_fed=stream_fed)

    # -------------------------------------------------------------- writes
    def begin(self, journaled: bool = True, batch: int | None = None) -> ShardedTransaction:
        if self._stuck is not None:
            raise StoreUnavailable(self._stuck)
        self._write_lock.acquire()
        self._writer = ShardedTransaction(self, self._snapshot, journaled, batch)
        return self._writer

    def _commit(self, txn: ShardedTransaction) -> Snapshot:
        if self._writer is not txn:
            raise RuntimeError("commit of a transaction that is not the open one")
        try:
            if not txn.ops:
                return self._snapshot
            started = time.perf_counter()
            version = self._snapshot.version + 1
            if self.coordinator_log is not None:
                self.coordinator_log.log(version, [op for op in txn.ops if op.kind not in STREAM_KINDS],
                                         txn.batch)
            if txn.batch is not None and txn.batch == self._logged_batch:
                self._logged_batch = None
            self._note_changes(version, txn.ops)
            parts = split_ops(txn.ops, self.calls.shards)
            try:
                sizes = self._apply_everywhere(version, parts, dict(self._retained))
            except BaseException as exc:
                # logged, so every shard takes it at the coordinator's next start; until
                # then no later commit may be numbered after it
                self._stuck = (f"commit {version} is logged but did not reach every shard ({exc}); "
                               "writes resume once the coordinator is restarted")
                log.error("%s", self._stuck)
                raise
            self._snapshot = self._snapshot_at(version, sizes)
            self.commits += 1
            self.commit_seconds += time.perf_counter() - started
            if any(op.kind == "reset_streams" for op in txn.ops):
                self.stale_stream_logs = False
            if self.coordinator_log is not None and self.coordinator_log.wants_compaction():
                self._compact_log()
            return self._snapshot
        finally:
            self._writer = None
            self._write_lock.release()

    # ------------------------------------------------------ stream batches
    def before_batch(self) -> None:
        """Refuse a stream batch before it is logged, if writes are refused or
        the batch logged last never got its commit (its absorption failed):
        a later batch's commit would hide that one from the next start, which
        commits the logged batches past the last one committed."""
        if self._logged_batch is not None and self._stuck is None:
            self._stuck = (f"the stream batch at position {self._logged_batch} of the streams log was "
                           "logged but not committed; writes resume once the coordinator is restarted "
                           "(which commits it)")
            log.error("%s", self._stuck)
        if self._stuck is not None:
            raise StoreUnavailable(self._stuck)

    def batch_logged(self, position: int, data: bool) -> None:
        """A stream batch was logged at ``position`` of the streams log; with
        ``data``, the stream engine's transaction that absorbs it (begun with
        ``batch=position``) is to commit it."""
        self._logged_batch = position if data else None

    def holds_batch(self, position: int) -> bool:
        """Whether the stream batch logged at ``position`` of the streams log
        was committed (without a log: taken as committed)."""
        return self.coordinator_log is None or position <= self.coordinator_log.last_batch

    def figures(self) -> dict:
        """What an operator watches (``/metrics``), from memory: shards,
        version, commits, the coordinator log's compaction, the shard calls
        made by kind and path, and the steps read in place."""
        calls = getattr(self.calls, "counts", {})
        return {
            "shards": self.calls.shards,
            "version": self._snapshot.version,
            "commits": self.commits,
            "commit_seconds": self.commit_seconds,
            "log_compacted_version": self.coordinator_log.compacted.version if self.coordinator_log else 0,
            "calls": dict(calls),
            "in_place_steps": self.in_place.steps["in_place"] if self.in_place is not None else 0,
            "in_place_transport": self.in_place.reader.name if self.in_place is not None else None,
            "fork_join_transport": getattr(self.calls, "reads_over", "ray"),
            "writes_stuck": self._stuck is not None,
        }

    def _compact_log(self) -> None:
        """Drop the logged commits every shard has checkpointed past (asked
        once per :attr:`CoordinatorLog.compact_bytes` of log)."""
        try:
            upto = min(info["checkpoint"] for info in self.calls.info())
        except StoreUnavailable:
            return  # a shard is restarting: the next try will do
        changes = Changes(upto, self._changed_at, self._stream_fed, self.coordinator_log.last_batch)
        dropped = self.coordinator_log.compact(upto, changes)
        if dropped:
            log.info("coordinator log: %d segment(s) up to commit %d dropped (every shard has "
                     "checkpointed past it)", dropped, upto)

    def _apply_everywhere(self, version: int, parts: list, retain: dict[int, int]) -> dict[int, int]:
        """Send every shard its part at once; if some do not answer, retry
        those until they do (a restarted shard recovers what it had logged
        and takes the rest; one that applied it already says so). Returns
        triples per graph after the commit."""
        everyone = {k: ("apply", (version, parts[k], retain)) for k in range(self.calls.shards)}
        try:
            answers = self.calls.fork(everyone)
        except (ShardUnavailable, VersionGap):
            answers = self._apply_one_by_one(version, parts, retain)
        totals: dict[int, int] = {}
        for sizes in answers.values():
            for graph_id, n in sizes.items():
                totals[graph_id] = totals.get(graph_id, 0) + n
        return totals

    def _apply_one_by_one(self, version: int, parts: list, retain: dict[int, int]) -> dict[int, dict]:
        pending = set(range(self.calls.shards))
        answers: dict[int, dict] = {}
        deadline = time.monotonic() + COMMIT_PATIENCE
        while pending:
            for k in sorted(pending):
                try:
                    answers[k] = self.calls.fork({k: ("apply", (version, parts[k], retain))})[k]
                except ShardUnavailable:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
                    continue
                except VersionGap as gap:
                    self._catch_up(k, gap.version, version)
                    continue
                pending.discard(k)
        return answers

    def _catch_up(self, shard: int, at: int, upto: int) -> None:
        """Re-send the logged commits a shard lacks (it lost none it had
        acknowledged, but may have missed some it never received)."""
        if self.coordinator_log is None:
            raise RuntimeError(f"shard {shard} is at version {at}, behind {upto}, and there is no log")
        if at < self.coordinator_log.compacted.version:  # it lost a checkpoint it had reported
            raise RuntimeError(f"shard {shard} is at version {at}, before the coordinator's log, which "
                               f"starts after commit {self.coordinator_log.compacted.version}")
        for version, ops in self.coordinator_log.commits_after(at):
            if version >= upto:
                break
            self.calls.fork({shard: ("apply", (version, split_ops(ops, self.calls.shards)[shard], {}))})

    def abort(self, txn) -> None:
        if self._writer is txn:
            self._writer = None
            self._write_lock.release()
