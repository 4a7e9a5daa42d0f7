"""The W3C runner's answer comparison: blank node isomorphism, order, graphs."""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest

from engine.rdf import IRI, XSD, BNode, Literal
from tests.harness.w3c.compare import compare_graphs, compare_solutions
from tests.harness.w3c.runner import TestTimeout, time_limit

A, B, P = IRI("http://ex.org/a"), IRI("http://ex.org/b"), IRI("http://ex.org/p")
ONE = Literal("1", XSD + "integer")


def test_blank_nodes_match_under_renaming() -> None:
    actual = [(BNode("x"), A), (BNode("y"), B), (BNode("x"), B)]
    expected = [(BNode("n2"), B), (BNode("n1"), A), (BNode("n1"), B)]
    assert compare_solutions(["s", "o"], actual, ["s", "o"], expected) is None


def test_blank_node_mapping_must_be_a_bijection() -> None:
    # two distinct blank nodes cannot both map to one
    actual = [(BNode("x"), A), (BNode("y"), B)]
    expected = [(BNode("n"), A), (BNode("n"), B)]
    assert compare_solutions(["s", "o"], actual, ["s", "o"], expected) is not None
    assert compare_solutions(["s", "o"], expected, ["s", "o"], actual) is not None


def _brute_force_isomorphic(actual: list[tuple], expected: list[tuple]) -> bool:
    labels_a = sorted({t.id for row in actual for t in row if isinstance(t, BNode)})
    labels_e = sorted({t.id for row in expected for t in row if isinstance(t, BNode)})
    if len(labels_a) != len(labels_e):
        return False
    for perm in itertools.permutations(labels_e):
        rename = dict(zip(labels_a, perm, strict=True))
        renamed = [tuple(BNode(rename[t.id]) if isinstance(t, BNode) else t for t in row) for row in actual]
        if Counter(renamed) == Counter(expected):
            return True
    return False


def test_agrees_with_brute_force_on_random_cases() -> None:
    rng = random.Random(7)
    pool = [A, B, BNode("1"), BNode("2"), BNode("3"), BNode("4")]
    for _ in range(300):
        actual = [(rng.choice(pool), rng.choice(pool)) for _ in range(rng.randint(0, 5))]
        expected = [(rng.choice(pool), rng.choice(pool)) for _ in range(len(actual))]
        if rng.random() < 0.5:  # a renamed shuffle of actual: must match
            rename = dict(zip(pool[2:], rng.sample(pool[2:], 4), strict=True))
            expected = [tuple(rename.get(t, t) for t in row) for row in actual]
            rng.shuffle(expected)
        found = compare_solutions(["s", "o"], actual, ["s", "o"], expected) is None
        assert found == _brute_force_isomorphic(actual, expected), (actual, expected)


def test_multiset_counts_duplicates() -> None:
    assert compare_solutions(["v"], [(A,), (A,)], ["v"], [(A,)]) is not None
    assert compare_solutions(["v"], [(A,), (None,)], ["v"], [(None,), (A,)]) is None


def test_columns_are_matched_by_name() -> None:
    assert compare_solutions(["a", "b"], [(A, B)], ["b", "a"], [(B, A)]) is None
    assert "variables differ" in compare_solutions(["a"], [(A,)], ["b"], [(A,)])


def test_literals_compare_as_rdf_terms() -> None:
    assert compare_solutions(["v"], [(ONE,)], ["v"], [(Literal("1", XSD + "decimal"),)]) is not None
    assert compare_solutions(["v"], [(Literal("1"),)], ["v"], [(ONE,)]) is not None
    assert compare_solutions(["v"], [(Literal("x", XSD + "string"),)], ["v"], [(Literal("x"),)]) is None
    tagged = [(Literal("x", lang="en-US"),)]
    assert compare_solutions(["v"], tagged, ["v"], [(Literal("x", lang="en-us"),)]) is None


def _same(actual: Literal, expected: Literal) -> bool:
    return compare_solutions(["v"], [(actual,)], ["v"], [(expected,)]) is None


def test_numbers_compare_by_value_within_a_datatype() -> None:
    double, decimal = XSD + "double", XSD + "decimal"
    assert _same(ONE, Literal("01", XSD + "integer"))
    assert _same(Literal("2.1E3", double), Literal("2100", double))
    assert _same(Literal("1.0", decimal), Literal("1.00", decimal))
    assert not _same(Literal("x", double), Literal("y", double))


def test_order_is_checked_on_the_sort_columns_only() -> None:
    expected = [(ONE, A), (ONE, B), (Literal("2", XSD + "integer"), A)]
    ties_swapped = [expected[1], expected[0], expected[2]]
    assert compare_solutions(["k", "v"], ties_swapped, ["k", "v"], expected, order_columns=["k"]) is None
    reversed_rows = expected[::-1]
    problem = compare_solutions(["k", "v"], reversed_rows, ["k", "v"], expected, order_columns=["k"])
    assert problem is not None and "order" in problem
    assert compare_solutions(["k", "v"], reversed_rows, ["k", "v"], expected) is None


def test_graph_isomorphism() -> None:
    actual = [(BNode("a1"), P, BNode("a2")), (BNode("a2"), P, A)]
    expected = [(BNode("e1"), P, BNode("e2")), (BNode("e2"), P, A)]
    assert compare_graphs(actual, expected) is None
    assert compare_graphs(actual, [(BNode("e1"), P, A), (BNode("e2"), P, A)]) is not None


def test_time_limit_interrupts_a_runaway_test() -> None:
    started = time.perf_counter()
    with pytest.raises(TestTimeout), time_limit(0.2):
        while True:
            pass
    assert time.perf_counter() - started < 2
