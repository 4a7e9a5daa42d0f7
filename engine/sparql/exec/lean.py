"""Small queries of a known shape run row by row, without the executor.

What a client sends again and again is a lookup: a user's name and age,
their friends, the posts of their friends, a COUNT of the likes on their
posts; a few triple patterns with constant predicates, reached from one
constant, and tens of rows. The executor answers them right, but through
algebra nodes, a planner's estimates, and NumPy calls whose fixed cost
(about a microsecond each, a few dozen per pattern) is most of the work
on inputs of one row.

A :class:`LeanPlan` is compiled once per query *shape* (the query with its
lifted constants as slots, :mod:`engine.sparql.syntax.shapes`) for the
forms it knows: ``SELECT [DISTINCT] vars`` or ``ASK`` or ``SELECT
(COUNT([DISTINCT] ?v | *) AS ?c)`` over one basic graph pattern of the
default graph whose predicates are constant, with LIMIT and OFFSET. Each
run reads the graph's neighbour lists one vertex at a time
(:func:`engine.store.graph.neighbour_reader`, readers kept per graph), as
Python ints, in an order chosen per request (greedy: a check of a pattern
whose ends are both known first, else the pattern whose constant end has
the shortest list, else one that continues from a bound variable), and
stops early when LIMIT (or ASK) has its rows.

A run gives up (None: the caller runs the executor, which answers the
same) as soon as a step would hold more than :data:`LEAN_ROWS` rows or
scan more than :data:`LEAN_WORK` list items, or go over the query's row
budget (the executor then raises it as it would have): so a plan is only
ever the cheaper way, and a bad constant (a hub) costs one list's length.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from engine.rdf import IRI, XSD_INTEGER, Literal, Variable
from engine.sparql import algebra as A
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.store import Graph
from engine.store.graph import NeighbourReader, neighbour_reader
from engine.store.union_graph import UnionGraph

#: rows a step may hold before the run gives up for the executor
LEAN_ROWS = 1024
#: list items a run may read or scan before it gives up
LEAN_WORK = 1 << 16

#: what a pattern position holds: a variable's name, a constant term, or a slot number
_VAR, _TERM, _SLOT = 0, 1, 2
Place = tuple[int, object]


class _Pattern:
    """One triple pattern: its subject and object places and its predicate's place."""

    __slots__ = ("subject", "predicate", "object")

    def __init__(self, subject: Place, predicate: Place, object_: Place) -> None:
        self.subject, self.predicate, self.object = subject, predicate, object_


