"""Generated scenarios of streams absorbing into one stored graph, and their oracle.

Two or three streams absorb into graph ``G``, with independent clocks (one
often runs ahead of the others, so its triples are in the graph before the
windows that must not see them fire) and a shared vocabulary (the same
triple comes from several streams, in either order of arrival and of
timestamp). Posts are sized around the store's and the log's thresholds:
a few rows (the deltas pass ``MAX_DELTAS`` and merge, probes pass
``SORTED_PROBE_MIN``) or thousands (``SMALL_BATCH``, ``COMPACT_MIN``,
``HASHED_PROBE_MIN`` and the base merge at a quarter of 65,536 rows). Some
scenarios also delete streamed triples (SPARQL ``DELETE DATA``) or insert
them (``INSERT DATA``) between posts.

The oracle is written from SEMANTICS.md alone: a window closing at ``t``,
evaluated during request ``j``, reads graph ``G`` as the triples loaded or
inserted, plus every triple that an item with timestamp ``< t`` brought,
less the triples deleted after that item arrived and before request ``j``.
The query's WHERE clause is then evaluated by pyoxigraph over exactly that
snapshot and the windows' contents.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition

EX = "http://example.org/"
G = EX + "g"
REL, KNOWS, AT = EX + "rel", EX + "knows", EX + "at"
#: rows of a small post: around MAX_DELTAS (16) and SORTED_PROBE_MIN (32)
SMALL = (1, 2, 3, 15, 16, 17, 31, 32, 33)
#: rows of a large post: around SMALL_BATCH, COMPACT_MIN, HASHED_PROBE_MIN (4,096) and the
#: merge into the base (16,384 rows: a quarter of 65,536)
LARGE = (4095, 4096, 4097, 16383, 16384, 16385)
#: distinct triples large posts draw from (contiguous runs, so that posts of two streams overlap)
POOL = 24_000
VERTICES = 12

#: a triple of IRIs, spelled (the engine is given them as terms: :func:`terms`)
Triple = tuple[str, str, str]


@dataclass
class Step:
    """One request: a post of ``items`` to stream ``stream``, or an update
    (``delete`` / ``insert`` of stored triples of ``G``)."""

    stream: int | None = None
    items: list[tuple[int, list[Triple]]] = field(default_factory=list)
    delete: list[Triple] = field(default_factory=list)
    insert: list[Triple] = field(default_factory=list)


@dataclass
class Scenario:
    streams: int
    loaded: list[Triple]
    steps: list[Step]

    def names(self) -> list[str]:
        return [f"s{i}" for i in range(self.streams)]

    def definitions(self) -> list[StreamDefinition]:
        """Every stream absorbs into ``G``; stream 0's ``at`` triples are timing (never stored)."""
        return [StreamDefinition(name, IRI(EX + name), graph=IRI(G),
                                 timing=frozenset({AT}) if i == 0 else frozenset())
                for i, name in enumerate(self.names())]

    def queries(self) -> dict[str, str]:
        """Continuous queries reading every stream, with ``FROM <G>``."""
        names = self.names()
        rsp = " ".join(f"FROM NAMED WINDOW <{EX}w{i}> ON <{EX}{n}> [RANGE PT2S STEP PT1S]"
                       for i, n in enumerate(names))
        csp = " ".join(f"FROM STREAM <{EX}{n}> [RANGE 1s STEP 1s]" for n in names)
        return {
            "stored_count": f"REGISTER RSTREAM stored_count AS SELECT (COUNT(*) AS ?n) FROM <{G}> {rsp} "
                            f"WHERE {{ ?x <{REL}> ?y }}",
            "window_join": f"REGISTER RSTREAM window_join AS SELECT ?x ?z FROM <{G}> {rsp} "
                           f"WHERE {{ WINDOW <{EX}w0> {{ ?x <{KNOWS}> ?y }} ?y <{REL}> ?z }}",
            "merged_count": f"REGISTER QUERY merged_count AS SELECT (COUNT(*) AS ?n) {csp} FROM <{G}> "
                            f"WHERE {{ ?x <{REL}> ?y }}",
        }


def vertex(kind: str, i: int) -> str:
    return f"{EX}{kind}{i}"


def pooled(i: int) -> Triple:
    return vertex("b", i), REL, vertex("y", i % VERTICES)


