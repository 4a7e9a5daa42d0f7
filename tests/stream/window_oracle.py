"""An oracle for time-windowed continuous queries, written from SEMANTICS.md
alone (it shares no code with the engine): when a query evaluates, what each
of its windows holds then, and its answer by plain SPARQL in pyoxigraph over
exactly that content.

* The query evaluates at every *instant* ``t`` that is a close (a multiple of
  the STEP) of any of its windows, in time order, once every stream it reads
  has a watermark ``>= t``.
* At ``t`` window ``i`` holds its latest window closed at or before ``t``:
  close ``c = floor(t / STEP_i) * STEP_i``, the items with ``c - RANGE_i <= ts < c``.
* The first instant is the first after the smallest watermark of the query's
  streams at registration; if none has one, the first after the first data
  item that reaches one of them.
* C-SPARQL merges the windows and its FROM graphs into the default graph;
  RSP-QL names each window and reads the FROM graphs (or the store's default
  graph) outside ``WINDOW``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import pyoxigraph

Triple = tuple  # (IRI, IRI, IRI | Literal) of engine.rdf terms


@dataclass(frozen=True)
class OracleWindow:
    """One window of a query: the stream it reads (the name the test posts to),
    its RSP-QL name (None in C-SPARQL), RANGE and STEP in ms."""

    stream: str
    name: str | None
    range_ms: int
    step_ms: int


@dataclass
class StreamRecord:
    """What the test sent to one stream: its items in arrival order, each with
    the number of the post that carried it, and its watermark."""

    items: list[tuple[int, int, list]] = field(default_factory=list)
    watermark: int | None = None

    def post(self, number: int, items: Iterable[tuple[int, list]]) -> None:
        for ts, triples in items:
            if triples:
                self.items.append((number, ts, list(triples)))
            self.watermark = ts

    def between(self, start: int, end: int, since_post: int) -> set:
        """The triples of the items in ``[start, end)`` posted at or after post ``since_post``."""
        return {t for number, ts, triples in self.items if number >= since_post and start <= ts < end
                for t in triples}


def instants(first: int, until: int, steps: Sequence[int]) -> list[int]:
    """Every close of a window of these STEPs in ``[first, until]``, in order."""
    found: set[int] = set()
    for step in steps:
        k = -(-first // step)
        while k * step <= until:
            found.add(k * step)
            k += 1
    return sorted(found)


def first_instant(steps: Sequence[int], watermarks: Sequence[int | None], first_item_ts: int | None
                  ) -> int | None:
    """The query's first instant: after the smallest watermark its streams
    had at registration, or, with none, after its first data item."""
    marks = [w for w in watermarks if w is not None]
    after = min(marks) if marks else first_item_ts
    if after is None:
        return None
    return min((after // step + 1) * step for step in steps)


def window_bounds(instant: int, window: OracleWindow) -> tuple[int, int]:
    close = instant // window.step_ms * window.step_ms
    return close - window.range_ms, close


def _term(term) -> pyoxigraph.NamedNode | pyoxigraph.Literal:
    if hasattr(term, "lexical"):
        if term.lang:
            return pyoxigraph.Literal(term.lexical, language=term.lang)
        if term.datatype:
            return pyoxigraph.Literal(term.lexical, datatype=pyoxigraph.NamedNode(term.datatype))
        return pyoxigraph.Literal(term.lexical)
    return pyoxigraph.NamedNode(term.value)


def _quads(triples: Iterable[Triple], graph: str | None = None) -> list:
    target = pyoxigraph.NamedNode(graph) if graph else pyoxigraph.DefaultGraph()
    return [pyoxigraph.Quad(*(_term(t) for t in triple), target) for triple in triples]


def value(term) -> str | None:
    """A solution's term as text (engine or pyoxigraph term; None when unbound)."""
    if term is None:
        return None
    return term.lexical if hasattr(term, "lexical") else term.value


def answer(select_where: str, default: Iterable[Triple], named: dict[str, set] | None = None) -> Counter:
    """The rows of ``select_where`` (a SELECT over plain graphs) by pyoxigraph,
    as a multiset of value tuples in the order of its variables."""
    store = pyoxigraph.Store()
    store.extend(_quads(default))
    for graph, triples in (named or {}).items():
        store.extend(_quads(triples, graph))
    solutions = store.query(select_where)
    names = [v.value for v in solutions.variables]
    return Counter(tuple(value(s[name]) for name in names) for s in solutions)


def event_answer(event) -> Counter:
    """An engine event's rows as :func:`answer` gives them."""
    return Counter(tuple(value(term) for term in row) for row in event.rows)


def change(policy: str, now: Counter, before: Counter) -> Counter:
    """What a report policy reports of ``now`` after ``before``."""
    if policy == "ISTREAM":
        return now - before
    if policy == "DSTREAM":
        return before - now
    return now


@dataclass
class OracleQuery:
    """A registered query as the oracle sees it: its windows, language and
    report policy, the SELECT to run over each evaluation's graphs
    (``WINDOW`` written as ``GRAPH`` for RSP-QL), its stored graphs as of an
    instant, and where its clock starts."""

    windows: list[OracleWindow]
    language: str  # "csparql" or "rspql"
    policy: str
    select_where: str
    stored: Callable[[int], set] = lambda instant: set()
    #: the first post it sees (posts before its registration are gone from the windows)
    since_post: int = 0
    first: int | None = None

    def start(self, streams: dict[str, StreamRecord], since_post: int) -> None:
        """The query registers now, before post number ``since_post``."""
        self.since_post = since_post
        self.first = first_instant(self.steps, [streams[w.stream].watermark for w in self.windows], None)

    def saw_item(self, ts: int) -> None:
        """A data item reached one of its streams."""
        if self.first is None:
            self.first = first_instant(self.steps, [], ts)

    @property
    def steps(self) -> list[int]:
        return [w.step_ms for w in self.windows]

    def due_instants(self, streams: dict[str, StreamRecord]) -> list[int]:
        """The instants evaluated by now: up to the smallest watermark of its streams."""
        marks = [streams[w.stream].watermark for w in self.windows]
        if self.first is None or any(m is None for m in marks):
            return []
        return instants(self.first, min(marks), self.steps)

    def evaluate(self, instant: int, streams: dict[str, StreamRecord]) -> Counter:
        contents = [streams[w.stream].between(*window_bounds(instant, w), self.since_post)
                    for w in self.windows]
        if self.language == "csparql":
            return answer(self.select_where, set().union(*contents) | self.stored(instant))
        named: dict[str, set] = {}
        for w, content in zip(self.windows, contents, strict=True):
            named.setdefault(w.name, set()).update(content)
        return answer(self.select_where, self.stored(instant), named)

    def expected(self, streams: dict[str, StreamRecord]) -> list[tuple[int, list[tuple[int, int]], Counter]]:
        """``(instant, each window's bounds, reported rows)`` of every evaluation due by now."""
        out, before = [], Counter()
        for instant in self.due_instants(streams):
            now = self.evaluate(instant, streams)
            bounds = [window_bounds(instant, w) for w in self.windows]
            out.append((instant, bounds, change(self.policy, now, before)))
            before = now
        return out