class LeanPlan:
    """A query shape's row-by-row plan (see the module docstring); built by
    :meth:`compile`, run by :meth:`run`."""

    def __init__(self, form: str, patterns: list[_Pattern], variables: list[str],
                 distinct: bool, offset: int, limit: int | None,
                 count: tuple[str, str | None, bool] | None) -> None:
        self.form = form
        self.patterns = patterns
        #: the answer's variables (SELECT)
        self.variables = variables
        self.distinct = distinct
        self.offset, self.limit = offset, limit
        #: (result variable, counted variable or None for ``*``, DISTINCT) of a COUNT query
        self.count = count

    @classmethod
    def compile(cls, query: A.Query, slot_of: Mapping[Hashable, int]) -> LeanPlan | None:
        """The plan of ``query`` (a shape's template: ``slot_of`` maps each
        slot's placeholder term to its slot number), or None for a query
        this module does not run."""
        if query.dataset is not None or query.form not in ("SELECT", "ASK"):
            return None
        node = query.pattern
        offset, limit = 0, None
        if isinstance(node, A.Slice):
            offset, limit, node = node.offset, node.limit, node.pattern
        distinct = isinstance(node, A.Distinct)
        if distinct:
            node = node.pattern
        count = None
        if query.form == "ASK":
            variables: list[str] = []
        elif isinstance(node, A.Project) and [v.name for v in node.vars] == [v.name for v in query.variables]:
            variables = [v.name for v in node.vars]
            node = node.pattern
            count = _count_of(node, variables)
            if count is not None:
                node = node.pattern.pattern  # type: ignore[union-attr]
        else:
            return None
        if not isinstance(node, A.BGP):
            return None
        patterns = []
        for triple in dict.fromkeys(node.triples):  # a BGP is a set
            places = [_place(t, slot_of) for t in (triple.subject, triple.predicate, triple.object)]
            if None in places or places[1][0] == _VAR:  # type: ignore[index]
                return None
            if places[0][0] == _VAR and places[0] == places[2]:  # ?x <p> ?x
                return None
            patterns.append(_Pattern(*places))  # type: ignore[arg-type]
        if not _reachable(patterns):
            return None
        return cls(query.form, patterns, variables, distinct, offset, limit, count)

    def run(self, graph: Graph, terms: QueryTerms, slots: Sequence[object],
            max_rows: int | None) -> Solutions | None:
        """The solutions (for ASK, one row or none; for COUNT, its one row),
        or None when the run gave up (the executor answers instead).
        ``slots``: the request's constant terms, by slot number."""
        encode = terms.encode
        ids = {}
        for pattern in self.patterns:
            for kind, value in (pattern.subject, pattern.predicate, pattern.object):
                if kind != _VAR and (kind, value) not in ids:
                    term = slots[value] if kind == _SLOT else value  # type: ignore[index]
                    if not isinstance(term, (IRI, Literal)):
                        return None
                    ids[kind, value] = encode(term)
        cap = LEAN_ROWS if max_rows is None else min(LEAN_ROWS, max_rows)
        wanted = None
        if self.form == "ASK":
            wanted = 1
        elif self.limit is not None and not self.distinct and self.count is None:
            wanted = self.offset + self.limit
        counting = self.count is not None and (self.count[1] is None or not self.count[2])
        explored = _explore(self.patterns, ids, graph, cap, wanted, counting, max_rows)
        if explored is None:
            return None
        names, rows, counted = explored
        if self.form == "ASK":
            return Solutions({}, min(len(rows), 1))
        if self.count is not None:
            return self._count(names, rows, counted, terms)
        return self._select(names, rows)

    def _select(self, names: dict[str, int], rows: list[tuple]) -> Solutions:
        at = [names.get(v) for v in self.variables]
        projected = [tuple(0 if i is None else row[i] for i in at) for row in rows]
        if self.distinct:
            projected = list(dict.fromkeys(projected))
        end = None if self.limit is None else self.offset + self.limit
        projected = projected[self.offset:end]
        columns = (np.array(c, dtype=np.int64) for c in zip(*projected)) if projected else \
            (np.zeros(0, dtype=np.int64) for _ in self.variables)
        return Solutions(dict(zip(self.variables, columns, strict=True)), len(projected))

    def _count(self, names: dict[str, int], rows: list[tuple], counted: int | None,
               terms: QueryTerms) -> Solutions | None:
        name, variable, distinct = self.count  # type: ignore[misc]
        if variable is not None and variable not in names:  # never bound: counts nothing
            total = 0
        elif counted is not None:
            total = counted
        elif variable is not None and distinct:
            at = names[variable]
            total = len({row[at] for row in rows})
        else:
            total = len(rows)
        if self.offset or self.limit == 0:
            return Solutions({name: np.zeros(0, dtype=np.int64)}, 0)
        value = terms.encode(Literal(str(total), XSD_INTEGER))
        return Solutions({name: np.array([value], dtype=np.int64)}, 1)


def _count_of(node: A.Pattern, variables: list[str]) -> tuple[str, str | None, bool] | None:
    """``SELECT (COUNT(...) AS ?c)`` over a BGP, as (``c``, the counted
    variable or None for ``*``, DISTINCT); None for any other projection."""
    if not (isinstance(node, A.Extend) and isinstance(node.pattern, A.GroupBy)
            and isinstance(node.expr, A.VarExpr) and variables == [node.var.name]):
        return None
    group = node.pattern
    if group.keys or len(group.aggregates) != 1 or not isinstance(group.pattern, A.BGP):
        return None
    var, aggregate = group.aggregates[0]
    if var != node.expr.var or aggregate.name != "COUNT":
        return None
    if aggregate.expr is None:
        return None if aggregate.distinct else (node.var.name, None, False)
    if not isinstance(aggregate.expr, A.VarExpr):
        return None
    return node.var.name, aggregate.expr.var.name, aggregate.distinct


