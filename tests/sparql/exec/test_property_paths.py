"""Property paths (``engine/sparql/exec/paths.py``, ``path_closure.py``, ``path_steps.py``).

Answers are checked against pyoxigraph on generated graphs (chains, cycles,
trees, random graphs with several predicates), for every path form and
every binding (subject, object, both, neither, the same variable), as
multisets: SPARQL 1.1 gives ``*``, ``+`` and ``?`` one row per (start, end),
while sequences and alternatives count every way. The sizes cross the
width at which the search steps node by node (:data:`NARROW`), and the
search is also forced to one regime or the other; every kind of graph is
read (in memory, compact CSR, a union, a base with a stream delta, a window
slice that has no per-node read), in named graphs and over three shards.

The row budget and the time limit stop a long path inside the search, and
the work of a search grows linearly with the depth of the path (counted,
not timed: Python calls, each weighted by the arrays it is handed).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from engine.api import Store
from engine.rdf import IRI, MemoryTermDictionary
from engine.sparql.exec import Executor, QueryCancelled, QueryTerms
from engine.sparql.exec.dataset import QueryDataset
from engine.sparql.expr import EvalContext
from engine.sparql.syntax import parse_query
from engine.store import (
    DEFAULT_GRAPH,
    CompactGraph,
    Graph,
    LayeredGraph,
    MemoryGraph,
    RowBudgetExceeded,
    TimedTriples,
    TimeSlice,
    UnionGraph,
)
from engine.store.layered_graph import make_delta

pyoxigraph = pytest.importorskip("pyoxigraph")

EX = "http://example.org/pp/"
PREFIX = f"PREFIX ex: <{EX}>\n"

#: inside * and +: links, inverses, alternatives, sequences, negated sets, a nested *
PATHS = [
    "ex:p*", "ex:p+", "ex:p?", "^ex:p*", "(ex:p|ex:q)*", "(ex:p/ex:q)*", "(ex:p/ex:q)+",
    "(ex:p|^ex:q)+", "(!ex:p)*", "(!(ex:p|^ex:q))+", "(ex:p*/ex:q)*", "ex:p+/ex:q", "ex:q/ex:p*",
    "(^ex:p/ex:q)*", "(ex:p/ex:p?)+",
]
#: fewer forms, one of each kind of step, where the forms are not what is tested
SOME_PATHS = ["ex:p*", "ex:p+", "^ex:p+", "(ex:p|ex:q)*", "(ex:p/ex:q)*", "(!ex:q)+", "ex:p?"]

Triples = list[tuple[str, str, str]]


# ------------------------------------------------------------------ graphs
def _edges(pairs, predicates: str, rng: np.random.Generator, prefix: str = "n") -> Triples:
    return [(f"{prefix}{a}", str(rng.choice(list(predicates))), f"{prefix}{b}") for a, b in pairs]


def chain(n: int, rng, predicates: str = "p") -> Triples:
    return _edges([(i, i + 1) for i in range(n)], predicates, rng)


def cycle(n: int, rng) -> Triples:
    return _edges([(i, (i + 1) % n) for i in range(n)], "pq", rng) + _edges([(0, n // 2)], "p", rng)


def tree(n: int, branching: int, rng) -> Triples:
    return _edges([((i - 1) // branching, i) for i in range(1, n)], "pqp", rng)


def random_graph(n: int, degree: int, rng) -> Triples:
    pairs = {(i, int(j)) for i in range(n) for j in rng.integers(0, n, degree)}
    return _edges(sorted(pairs), "pqr", rng)


def shapes(seed: int) -> dict[str, Triples]:
    """Small graphs whose frontiers cross NARROW (32) and whose depths do too."""
    rng = np.random.default_rng(seed)
    return {
        "chain": chain(70, rng, "pq"),
        "cycle": cycle(45, rng),
        "tree": tree(130, 3, rng),  # levels 1, 3, 9, 27, 81 wide
        "random": random_graph(60, 2, rng),
        "dense": random_graph(25, 6, rng),
    }


# ------------------------------------------------------------------ oracles
def _ntriples(triples: Triples, graph: str | None = None) -> str:
    where = f" <{EX}{graph}>" if graph else ""
    return "".join(f"<{EX}{s}> <{EX}{p}> <{EX}{o}>{where} .\n" for s, p, o in triples)


def oxigraph_store(triples: Triples, named: dict[str, Triples] | None = None):
    store = pyoxigraph.Store()
    text = _ntriples(triples) + "".join(_ntriples(t, g) for g, t in (named or {}).items())
    store.load(text.encode(), pyoxigraph.RdfFormat.N_QUADS)
    return store


def oxigraph_answer(store, query: str):
    result = store.query(PREFIX + query)
    if isinstance(result, pyoxigraph.QueryBoolean):
        return bool(result)
    return Counter(tuple(None if t is None else t.value for t in row) for row in result)


def our_answer(store: Store, query: str):
    result = store.query(PREFIX + query)
    if result.form == "ASK":
        return bool(result.boolean)
    return Counter(tuple(None if t is None else t.value for t in row) for row in result.rows())


def queries(path: str, nodes: list[str], rng: np.random.Generator) -> list[str]:
    """Every binding of ``path``: a start, an end, both, neither, the same
    variable, an end bound by a join."""
    picked = [str(n) for n in rng.choice(nodes, size=2, replace=False)]
    found = [f"SELECT ?a ?b WHERE {{ ?a {path} ?b }}", f"SELECT ?a WHERE {{ ?a {path} ?a }}"]
    for node in picked:
        found += [f"SELECT ?b WHERE {{ ex:{node} {path} ?b }}", f"SELECT ?a WHERE {{ ?a {path} ex:{node} }}"]
    found += [f"ASK {{ ex:{a} {path} ex:{b} }}" for a in picked for b in picked]
    # an end bound by the patterns before it (followed from those values only)
    found += [f"SELECT ?x ?b WHERE {{ ?x ex:q ?a . ?a {path} ?b }}",
              f"SELECT ?x ?a WHERE {{ ?x ex:r ?b . ?a {path} ?b }}",
              f"SELECT ?x ?a WHERE {{ ?x ex:p ?a . ?a {path} ?a }}",
              f"SELECT ?x ?a WHERE {{ ?x ex:q ?a . ?a {path} ex:{picked[0]} }}",
              f"SELECT ?a ?b WHERE {{ VALUES ?a {{ ex:absent ex:{picked[0]} }} ?a {path} ?b }}"]
    return found


def _nodes(triples: Triples) -> list[str]:
    return sorted({s for s, _, _ in triples} | {o for _, _, o in triples})


def check_against_oxigraph(ours: Callable[[str], object], triples: Triples, paths: list[str], seed: int,
                           theirs=None) -> int:
    """Every query of every path answered alike; returns how many were asked."""
    theirs = theirs or oxigraph_store(triples)
    rng = np.random.default_rng(seed)
    asked = 0
    for path in paths:
        for query in queries(path, _nodes(triples), rng):
            assert ours(query) == oxigraph_answer(theirs, query), query
            asked += 1
    return asked


def loaded(triples: Triples, named: dict[str, Triples] | None = None, store: Store | None = None) -> Store:
    store = Store() if store is None else store  # (an empty store is falsy: it has a length)
    store.load(_ntriples(triples).encode(), format="nt")
    for graph, part in (named or {}).items():
        store.load(_ntriples(part).encode(), format="nt", graph=EX + graph)
    return store


# ------------------------------------------------------------------ answers
@pytest.fixture(params=["default", "arrays", "node by node", "interpreted"])
def regime(request, monkeypatch):
    """The search as it chooses, or forced to step every frontier as arrays
    (and search many starts together), or node by node (and one start at a
    time), or as it chooses but with the node-by-node levels in Python
    rather than in the compiled kernel."""
    from engine.sparql.exec import path_closure

    if request.param in ("arrays", "node by node"):
        monkeypatch.setattr(path_closure, "NARROW", 0 if request.param == "arrays" else 10**9)
    if request.param == "interpreted":
        monkeypatch.setattr(path_closure, "kernel_layouts", lambda one: None)
    return request.param


def test_every_form_and_binding_answers_as_oxigraph_does(regime):
    for name, triples in shapes(1).items():
        if regime in ("arrays", "node by node") and name in ("chain", "dense"):
            continue  # (forced regimes: the shapes whose frontiers change width)
        store = loaded(triples)
        check_against_oxigraph(lambda q, s=store: our_answer(s, q), triples, PATHS, 1)


@pytest.mark.parametrize("path", PATHS)
def test_a_term_not_in_the_data_reaches_itself_by_the_empty_path(path):
    """SPARQL 1.1 (18.4, ZeroLengthPath) binds a constant end to itself
    whether or not the data holds it; pyoxigraph answers nothing there, so
    this is checked against the definition."""
    store = loaded(chain(5, np.random.default_rng(0), "pq"))
    empty_path = path in ("ex:p*", "ex:p?", "^ex:p*", "(ex:p|ex:q)*", "(ex:p/ex:q)*", "(!ex:p)*",
                          "(ex:p*/ex:q)*", "(^ex:p/ex:q)*")
    expected = Counter({(EX + "absent",): 1}) if empty_path else Counter()
    assert our_answer(store, f"SELECT ?b WHERE {{ ex:absent {path} ?b }}") == expected
    assert our_answer(store, f"SELECT ?a WHERE {{ ?a {path} ex:absent }}") == expected
    assert our_answer(store, f"ASK {{ ex:absent {path} ex:absent }}") is empty_path


def test_a_compact_graph_of_many_components_answers_as_oxigraph_does():
    """Over 4,096 triples a load is compact CSR arrays; many small random
    components keep all pairs small."""
    rng = np.random.default_rng(7)
    triples = []
    for k in range(140):
        triples += [(f"c{k}_{s}", p, f"c{k}_{o}") for s, p, o in random_graph(16, 2, rng)]
    assert len(triples) >= 4096
    store = loaded(triples)
    assert isinstance(store.quad_store.snapshot().graph(DEFAULT_GRAPH), CompactGraph)
    check_against_oxigraph(lambda q: our_answer(store, q), triples, SOME_PATHS, 7)


def test_named_graphs_answer_as_oxigraph_does():
    rng = np.random.default_rng(3)
    default, one, two = random_graph(30, 2, rng), cycle(40, rng), tree(60, 3, rng)
    named = {"g1": one, "g2": two}
    store, theirs = loaded(default, named), oxigraph_store(default, named)
    for path in SOME_PATHS:
        for query in [f"SELECT ?g ?a ?b WHERE {{ GRAPH ?g {{ ?a {path} ?b }} }}",
                      f"SELECT ?g ?b WHERE {{ GRAPH ?g {{ ex:n0 {path} ?b }} }}",
                      f"SELECT ?b WHERE {{ GRAPH ex:g1 {{ ?b {path} ex:n3 }} }}",
                      f"ASK {{ GRAPH ex:g2 {{ ex:n0 {path} ex:n59 }} }}"]:
            assert our_answer(store, query) == oxigraph_answer(theirs, query), query


def test_a_search_from_many_starts_finishes_its_few_deep_ones_one_by_one(monkeypatch):
    """Forty starts (a ``*`` after a step from every node: inside an
    alternative, so that the sequence is not split into a join), one of which heads
    a long chain: once the others are done the frontier is one pair wide, and
    the search hands that start to the one-start search (ski rental) rather
    than step one pair per level as arrays; the answer is the same."""
    from engine.sparql.exec.path_closure import Closure

    rng = np.random.default_rng(9)
    triples = [(f"x{i}", "q", f"n{1000 * i}") for i in range(40)]
    triples += [(f"n{1000 * i}", "p", f"n{1000 * i + 1}") for i in range(1, 40)]
    triples += chain(300, rng)
    one_by_one = []
    original = Closure.from_one

    def spy(self, start, target=None, rows_before=0):
        one_by_one.append(start)
        return original(self, start, target, rows_before)

    monkeypatch.setattr(Closure, "from_one", spy)
    store, theirs = loaded(triples), oxigraph_store(triples)
    for query in ["SELECT ?a ?b WHERE { ?a (ex:q/ex:p*)|ex:none ?b }",
                  "SELECT ?a ?b WHERE { ?a (ex:q/ex:p+)|ex:none ?b }"]:
        one_by_one.clear()
        assert our_answer(store, query) == oxigraph_answer(theirs, query), query
        assert len(one_by_one) == 1, query


# ------------------------------------------------------------------ graph kinds
def _ids(terms: QueryTerms, triples: Triples) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    encode = terms.dictionary.encode
    return tuple(np.array([encode(IRI(EX + t[i])) for t in triples], dtype=np.int64) for i in range(3))


def graph_kinds(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> dict[str, Graph]:
    half = len(s) // 2
    ts = np.arange(len(s), dtype=np.int64)
    return {
        "memory": MemoryGraph(s, p, o),
        "compact": CompactGraph.build(s, p, o),
        "union": UnionGraph([MemoryGraph(s[:half], p[:half], o[:half]),
                             CompactGraph.build(s[half:], p[half:], o[half:])]),
        "layered": LayeredGraph(CompactGraph.build(s[:half], p[:half], o[:half]),
                                (make_delta(s[half:], p[half:], o[half:], ts[half:], 1),)),
        # a window's slice of a stream batch: no per-node read, every level as arrays
        "window slice": TimeSlice(TimedTriples(ts, s, p, o, maybe_repeats=False), 0, len(s)),
    }


def executor_answer(graph: Graph, terms: QueryTerms, query: str):
    parsed = parse_query(PREFIX + query)
    solutions = Executor(terms, QueryDataset(graph, {}), EvalContext()).run(parsed.pattern)
    if parsed.form == "ASK":
        return solutions.length > 0
    names = [v.name for v in parsed.variables]
    columns = [terms.decode_column(solutions.columns[n]) for n in names]
    return Counter(tuple(None if t is None else t.value for t in row) for row in zip(*columns))


@pytest.mark.parametrize("kind", ["memory", "compact", "union", "layered", "window slice"])
def test_every_kind_of_graph_answers_as_oxigraph_does(kind):
    for seed, name in enumerate(["chain", "tree", "random"]):
        triples = shapes(11)[name]
        terms = QueryTerms(MemoryTermDictionary())
        graph = graph_kinds(*_ids(terms, sorted(set(triples))))[kind]
        check_against_oxigraph(lambda q, g=graph, t=terms: executor_answer(g, t, q), triples, SOME_PATHS,
                               seed)


def test_three_shards_answer_as_oxigraph_does(tmp_path):
    """The cluster's graph has no per-node read: every level is one step on the shards."""
    from tests.cluster.local_cluster import local_cluster_store

    store, _ = local_cluster_store(tmp_path)
    try:
        rng = np.random.default_rng(5)
        default, named = random_graph(40, 2, rng), {"g1": cycle(35, rng)}
        loaded(default, named, store)
        theirs = oxigraph_store(default, named)
        check_against_oxigraph(lambda q: our_answer(store, q), default, SOME_PATHS, 5, theirs)
        query = "SELECT ?g ?a ?b WHERE { GRAPH ?g { ?a (ex:p|ex:q)+ ?b } }"
        assert our_answer(store, query) == oxigraph_answer(theirs, query)
    finally:
        store.quad_store.close()


