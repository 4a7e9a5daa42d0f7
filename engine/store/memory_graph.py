"""An immutable in-memory graph of integer-ID triples, indexed for exploration.

This is Wukong's key/value layout in arrays. The key ``(vertex, predicate,
direction)`` maps to the vertex's neighbour list: in the PSO order the rows of
one ``(predicate, subject)`` key are contiguous and hold the out-neighbours;
in POS the rows of ``(predicate, object)`` hold the in-neighbours. The index
vertex ``(0, predicate, dir)`` is the whole predicate range. SPO and OSP serve
patterns whose predicate is a variable. Each key is located with one
vectorised ``searchsorted`` for a whole column of bound values, and the
neighbour lists are expanded with ``np.repeat`` -- no Python loop per row.

Sort orders are built lazily: a graph that is only written to (SPARQL Update
on a small graph) never pays for orders nobody reads.

IDs must be below 2**31 so that ``predicate << 32 | vertex`` is a valid int64
key; query-local IDs are negative and never match a stored key.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np

from engine.store.distinct_ids import unique_inverse
from engine.store.graph import Graph, Matches, NeighbourReader, contains_by_match
from engine.store.key_probe_kernel import probe
from engine.store.key_set import KeySet
from engine.store.neighbour_lists import KeyedLists
from engine.store.row_budget import check_rows, checkpoint, current_budget, over_budget

EMPTY = np.zeros(0, dtype=np.int64)
#: which rows a read keeps, from the column carried along the sort orders
Visibility = Callable[[np.ndarray], np.ndarray]
#: probe columns longer than this are deduplicated and sorted before the search
SORTED_PROBE_MIN = 32
#: a neighbour list's end is first searched this far from its start (most lists are short)
_NEAR = 8
#: a graph of at most this many rows is scanned for one row binding no predicate,
#: unless its order by subject (or object) is built already
SCANNED_ROWS_MAX = 4096
#: fully bound probes of one predicate at least this long go to its hash set
HASHED_PROBE_MIN = 4096
#: predicates with more triples than this get no hash set (its memory: 16 bytes a triple)
HASHED_PREDICATE_MAX = 1 << 22


def expand_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For row i with the half-open range ``[lo[i], hi[i])`` return
    ``(row index, position)`` pairs for every position in every range."""
    if len(lo) == 1:  # one bound vertex (a constant): its neighbour list as it is
        start, end = int(lo[0]), max(int(hi[0]), int(lo[0]))
        check_rows(end - start)
        return np.zeros(end - start, dtype=np.int64), np.arange(start, end, dtype=np.int64)
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    check_rows(total)
    rows = np.repeat(np.arange(len(lo), dtype=np.int64), counts)
    if total == 0:
        return rows, EMPTY
    starts = np.cumsum(counts) - counts
    positions = np.arange(total, dtype=np.int64) - np.repeat(starts - lo, counts)
    return rows, positions


def _expand_visible(order: _Order, lo: np.ndarray, hi: np.ndarray,
                    visible: Visibility) -> tuple[np.ndarray, np.ndarray]:
    """:func:`expand_ranges` over only the positions ``visible`` keeps, and
    the row budget charged with those alone: a time slice of a stream batch
    shares its ranges with the rows of other windows, which are not this
    step's rows. Costs a pass over the order, so it is taken only when the
    ranges as a whole are over the budget."""
    keep = visible(order.carried)
    kept_positions = np.flatnonzero(keep)
    before = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=before[1:])
    rows, index = expand_ranges(before[lo], before[np.maximum(hi, lo)])
    return rows, kept_positions[index]


class Between:
    """The :data:`Visibility` of a time slice of a stream batch: the rows whose
    carried timestamp is in ``[start, end)``. The compiled probe reads the
    bounds themselves instead of calling it."""

    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end

    def __call__(self, ts: np.ndarray) -> np.ndarray:
        return (ts >= self.start) & (ts < self.end)


