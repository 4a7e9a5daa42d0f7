"""EXPLAIN (:meth:`engine.api.Store.explain`): the plan the executor runs,
the planner's estimates, and (analysed) the rows each step really had.

The checks that hold for any query are run over generated data and
generated basic graph patterns: the analysed total equals the answer's
length, a BGP's last step has the BGP's rows, the steps come in the
planner's order, and an estimate for a single pattern is its exact count.
"""

from __future__ import annotations

import json
import random

import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from engine.sparql.plan import connected_groups

EX = "http://example.org/"


def walk(entry: dict):
    yield entry
    for child in entry.get("children", []):
        yield from walk(child)


def generated_store(seed: int, triples: int = 400) -> Store:
    rng = random.Random(seed)
    store = Store()
    rows = set()
    while len(rows) < triples:
        s, p = rng.randrange(40), rng.randrange(5)
        o = IRI(f"{EX}n{rng.randrange(40)}") if p < 4 else Literal(str(rng.randrange(10)))
        rows.add((IRI(f"{EX}n{s}"), IRI(f"{EX}p{p}"), o))
    store.add(sorted(rows, key=str))
    return store


def generated_bgp(rng: random.Random) -> str:
    """A connected chain or star of 1-4 patterns, with a constant now and then."""
    names = ["?a", "?b", "?c", "?d", "?e"]
    patterns = []
    for i in range(rng.randint(1, 4)):
        subject = names[rng.randrange(i + 1)] if rng.random() < 0.8 else f"<{EX}n{rng.randrange(40)}>"
        obj = names[i + 1] if rng.random() < 0.8 else f"<{EX}n{rng.randrange(40)}>"
        patterns.append(f"{subject} <{EX}p{rng.randrange(4)}> {obj} .")
    return " ".join(patterns)


@pytest.mark.parametrize("seed", range(8))
def test_analysed_counts_agree_with_the_answer_for_generated_queries(seed):
    store = generated_store(seed)
    rng = random.Random(seed)
    for _ in range(25):
        text = f"SELECT * {{ {generated_bgp(rng)} }}"
        plan = store.prepare(text)
        answer = len(store.execute(plan))
        explained = store.explain(plan, analyze=True)
        json.dumps(explained)  # JSON-ready as it is
        assert explained["rows"] == answer, text
        top = explained["plan"]
        assert top["operator"] == "Project" and top["actual_rows"] == answer and top["calls"] == 1
        bgp = top["children"][0]
        assert bgp["operator"] == "BGP" and bgp["actual_rows"] == answer
        steps = bgp["steps"]
        assert all(s["estimated_rows"] is not None and s["actual_rows"] >= 0 for s in steps)
        assert len(steps) == len(set(plan.pattern.pattern.triples))
        if answer and len(connected_groups(plan.pattern.pattern.triples)) == 2:
            # one group of connected patterns (after the empty one of bound variables),
            # explored to its end: the last step has the BGP's rows
            assert steps[-1]["actual_rows"] == answer, text
        # the plan alone agrees with the analysed one about everything but the actual figures
        alone = store.explain(plan)
        assert alone["analyzed"] is False and "rows" not in alone
        assert [s["pattern"] for s in alone["plan"]["children"][0]["steps"]] == [s["pattern"] for s in steps]
        assert all("actual_rows" not in e and "calls" not in e for e in walk(alone["plan"]))


def test_a_single_patterns_estimate_is_its_exact_count():
    store = generated_store(1)
    for p in range(5):
        text = f"SELECT * {{ ?s <{EX}p{p}> ?o }}"
        exact = len(store.query(text))
        step = store.explain(store.prepare(text))["plan"]["children"][0]["steps"][0]
        assert step["estimated_rows"] == exact
        assert step["pattern"] == f"?s <{EX}p{p}> ?o"


def test_the_steps_come_in_the_planners_order_most_selective_first():
    store = Store()
    store.add([(IRI(f"{EX}n{i}"), IRI(f"{EX}common"), IRI(f"{EX}n{i + 1}")) for i in range(200)])
    store.add([(IRI(f"{EX}n7"), IRI(f"{EX}rare"), Literal("x"))])
    text = f"SELECT * {{ ?a <{EX}common> ?b . ?a <{EX}rare> ?x }}"
    steps = store.explain(store.prepare(text), analyze=True)["plan"]["children"][0]["steps"]
    assert [s["pattern"] for s in steps] == [f'?a <{EX}rare> ?x', f"?a <{EX}common> ?b"]
    assert [s["actual_rows"] for s in steps] == [1, 1]
    assert steps[0]["estimated_rows"] == 1.0


