"""Small queries run row by row (:mod:`engine.sparql.exec.lean`) answer as
the executor does.

Random graphs (a compact base with an in-memory delta of later inserts,
tombstones of later deletes, numbers as value IDs) and random queries of
the forms the lean plans take (SELECT with projection, ``*``, DISTINCT,
LIMIT and OFFSET; ASK; COUNT of ``*``, of a variable, of a DISTINCT one),
with constants of every kind in subject and object places, asked through
the shape cache as a server asks them, are answered as the executor answers
the same query (as multisets; under a LIMIT, as many rows as it gives, all
of them among the query's answers without the LIMIT). The bounds that send
a run back to the executor are tested by setting them low."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.api import Store
from engine.rdf import IRI
from engine.sparql.exec import QueryTerms, default_graph, lean
from engine.store import RowBudgetExceeded

EX = "http://example.org/"
PREFIX = f"PREFIX ex: <{EX}>\n"
PREDICATES = ("knows", "likes", "made", "name", "age")
VARIABLES = ("?a", "?b", "?c", "?d")


def node(rng: random.Random) -> str:
    """A node, a few of them hubs."""
    return f"ex:n{int(rng.paretovariate(0.8)) % 300}"


def random_store(seed: int) -> Store:
    """A compact base (no numbers: those would keep it in memory), then a
    delta (more edges, and ages, whose numbers are value IDs) and
    tombstones, through updates."""
    rng = random.Random(seed)
    lines = set()
    while len(lines) < 6000:
        predicate = rng.choice(PREDICATES[:4])
        o = f'"n{rng.randrange(40)}"' if predicate == "name" else node(rng)
        lines.add(f"{node(rng)} ex:{predicate} {o} .\n")
    store = Store()
    turtle = f"@prefix ex: <{EX}> .\n" + "".join(sorted(lines))
    store.load(turtle.encode(), "turtle")
    added = [f"{node(rng)} ex:{rng.choice(PREDICATES[:3])} {node(rng)} ." for _ in range(60)]
    added += [f"ex:n{n} ex:age {rng.randrange(20, 30)} ." for n in range(0, 300, 2)]
    store.update(PREFIX + f"INSERT DATA {{ {' '.join(added)} ex:n2 ex:name \"n3\" }}")
    removed = list(store.query(PREFIX + "SELECT ?s ?o { ?s ex:knows ?o } LIMIT 90").rows())
    gone = " ".join(f"<{s.value}> ex:knows <{o.value}> ." for s, o in removed[::3])
    store.update(PREFIX + f"DELETE DATA {{ {gone} }}")
    return store


def constant(rng: random.Random, place: str, predicate: str) -> str:
    if place == "object" and predicate == "name":
        return f'"n{rng.randrange(45)}"'
    if place == "object" and predicate == "age":
        return str(rng.randrange(18, 32))
    return f"ex:n{rng.randrange(310)}" if rng.random() < 0.5 else node(rng)  # some in no triple


def random_query(rng: random.Random) -> str:
    patterns = []
    for _ in range(rng.randint(1, 3)):
        predicate = rng.choice(PREDICATES)
        places = []
        for place in ("subject", "object"):
            if rng.random() < 0.35:
                places.append(constant(rng, place, predicate))
            else:
                places.append(rng.choice(VARIABLES[:3]))
        patterns.append(f"{places[0]} ex:{predicate} {places[1]}")
    body = "{ " + " . ".join(patterns) + " }"
    used = sorted({v for v in VARIABLES if v in body}) or ["?d"]
    form = rng.choice(("select", "select", "star", "distinct", "ask", "count", "count_var", "count_distinct"))
    if form == "ask":
        return f"ASK {body}"
    if form == "star":
        return f"SELECT * {body}" + rng.choice(("", " LIMIT 3", " OFFSET 2 LIMIT 5"))
    if form.startswith("count"):
        counted = {"count": "*", "count_var": rng.choice(used + ["?d"]),
                   "count_distinct": "DISTINCT " + rng.choice(used)}[form]
        return f"SELECT (COUNT({counted}) AS ?n) {body}" + rng.choice(("", "", " LIMIT 1", " OFFSET 1"))
    chosen = rng.sample(used + ["?d"], rng.randint(1, len(used)))
    modifier = "DISTINCT " if form == "distinct" else ""
    modifiers = ("", "", " LIMIT 2", " LIMIT 4 OFFSET 1")
    return f"SELECT {modifier}{' '.join(chosen)} {body}" + rng.choice(modifiers)


def answer(result) -> Counter | bool:
    return result.boolean if result.form == "ASK" else Counter(result.rows())


def check(store: Store, text: str) -> None:
    store.prepare(PREFIX + text)  # the shape is cached, as a server's first query caches it
    prepared = store.cached_prepared(PREFIX + text)
    assert prepared is not None, text
    ours = store.execute_prepared(prepared)
    theirs = store.execute(store.prepare(PREFIX + text))
    if "LIMIT" in text or "OFFSET" in text and "COUNT" not in text:
        whole = answer(store.execute(store.prepare(PREFIX + text.split(" LIMIT")[0].split(" OFFSET")[0])))
        assert len(ours) == len(theirs), text
        assert not answer(ours) - whole, text  # type: ignore[operator]
    else:
        assert answer(ours) == answer(theirs), text


@pytest.mark.parametrize("seed", range(3))
def test_random_queries_answer_as_the_executor_does(seed):
    store = random_store(seed)
    rng = random.Random(seed)
    ran = 0
    for _ in range(150):
        text = random_query(rng)
        check(store, text)
        prepared = store.cached_prepared(PREFIX + text)
        plan = prepared.template.prepared
        if plan:
            graph = default_graph(store._store.snapshot())
            terms = QueryTerms(store._store.terms)
            ran += plan.run(graph, terms, prepared.template.terms(prepared.values), None) is not None
    assert ran >= 50  # a third ran row by row (the others: a pattern of two variables, or over a bound)


def test_a_shape_answers_each_of_its_constants():
    store = random_store(7)
    shapes = ["SELECT ?f ?n { ex:n{u} ex:knows ?f . ?f ex:name ?n }",
              "SELECT ?p { ?p ex:made ex:n{u} } LIMIT 3",
              "SELECT (COUNT(?x) AS ?c) { ?p ex:made ex:n{u} . ?x ex:likes ?p }",
              "SELECT ?s { ?s ex:name \"n{u}\" . ?s ex:age ?a }",
              "SELECT ?s { ?s ex:age {u} }",
              "SELECT (COUNT(DISTINCT ?p) AS ?c) { ?p ex:made ex:n{u} . ?x ex:likes ?p }",
              "SELECT (COUNT(*) AS ?c) { ex:n{u} ex:knows ?f . ?x ex:likes ex:n1 }",
              "SELECT DISTINCT ?f { ?x ex:knows ex:n{u} . ?x ex:knows ?f } LIMIT 5",
              "ASK { ex:n{u} ex:knows ?f . ?f ex:knows ex:n1 }"]
    for shape in shapes:
        for u in range(0, 310, 7):
            check(store, shape.replace("{u}", str(u)))


@pytest.mark.parametrize("rows,work", [(3, 1 << 16), (1024, 5)])
def test_a_run_over_its_bounds_is_answered_by_the_executor(rows, work, monkeypatch):
    store = random_store(3)
    monkeypatch.setattr(lean, "LEAN_ROWS", rows)
    monkeypatch.setattr(lean, "LEAN_WORK", work)
    rng = random.Random(11)
    for _ in range(80):
        check(store, random_query(rng))


def test_the_row_budget_is_the_executors():
    store = random_store(4)
    for n in range(300):
        text = PREFIX + f"SELECT ?b ?c {{ ex:n{n} ex:knows ?b . ?b ex:knows ?c }}"
        size = len(store.execute(store.prepare(text)))
        if 2 < size < lean.LEAN_ROWS:
            break
    prepared = store.cached_prepared(text)
    with pytest.raises(RowBudgetExceeded):
        store.execute(prepared.query, max_rows=size - 1)
    with pytest.raises(RowBudgetExceeded):
        store.execute_prepared(prepared, max_rows=size - 1)
    plan = prepared.template.prepared
    slots = prepared.template.terms(prepared.values)
    graph, terms = default_graph(store._store.snapshot()), QueryTerms(store._store.terms)
    assert plan.run(graph, terms, slots, size - 1) is None  # over the budget: the executor raised it
    assert plan.run(graph, terms, slots, size).length == size
    assert len(store.execute_prepared(prepared, max_rows=size)) == size


def test_a_unions_lists_are_read_in_place():
    """A stored graph with a delta is a union: each member's list is read as
    a view of its arrays, so a hub's list is measured without being copied."""
    store = random_store(1)
    graph = default_graph(store._store.snapshot())
    terms = QueryTerms(store._store.terms)
    knows = terms.encode(IRI(EX + "knows"))
    counts = store.query(PREFIX + "SELECT ?s (COUNT(*) AS ?n) { ?s ex:knows ?o } GROUP BY ?s "
                                  "ORDER BY DESC(?n) LIMIT 1")
    hub, size = next(iter(counts.rows()))
    parts = lean._reader(graph, knows, False)(terms.encode(hub))
    assert len(parts) == 2  # the base and the delta both have ex:knows edges
    assert sum(map(len, parts)) == int(size.lexical)
    assert all(isinstance(part, memoryview) for part in parts if len(part))