# ------------------------------------------------------------------ bounds
def _chain_store(n: int) -> Store:
    return loaded(chain(n, np.random.default_rng(0)))


@pytest.fixture(scope="module")
def long_chain() -> Store:
    return _chain_store(30_000)


@pytest.mark.parametrize("query", [
    "SELECT (COUNT(*) AS ?c) WHERE { ex:n0 ex:p* ?b }",
    "SELECT (COUNT(*) AS ?c) WHERE { ?a ex:p+ ex:n30000 }",
    "ASK { ex:n0 ex:p* ex:n30000 }",
    "SELECT (COUNT(*) AS ?c) WHERE { ?a ex:p* ?b }",
])
def test_the_row_budget_stops_a_long_path(long_chain, regime, query):
    plan = long_chain.prepare(PREFIX + query)
    with pytest.raises(RowBudgetExceeded) as stopped:
        long_chain.execute(plan, max_rows=2_000)
    assert stopped.value.budget == 2_000
    if query.startswith("ASK"):  # under the budget, the same search finds the end
        assert long_chain.execute(plan, max_rows=40_000).boolean is True


def _stop_after(calls: int) -> Callable[[], bool]:
    made = 0

    def should_stop() -> bool:
        nonlocal made
        made += 1
        return made > calls

    return should_stop


