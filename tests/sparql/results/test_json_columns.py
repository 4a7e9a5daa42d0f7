"""The JSON writer from ID columns (compiled row assembly) gives the bytes of
the row writer, the format's definition, on random answers: unbound cells
anywhere (whole rows, first columns), terms repeated within and across
columns, every kind of term, one and several batches, no variables."""

from __future__ import annotations

import random

import numpy as np
import orjson
import pytest

from engine.rdf import IRI, BNode, Literal, TripleTerm
from engine.sparql.results import json_rows_kernel
from engine.sparql.results.json_results import write_select, write_select_columns

TERMS = [IRI("http://example.org/a"), IRI('http://example.org/"quoted"\\'), BNode("b1"),
         Literal("plain"), Literal("chat", lang="fr"), Literal("7", datatype="http://www.w3.org/2001/XMLSchema#integer"),
         Literal("line\nbreak \u00e9\u4e2d"), Literal("rtl", lang="ar--rtl"),
         TripleTerm(IRI("http://example.org/s"), IRI("http://example.org/p"), Literal("o"))]


def _decode(ids: np.ndarray) -> list:
    # ID 0 is unbound; negative IDs stand for a query's own terms, as in the executor
    return [None if i == 0 else TERMS[abs(int(i)) - 1] for i in ids.tolist()]


def _random_column(rng: random.Random, length: int, unbound: float) -> np.ndarray:
    """IDs of TERMS, some negative, each unbound (0) with probability ``unbound``."""
    return np.array([0 if rng.random() < unbound else rng.choice((1, -1)) * rng.randrange(1, len(TERMS) + 1)
                     for _ in range(length)], dtype=np.int64)


@pytest.mark.parametrize("seed", range(60))
def test_columns_give_the_row_writers_bytes(seed: int) -> None:
    rng = random.Random(seed)
    width = rng.randrange(0, 5)
    variables = [f"v{j}" for j in range(width)]
    batches = []
    rows = []
    for _ in range(rng.randrange(1, 4)):
        length = rng.randrange(0, 40)
        unbound = rng.random()
        columns = [_random_column(rng, length, unbound) for _ in range(width)]
        batches.append((length, columns))
        rows += [[_decode(np.array([c[r]]))[0] for c in columns] for r in range(length)]
    written = b"".join(write_select_columns(variables, batches, _decode))
    assert written == b"".join(write_select(variables, rows))
    document = orjson.loads(written)
    assert len(document["results"]["bindings"]) == len(rows)


def test_join_bindings_refuses_codes_it_cannot_place() -> None:
    keys = [b'"a":', b'"b":']
    with pytest.raises(IndexError):
        json_rows_kernel.join_bindings(keys, np.array([0, 2], dtype=np.intp), [b"1", b"2"])
    with pytest.raises(ValueError):
        json_rows_kernel.join_bindings(keys, np.array([0, 1, 0], dtype=np.intp), [b"1", b"2"])
    with pytest.raises(TypeError):
        json_rows_kernel.join_bindings(keys, np.array([0, 1], dtype=np.intp), [b"1", "not bytes"])
    joined = json_rows_kernel.join_bindings(keys, np.array([0, 1, 1, 1], dtype=np.intp), [None, b"2"])
    assert joined == b'{"b":2},{"a":2,"b":2}'
