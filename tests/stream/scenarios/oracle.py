"""The expected events of a scenario, from ``../shared/SEMANTICS.md`` and the
choices ``docs/semantics.md`` writes down, never from the engine's code.

The oracle replays the scenario's operations in order and keeps, per
stream, every accepted item with its timestamp and the operation that
posted it, per stored graph the triples updates put there and the triples
streams absorbed (with the item's timestamp and the stream), and per query
where its windows stand. After each operation it fires what is due:

* a time window closes at ``t = k*STEP`` (epoch-aligned) and holds the
  items with timestamp in ``[t - RANGE, t)``, as a set of triples; it fires
  once every stream of the query has a watermark ``>= t`` (the stable
  watermark), in order, none skipped, empty ones too;
* with different STEPs the query fires at every close of any window, each
  window holding its latest window closed by then;
* the first window is the first that closes after the smallest watermark
  of the query's streams at registration, or, when none has one, the one
  ``floor(ts / STEP) + 1`` of the first data item that arrives (a heartbeat
  is not a data item);
* ``[TRIPLES n]`` holds the stream's triples ``(j-1)n .. jn-1`` counted from
  registration, an item counting its distinct triples (an item is a graph);
* a stored graph is read as of the window's close: what the query's own
  streams absorbed from items with timestamp ``< t`` (for a count window,
  up to its last item's timestamp), what other streams absorbed so far,
  and what updates left there;
* the window's result is the query's WHERE clause, run by pyoxigraph as a
  one-shot query over exactly that dataset (C-SPARQL: the windows and the
  ``FROM`` graphs merged into the default graph; RSP-QL: each window a
  named graph, the stored default graph or the ``FROM`` graphs as default);
* RSTREAM reports the result, ISTREAM / DSTREAM the multiset differences
  with the previous window's; ``REGISTER STREAM`` turns each window's
  constructed triples into an item of the output stream at ``t``.

Where the contract leaves the answer open, the oracle raises
:class:`Ambiguous` instead of guessing; the generator avoids those cases
and the shrinker throws away candidates that reach them.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field

import pyoxigraph

from tests.stream.scenarios.model import (
    Declare,
    Post,
    QuerySpec,
    Reconnect,
    Register,
    Scenario,
    StreamSpec,
    Triple,
    Unregister,
    Update,
)
from tests.stream.scenarios.terms import canonical

#: posts this large are above the size threshold the issue names (16,384)
LARGE_BATCH = 16_384
#: ... and this large above the store's delta threshold
HUGE_BATCH = 65_536


#: rows of one result a report prints
SHOWN_ROWS = 6


class Ambiguous(Exception):
    """The contract does not say what this scenario must report."""


@dataclass(frozen=True)
class Result:
    """A reported result, in canonical terms: rows (SELECT: each a sorted
    tuple of (variable, term); CONSTRUCT: (s, p, o)) with their counts, or a
    boolean (ASK)."""

    form: str
    rows: tuple = ()
    boolean: bool | None = None

    @staticmethod
    def of(form: str, counter: Counter | None = None, boolean: bool | None = None) -> Result:
        rows = tuple(sorted(((key, n) for key, n in (counter or Counter()).items() if n > 0), key=repr))
        return Result(form, rows, boolean)

    def counter(self) -> Counter:
        return Counter(dict(self.rows))

    def show(self, limit: int = SHOWN_ROWS) -> str:
        """The result as a reader checks it: at most ``limit`` rows, then their number."""
        if self.form == "ASK":
            return str(self.boolean)
        shown = ", ".join(_show_row(key) + (f" x{n}" if n > 1 else "") for key, n in self.rows[:limit])
        more = f", ... {sum(n for _, n in self.rows)} rows in all" if len(self.rows) > limit else ""
        return "{" + shown + more + "}"


def _show_row(key: tuple) -> str:
    if key and isinstance(key[0], tuple):
        return "(" + " ".join(f"?{v}={t}" for v, t in key) + ")"
    return "(" + " ".join(str(t) for t in key) + ")"


@dataclass(frozen=True)
class Event:
    """One reported window; ``start``/``end`` None where the contract does not
    fix them (count windows; the start when STEPs differ)."""

    sequence: int
    start: int | None
    end: int | None
    result: Result

    def show(self) -> str:
        return f"#{self.sequence} [{self.start}, {self.end}) {self.result.show()}"


@dataclass
class Expected:
    """What the engine must report: events per query (by event name),
    whether each operation is accepted ("ok") or refused ("refused"), each
    named graph's content at the end, and the features the scenario
    actually exercised (for attributing failures)."""

    events: dict[str, list[Event]] = field(default_factory=dict)
    outcomes: list[str] = field(default_factory=list)
    graphs: dict[str, frozenset[Triple]] = field(default_factory=dict)
    exercised: set[str] = field(default_factory=set)


@dataclass
class _Stream:
    spec: StreamSpec
    is_output: bool = False
    watermark: int | None = None
    #: accepted data items in order: (timestamp, distinct triples, operation index)
    items: list[tuple[int, frozenset, int]] = field(default_factory=list)
    stamps: list[int] = field(default_factory=list)

    def content(self, start: int, end: int) -> list[tuple[int, frozenset, int]]:
        """The items with timestamp in ``[start, end)``."""
        low = bisect.bisect_left(self.stamps, start)
        high = bisect.bisect_left(self.stamps, end)
        return self.items[low:high]


@dataclass
class _Query:
    spec: QuerySpec
    registered_at: int
    #: next window close (same STEP) or evaluation instant (different STEPs); None: waiting for data
    next_close: int | None = None
    previous: Counter = field(default_factory=Counter)
    sequence: int = 0
    #: count windows: (timestamp, triples) of each counted item since registration
    counted: list[tuple[int, frozenset]] = field(default_factory=list)
    counted_triples: int = 0
    fired_count_windows: int = 0
    seen: set = field(default_factory=set)


class Oracle:
    """Replays one scenario; :func:`expect` is the entry point."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.streams: dict[str, _Stream] = {}  # by IRI
        self.names: dict[str, str] = {}  # stream name -> IRI (declared streams: clients post to these)
        self.taken: dict[str, str] = {}  # every stream's name -> IRI, output streams' derived names too
        self.static: dict[str | None, set[Triple]] = {g: set(t) for g, t in scenario.static.items()}
        #: graph -> stream IRI -> (timestamps, triples) absorbed, in time order
        self.absorbed: dict[str, dict[str, tuple[list[int], list[Triple]]]] = {}
        self.absorbers: dict[str, set[str]] = {}  # graph -> stream IRIs absorbing into it
        self.queries: list[_Query] = []
        #: per query: the pyoxigraph store of its last window and the dataset it holds
        self.stores: dict[str, tuple[pyoxigraph.Store, dict]] = {}
        self.op_index = -1
        self.expected = Expected()
        for stream in scenario.streams:
            self._declare(stream)

    # ----------------------------------------------------------------- set-up
    def _declare(self, spec: StreamSpec, is_output: bool = False) -> None:
        """A stream, by IRI; only declared streams have a name clients post to
        (an output stream is known by its IRI alone)."""
        if is_output and spec.iri not in self.streams:
            self.taken[_derived_name(spec.iri, self.taken)] = spec.iri
        self.streams[spec.iri] = _Stream(spec, is_output)
        if not is_output:
            self.names[spec.name] = spec.iri
            self.taken[spec.name] = spec.iri
        self.absorbers.setdefault(spec.graph, set()).add(spec.iri)

    def run(self) -> Expected:
        for index, op in enumerate(self.scenario.ops):
            self.op_index = index
            self.expected.outcomes.append(self._apply(index, op))
        self._final_graphs()
        return self.expected

    def _apply(self, index: int, op) -> str:
        if isinstance(op, Post):
            return self._post(index, self.names[op.stream], op.items)
        if isinstance(op, Register):
            self._register(index, op.query)
        elif isinstance(op, Declare):
            output_names = {_local_name(q.spec.output) for q in self.queries if q.spec.output}
            if op.stream.name in output_names:
                self.expected.exercised.add("name_collision")
            if self.taken.get(op.stream.name, op.stream.iri) != op.stream.iri:
                return "refused"  # a name is one stream's (an output's derived name too): 409
            self._declare(op.stream)
        elif isinstance(op, Update):
            target = self.static.setdefault(op.graph, set())
            target.difference_update(op.delete)
            target.update(op.insert)
            if op.graph in self.absorbers:
                self.expected.exercised.add("static_into_absorbed")
        elif isinstance(op, Unregister):
            self.queries = [q for q in self.queries if q.spec.event_name != op.query]
        else:
            assert isinstance(op, Reconnect)
        return "ok"

    def _register(self, index: int, spec: QuerySpec) -> None:
        query = _Query(spec, index)
        self.expected.events[spec.event_name] = []
        if len(spec.steps) > 1:
            self.expected.exercised.add("different_steps")
        for graph in (*spec.from_graphs, *spec.from_named):
            foreign = self.absorbers.get(graph, set()) - set(spec.streams)
            if any(self.streams[s].is_output for s in foreign):
                raise Ambiguous(
                    f"{spec.name} reads graph <{graph}> that an output stream it does not read "
                    "fills: which of its items a window sees depends on firing order"
                )
            if foreign:
                self.expected.exercised.add("foreign_absorb")
        if spec.output:
            if _local_name(spec.output) in self.names:
                self.expected.exercised.add("name_collision")
            self._declare(StreamSpec(_local_name(spec.output), spec.output, spec.output), is_output=True)
        if not spec.is_count:
            marks = [self.streams[s].watermark for s in spec.streams if self.streams[s].watermark is not None]
            if marks:
                query.next_close = _next_instant(spec, min(marks))
            elif len(spec.steps) > 1:
                raise Ambiguous(
                    f"{spec.name} has different STEPs and no watermark at registration: "
                    "which instant holds the first item is not defined"
                )
        self.queries.append(query)
        self._fire_due()

    # ------------------------------------------------------------------ posts
    def _post(self, index: int, iri: str, items) -> str:
        stream = self.streams[iri]
        last = stream.watermark
        for ts, _ in items:
            if last is not None and ts < last:
                return "refused"  # late, or decreasing inside the batch: nothing ingested
            last = ts
        size = sum(len(t) for _, t in items)
        if size >= LARGE_BATCH:
            timeless = [t for _, triples in items for t in triples if not stream.spec.is_timing(t[1][1:-1])]
            self.expected.exercised.add("large_batch_asof" if timeless else "large_batch_timing")
            if timeless and size >= HUGE_BATCH:
                self.expected.exercised.add("huge_batch_asof")
        self._append(index, stream, items)
        self._fire_due()
        return "ok"

    def _append(self, index: int, stream: _Stream, items) -> None:
        """Ingest accepted items: keep them, absorb their timeless triples,
        advance the watermark, start waiting queries, count count windows."""
        first_data = None
        for ts, triples in items:
            if not triples:
                continue
            distinct = frozenset(triples)
            if first_data is None:
                first_data = ts
            stream.items.append((ts, distinct, index))
            stream.stamps.append(ts)
            self._absorb(stream, ts, distinct)
        if items:
            stream.watermark = items[-1][0]
        for query in self.queries:
            if stream.spec.iri not in query.spec.streams:
                continue
            if query.spec.is_count:
                self._count(query, items)
            elif query.next_close is None and first_data is not None and len(query.spec.steps) == 1:
                step = query.spec.windows[0].step_ms
                query.next_close = (first_data // step + 1) * step

    def _absorb(self, stream: _Stream, ts: int, triples: frozenset) -> None:
        by_stream = self.absorbed.setdefault(stream.spec.graph, {})
        stamps, absorbed = by_stream.setdefault(stream.spec.iri, ([], []))
        kept = [t for t in triples if not stream.spec.is_timing(t[1][1:-1])]
        if any(
            not set(kept).isdisjoint(other) for s, (_, other) in by_stream.items() if s != stream.spec.iri
        ):
            self.expected.exercised.add("shared_triple")
        stamps.extend([ts] * len(kept))
        absorbed.extend(kept)

    # ----------------------------------------------------------------- firing
    def _fire_due(self) -> None:
        """Fire every due time window, until chains settle (an output item can
        make another query's windows due)."""
        progress = True
        while progress:
            progress = False
            for query in self.queries:
                while not query.spec.is_count and (close := self._due(query)) is not None:
                    self._evaluate_time(query, close)
                    progress = True

    def _due(self, query: _Query) -> int | None:
        if query.next_close is None:
            return None
        marks = [self.streams[s].watermark for s in query.spec.streams]
        if any(m is None for m in marks) or query.next_close > min(marks):
            return None
        return query.next_close

    def _evaluate_time(self, query: _Query, t: int) -> None:
        spec = query.spec
        contents = []
        for window in spec.windows:
            close = t if len(spec.steps) == 1 else t // window.step_ms * window.step_ms
            items = self.streams[window.stream].content(close - window.range_ms, close)
            if any(posted < query.registered_at for _, _, posted in items):
                raise Ambiguous(
                    f"window {t} of {spec.name} reaches items posted before the query was "
                    "registered (freed or kept: docs/semantics.md frees them)"
                )
            contents.append(frozenset().union(*(triples for _, triples, _ in items)))
        current, constructed = self._run(spec, contents, t)
        start = t - spec.max_range if len(spec.steps) == 1 else None
        self._report(query, start, t, current)
        query.next_close = _next_instant(spec, t)
        if spec.output:
            self._append(self.op_index, self.streams[spec.output], [(t, tuple(sorted(constructed)))])

    def _count(self, query: _Query, items) -> None:
        """Count the items' triples into ``[TRIPLES n]`` windows; fire the full ones."""
        n = query.spec.windows[0].triples
        for ts, triples in items:
            if not triples:
                continue
            distinct = frozenset(triples)
            if len(distinct) < len(triples):
                self.expected.exercised.add("count_item_repeats")
            if distinct & query.seen:
                self.expected.exercised.add("count_cross_item_repeats")
            if query.counted and query.counted[-1][0] == ts:
                raise Ambiguous("two items with one timestamp on a count-window stream: one item or two?")
            query.seen |= distinct
            before = query.counted_triples
            query.counted.append((ts, distinct))
            query.counted_triples += len(distinct)
            boundary = (before // n + 1) * n
            if before < boundary < query.counted_triples:
                raise Ambiguous(
                    "a [TRIPLES n] boundary falls inside an item: which of its triples "
                    "come first is not defined (an item is a set)"
                )
        while query.counted_triples >= (query.fired_count_windows + 1) * n:
            query.fired_count_windows += 1
            self._evaluate_count(query, query.fired_count_windows, n)

    def _evaluate_count(self, query: _Query, j: int, n: int) -> None:
        content, position, last_ts = set(), 0, None
        for ts, triples in query.counted:
            if (j - 1) * n <= position < j * n:
                content |= triples
                last_ts = ts
            position += len(triples)
        current, _ = self._run(query.spec, [frozenset(content)], last_ts + 1)
        self._report(query, None, None, current)

    def _report(self, query: _Query, start: int | None, end: int | None, current: Counter) -> None:
        spec = query.spec
        if spec.form == "ASK":
            result = Result.of("ASK", boolean=bool(current["true"]))
        else:
            # differences of RDF terms as spelled ("0"^^xsd:integer is not "0"^^xsd:decimal),
            # then compared by value
            reported = {
                "RSTREAM": current,
                "ISTREAM": current - query.previous,
                "DSTREAM": query.previous - current,
            }[spec.policy]
            result = Result.of(spec.form, _canonical_rows(reported))
        query.previous = current
        query.sequence += 1
        self.expected.events[spec.event_name].append(Event(query.sequence, start, end, result))

    # ------------------------------------------------------------ evaluation
    def _snapshot(self, graph: str | None, spec: QuerySpec, t: int) -> set[Triple]:
        """Stored graph ``graph`` as window ``t`` of ``spec`` reads it."""
        triples = set(self.static.get(graph, ()))
        for stream, (stamps, absorbed) in self.absorbed.get(graph, {}).items():
            if stream in spec.streams:
                triples.update(absorbed[: bisect.bisect_left(stamps, t)])
            else:
                triples.update(absorbed)
        return triples

    def _run(self, spec: QuerySpec, contents: list[frozenset], t: int) -> tuple[Counter, set]:
        """The one-shot query over the window's dataset: its result as spelled
        (a Counter; ASK: {"true": 1} or empty) and, for CONSTRUCT, the
        constructed triples as spelled (an output stream's next item)."""
        dataset: dict[str | None, set[Triple]] = {}
        if spec.language == "csparql":
            dataset[None] = set().union(*contents)
            for graph in spec.from_graphs:
                dataset[None] |= self._snapshot(graph, spec, t)
        else:
            for window, content in zip(spec.windows, contents, strict=True):
                dataset.setdefault(window.name, set()).update(content)
            dataset[None] = set()
            for graph in spec.from_graphs or (None,):
                dataset[None] |= self._snapshot(graph, spec, t)
        for graph in spec.from_named:
            dataset.setdefault(graph, set()).update(self._snapshot(graph, spec, t))
        wanted = _predicates(spec)
        if wanted is not None:
            dataset = {g: {t for t in triples if t[1] in wanted} for g, triples in dataset.items()}
        store = self._load(spec.event_name, dataset)
        answer = store.query(spec.one_shot())
        if spec.form == "ASK":
            return Counter({"true": 1} if bool(answer) else {}), set()
        if spec.form == "CONSTRUCT":
            spelled = {(str(t.subject), str(t.predicate), str(t.object)) for t in answer}
            return Counter({triple: 1 for triple in spelled}), spelled
        names = [v.value for v in answer.variables]
        # a row's key: (variable, spelling) pairs sorted by variable; the
        # positions are sorted once, not every row (windows of huge batches
        # answer hundreds of thousands of rows)
        order = sorted(range(len(names)), key=names.__getitem__)
        sorted_names = [names[i] for i in order]
        rows: Counter = Counter()
        for solution in answer:
            values = tuple(solution)
            rows[tuple(zip(sorted_names, [_spelling(values[i]) for i in order]))] += 1
        return rows, set()

    def _load(self, query: str, dataset: dict[str | None, set[Triple]]) -> pyoxigraph.Store:
        """A pyoxigraph store holding exactly ``dataset``: the query's store of
        its previous window, changed by the difference (consecutive windows
        share most of their data, a stored graph of 20,000 triples all of it)."""
        store, previous = self.stores.get(query) or (pyoxigraph.Store(), {})
        added, removed = [], []
        for graph in set(dataset) | set(previous):
            new, old = dataset.get(graph, set()), previous.get(graph, set())
            suffix = " .\n" if graph is None else f" <{graph}> .\n"
            added += [f"{s} {p} {o}{suffix}" for s, p, o in new - old]
            removed += [f"{s} {p} {o}{suffix}" for s, p, o in old - new]
        if removed:
            for quad in pyoxigraph.parse("".join(removed).encode(), format=pyoxigraph.RdfFormat.N_QUADS):
                store.remove(quad)
        if added:
            load = store.load if previous else store.bulk_load  # bulk_load is for an empty store
            load("".join(added).encode(), format=pyoxigraph.RdfFormat.N_QUADS)
        for graph in dataset:
            if graph is not None:
                # a window (FROM NAMED WINDOW) or FROM NAMED graph is in the dataset even when empty
                store.add_graph(pyoxigraph.NamedNode(graph))
        self.stores[query] = (store, dataset)
        return store

    def _final_graphs(self) -> None:
        for graph in sorted(set(self.absorbed) | {g for g in self.static if g is not None}):
            triples = set(self.static.get(graph, ()))
            for _, absorbed in self.absorbed.get(graph, {}).values():
                triples.update(absorbed)
            self.expected.graphs[graph] = frozenset(tuple(canonical(x) for x in t) for t in triples)


def _canonical_rows(rows: Counter) -> Counter:
    """Rows of spelled terms (SELECT: (variable, term) pairs; CONSTRUCT:
    triples) as comparison keys."""
    keyed: Counter = Counter()
    for row, count in rows.items():
        if row and isinstance(row[0], tuple):
            keyed[tuple((name, canonical(term)) for name, term in row)] += count
        else:
            keyed[tuple(canonical(term) for term in row)] += count
    return keyed


_VARIABLE_PREDICATE = re.compile(r'(\?\w+|<[^>]*>)\s+\?\w+\s+(\?\w+|<[^>]*>|")')


def _predicates(spec: QuerySpec) -> set[str] | None:
    """The predicates the WHERE clause names, or None when a pattern has a
    variable predicate: the triples with other predicates cannot change the
    result, and leaving them out keeps 20,000-triple windows quick."""
    if _VARIABLE_PREDICATE.search(spec.where):
        return None
    return set(re.findall(r"<[^>]*>", spec.where))


def _spelling(term) -> str | None:
    return None if term is None else str(term)


def _next_instant(spec: QuerySpec, after: int) -> int:
    """The first window close (any window's, when STEPs differ) after ``after``."""
    return min((after // window.step_ms + 1) * window.step_ms for window in spec.windows)


def _local_name(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def _derived_name(iri: str, taken: dict[str, str]) -> str:
    """The name docs/semantics.md gives the stream a ``REGISTER STREAM``
    declares: its IRI's last segment, or the first free ``NAME-2``, ``NAME-3``, ..."""
    name, suffix = _local_name(iri), 2
    candidate = name
    while candidate in taken:
        candidate, suffix = f"{name}-{suffix}", suffix + 1
    return candidate


def expect(scenario: Scenario) -> Expected:
    """The events, outcomes and final graphs the contract wants for ``scenario``."""
    return Oracle(scenario).run()