@pytest.mark.parametrize("query", [
    "SELECT (COUNT(*) AS ?c) WHERE { ex:n0 ex:p* ?b }",
    "SELECT (COUNT(*) AS ?c) WHERE { ?a ex:p* ?b }",
])
def test_the_time_limit_stops_a_long_path_inside_the_search(long_chain, regime, query):
    """The server's time limit is a ``should_stop`` the search polls (through
    the row budget's checkpoint) while it runs: counted here, not timed."""
    plan = long_chain.prepare(PREFIX + query)
    short = _chain_store(3)
    polls = 0

    def counting() -> bool:  # how often a query of this shape polls outside a long search
        nonlocal polls
        polls += 1
        return False

    short.execute(short.prepare(PREFIX + query), should_stop=counting)
    with pytest.raises(QueryCancelled) as stopped:
        long_chain.execute(plan, should_stop=_stop_after(polls + 3), max_rows=10**9)
    frames = [frame.f_code.co_filename for frame, _ in _walk(stopped.value.__traceback__)]
    assert any(name.endswith("path_closure.py") for name in frames)


def _walk(tb):
    while tb is not None:
        yield tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next


# ------------------------------------------------------------------ growth
def work(run: Callable[[], object]) -> int:
    """The Python calls ``run`` makes, plus the elements it hands to NumPy's
    set operations (``np.unique``, ``np.union1d``, ``np.isin``: sorts and
    merges, where a visited set merged whole at every level spends its
    time). Deterministic, unlike a clock; it sees a call per node too."""
    total = 0

    def profile(frame, event, arg):
        nonlocal total
        if event == "call":
            total += 1
            if frame.f_code.co_filename.endswith("_arraysetops_impl.py"):
                total += sum(v.size for v in frame.f_locals.values() if isinstance(v, np.ndarray))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return total