def _compiled_probe(order: _Order, high: np.ndarray, low: np.ndarray | None, check_third: np.ndarray | None,
                    visible: Between | None) -> tuple[np.ndarray, ...] | None:
    """:func:`~engine.store.key_probe_kernel.probe` over ``order``: the
    matches as ``(rows, first, second, third)`` in the order's columns, or
    None when the kernel does not apply (columns that are not contiguous
    int64, or ranges of more rows than the budget allows: the NumPy path
    then refuses them, or keeps a time slice's few visible rows)."""
    budget = current_budget()
    timed = visible is not None
    try:
        found = probe(order.key, order.first, order.second, order.third,
                      order.carried if timed else None, visible.start if timed else 0,
                      visible.end if timed else 0, high, low, check_third, order.third_sorted_per_key,
                      -1 if budget is None else budget)
    except ValueError:  # a strided or non-int64 column: the kernel's buffers refuse it
        return None
    if isinstance(found, int):  # over the budget: a slice may keep fewer rows, the NumPy path says
        return None
    checkpoint()
    return found


def _named(found: tuple[np.ndarray, ...], names: tuple[str, str, str]) -> Matches:
    """``(rows, s, p, o)`` from matches in an order's columns, named by ``names``."""
    rows, first, second, third = found
    columns = {names[0]: first, names[1]: second, names[2]: third}
    return rows, columns["s"], columns["p"], columns["o"]


def no_neighbours(vertex: int) -> Sequence[int]:
    """The reader of a predicate a graph lacks."""
    return ()


class DerivedColumns:
    """``s``/``p``/``o`` for graphs whose full columns are derived on demand
    (a union of members, a memory-mapped CSR): subclasses provide ``_columns``."""

    _columns: tuple[np.ndarray, np.ndarray, np.ndarray]

    @property
    def s(self) -> np.ndarray:
        return self._columns[0]

    @property
    def p(self) -> np.ndarray:
        return self._columns[1]

    @property
    def o(self) -> np.ndarray:
        return self._columns[2]


