"""Reported rows as positions in distinct terms, and their JSON: the same
rows and the same bytes as tuples of terms written by the row writer, on
generated rows (hostile spellings, unbound columns first, last and all,
zero columns, repeated terms)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.rdf import IRI, XSD, BNode, Literal, MemoryTermDictionary
from engine.sparql.results import write_json_indexed, write_select
from engine.stream.reported_rows import ReportedRows, joined

#: pieces of spellings that JSON must escape or that are outside ASCII
HOSTILE = ['"', "\\", "\n", "\r\t", "\x00", "\x1f", "\u2028", "é", "😀", "</script>", "a,b", "{}", ":"]


def random_term(rng: random.Random):
    text = "".join(rng.choice(HOSTILE + ["x", "y", "1"]) for _ in range(rng.randint(0, 4)))
    kind = rng.randrange(6)
    if kind == 0:
        return IRI("http://example.org/" + text)
    if kind == 1:
        return BNode("b" + str(rng.randint(0, 3)))
    if kind == 2:
        return Literal(text, lang=rng.choice(["en", "fr-CA"]))
    if kind == 3:
        return Literal(str(rng.randint(-5, 5)), XSD + rng.choice(["integer", "decimal"]))
    if kind == 4:
        return Literal(text, "http://example.org/type" + text)
    return Literal(text)


def random_rows(rng: random.Random) -> tuple[list[str], list[tuple]]:
    width = rng.randint(0, 4)
    variables = [rng.choice(["s", "o", "é", "a\"b", "x1"]) + str(j) for j in range(width)]
    pool = [random_term(rng) for _ in range(rng.randint(1, 8))] + [None]
    unbound = rng.random()  # how often a column is unbound, per rows set
    rows = [tuple(None if rng.random() < unbound * 0.5 else rng.choice(pool) for _ in range(width))
            for _ in range(rng.randint(0, 30))]
    return variables, rows


def row_writer(variables: list[str], rows: list[tuple]) -> bytes:
    return b"".join(write_select("json", variables, rows))


def by_ids(rows: list[tuple], width: int) -> ReportedRows:
    """``rows`` through a dictionary's IDs, decoded a distinct ID at a time."""
    dictionary = MemoryTermDictionary()
    ids = np.array([[0 if term is None else dictionary.encode(term) for term in row] for row in rows],
                   dtype=np.int64).reshape(len(rows), width)
    return ReportedRows.of_ids(ids, dictionary.decode_many)


@pytest.mark.parametrize("seed", range(300))
def test_json_and_rows_are_those_of_the_tuples(seed):
    rng = random.Random(seed)
    variables, rows = random_rows(rng)
    expected = row_writer(variables, rows)
    for reported in (ReportedRows.of_tuples(rows, len(variables)), by_ids(rows, len(variables))):
        assert reported.tuples() == rows
        assert write_json_indexed(variables, reported.terms, reported.index) == expected


@pytest.mark.parametrize("seed", range(100))
def test_taking_repeating_and_joining_rows(seed):
    rng = random.Random(seed)
    variables, rows = random_rows(rng)
    width = len(variables)
    reported = by_ids(rows, width)
    mask = np.array([rng.random() < 0.5 for _ in rows], dtype=bool)
    taken = reported.take(mask)
    assert taken.tuples() == [row for row, keep in zip(rows, mask, strict=True) if keep]
    assert len(taken.terms) == len(np.unique(taken.index))  # only the terms still named
    counts = np.array([rng.randint(0, 3) for _ in rows], dtype=np.int64)
    assert reported.repeated(counts).tuples() == [row for row, n in zip(rows, counts, strict=True)
                                                 for _ in range(n)]
    # rows of the first report where at_first says, the second's in order elsewhere
    pool = [term for row in rows for term in row] + [random_term(rng), None]
    at_first = [rng.randrange(len(rows)) if rows and rng.random() < 0.5 else -1 for _ in range(40)]
    second_rows = [tuple(rng.choice(pool) for _ in range(width)) for at in at_first if at < 0]
    second = ReportedRows.of_tuples(second_rows, width)
    assert second.tuples() == second_rows
    rest = iter(second_rows)
    both = joined(reported, second, np.array(at_first, dtype=np.int64))
    assert both.tuples() == [rows[at] if at >= 0 else next(rest) for at in at_first]
    assert write_json_indexed(variables, both.terms, both.index) == row_writer(variables, both.tuples())


def test_a_row_that_binds_nothing_and_rows_of_no_variables():
    variables = ["a", "b", "c"]
    rows = [(None, None, None), (None, None, IRI("http://example.org/c")), (None, Literal("b"), None),
            (IRI("http://example.org/a"), None, None)]
    reported = by_ids(rows, 3)
    assert write_json_indexed(variables, reported.terms, reported.index) == row_writer(variables, rows)
    empty = ReportedRows.of_ids(np.zeros((3, 0), dtype=np.int64), lambda ids: [])
    assert write_json_indexed([], empty.terms, empty.index) == row_writer([], [(), (), ()])
    none = ReportedRows.empty(2)
    assert write_json_indexed(["a", "b"], none.terms, none.index) == row_writer(["a", "b"], [])


@pytest.mark.parametrize("seed", range(40))
def test_a_split_gives_each_part_what_a_take_gives_it(seed):
    rng = random.Random(seed)
    _, rows = random_rows(rng)
    width = len(rows[0]) if rows else 0
    reported = ReportedRows.of_tuples(rows, width)
    cuts = sorted(rng.randint(0, len(rows)) for _ in range(rng.randint(0, 5)))
    bounds = [0, *cuts, len(rows)]
    parts = reported.split(bounds)
    assert len(parts) == len(bounds) - 1
    for part, start, end in zip(parts, bounds, bounds[1:], strict=False):
        taken = reported.take(slice(start, end))
        assert part.tuples() == taken.tuples() == rows[start:end]
        assert part.terms.tolist() == taken.terms.tolist()  # only the terms the part names, in order
        assert part.index.tolist() == taken.index.tolist()