def _chain_graph(n: int, make: Callable) -> tuple[Graph, QueryTerms]:
    terms = QueryTerms(MemoryTermDictionary())
    s, p, o = _ids(terms, chain(n, np.random.default_rng(0)))
    return make(s, p, o), terms


@pytest.mark.parametrize("make", [MemoryGraph, CompactGraph.build,
                                  lambda s, p, o: graph_kinds(s, p, o)["window slice"]],
                         ids=["memory", "compact", "window slice"])
@pytest.mark.parametrize("query", ["SELECT ?b WHERE { ex:n0 ex:p* ?b }",
                                   "SELECT ?a WHERE { ?a ex:p+ ex:n{n} }",
                                   "ASK { ex:n0 ex:p* ex:n{n} }"])
def test_a_path_from_one_node_costs_linear_work_in_its_depth(make, query):
    """Doubling a chain's length doubles the work of following it (the old
    search merged its visited array at every level: four times the work)."""
    counted = []
    for n in (1_500, 3_000):
        graph, terms = _chain_graph(n, make)
        text = query.replace("{n}", str(n))
        answer = executor_answer(graph, terms, text)
        assert answer is True or sum(answer.values()) == n + (0 if "+" in text else 1)
        counted.append(work(lambda g=graph, t=terms, q=text: executor_answer(g, t, q)))
    assert counted[1] < 2.5 * counted[0], counted