def small_triple(rng: random.Random, stream: int) -> Triple:
    roll = rng.random()
    if roll < 0.15:
        return pooled(rng.randrange(POOL))  # a triple a large post may hold too
    if roll < 0.35:
        return vertex("x", rng.randrange(VERTICES)), KNOWS, vertex("x", rng.randrange(VERTICES))
    if roll < 0.45 and stream == 0:
        return vertex("x", rng.randrange(VERTICES)), AT, vertex("y", rng.randrange(VERTICES))
    return vertex("x", rng.randrange(VERTICES)), REL, vertex("y", rng.randrange(VERTICES))


def items_over(rng: random.Random, triples: list[Triple], start: int, span: int) -> list:
    """``triples`` as items with non-decreasing timestamps over ``[start, start + span]``
    (triples of one timestamp make one item)."""
    stamps = sorted(start + rng.randint(0, span) for _ in triples)
    items: list[tuple[int, list[Triple]]] = []
    for ts, triple in zip(stamps, triples, strict=True):
        if items and items[-1][0] == ts:
            items[-1][1].append(triple)
        else:
            items.append((ts, [triple]))
    return items


def generate(seed: int, large: int = 1, updates: bool = True) -> Scenario:
    """A scenario: ``large`` posts of thousands of rows among 18-30 small
    ones, spread over the streams at random, then a heartbeat of every stream."""
    rng = random.Random(seed)
    streams = rng.choice((2, 3))
    clocks = [rng.randint(0, 900) for _ in range(streams)]
    loaded = [(vertex("x", i), REL, vertex("y", (i * 5) % VERTICES)) for i in range(0, VERTICES, 3)]
    loaded += [pooled(rng.randrange(POOL)) for _ in range(3)]
    count = rng.randint(18, 30)
    big = sorted(rng.sample(range(count), large))
    steps: list[Step] = []
    posted: list[Triple] = []
    for i in range(count):
        stream = rng.randrange(streams)
        if i in big:
            rows = LARGE[(seed + big.index(i)) % len(LARGE)]  # seeds in a row cover every size
            first = rng.randrange(POOL - rows)
            triples = [pooled(j) for j in range(first, first + rows)]
            span = rng.randint(500, 2800)
        else:
            triples = [small_triple(rng, stream) for _ in range(rng.choice(SMALL))]
            span = rng.randint(0, 400)
        start = clocks[stream] + rng.randint(0, 300)
        items = items_over(rng, triples, start, span)
        clocks[stream] = items[-1][0]
        steps.append(Step(stream, items))
        posted += [t for t in triples if t[1] != AT]
        if updates and rng.random() < 0.12:
            chosen = rng.sample(posted, min(len(posted), rng.randint(1, 4)))
            steps.append(Step(delete=chosen) if rng.random() < 0.6 else Step(insert=chosen))
    end = (max(clocks) // 1000 + 3) * 1000
    steps += [Step(stream, [(end, [])]) for stream in rng.sample(range(streams), streams)]
    return Scenario(streams, loaded, steps)


class Oracle:
    """The contract's view of ``G`` and of the streams, request by request."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        #: per stored triple: whether it is stored data (loaded, inserted) and the
        #: timestamps of the items that brought it since it was last deleted
        self.stored: dict[Triple, bool] = dict.fromkeys(scenario.loaded, True)
        self.copies: dict[Triple, list[int]] = {}
        self.items: list[list[tuple[int, list[Triple]]]] = [[] for _ in range(scenario.streams)]
        self._datasets: dict[int, object] = {}

    def apply(self, step: Step) -> None:
        self._datasets.clear()
        if step.stream is not None:
            self.items[step.stream] += step.items
            for ts, triples in step.items:
                for t in triples:
                    if t[1] != AT:
                        self.copies.setdefault(t, []).append(ts)
        for t in step.delete:
            self.stored.pop(t, None)
            self.copies.pop(t, None)
        for t in step.insert:
            self.stored[t] = True

    def graph_as_of(self, close: int) -> set[Triple]:
        return set(self.stored) | {t for t, stamps in self.copies.items() if min(stamps) < close}

    def window(self, stream: int, start: int, end: int) -> set[Triple]:
        return {t for ts, triples in self.items[stream] if start <= ts < end for t in triples}

    def dataset(self, close: int):
        """A pyoxigraph store of what the windows closing at ``close`` read:
        ``<stored>`` (G as of the close), ``<wI>`` (the RSP-QL windows),
        ``<cI>`` (the C-SPARQL windows) and ``<merged>`` (their RDF merge with G),
        made once per close until the next request."""
        import pyoxigraph

        if close in self._datasets:
            return self._datasets[close]
        oxi = pyoxigraph.Store()
        graph = self.graph_as_of(close)
        graphs = {"stored": graph, "merged": set(graph)}
        for i in range(self.scenario.streams):
            graphs[f"w{i}"] = self.window(i, close - 2000, close)
            graphs[f"c{i}"] = self.window(i, close - 1000, close)
            graphs["merged"] |= graphs[f"c{i}"]
        for local, triples in graphs.items():
            text = "".join(map(_line, triples)).encode()
            oxi.load(text, pyoxigraph.RdfFormat.N_TRIPLES, to_graph=_graph(local))
        self._datasets[close] = oxi
        return oxi

    def answer(self, name: str, text: str, close: int) -> Counter:
        """The rows of query ``name`` for the window closing at ``close``, by pyoxigraph:
        RSP-QL reads G and names its windows; C-SPARQL reads the merge."""

        rsp = name != "merged_count"
        where = text[text.index("WHERE"):].replace("WINDOW <", "GRAPH <")
        select = text[text.index("SELECT"):text.index(" FROM")]
        solutions = self.dataset(close).query(
            f"{select} {where}", default_graph=_graph("stored" if rsp else "merged"),
            named_graphs=[_graph(f"w{i}") for i in range(self.scenario.streams)])
        return Counter(tuple(_spelled(s[v]) for v in solutions.variables) for s in solutions)


@cache
def _node(value: str):
    import pyoxigraph

    return pyoxigraph.NamedNode(value)


def _graph(local: str):
    return _node(EX + local)


@cache
def _line(t: Triple) -> str:
    return f"<{t[0]}> <{t[1]}> <{t[2]}> .\n"


def _spelled(term) -> str | None:
    return None if term is None else term.value


def engine_rows(event) -> Counter:
    return Counter(tuple(None if t is None else t.value if isinstance(t, IRI) else
                         t.lexical if isinstance(t, Literal) else str(t) for t in row) for row in event.rows)


def spelled(triples: list[Triple]) -> str:
    return " ".join(f"<{s}> <{p}> <{o}> ." for s, p, o in triples)


def terms(triples: list[Triple]) -> list[tuple[IRI, IRI, IRI]]:
    return [(IRI(s), IRI(p), IRI(o)) for s, p, o in triples]


def update_text(step: Step) -> str:
    if step.delete:
        return f"DELETE DATA {{ GRAPH <{G}> {{ {spelled(step.delete)} }} }}"
    return f"INSERT DATA {{ GRAPH <{G}> {{ {spelled(step.insert)} }} }}"


def run_checked(scenario: Scenario, engine_of: Callable[[], object], store_of: Callable[[], object],
                after_step: Callable[[int], bool] | None = None) -> dict[str, list]:
    """Send the scenario's requests in order and compare every window with
    the oracle as of the request it was evaluated in; no window may be
    skipped, and the last closes at the final heartbeat. ``after_step(i)``
    runs after request ``i`` (True: the engine was restarted; the engine and
    store are looked up anew, and the windows its recovery evaluated again
    must equal the first answers). Returns each query's events."""
    queries = scenario.queries()
    oracle = Oracle(scenario)
    events: dict[str, dict[int, object]] = {name: {} for name in queries}
    queues = {name: engine_of().query(name).subscribe(0) for name in queries}
    for index, step in enumerate(scenario.steps):
        if step.stream is not None:
            engine_of().ingest(scenario.names()[step.stream], [(ts, terms(t)) for ts, t in step.items])
        else:
            store_of().update(update_text(step))
        oracle.apply(step)
        replayed: dict[str, list] = {name: [] for name in queries}
        if after_step is not None and after_step(index):
            queues = {name: engine_of().query(name).subscribe(0) for name in queries}
            replayed = {name: queue.replay for name, queue in queues.items()}
        for name, queue in queues.items():
            for event in [*replayed[name], *queue.drain()]:
                known = events[name].get(event.sequence)
                if known is not None:  # retained, or evaluated again by a recovery
                    assert (known.end_ms, engine_rows(known)) == (event.end_ms, engine_rows(event)), name
                    continue
                expected = oracle.answer(name, queries[name], event.end_ms)
                got = engine_rows(event)
                assert got == expected, f"{name}, window closing at {event.end_ms}: {got} != {expected}"
                events[name][event.sequence] = event
    end = scenario.steps[-1].items[0][0]
    for name, by_sequence in events.items():
        closes = [by_sequence[k].end_ms for k in sorted(by_sequence)]
        assert closes and closes == list(range(closes[0], end + 1, 1000)), f"{name}: windows {closes}"
    return {name: [by_sequence[k] for k in sorted(by_sequence)] for name, by_sequence in events.items()}
