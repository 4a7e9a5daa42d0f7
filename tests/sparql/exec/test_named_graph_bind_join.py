"""A join into ``GRAPH <iri> { BGP }`` continues from the rows the left side
found (a bind join into that graph) instead of matching the BGP over the
whole graph and joining: LSBench's "posts of a user's friends", with the
friends in one graph and the posts in another, read every post of the
history graph for each query. The answers must not change: every query
here is answered as pyoxigraph answers it, as multisets, over random quads
in two named graphs (compact and in memory) and the default graph, with
left sides that bind the shared variable, leave it unbound in some rows
(OPTIONAL: no bind join then), or share nothing, and a graph the dataset
lacks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from engine.api import Store
from engine.sparql.exec import joins

pyoxigraph = pytest.importorskip("pyoxigraph")

EX = "http://example.org/"
PREFIX = f"PREFIX ex: <{EX}>\n"
QUERIES = [
    "SELECT ?u ?f ?p { GRAPH ex:a { ?u ex:knows ?f } GRAPH ex:b { ?f ex:made ?p } }",
    "SELECT ?f ?p { GRAPH ex:a { ex:n1 ex:knows ?f } GRAPH ex:b { ?f ex:made ?p . ?q ex:likes ?p } }",
    "SELECT ?f ?p ?x { GRAPH ex:a { ex:n2 ex:knows ?f } GRAPH ex:b { ?f ex:made ?p } "
    "GRAPH ex:a { ?p ex:knows ?x } }",
    "SELECT ?u ?f ?p { GRAPH ex:b { ?u ex:made ?f } GRAPH ex:b { ?f ex:likes ?p } }",
    "SELECT ?u ?f ?p { ?u ex:knows ?f GRAPH ex:b { ?f ex:made ?p } }",
    "SELECT ?u ?f ?p { GRAPH ex:a { ?u ex:knows ?f } GRAPH ex:missing { ?f ex:made ?p } }",
    "SELECT ?u ?f ?p { GRAPH ex:a { ?u ex:knows ex:n3 OPTIONAL { ?u ex:likes ?f } } "
    "GRAPH ex:b { ?f ex:made ?p } }",
    "SELECT ?u ?x ?p { GRAPH ex:a { ?u ex:knows ex:n4 } GRAPH ex:b { ?x ex:made ?p } }",
    "SELECT (COUNT(*) AS ?n) { GRAPH ex:a { ?u ex:knows ?f } "
    "GRAPH ex:b { ?f ex:made ?p FILTER(?p != ex:n5) } }",
    "SELECT ?u ?f ?g { GRAPH ex:a { ?u ex:knows ?f } GRAPH ?g { ?f ex:made ex:n6 } }",
]


def random_quads(seed: int, rows: int) -> str:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, 61) ** 0.9
    weights /= weights.sum()
    lines = set()
    for _ in range(rows):
        s, o = rng.choice(60, 2, p=weights)
        predicate = rng.choice(["knows", "made", "likes"])
        graph = rng.choice(["", f" <{EX}a>", f" <{EX}b>"], p=[0.2, 0.4, 0.4])
        lines.add(f"<{EX}n{s}> <{EX}{predicate}> <{EX}n{o}>{graph} .\n")
    return "".join(sorted(lines))


def spelling(term) -> str | None:
    """An IRI's or a literal's text, ours or pyoxigraph's (a COUNT is a literal)."""
    return None if term is None else getattr(term, "value", None) or term.lexical


def answer(result) -> Counter:
    return Counter(tuple(spelling(t) for t in row) for row in result)


@pytest.mark.parametrize("rows", [300, 12_000])  # in-memory graphs, then compact ones
def test_joins_into_named_graphs_answer_as_oxigraph_does(rows, monkeypatch):
    bind_joins = []
    real = joins.extend_through_bgp
    monkeypatch.setattr(joins, "extend_through_bgp", lambda bgp, cx, left: bind_joins.append(
        (str(bgp.triples[0].predicate.value), tuple(left.columns))) or real(bgp, cx, left))
    for seed in range(3):
        text = random_quads(seed, rows)
        ours = Store()
        ours.load(text.encode(), "nquads")
        theirs = pyoxigraph.Store()
        theirs.load(text.encode(), format=pyoxigraph.RdfFormat.N_QUADS)
        for query in QUERIES:
            assert answer(ours.query(PREFIX + query).rows()) == answer(theirs.query(PREFIX + query)), query
    # the joins into GRAPH ex:b continued from the friends found in ex:a
    assert any(predicate == EX + "made" and "f" in columns for predicate, columns in bind_joins)


def test_a_limited_join_into_a_named_graph_reads_from_the_left_rows_only(monkeypatch):
    """The right BGP is matched with the left side's values bound, never over its whole graph."""
    text = random_quads(9, 12_000)
    ours = Store()
    ours.load(text.encode(), "nquads")
    unbound = []
    real = joins.join
    monkeypatch.setattr(joins, "join", lambda left, right: unbound.append(right) or real(left, right))
    query = PREFIX + "SELECT ?f ?p { GRAPH ex:a { ex:n1 ex:knows ?f } GRAPH ex:b { ?f ex:made ?p } } LIMIT 5"
    rows = list(ours.query(query).rows())
    assert 0 < len(rows) <= 5 and not unbound


def walk(entry: dict):
    yield entry
    for child in entry.get("children", []):
        yield from walk(child)


def test_explain_shows_the_bind_join_into_the_named_graph_with_its_actual_rows():
    ours = Store()
    ours.load(random_quads(4, 3_000).encode(), "nquads")
    text = PREFIX + "SELECT ?f ?p { GRAPH ex:a { ?u ex:knows ?f } GRAPH ex:b { ?f ex:made ?p } }"
    explained = ours.explain(ours.prepare(text), analyze=True)
    join = next(e for e in walk(explained["plan"]) if e["operator"] == "Join")
    assert join["detail"].startswith(f"bind join into the graph <{EX}b>")
    assert len(join["steps"]) == 1 and join["steps"][0]["pattern"].endswith(f"<{EX}made> ?p")
    assert join["steps"][-1]["actual_rows"] == explained["rows"] == len(list(ours.query(text).rows())) > 0
    # a left side that leaves ?f unbound: the right side runs on its own, and EXPLAIN says so
    text = PREFIX + ("SELECT ?f ?p { GRAPH ex:a { ?u ex:knows ex:n3 OPTIONAL { ?u ex:unknown ?f } } "
                     "GRAPH ex:b { ?f ex:made ?p } }")
    explained = ours.explain(ours.prepare(text), analyze=True)
    join = next(e for e in walk(explained["plan"]) if e["operator"] == "Join")
    assert "bind join" not in join.get("detail", "") and len(join["children"]) == 2