def test_a_path_after_the_pattern_that_binds_its_start_costs_linear_work():
    """``ex:n0 ex:p ?a . ?a ex:p* ?b``: the path is followed from the value of
    ``?a``, not between every pair of the chain's nodes (n^2 / 2 of them)."""
    counted = []
    for n in (150, 300):
        graph, terms = _chain_graph(n, CompactGraph.build)
        queries = {"SELECT ?b WHERE { ex:n0 ex:p ?a . ?a ex:p* ?b }": n,  # n1 .. n{n}
                   f"SELECT ?a WHERE {{ ex:n{n - 1} ex:p ?b . ?a ex:p* ?b }}": n + 1}  # n0 .. n{n}
        for query, rows in queries.items():
            assert sum(executor_answer(graph, terms, query).values()) == rows
        counted.append(sum(work(lambda g=graph, t=terms, q=q: executor_answer(g, t, q)) for q in queries))
    assert counted[1] < 2.5 * counted[0], counted


def test_all_pairs_cost_linear_work_in_their_answer():
    """All pairs of a chain of n nodes are n(n+1)/2 rows: doubling n makes
    four times as many, and the work must follow them, not n times them."""
    counted = []
    for n in (150, 300):
        graph, terms = _chain_graph(n, CompactGraph.build)
        query = "SELECT ?a ?b WHERE { ?a ex:p* ?b }"
        assert sum(executor_answer(graph, terms, query).values()) == (n + 1) * (n + 2) // 2
        counted.append(work(lambda g=graph, t=terms, q=query: executor_answer(g, t, q)))
    assert counted[1] < 5 * counted[0], counted
