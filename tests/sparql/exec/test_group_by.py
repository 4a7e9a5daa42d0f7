"""The vectorised aggregates give exactly what the per-row path gives."""

import numpy as np
import pytest

from engine.rdf import XSD, Literal, MemoryTermDictionary, Variable
from engine.sparql import algebra as A
from engine.sparql.exec import QueryTerms, Solutions
from engine.sparql.exec.group_by import fast_numeric, group_ids
from engine.sparql.expr import EvalContext, compute_aggregate

V = Variable("v")


def numbered_solutions(kinds: list[str], seed: int):
    rng = np.random.default_rng(seed)
    dictionary = MemoryTermDictionary()
    terms = QueryTerms(dictionary)
    values = []
    for kind in kinds:
        if kind == "integer":
            values.append(Literal(str(int(rng.integers(-50, 50))), XSD + "integer"))
        elif kind == "double":
            values.append(Literal(f"{rng.normal():.3f}E0", XSD + "double"))
        else:
            values.append(None)  # unbound
    ids = np.array([0 if v is None else dictionary.encode(v) for v in values], dtype=np.int64)
    groups = rng.integers(0, 4, len(values))
    return terms, Solutions({"v": ids, "g": groups.astype(np.int64) + 1}, len(values)), values, groups


@pytest.mark.parametrize("name", ["SUM", "AVG", "MIN", "MAX"])
@pytest.mark.parametrize("mix", [["integer"] * 40, ["integer", "double", "unbound"] * 15])
def test_fast_numeric_matches_the_general_path(name, mix):
    terms, solutions, values, groups = numbered_solutions(mix, seed=len(mix))
    first, group_of = group_ids([solutions.columns["g"]], solutions.length)
    agg = A.Aggregate(name, A.VarExpr(V))
    fast = fast_numeric(agg, solutions, group_of, len(first), terms)
    assert fast is not None
    for g in range(len(first)):
        rows = [{V: values[i]} if values[i] is not None else {} for i in np.flatnonzero(group_of == g)]
        expected = compute_aggregate(agg, rows, EvalContext())
        got = fast[g]
        if name in ("SUM", "AVG") and expected.datatype == XSD + "double":
            assert got.datatype == expected.datatype
            assert float(got.lexical) == pytest.approx(float(expected.lexical))
        else:
            assert got == expected


def test_non_numbers_take_the_general_path():
    dictionary = MemoryTermDictionary()
    ids = np.array([dictionary.encode(Literal("x")), dictionary.encode(Literal("1", XSD + "integer"))])
    solutions = Solutions({"v": ids}, 2)
    agg = A.Aggregate("SUM", A.VarExpr(V))
    assert fast_numeric(agg, solutions, np.zeros(2, dtype=np.int64), 1, QueryTerms(dictionary)) is None


def test_fast_max_keeps_an_integer_subtype():
    dictionary = MemoryTermDictionary()
    ids = np.array([dictionary.encode(Literal(v, XSD + "int")) for v in ("3", "05", "4")], dtype=np.int64)
    solutions = Solutions({"v": ids}, 3)
    result = fast_numeric(A.Aggregate("MAX", A.VarExpr(V)), solutions, np.zeros(3, dtype=np.int64), 1,
                          QueryTerms(dictionary))
    assert result == [Literal("5", XSD + "int")]
