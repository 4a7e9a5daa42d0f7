"""A graph whose triples live on the shards, behind the ordinary Graph interface.

The executor, property paths, updates and the stream engine run unchanged at
the coordinator; each call on a :class:`ShardedGraph` is one step of a query
and runs on the shards that own its keys:

- bound subjects go to their owners' ``out`` role, bound objects (subject
  unbound) to their owners' ``in`` role, with the rows each shard owns;
- a pattern with neither bound is a scan: every shard's ``out`` role, each
  triple on exactly one shard.

A step runs either *fork-join* (the rows are sent to the shards, which match
them there and send back the matches: one call per shard, all at once) or
*in place* (the coordinator reads the owners' neighbour lists itself through
a transport, with no code run on the shard): :class:`~engine.cluster.in_place.InPlaceReads`
says which costs less for the step's size, as Wukong chooses per step.
In-place reads need the loaded base as it is, so only graphs no commit has
touched since the load are read in place.

Every read names the snapshot version it reads (and, for a window, the as-of
cutoffs per stream), so one query sees one state on every shard.

:class:`ShardSteps` is the routing both this graph and a window's graph
(:mod:`~engine.cluster.sharded_window_graph`) share: which shards a step
goes to, with which of its rows, and how their answers are put back in row
order.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from engine.cluster.partition import IN, OUT, rows_by_shard
from engine.cluster.shard_calls import ShardCalls, broadcast
from engine.store.graph import Matches, contains_by_match
from engine.store.memory_graph import EMPTY, DerivedColumns, MemoryGraph

if TYPE_CHECKING:
    from engine.cluster.in_place import InPlaceReads


class StatisticsCache:
    """The planner's counts of sharded graphs, kept until the graph changes:
    a continuous query plans each window anew, and without this every
    window would ask every shard the same counts of the stored graphs."""

    def __init__(self, size: int = 8192) -> None:
        self._entries: OrderedDict[tuple, object] = OrderedDict()
        self._size = size

    def get(self, key: tuple, compute):
        found = self._entries.get(key, _MISSING)
        if found is _MISSING:
            found = compute()
            self._entries[key] = found
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return found


_MISSING = object()


class ShardSteps(DerivedColumns):
    """A graph whose ``match`` is a step on the shards that own its keys:
    subclasses say which call runs one shard's rows (:meth:`_step`)."""

    calls: ShardCalls

    def _step(self, role: str, key: np.ndarray | None, p: np.ndarray | None, other: np.ndarray | None,
              n_rows: int) -> tuple[str, tuple]:
        """The shard method and its arguments that match ``n_rows`` rows on one shard."""
        raise NotImplementedError

    def _in_place(self, role: str, key: np.ndarray, p: np.ndarray | None, other: np.ndarray | None,
                  by_shard: dict[int, np.ndarray]) -> list[Matches] | None:
        """The step's matches read in place, or None: fork-join it."""
        return None

    def match(self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
              ) -> Matches:
        """One pattern for each of ``n_rows`` input rows, on the shards that
        own the bound keys; returns ``(row, s, p, o)`` in row order."""
        if s is not None:
            return _in_row_order(self._keyed(OUT, s, p, o))
        if o is not None:
            found = [(rows, ss, pp, oo) for rows, oo, pp, ss in self._keyed(IN, o, p, None)]
            return _in_row_order(found)
        call = self._step(OUT, None, p, None, n_rows)
        answers = self.calls.fork(dict.fromkeys(range(self.calls.shards), call))
        return _in_row_order(list(answers.values()))

    def _keyed(self, role: str, key: np.ndarray, p: np.ndarray | None, other: np.ndarray | None
               ) -> list[Matches]:
        """Matches of the rows of each key's owner in ``role``, with the
        input rows renumbered back; columns in the role's order."""
        by_shard = rows_by_shard(key, self.calls.shards)
        if not by_shard:
            return []
        found = self._in_place(role, key, p, other, by_shard)
        if found is not None:
            return found
        calls = {k: self._step(role, key[rows], None if p is None else p[rows],
                               None if other is None else other[rows], len(rows))
                 for k, rows in by_shard.items()}
        answers = self.calls.fork(calls)
        return [(by_shard[k][rows], a, b, c) for k, (rows, a, b, c) in answers.items()]

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        return contains_by_match(self, s, p, o)

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> MemoryGraph:
        """An in-memory copy with the changes: only for code that rebuilds a
        graph locally; the coordinator's transactions send changes to the
        shards instead (``engine.cluster.sharded_store``)."""
        return MemoryGraph(self.s, self.p, self.o).with_changes(add, remove)


