"""The planner's decisions, taken on algebra alone: pattern order, bind join,
LIMIT push-down shapes and chunks, vectorised filter shapes."""

import numpy as np

from engine.rdf import IRI, BNode, Literal, Variable
from engine.sparql import algebra as A
from engine.sparql.plan import (
    CHUNK_GROWTH,
    FIRST_CHUNK,
    ColumnComparison,
    bind_join_applies,
    chunk_bounds,
    column_comparison,
    limited_bgp,
    order_patterns,
)

X, Y = Variable("x"), Variable("y")
P, Q = IRI("http://ex.org/p"), IRI("http://ex.org/q")
FIVE = Literal("5", "http://www.w3.org/2001/XMLSchema#integer")


def test_patterns_start_at_the_cheapest_and_stay_connected() -> None:
    wide, narrow, apart = A.TriplePattern(X, P, Y), A.TriplePattern(X, Q, FIVE), A.TriplePattern(Y, Q, X)
    costs = {wide: 100.0, narrow: 1.0, apart: 50.0}
    order = order_patterns((wide, apart, narrow), lambda p, bound, rows: rows * costs[p])
    assert order[0] == narrow and set(order) == {wide, narrow, apart}


def test_a_bind_join_needs_a_bgp_whose_columns_are_bound_on_every_row() -> None:
    bgp = A.BGP((A.TriplePattern(X, P, Y),))
    assert bind_join_applies({"x": np.array([1, 2])}, bgp)
    assert not bind_join_applies({"x": np.array([1, 0])}, bgp)
    assert not bind_join_applies({"x": np.array([1, 2])}, A.Values((X,), ((P,),)))


def test_limit_push_down_takes_project_over_filters_over_a_bgp() -> None:
    bgp = A.BGP((A.TriplePattern(X, P, Y),))
    outer, inner = A.BinaryExpr("=", A.VarExpr(X), A.TermExpr(P)), A.CallExpr("BOUND", (A.VarExpr(Y),))
    shape = limited_bgp(A.Project(A.Filter(outer, A.Filter(inner, bgp)), (X,)))
    assert shape is not None
    assert shape.bgp == bgp and shape.conditions == (inner, outer) and shape.project == (X,)
    assert limited_bgp(A.OrderBy(bgp, ((A.VarExpr(X), True),))) is None
    assert limited_bgp(A.BGP(())) is None


def test_chunks_grow_geometrically_and_cover_every_seed_once() -> None:
    total = FIRST_CHUNK * (1 + CHUNK_GROWTH) + 3
    bounds = list(chunk_bounds(total))
    assert bounds[0] == (0, FIRST_CHUNK)
    assert bounds[1] == (FIRST_CHUNK, FIRST_CHUNK * (1 + CHUNK_GROWTH))
    assert bounds[-1][1] == total and all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    assert list(chunk_bounds(0)) == []


def test_vectorised_filters_are_variable_against_number_or_iri_equality() -> None:
    flipped = A.BinaryExpr("<", A.TermExpr(FIVE), A.VarExpr(X))
    assert column_comparison(flipped) == ColumnComparison("x", ">", FIVE)
    not_p = A.BinaryExpr("!=", A.VarExpr(X), A.TermExpr(P))
    assert column_comparison(not_p) == ColumnComparison("x", "!=", P)
    assert column_comparison(A.BinaryExpr("<", A.VarExpr(X), A.TermExpr(P))) is None
    assert column_comparison(A.BinaryExpr("=", A.VarExpr(X), A.VarExpr(Y))) is None
    assert column_comparison(A.BinaryExpr("=", A.VarExpr(X), A.TermExpr(BNode("b")))) is None
    assert column_comparison(A.BinaryExpr("+", A.VarExpr(X), A.TermExpr(FIVE))) is None