def test_operators_of_a_larger_query_each_have_their_figures():
    store = generated_store(3)
    text = (f"SELECT ?a (COUNT(?b) AS ?n) {{ {{ ?a <{EX}p0> ?b }} UNION {{ ?a <{EX}p1> ?b }} "
            f"OPTIONAL {{ ?b <{EX}p4> ?v }} FILTER(?a != <{EX}n0>) }} GROUP BY ?a ORDER BY ?a LIMIT 5")
    explained = store.explain(store.prepare(text), analyze=True)
    operators = [e["operator"] for e in walk(explained["plan"])]
    for name in ("Slice", "OrderBy", "GroupBy", "Filter", "LeftJoin", "Union", "BGP"):
        assert name in operators, operators
    assert explained["rows"] == len(store.query(text)) <= 5
    union = next(e for e in walk(explained["plan"]) if e["operator"] == "Union")
    left, right = union["children"]
    assert union["actual_rows"] == left["actual_rows"] + right["actual_rows"]
    assert union["estimated_rows"] == pytest.approx(left["estimated_rows"] + right["estimated_rows"], abs=0.2)
    left_join = next(e for e in walk(explained["plan"]) if e["operator"] == "LeftJoin")
    assert "bind join" in left_join["detail"] and left_join["steps"][0]["pattern"].endswith("?v")
    assert all(e["time_ms"] >= 0 for e in walk(explained["plan"]))


def test_graph_and_joins_of_groups():
    store = Store()
    store.load(b"<http://x/a> <http://x/p> <http://x/b> <http://x/g1> .\n"
               b"<http://x/b> <http://x/p> <http://x/c> <http://x/g2> .\n"
               b"<http://x/c> <http://x/q> <http://x/d> .\n", "nquads")
    graph = store.explain(store.prepare("SELECT * { GRAPH ?g { ?s <http://x/p> ?o } }"), analyze=True)
    node = graph["plan"]["children"][0]
    assert node["operator"] == "Graph" and "2 named graphs" in node["detail"]
    assert node["estimated_rows"] == 2.0 and node["actual_rows"] == 2
    assert node["children"][0]["calls"] == 2  # once in each graph
    groups = store.explain(store.prepare("SELECT * { { ?s <http://x/q> ?o } { ?o2 <http://x/q> ?s } }"))
    join = groups["plan"]["children"][0]
    assert join["operator"] == "Join" and "one basic graph pattern" in join["detail"]
    assert len(join["steps"]) == 2


def test_a_limit_pushed_into_its_patterns_reports_the_chunks_it_explored():
    store = Store()
    store.add([(IRI(f"{EX}n{i}"), IRI(f"{EX}p"), IRI(f"{EX}n{i + 1}")) for i in range(5000)])
    explained = store.explain(store.prepare(f"SELECT * {{ ?a <{EX}p> ?b . ?b <{EX}p> ?c }} LIMIT 3"),
                              analyze=True)
    assert explained["rows"] == 3
    sliced = next(e for e in walk(explained["plan"]) if e["operator"] == "Slice")
    assert "a chunk at a time" in sliced["detail"]
    assert sliced["steps"] and all(s["estimated_rows"] is None for s in sliced["steps"])
    # far fewer rows explored than the 5,000 a whole run would
    assert max(s["actual_rows"] for s in sliced["steps"][1:]) < 5000


def test_analyze_is_bounded_like_a_query():
    from engine.store import RowBudgetExceeded

    store = generated_store(2)
    with pytest.raises(RowBudgetExceeded):
        store.explain(store.prepare("SELECT * { ?a ?p ?b . ?c ?q ?d }"), analyze=True, max_rows=1000)
    # the plan alone runs nothing, whatever it would cost
    assert store.explain(store.prepare("SELECT * { ?a ?p ?b . ?c ?q ?d }"), max_rows=10)["analyzed"] is False