def all_columns(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(s, p, o)`` of any graph, derived once: reading ``s``, ``p`` and ``o``
    of a derived-column graph (a compact one's CSR) derives all three each time."""
    if isinstance(graph, DerivedColumns):
        return graph._columns
    return graph.s, graph.p, graph.o


def _search_third(order: _Order, lo: np.ndarray, hi: np.ndarray,
                  values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(row, position)`` of ``values[row]`` in ``order.third[lo[row]:hi[row]]``
    where it occurs: one vectorised binary search over all rows at once (the
    third column is sorted within each range), log2 of the longest range steps."""
    left, right = lo.copy(), np.maximum(hi, lo)
    third = order.third
    if not len(third):
        return EMPTY, EMPTY
    while True:
        open_rows = left < right
        if not open_rows.any():
            break
        middle = (left + right) >> 1
        below = third[np.where(open_rows, middle, 0)] < values
        left = np.where(open_rows & below, middle + 1, left)
        right = np.where(open_rows & ~below, middle, right)
    found = (left < hi) & (third[np.minimum(left, len(third) - 1)] == values)
    rows = np.flatnonzero(found)
    return rows, left[rows]


def _pair_key(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Composite int64 key of two ID columns; -1 where either is query-local."""
    key = (high << 32) | low
    return np.where((high > 0) & (low > 0), key, -1)


def _lex_sorted(first: np.ndarray, second: np.ndarray, third: np.ndarray) -> bool:
    """Whether the rows ``(first, second, third)`` are in lexicographic order
    already: a few linear passes, where the sort costs ``n log n`` (a
    graph's columns come sorted by predicate, subject and object)."""
    if len(first) < 2:
        return True
    step = np.diff(first)
    if (step < 0).any():
        return False
    tie = step == 0
    step = np.diff(second)
    if (tie & (step < 0)).any():
        return False
    tie &= step == 0
    return not (tie & (np.diff(third) < 0)).any()


def _run_values(ordered: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted column."""
    start = np.ones(len(ordered), dtype=bool)
    start[1:] = ordered[1:] != ordered[:-1]
    return ordered[start]


def _runs(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a sorted column and how often each occurs."""
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return ordered[starts], np.diff(np.append(starts, len(ordered)))


class _Order:
    """One sort order of the graph's triples: three columns sorted lexicographically,
    and optionally a fourth column that rides along (a stream batch's timestamps)."""

    __slots__ = ("first", "second", "third", "key", "carried", "third_sorted_per_key")

    def __init__(self, first: np.ndarray, second: np.ndarray, third: np.ndarray, two_part_key: bool,
                 carried: np.ndarray | None = None):
        if _lex_sorted(first, second, third):  # a graph's own order (PSO) mostly is: no sort
            self.first, self.second, self.third, self.carried = first, second, third, carried
        else:
            order = np.lexsort((third, second, first))
            self.first = first[order]
            self.second = second[order]
            self.third = third[order]
            self.carried = None if carried is None else carried[order]
        # the search key: (first, second) packed for PSO/POS, first alone for SPO/OSP
        self.key = (self.first << 32) | self.second if two_part_key else self.first
        #: within one key's range the third column is sorted (not so for a one-part key)
        self.third_sorted_per_key = two_part_key

    def ranges(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if len(keys) > SORTED_PROBE_MIN and not bool((keys[1:] >= keys[:-1]).all()):
            # searchsorted walks sorted probes 5-10x faster than random ones
            # (measured: 200K probes into 300K keys, 61 ms -> 12 ms), and a join
            # column usually repeats its values: probe each distinct key once
            # (unless the caller did: then the keys are already in order)
            distinct, inverse = unique_inverse(keys)
            lo = np.searchsorted(self.key, distinct, side="left")[inverse]
            hi = np.searchsorted(self.key, distinct, side="right")[inverse]
        else:
            lo = np.searchsorted(self.key, keys, side="left")
            hi = np.searchsorted(self.key, keys, side="right")
        missing = keys < 0
        if missing.any():
            hi[missing] = lo[missing]
        return lo, hi


class MemoryGraph:
    """A set of (s, p, o) ID triples, deduplicated, with lazily built sort orders."""

    def __init__(self, s: np.ndarray, p: np.ndarray, o: np.ndarray, *, unique: bool = False) -> None:
        s = np.asarray(s, dtype=np.int64)
        p = np.asarray(p, dtype=np.int64)
        o = np.asarray(o, dtype=np.int64)
        if not unique and len(s) > 1:
            if not _lex_sorted(p, s, o):
                order = np.lexsort((o, s, p))
                s, p, o = s[order], p[order], o[order]
            keep = np.ones(len(s), dtype=bool)
            keep[1:] = (s[1:] != s[:-1]) | (p[1:] != p[:-1]) | (o[1:] != o[:-1])
            s, p, o = s[keep], p[keep], o[keep]
        self.s, self.p, self.o = s, p, o

    @classmethod
    def empty(cls) -> MemoryGraph:
        return cls(EMPTY, EMPTY, EMPTY, unique=True)

    def __len__(self) -> int:
        return len(self.s)

    @cached_property
    def in_pso_order(self) -> bool:
        """Whether the columns are sorted by (predicate, subject, object), as
        a graph built without ``unique`` always is: a sorted batch can then
        be checked against them directly (engine/store/layered_graph.py)."""
        return _lex_sorted(self.p, self.s, self.o)

    @cached_property
    def bounds(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]] | None:
        """(lowest, highest) ID of each column, None when empty: a union of
        graphs skips a member whose ranges a pattern's constants miss."""
        if not len(self):
            return None
        return tuple((int(c.min()), int(c.max())) for c in (self.s, self.p, self.o))

    # ------------------------------------------------------------- sort orders
    #: a column sorted along with every order (None: none); see TimedTriples
    _carried: np.ndarray | None = None

    @cached_property
    def pso(self) -> _Order:
        return _Order(self.p, self.s, self.o, True, self._carried)

    @cached_property
    def pos(self) -> _Order:
        return _Order(self.p, self.o, self.s, True, self._carried)

    @cached_property
    def spo(self) -> _Order:
        return _Order(self.s, self.p, self.o, False, self._carried)

    @cached_property
    def osp(self) -> _Order:
        return _Order(self.o, self.s, self.p, False, self._carried)

    # ------------------------------------------------------------ cardinality
    def count(self, s: int | None, p: int | None, o: int | None) -> int:
        """Exact number of triples matching constants (None = any); the planner's
        cardinality source."""
        if any(v is not None and v <= 0 for v in (s, p, o)):
            return 0
        if p is not None:
            if s is not None:
                lo, hi = self.pso.ranges(np.array([(p << 32) | s]))
                if o is None:
                    return int(hi[0] - lo[0])
                return int(np.count_nonzero(self.pso.third[lo[0] : hi[0]] == o))
            if o is not None:
                lo, hi = self.pos.ranges(np.array([(p << 32) | o]))
                return int(hi[0] - lo[0])
            lo = np.searchsorted(self.pso.key, p << 32)
            hi = np.searchsorted(self.pso.key, (p + 1) << 32)
            return int(hi - lo)
        if s is not None:
            lo, hi = self.spo.ranges(np.array([s]))
            if o is None:
                return int(hi[0] - lo[0])
            return int(np.count_nonzero(self.spo.third[lo[0] : hi[0]] == o))
        if o is not None:
            lo, hi = self.osp.ranges(np.array([o]))
            return int(hi[0] - lo[0])
        return len(self)

    @cached_property
    def _predicate_stats(self) -> dict[int, tuple[int, int, int]]:
        """Per predicate: (triples, distinct subjects, distinct objects), the
        sizes of Wukong's index vertices, computed once per graph."""
        if not len(self):
            return {}
        # the orders are sorted: distinct values are run starts (np.unique would sort again)
        preds, counts = _runs(self.pso.first)
        _, distinct_s = _runs(_run_values(self.pso.key) >> 32)
        _, distinct_o = _runs(_run_values(self.pos.key) >> 32)
        return {
            int(p): (int(n), int(ds), int(do))
            for p, n, ds, do in zip(preds.tolist(), counts.tolist(), distinct_s.tolist(),
                                    distinct_o.tolist(), strict=True)
        }

    def degree_stats(self, p: int | None) -> tuple[int, int, int]:
        """(triples, distinct subjects, distinct objects) of predicate ``p``, or of
        the whole graph when ``p`` is None: the planner's fan-out estimates."""
        if p is None:
            return self._graph_stats
        return self._predicate_stats.get(p, (0, 0, 0))

    @cached_property
    def _graph_stats(self) -> tuple[int, int, int]:
        if not len(self):
            return 0, 0, 0
        return len(self), len(np.unique(self.s)), len(np.unique(self.o))

    # ------------------------------------------------------------ exploration
    def match(
        self, s: np.ndarray | None, p: np.ndarray | None, o: np.ndarray | None, n_rows: int
    ) -> Matches:
        """Match one triple pattern for each of ``n_rows`` input rows.

        ``s``, ``p``, ``o`` are either None (free) or an ID column of length
        ``n_rows`` (the value bound in that row). Returns ``(row, s, p, o)``:
        for every matching triple, the input row it extends and its IDs.
        """
        return self.match_where(s, p, o, n_rows, None)

    def match_where(self, s, p, o, n_rows: int, visible: Visibility | None) -> Matches:
        """:meth:`match`, keeping only the rows whose carried value ``visible``
        accepts (None: all): how a time slice of a stream batch is read."""
        if p is not None:
            if s is not None and o is not None and visible is None and n_rows >= HASHED_PROBE_MIN:
                hashed = self._hashed_check(s, p, o)
                if hashed is not None:
                    return hashed
            if s is not None:
                return self._probe(self.pso, p, s, ("p", "s", "o"), o, visible)
            if o is not None:
                return self._probe(self.pos, p, o, ("p", "o", "s"), None, visible)
            lo = np.searchsorted(self.pso.key, np.where(p > 0, p << 32, -1))
            hi = np.searchsorted(self.pso.key, np.where(p > 0, (p + 1) << 32, -1))
            return self._expand(self.pso, lo, hi, ("p", "s", "o"), None, visible)
        if (s is not None or o is not None) and n_rows == 1 and len(self) <= SCANNED_ROWS_MAX \
                and ("spo" if s is not None else "osp") not in self.__dict__:
            return self._scanned(s, o, visible)
        if s is not None:
            return self._probe(self.spo, s, None, ("s", "p", "o"), o, visible)
        if o is not None:
            return self._probe(self.osp, o, None, ("o", "s", "p"), None, visible)
        ss, pp, oo = self.s, self.p, self.o
        if visible is not None:
            keep = visible(self._carried)
            ss, pp, oo = ss[keep], pp[keep], oo[keep]
        check_rows(n_rows * len(ss))
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), len(ss))
        tile = np.tile
        return rows, tile(ss, n_rows), tile(pp, n_rows), tile(oo, n_rows)

    def _scanned(self, s: np.ndarray | None, o: np.ndarray | None, visible: Visibility | None) -> Matches:
        """The matches of one row binding the subject or the object (or both)
        but no predicate, by comparing the graph's columns: a stream batch
        read this way once or twice (LSBench L1's user) would otherwise sort
        its rows into an order by subject (or object) for that alone, and a
        batch is replaced by a merged one within a few steps."""
        keep = self.s == s[0] if s is not None else None
        if o is not None:
            keep = self.o == o[0] if keep is None else keep & (self.o == o[0])
        if visible is not None:
            keep &= visible(self._carried)
        at = np.flatnonzero(keep)
        check_rows(len(at))
        return np.zeros(len(at), dtype=np.int64), self.s[at], self.p[at], self.o[at]

    def _hashed_check(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> Matches | None:
        """The matches of a long, fully bound probe of one predicate, by its hash
        set (:mod:`~engine.store.key_set`); None when that does not apply."""
        predicate = int(p[0])
        if predicate <= 0 or not bool((p == predicate).all()):
            return None
        pairs = self._pairs_of(predicate)
        if pairs is None:
            return None
        rows = np.flatnonzero(pairs.contains(_pair_key(s, o)))
        return rows, s[rows], p[rows], o[rows]

    def _pairs_of(self, predicate: int) -> KeySet | None:
        """The ``subject << 32 | object`` keys of ``predicate``, hashed once."""
        cache = self.__dict__.setdefault("_key_sets", {})
        if predicate not in cache:
            lo = int(np.searchsorted(self.pso.key, predicate << 32))
            hi = int(np.searchsorted(self.pso.key, (predicate + 1) << 32))
            too_large = hi - lo > HASHED_PREDICATE_MAX
            pairs = _pair_key(self.pso.second[lo:hi], self.pso.third[lo:hi])
            cache[predicate] = None if too_large else KeySet(pairs)
        return cache[predicate]

    def _probe(self, order: _Order, high: np.ndarray, low: np.ndarray | None, names: tuple[str, str, str],
               check_third, visible: Visibility | None):
        """The matches of the keys ``high << 32 | low`` (``high`` alone when
        ``low`` is None) in ``order``: a short probe column in one compiled
        call, a longer one by vectorised binary searches."""
        if len(high) <= SORTED_PROBE_MIN and (visible is None or isinstance(visible, Between)):
            found = _compiled_probe(order, high, low, check_third, visible)
            if found is not None:
                return _named(found, names)
        keys = _pair_key(high, low) if low is not None else np.where(high > 0, high, -1)
        lo, hi = order.ranges(keys)
        return self._expand(order, lo, hi, names, check_third, visible)

    @staticmethod
    def _expand(order: _Order, lo, hi, names: tuple[str, str, str], check_third,
                visible: Visibility | None):
        """Gather the rows of the given ranges; ``check_third`` (a per-input-row
        column) keeps only triples whose last column equals it."""
        if (check_third is not None and visible is None and order.third_sorted_per_key
                and int((hi - lo).sum()) > 4 * len(lo) + 64):
            # long neighbour lists and the whole triple bound: search each list
            # (sorted on the third column) instead of reading it
            rows, pos = _search_third(order, lo, hi, check_third)
            cols = {names[0]: order.first[pos], names[1]: order.second[pos], names[2]: order.third[pos]}
            return rows, cols["s"], cols["p"], cols["o"]
        if visible is not None and over_budget(int(np.maximum(hi - lo, 0).sum())):
            rows, pos = _expand_visible(order, lo, hi, visible)
        else:
            rows, pos = expand_ranges(lo, hi)
            if visible is not None:
                keep = visible(order.carried[pos])
                rows, pos = rows[keep], pos[keep]
        cols = {names[0]: order.first[pos], names[1]: order.second[pos], names[2]: order.third[pos]}
        if check_third is not None:
            keep = cols[names[2]] == check_third[rows]
            rows = rows[keep]
            cols = {k: v[keep] for k, v in cols.items()}
        return rows, cols["s"], cols["p"], cols["o"]

    def contains(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Boolean mask: is each (s[i], p[i], o[i]) in the graph?"""
        return contains_by_match(self, s, p, o)

    def neighbour_reader(self, predicate: int | None, backward: bool,
                         excluded: frozenset[int] = frozenset()) -> NeighbourReader:
        """One vertex's neighbours at a time (:func:`engine.store.graph.neighbour_reader`):
        a binary search of the key in PSO/POS (SPO/OSP without a predicate),
        through memoryviews, whose items are Python ints."""
        if predicate is not None:
            if predicate <= 0:
                return no_neighbours
            order = self.pos if backward else self.pso
            return KeyedLists(order.key, order.third, predicate)
        order = self.osp if backward else self.spo
        # OSP holds (o, s, p), SPO (s, p, o): the neighbour and the predicate of each row
        keys = memoryview(order.key)
        neighbours = memoryview(order.second if backward else order.third)
        predicates = memoryview(order.third if backward else order.second)

        end = len(keys)

        def of_any(vertex: int) -> list[int]:
            lo = bisect_left(keys, vertex)
            hi = bisect_right(keys, vertex, lo, min(lo + _NEAR, end))
            if hi == lo + _NEAR:
                hi = bisect_right(keys, vertex, hi)
            return [n for q, n in zip(predicates[lo:hi], neighbours[lo:hi]) if q not in excluded]

        return of_any

    # ------------------------------------------------------------------ edits
    def with_changes(self, add: MemoryGraph | None, remove: MemoryGraph | None) -> MemoryGraph:
        """A new graph: this one minus ``remove`` plus ``add`` (copy on write, so
        readers of the old graph keep a consistent snapshot)."""
        s, p, o = self.s, self.p, self.o
        if remove is not None and len(remove) and len(self):
            gone = remove.contains(s, p, o)
            s, p, o = s[~gone], p[~gone], o[~gone]
        if add is not None and len(add):
            s = np.concatenate([s, add.s])
            p = np.concatenate([p, add.p])
            o = np.concatenate([o, add.o])
            return MemoryGraph(s, p, o)
        return MemoryGraph(s, p, o, unique=True)