def _place(term: object, slot_of: Mapping[Hashable, int]) -> Place | None:
    """Where a pattern's term comes from; None for a kind this module does not run."""
    if isinstance(term, Variable):
        return _VAR, term.name
    if isinstance(term, (IRI, Literal)):
        slot = slot_of.get(term)
        return (_TERM, term) if slot is None else (_SLOT, slot)
    return None  # a triple term


def _reachable(patterns: list[_Pattern]) -> bool:
    """Can every pattern be read from a known end, in some order?"""
    bound: set[str] = set()
    left = list(patterns)
    while left:
        step = next((p for p in left if _known(p.subject, bound) or _known(p.object, bound)), None)
        if step is None:
            return False
        left.remove(step)
        bound.update(v for k, v in (step.subject, step.object) if k == _VAR)  # type: ignore[misc]
    return True


def _known(place: Place, bound: set[str] | dict[str, int]) -> bool:
    return place[0] != _VAR or place[1] in bound


#: neighbour readers of the graphs read last: graph identity -> (the graph, its
#: readers by (predicate, backward)); a few graphs only, so that old snapshots
#: (a delta per write) are not kept alive by their readers
_READERS: dict[int, tuple[Graph, dict[tuple[int, bool], _Lists | None]]] = {}
GRAPHS_KEPT = 4


def _reader(graph: Graph, predicate: int, backward: bool) -> _Lists | None:
    """The graph's reader of one predicate's lists, kept: a snapshot's graph
    is immutable and serves many queries."""
    found = _READERS.get(id(graph))
    if found is None or found[0] is not graph:
        while len(_READERS) >= GRAPHS_KEPT:
            _READERS.pop(next(iter(_READERS)), None)
        found = _READERS[id(graph)] = (graph, {})
    readers = found[1]
    key = (predicate, backward)
    read = readers.get(key, _NOT_MADE)
    if read is _NOT_MADE:
        read = readers[key] = _Lists.of(graph, predicate, backward)
    return read  # type: ignore[return-value]


_NOT_MADE = object()


class _Lists:
    """One predicate's lists in a graph, read a vertex at a time as parts:
    one per member of a union (a base and its deltas) that has the
    predicate, each a view of that member's arrays. A union's own reader
    joins the parts into one new list, so a hub's list (every post of a
    type) would be copied whole just to learn its length."""

    __slots__ = ("readers",)

    def __init__(self, readers: list[NeighbourReader]) -> None:
        self.readers = readers

    @classmethod
    def of(cls, graph: Graph, predicate: int, backward: bool) -> _Lists | None:
        if isinstance(graph, UnionGraph):
            readers = graph.member_readers(predicate, backward)
        else:
            read = neighbour_reader(graph, predicate, backward)
            readers = None if read is None else [read]
        return None if readers is None else cls(readers)

    def __call__(self, vertex: int) -> list[Sequence[int]]:
        return [read(vertex) for read in self.readers]


def _size(parts: list[Sequence[int]]) -> int:
    return sum(map(len, parts))


class _GiveUp(Exception):
    """Over a bound of the lean run: the executor answers."""


#: a pattern end as a run reads it: (its column, 0) for a bound variable, (None, its ID) for a constant
Ref = tuple[int | None, int]


def _explore(patterns: list[_Pattern], ids: dict, graph: Graph, cap: int, wanted: int | None,
             counting: bool, max_rows: int | None) -> tuple[dict[str, int], list[tuple], int | None] | None:
    """(column of each variable, rows, and when ``counting`` the rows the
    last pattern would give, summed rather than built) of the patterns;
    None when a bound was reached."""
    names: dict[str, int] = {}
    rows: list[tuple] = [()]
    left = list(patterns)
    work = _Work()
    try:
        while left and rows:
            pattern, backward, shared = _next_step(left, names, ids, graph, len(rows))
            left.remove(pattern)
            last = not left
            read = _reader(graph, ids[pattern.predicate], backward)
            if read is None:
                return None
            known, other = pattern.subject, pattern.object
            if backward:
                known, other = other, known
            if known[0] != _VAR and shared is None:
                shared = read(ids[known])
            column = names.get(known[1]) if known[0] == _VAR else None  # type: ignore[call-overload]
            if _known(other, names):
                rows = _check(rows, read, column, shared, _ref(other, names, ids), work,
                              wanted if last else None)
            elif last and counting:
                total = _count_rows(rows, read, column, shared, work)
                names[other[1]] = len(names)  # type: ignore[index]
                return (names, [], total) if max_rows is None or total <= max_rows else None
            else:
                rows = _expand(rows, read, column, shared, cap, work, wanted if last else None)
                names[other[1]] = len(names)  # type: ignore[index]
    except _GiveUp:
        return None
    return names, rows, None


