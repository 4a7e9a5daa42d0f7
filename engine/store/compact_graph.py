"""A stored graph in compact CSR arrays: int32 IDs, about 27 bytes a triple.

Wukong's ``(vertex, predicate, direction) -> neighbours`` layout in arrays
(see ``engine.store.csr``): per direction, a vertex's predicate pairs and
each pair's neighbours are contiguous, and per predicate an index lists its
pairs. ``rivulet load`` writes the arrays to files (``engine.store.layout``)
and opening maps them without reading them, so a store of any size opens in
milliseconds and a query touches only the pages of the keys it explores; a
load into a running store builds the same arrays in memory
(:meth:`CompactGraph.build`).

:class:`CompactGraph` implements :class:`engine.store.graph.Graph` like the
in-memory kinds, so the executor cannot tell them apart:

- ``(s, p, ?)`` and ``(?, p, o)``: the vertex's pairs, kept where the
  predicate matches, then the pair's neighbours. A vertex has few distinct
  predicates, so this costs about its predicate count, not its degree.
- ``(s, ?, ?)`` and ``(?, ?, o)``: all pairs of the vertex (the variable
  predicate case, served by the same arrays: no SPO/OSP copies).
- ``(?, p, ?)``: the predicate's index, i.e. its pairs, then their neighbours.

Shards partition vertices by ``ID % shards``; a column of bound vertices is
routed to the shard of each value, and results come back in input-row order.
``s``/``p``/``o`` are materialised (24 bytes a triple) only when a rare path
asks for whole columns.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from engine.rdf import is_value
from engine.store.adjacency_kernel import edges as adjacency_edges
from engine.store.csr import build_adjacency
from engine.store.graph import Graph, Matches, NeighbourReader, contains_by_match
from engine.store.layout import ADJACENCY_ARRAYS, DIRECTIONS, adjacency_dir
from engine.store.memory_graph import EMPTY, DerivedColumns, MemoryGraph, expand_ranges
from engine.store.neighbour_lists import PairLists
from engine.store.row_budget import check_rows, checkpoint, current_budget

#: probe columns up to this long are read by the compiled kernel (any, where it applies;
#: the tests set it below zero to compare it with the NumPy path)
KERNEL_ROWS_MAX = 2**62


class Adjacency:
    """One direction of one graph in one shard."""

    def __init__(self, arrays: dict[str, np.ndarray], shards: int, shard: int) -> None:
        self.vertex_offsets = arrays["vertex_offsets"]
        self.pair_predicates = arrays["pair_predicates"]
        self.pair_offsets = arrays["pair_offsets"]
        self.neighbours = arrays["neighbours"]
        self.index_predicates = arrays["index_predicates"]
        self.index_offsets = arrays["index_offsets"]
        self.index_pairs = arrays["index_pairs"]
        self.index_triples = arrays["index_triples"]
        self.shards, self.shard = shards, shard
        #: the directory the arrays are mapped from (None: built in memory)
        self.source: Path | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by name (a shard publishes them for in-place reads)."""
        return {name: getattr(self, name) for name in ADJACENCY_ARRAYS}

    @classmethod
    def open(cls, directory: Path, shards: int, shard: int) -> Adjacency | None:
        if not directory.is_dir():
            return None
        # plain views of the mapped files (np.memmap's hooks slow small reads)
        arrays = {name: np.asarray(np.load(directory / f"{name}.npy", mmap_mode="r"))
                  for name in ADJACENCY_ARRAYS}
        adjacency = cls(arrays, shards, shard)
        adjacency.source = directory
        return adjacency

    def _pairs(self, local: np.ndarray, predicates: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(input position, pair index) of each local vertex's pairs, kept where
        the pair's predicate equals the row's when ``predicates`` is given."""
        vo = self.vertex_offsets
        if len(local) == 1:  # a query constant: slices, not a dozen one-element array steps
            lo, hi = self._pair_range(int(local[0]))
            pairs = np.arange(lo, hi, dtype=np.int64)
            if predicates is not None:
                pairs = pairs[self.pair_predicates[lo:hi] == predicates[0]]
            return np.zeros(len(pairs), dtype=np.int64), pairs
        inside = local < len(vo) - 1  # IDs added after the load have no pairs here
        local = np.where(inside, local, 0)
        lo = np.where(inside, vo[local], 0).astype(np.int64)
        hi = np.where(inside, vo[local + 1], 0).astype(np.int64)
        rows, pairs = expand_ranges(lo, hi)
        if predicates is not None:
            keep = self.pair_predicates[pairs] == predicates[rows]
            rows, pairs = rows[keep], pairs[keep]
        return rows, pairs

    def _neighbours(self, rows: np.ndarray, pairs: np.ndarray):
        po = self.pair_offsets
        if len(pairs) == 1:  # one vertex and predicate: a slice of the neighbour list
            pair = int(pairs[0])
            lo, hi = int(po[pair]), int(po[pair + 1])
            return np.full(hi - lo, rows[0], dtype=np.int64), \
                np.full(hi - lo, self.pair_predicates[pair], dtype=np.int64), \
                self.neighbours[lo:hi].astype(np.int64)
        lo, hi = po[pairs].astype(np.int64), po[pairs + 1].astype(np.int64)
        sub, pos = expand_ranges(lo, hi)
        return rows[sub], self.pair_predicates[pairs[sub]].astype(np.int64), \
            self.neighbours[pos].astype(np.int64)

    def edges(self, local: np.ndarray, predicates: np.ndarray | None):
        """(input position, predicate, neighbour) of every edge of the vertices."""
        return self._neighbours(*self._pairs(local, predicates))

    def _pair_range(self, local: int) -> tuple[int, int]:
        vo = self.vertex_offsets
        if local >= len(vo) - 1:  # IDs added after the load have no pairs here
            return 0, 0
        return int(vo[local]), int(vo[local + 1])

    @cached_property
    def _offset_views(self) -> tuple[memoryview, ...]:
        """The vertex offsets, pair predicates and pair offsets as
        memoryviews, whose items are Python ints: one vertex's degree reads a
        few of them (NumPy's scalar reads and ``searchsorted`` cost about a
        microsecond a call, and the planner asks a degree per query)."""
        return tuple(memoryview(a) for a in (self.vertex_offsets, self.pair_predicates, self.pair_offsets))

    def degree(self, local: int, predicate: int | None) -> int:
        """Edges of one vertex (with the predicate when given). Its predicates
        are sorted, so a binary search over its few pairs finds the one."""
        vo, pp, po = self._offset_views
        if local + 1 >= len(vo):  # IDs added after the load have no pairs here
            return 0
        lo, hi = vo[local], vo[local + 1]
        if lo == hi:
            return 0
        if predicate is None:
            return po[hi] - po[lo]
        at = bisect_left(pp, predicate, lo, hi)
        return po[at + 1] - po[at] if at < hi and pp[at] == predicate else 0

    def _index_ranges(self, predicates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ip = self.index_predicates
        at = np.minimum(np.searchsorted(ip, predicates), max(len(ip) - 1, 0))
        found = (ip[at] == predicates) if len(ip) else np.zeros(len(predicates), dtype=bool)
        lo = np.where(found, self.index_offsets[at], 0).astype(np.int64)
        hi = np.where(found, self.index_offsets[np.minimum(at + 1, len(ip))], 0).astype(np.int64)
        return lo, hi

    def predicate_edges(self, predicates: np.ndarray):
        """(input position, vertex, predicate, neighbour) of every edge whose
        predicate is the row's, read through the predicate index."""
        rows, pos = expand_ranges(*self._index_ranges(predicates))
        if not len(pos):  # a predicate the graph lacks (a stream's, asked of the stored graph each window)
            return EMPTY, EMPTY, EMPTY, EMPTY
        # searched in the offsets' own type: NumPy would otherwise copy the whole
        # mapped array to int64 for each call (6 ms at 100M, for an absent predicate too)
        pairs = self.index_pairs[pos]
        vertex = (np.searchsorted(self.vertex_offsets, pairs, side="right") - 1) * self.shards + self.shard
        pairs = pairs.astype(np.int64)
        po = self.pair_offsets
        sub, npos = expand_ranges(po[pairs].astype(np.int64), po[pairs + 1].astype(np.int64))
        return rows[sub], vertex[sub], self.pair_predicates[pairs[sub]].astype(np.int64), \
            self.neighbours[npos].astype(np.int64)

    def predicate_stats(self, predicate: int) -> tuple[int, int]:
        """(edges, vertices) with the predicate: the sizes of its index vertex."""
        ip = self.index_predicates
        at = int(np.searchsorted(ip, predicate))
        if at == len(ip) or ip[at] != predicate:
            return 0, 0
        return int(self.index_triples[at]), int(self.index_offsets[at + 1] - self.index_offsets[at])

    def vertex_count(self) -> int:
        """Vertices with at least one edge in this direction."""
        return int(np.count_nonzero(np.diff(self.vertex_offsets)))

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All edges as (vertex, predicate, neighbour) int64 columns."""
        vo, po = self.vertex_offsets, self.pair_offsets
        local = np.repeat(np.arange(len(vo) - 1, dtype=np.int64), np.diff(vo))
        sizes = np.diff(po)
        vertex = np.repeat(local * self.shards + self.shard, sizes)
        return vertex, np.repeat(self.pair_predicates.astype(np.int64), sizes), \
            self.neighbours.astype(np.int64)


class Direction:
    """One direction of one graph across all shards; routes vertices by ID."""

    def __init__(self, parts: list[Adjacency | None]) -> None:
        self.parts = parts
        self.shards = len(parts)

    def _route(self, vertices: np.ndarray) -> Iterator[tuple[Adjacency, np.ndarray]]:
        """(shard, positions of the rows whose vertex it owns)."""
        if self.shards == 1:
            if self.parts[0] is not None:
                yield self.parts[0], (np.flatnonzero(vertices > 0) if len(vertices) != 1
                                      else np.zeros(int(vertices[0] > 0), dtype=np.int64))
            return
        valid = vertices > 0
        owner = vertices % self.shards
        for k, part in enumerate(self.parts):
            if part is not None:
                sel = np.flatnonzero(valid & (owner == k))
                if len(sel):
                    yield part, sel

    def kernel_edges(self, vertices: np.ndarray, predicates: np.ndarray | None, check: np.ndarray | None):
        """(row, vertex, predicate, neighbour) of the edges of a column of
        vertices in one graph of one shard, in one compiled call, keeping only
        the edges that reach ``check[row]`` when given (a binary search in each
        sorted list); None when the kernel does not apply (several shards, a
        strided or non-int64 column).
        More edges than the row budget allows are refused
        (:class:`~engine.store.row_budget.RowBudgetExceeded`).

        Columns of any length: a window's join reads the stored lists of
        thousands of its vertices (LSBench L6: the friends of a window's
        likers, a million edges a window at 100M), where NumPy's path built
        eight arrays of that length (ranges, their expansion, the gathers and
        casts), and checked each (vertex, neighbour) row of a closing pattern
        (L5's ``?friend1 foaf:knows ?friend2``) by gathering the vertex's
        whole list, whose length grows with the store (a hub's friends)."""
        part = self.parts[0]
        if self.shards != 1 or part is None or len(vertices) > KERNEL_ROWS_MAX:
            return None
        budget = current_budget()
        try:
            found = adjacency_edges(part.vertex_offsets, part.pair_predicates, part.pair_offsets,
                                    part.neighbours, vertices, predicates, check,
                                    -1 if budget is None else budget)
        except (ValueError, TypeError):  # buffers the kernel's types refuse
            return None
        if isinstance(found, int):
            check_rows(found)  # over the budget: refused
        checkpoint()
        return found

    def edges(self, vertices: np.ndarray, predicates: np.ndarray | None):
        """(row, predicate, neighbour) for every edge of each row's vertex (with
        the row's predicate when given), in row order."""
        found = []
        for part, sel in self._route(vertices):
            pred = None if predicates is None else predicates[sel]
            rows, p, n = part.edges(vertices[sel] // self.shards, pred)
            found.append((sel[rows], p, n))
        return _in_row_order(found, 3)

    def degree(self, vertex: int, predicate: int | None) -> int:
        part = self.parts[vertex % self.shards] if vertex > 0 else None
        return part.degree(vertex // self.shards, predicate) if part is not None else 0

    def neighbour_reader(self, predicate: int | None, excluded: frozenset[int]) -> NeighbourReader:
        """One vertex's neighbours at a time, through ``predicate`` (or any
        predicate not in ``excluded``): the shard's offsets read through
        memoryviews, whose items are Python ints; a binary search among the
        vertex's pairs (sorted by predicate) finds the predicate's."""
        shards = self.shards
        views = [None if part is None else
                 tuple(memoryview(a) for a in (part.vertex_offsets, part.pair_predicates,
                                               part.pair_offsets, part.neighbours))
                 for part in self.parts]
        if shards == 1 and views[0] is not None and predicate is not None:
            # the common case, one shard and a predicate: no routing
            part = self.parts[0]
            return PairLists(part.vertex_offsets, part.pair_predicates, part.pair_offsets,
                             part.neighbours, predicate)

        def read(vertex: int) -> Sequence[int]:
            view = views[vertex % shards] if vertex > 0 else None
            if view is None:
                return ()
            vo, pp, po, nb = view
            local = vertex // shards
            if local + 1 >= len(vo):
                return ()
            lo, hi = vo[local], vo[local + 1]
            if predicate is not None:
                at = bisect_left(pp, predicate, lo, hi)
                return nb[po[at]:po[at + 1]] if at < hi and pp[at] == predicate else ()
            found: list[int] = []
            for at in range(lo, hi):
                if pp[at] not in excluded:
                    found += nb[po[at]:po[at + 1]]
            return found

        return read

    def predicate_edges(self, predicates: np.ndarray):
        """(row, vertex, predicate, neighbour) for every edge with each row's predicate."""
        found = [part.predicate_edges(predicates) for part in self.parts if part is not None]
        return _in_row_order(found, 4)

    def predicate_stats(self, predicate: int) -> tuple[int, int]:
        stats = [part.predicate_stats(predicate) for part in self.parts if part is not None]
        return sum(e for e, _ in stats), sum(v for _, v in stats)

    @cached_property
    def vertex_count(self) -> int:
        return sum(part.vertex_count() for part in self.parts if part is not None)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cols = [part.columns() for part in self.parts if part is not None]
        if not cols:
            return EMPTY, EMPTY, EMPTY
        vertex, predicate, neighbour = (np.concatenate([c[i] for c in cols]) for i in range(3))
        return vertex, predicate, neighbour



def _in_row_order(found: list[tuple[np.ndarray, ...]], width: int) -> tuple[np.ndarray, ...]:
    """Concatenate per-shard results, stably sorted by input row."""
    if not found:
        return (EMPTY,) * width
    if len(found) == 1:
        return found[0]
    cols = [np.concatenate([f[i] for f in found]) for i in range(width)]
    order = np.argsort(cols[0], kind="stable")
    return tuple(c[order] for c in cols)


class CompactGraph(DerivedColumns):
    """One graph of a loaded store, behind the :class:`~engine.store.graph.Graph` interface."""

    def __init__(self, out: Direction, into: Direction, triples: int) -> None:
        self._out, self._in = out, into
        self._len = triples

    @classmethod
    def open(cls, root: Path, graph_id: int, shards: int, triples: int) -> CompactGraph:
        out, into = (
            Direction([Adjacency.open(adjacency_dir(root, k, graph_id, d), shards, k) for k in range(shards)])
            for d in DIRECTIONS
        )
        return cls(out, into, triples)

    @classmethod
    def build(cls, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> CompactGraph:
        """The graph of ID triples (in any order, repeats allowed), built in
        memory in both directions."""
        bound = int(max(s.max(), o.max(), p.max())) if len(s) else 0
        out = Adjacency(build_adjacency(s, p, o, bound, 1), 1, 0)
        into = Adjacency(build_adjacency(o, p, s, bound, 1), 1, 0)
        return cls(Direction([out]), Direction([into]), len(out.neighbours))

    def __len__(self) -> int:
        return self._len

    @cached_property
    def predicate_ids(self) -> frozenset[int]:
        """The predicates the graph has edges of (a few hundred at most in
        practice): a union of graphs skips this one for a pattern of another
        predicate, as a store's numbers, dates and ages, held beside the CSR
        arrays, would otherwise cost every pattern about them a probe here."""
        return frozenset(p for part in self._out.parts if part is not None
                         for p in part.index_predicates.tolist())

    def direction(self, name: str) -> Direction:
        """The ``out`` (by subject) or ``in`` (by object) arrays."""
        return self._out if name == "out" else self._in

    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        """Exact number of triples matching constants (None = any)."""
        if any(v is not None and v <= 0 for v in (s, p, o)):
            return 0
        if s is not None and o is not None:
            col = np.array([s], dtype=np.int64)
            preds = None if p is None else np.array([p], dtype=np.int64)
            _, _, n = self._out.edges(col, preds)
            return int(np.count_nonzero(n == o))
        if s is not None:
            return self._out.degree(s, p)
        if o is not None:
            return self._in.degree(o, p)
        return len(self) if p is None else self._out.predicate_stats(p)[0]

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """(triples, distinct subjects, distinct objects) of predicate ``p``, or
        of the whole graph when ``p`` is None: the planner's fan-out estimates,
        read off the index vertices without touching the neighbour lists."""
        if p is None:
            return len(self), self._out.vertex_count, self._in.vertex_count
        triples, subjects = self._out.predicate_stats(p)
        return triples, subjects, self._in.predicate_stats(p)[1]

    def match(
        self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
    ) -> Matches:
        """Match one triple pattern for each of ``n_rows`` input rows; see
        :meth:`MemoryGraph.match`. Returns ``(row, s, p, o)`` in row order."""
        if s is not None:
            found = self._out.kernel_edges(s, p, o)
            if found is not None:
                return found
            rows, pp, oo = self._out.edges(s, p)
            if o is not None:
                keep = oo == o[rows]
                rows, pp, oo = rows[keep], pp[keep], oo[keep]
            return rows, s[rows], pp, oo
        if o is not None:
            found = self._in.kernel_edges(o, p, None)
            if found is not None:
                rows, oo, pp, ss = found
                return rows, ss, pp, oo
            rows, pp, ss = self._in.edges(o, p)
            return rows, ss, pp, o[rows]
        if p is not None:
            return self._out.predicate_edges(p)
        check_rows(n_rows * len(self))
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), len(self))
        s_all, p_all, o_all = self._columns
        return rows, np.tile(s_all, n_rows), np.tile(p_all, n_rows), np.tile(o_all, n_rows)

    @property
    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Derived anew on each use: kept, they would add 24 bytes a triple
        for good after one rare whole-graph read."""
        return self._out.columns()

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Boolean mask: is each (s[i], p[i], o[i]) in the graph?"""
        return contains_by_match(self, s, p, o)

    def neighbour_reader(self, predicate: int | None, backward: bool,
                         excluded: frozenset[int] = frozenset()) -> NeighbourReader:
        """One vertex's neighbours at a time (:func:`engine.store.graph.neighbour_reader`)."""
        return (self._in if backward else self._out).neighbour_reader(predicate, excluded)

    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> Graph:
        """A compact copy with the changes (a mapped graph itself is read-only):
        rebuilt in O(n log n), as an in-memory graph is, and as compact as
        before (unless the changes bring value IDs: :func:`compact_or_memory`)."""
        s, p, o = self._columns
        if remove is not None and len(remove):
            keep = ~remove.contains(s, p, o)
            s, p, o = s[keep], p[keep], o[keep]
        if add is not None and len(add):
            s, p, o = np.concatenate([s, add.s]), np.concatenate([p, add.p]), np.concatenate([o, add.o])
        return compact_or_memory(s, p, o)


def holds_values(s: np.ndarray, o: np.ndarray) -> bool:
    """Whether any triple names a value ID (``engine.rdf.value_ids``)."""
    return bool(is_value(o).any() or is_value(s).any())


def compact_or_memory(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> Graph:
    """The triples as compact CSR arrays, or as an in-memory graph when one
    names a value ID: CSR arrays are indexed by vertex ID, and a value ID
    (2**30 and up) would size them by the value, not by the store."""
    return MemoryGraph(s, p, o) if holds_values(s, o) else CompactGraph.build(s, p, o)