class ShardedGraph(ShardSteps):
    """Graph ``graph_id`` at snapshot ``version``, read on the shards."""

    def __init__(self, calls: ShardCalls, graph_id: int, version: int, length: int | None,
                 cutoffs: dict[int, int] | None = None, in_place: InPlaceReads | None = None,
                 statistics: StatisticsCache | None = None, changed_at: int = 0,
                 stream_fed: bool = False) -> None:
        self.calls = calls
        self.graph_id = graph_id
        self.version = version
        self._length = length
        self.cutoffs = cutoffs or None
        #: streams append to this graph: windows read it as of their close
        self.stream_fed = stream_fed
        #: in-place reads of the loaded base (None: this graph is read by fork-join only)
        self.in_place = in_place
        self._statistics = statistics or StatisticsCache(0)
        #: the last commit that changed this graph: its counts are the same at every version since
        self._changed_at = changed_at

    def _statistic(self, call: tuple, compute):
        cutoffs = tuple(sorted(self.cutoffs.items())) if self.cutoffs else ()
        return self._statistics.get((self.graph_id, self._changed_at, cutoffs, *call), compute)

    # ------------------------------------------------------------ sizes
    def __len__(self) -> int:
        if self._length is None:
            self._length = self.count(None, None, None)
        return self._length

    @property
    def unchanged_since(self) -> tuple:
        """Equal for two of these graphs with the same triples: the same graph
        at the same last change (and as of the same closes). The coordinator
        makes them anew at every commit, so identity says nothing."""
        cutoffs = tuple(sorted(self.cutoffs.items())) if self.cutoffs else ()
        return self.graph_id, self._changed_at, cutoffs

    def as_of(self, cutoffs: dict[int, int]) -> ShardedGraph:
        """The graph as a window closing at ``cutoffs[stream]`` reads it: a
        graph no stream appends to is the same at every close (and keeps its
        in-place reads and cached counts)."""
        if not self.stream_fed:
            return self
        return ShardedGraph(self.calls, self.graph_id, self.version, None, cutoffs, self.in_place,
                            self._statistics, self._changed_at, stream_fed=True)

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        if any(v is not None and v <= 0 for v in (s, p, o)):
            return 0
        if s is None and o is None and p is None and self._length is not None:
            return self._length
        return self._statistic(("count", s, p, o), lambda: self._count(s, p, o))

    def _count(self, s: int | None, p: int | None, o: int | None) -> int:
        shards = self.calls.shards
        if s is not None:
            call = {s % shards: ("count", (self.version, self.graph_id, OUT, s, p, o, self.cutoffs))}
        elif o is not None:
            call = {o % shards: ("count", (self.version, self.graph_id, IN, o, p, None, self.cutoffs))}
        else:
            call = {k: ("count", (self.version, self.graph_id, OUT, None, p, None, self.cutoffs))
                    for k in range(shards)}
        return sum(self.calls.fork(call).values())

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """Summed over the shards: exact, since each shard counts the subjects
        and objects it owns."""
        return self._statistic(("degree_stats", p), lambda: self._degree_stats(p))

    def _degree_stats(self, p: int | None) -> tuple[int, int, int]:
        totals = [0, 0, 0]
        for stats in broadcast(self.calls, "degree_stats", self.version, self.graph_id, p,
                               self.cutoffs).values():
            for i in range(3):
                totals[i] += stats[i]
        return totals[0], totals[1], totals[2]

    # ------------------------------------------------------------ steps
    def _step(self, role: str, key: np.ndarray | None, p: np.ndarray | None, other: np.ndarray | None,
              n_rows: int) -> tuple[str, tuple]:
        return "match", (self.version, self.graph_id, role, key, p, other, n_rows, self.cutoffs)

    def _in_place(self, role: str, key: np.ndarray, p: np.ndarray | None, other: np.ndarray | None,
                  by_shard: dict[int, np.ndarray]) -> list[Matches] | None:
        reader = self.in_place
        if reader is not None and self.cutoffs is None and reader.prefers(self.graph_id, role, len(key)):
            return reader.match(self.graph_id, role, key, p, other, by_shard)
        return None

    @cached_property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = list(broadcast(self.calls, "columns", self.version, self.graph_id, self.cutoffs).values())
        if not parts:
            return EMPTY, EMPTY, EMPTY
        return tuple(np.concatenate([part[i] for part in parts]) for i in range(3))


def _in_row_order(found: list[Matches]) -> Matches:
    found = [f for f in found if len(f[0])]
    if not found:
        return EMPTY, EMPTY, EMPTY, EMPTY
    if len(found) == 1:
        return found[0]
    cols = [np.concatenate([f[i] for f in found]) for i in range(4)]
    order = np.argsort(cols[0], kind="stable")
    return cols[0][order], cols[1][order], cols[2][order], cols[3][order]