class _Work:
    """List items read so far in one run, against :data:`LEAN_WORK`."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items = 0

    def add(self, items: int) -> None:
        self.items += items
        if self.items > LEAN_WORK:
            raise _GiveUp


def _next_step(left: list[_Pattern], names: dict[str, int], ids: dict, graph: Graph,
               n_rows: int) -> tuple[_Pattern, bool, list[Sequence[int]] | None]:
    """The pattern to read next, whether from its object end, and its
    constant end's list if read: a check (both ends known) first, then the
    cheapest of the patterns with a known end (a constant end's list is
    read for its length; a bound variable's lists are taken as a few items
    each)."""
    best: tuple[int, int] | None = None
    chosen: tuple[_Pattern, bool, list[Sequence[int]] | None] | None = None
    for pattern in left:
        s_known, o_known = _known(pattern.subject, names), _known(pattern.object, names)
        if s_known and o_known:  # from the constant end if one is: its list is read once
            return pattern, pattern.subject[0] == _VAR and pattern.object[0] != _VAR, None
        if not (s_known or o_known):
            continue
        known = pattern.subject if s_known else pattern.object
        if len(left) == 1:
            return pattern, not s_known, None
        found = None
        if known[0] == _VAR:
            cost = (4 * n_rows, 0)
        else:
            read = _reader(graph, ids[pattern.predicate], not s_known)
            found = [] if read is None else read(ids[known])
            cost = (_size(found) * n_rows, 1)
        if best is None or cost < best:
            best, chosen = cost, (pattern, not s_known, found)
    if chosen is None:  # pragma: no cover - compile checked that every pattern is reachable
        raise _GiveUp
    return chosen


def _ref(place: Place, names: dict[str, int], ids: dict) -> Ref:
    return (names[place[1]], 0) if place[0] == _VAR else (None, ids[place])  # type: ignore[index]


def _expand(rows: list[tuple], read: _Lists, column: int | None, shared: list[Sequence[int]] | None,
            cap: int, work: _Work, wanted: int | None) -> list[tuple]:
    """Each row extended by each neighbour of its known end (the row's
    ``column``, or the ``shared`` lists of a constant end); stops at
    ``wanted`` rows (the last pattern under a LIMIT)."""
    grown: list[tuple] = []
    for row in rows:
        for part in (shared if column is None else read(row[column])):  # type: ignore[union-attr]
            if not part:
                continue
            if wanted is not None:
                part = part[:wanted - len(grown)]
            work.add(len(part))
            if len(grown) + len(part) > cap:
                raise _GiveUp
            grown += [(*row, n) for n in part]
            if wanted is not None and len(grown) >= wanted:
                return grown
    return grown


def _check(rows: list[tuple], read: _Lists, column: int | None, shared: list[Sequence[int]] | None,
           other: Ref, work: _Work, wanted: int | None) -> list[tuple]:
    """The rows whose known end has the other end among its neighbours."""
    other_column, other_constant = other
    kept: list[tuple] = []
    for row in rows:
        parts = shared if column is None else read(row[column])
        work.add(_size(parts))  # type: ignore[arg-type]
        value = other_constant if other_column is None else row[other_column]
        if any(value in part for part in parts):  # type: ignore[union-attr]
            kept.append(row)
            if wanted is not None and len(kept) >= wanted:
                break
    return kept


def _count_rows(rows: list[tuple], read: _Lists, column: int | None, shared: list[Sequence[int]] | None,
                work: _Work) -> int:
    """How many rows extending ``rows`` through the last pattern would give (lists' lengths summed)."""
    if column is None:
        return _size(shared) * len(rows)  # type: ignore[arg-type]
    work.add(len(rows))
    return sum(_size(read(row[column])) for row in rows)
