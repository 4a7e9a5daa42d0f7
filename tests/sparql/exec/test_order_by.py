"""ORDER BY: equal values are ties that the next condition decides (SPARQL 1.1 section 15.1)."""

from __future__ import annotations

import itertools
import random

import pytest

from engine.api import Store

PREFIXES = "PREFIX ex: <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "


def _order(values: str, order: str = "?v ?s") -> list[str]:
    result = Store().query(PREFIXES + f"SELECT ?s WHERE {{ VALUES (?s ?v) {{ {values} }} }} ORDER BY {order}")
    return [row[0].value.rsplit("/", 1)[-1] for row in result.rows()]


def test_equal_numbers_of_different_terms_fall_through_to_the_next_key():
    assert _order("(ex:b 1) (ex:a 1.0) (ex:c UNDEF)") == ["c", "a", "b"]


def test_one_instant_in_two_time_zones_falls_through_to_the_next_key():
    assert _order('(ex:a "2024-01-01T01:00:00+01:00"^^xsd:dateTime) '
                  '(ex:b "2024-01-01T00:00:00Z"^^xsd:dateTime)') == ["a", "b"]


def test_equal_booleans_and_strings_fall_through_to_the_next_key():
    assert _order('(ex:b true) (ex:a "1"^^xsd:boolean) (ex:d "x") (ex:c "x"^^xsd:string)') \
        == ["a", "b", "c", "d"]


# spellings of equal values: every pair must tie, so ?s alone decides among them
EQUAL_SPELLINGS = [
    ["1", "1.0", '"01"^^xsd:integer', "1e0", '"1"^^xsd:byte'],
    ['"2024-05-01T12:00:00Z"^^xsd:dateTime', '"2024-05-01T14:00:00+02:00"^^xsd:dateTime',
     '"2024-05-01T07:00:00-05:00"^^xsd:dateTime'],
]


@pytest.mark.parametrize("spellings", EQUAL_SPELLINGS)
@pytest.mark.parametrize("seed", range(5))
def test_generated_ties_beside_other_values_in_a_mixed_column(spellings: list[str], seed: int):
    """Equal values in random spellings, shuffled among values that differ and
    a non-numeric term (so the column is not all numeric): the tied rows come
    out in ?s order, the others by value."""
    rng = random.Random(seed)
    tied = rng.sample(spellings, len(spellings))
    names = [f"t{i}" for i in rng.sample(range(len(tied)), len(tied))]
    rows = [f"(ex:{name} {spelling})" for name, spelling in zip(names, tied)]
    rows += ['(ex:z "text")', "(ex:y UNDEF)", "(ex:x <http://example.org/iri>)"]
    rng.shuffle(rows)
    order = _order(" ".join(rows))
    assert order[:2] == ["y", "x"]  # unbound, then IRIs, then literals
    assert order[2:2 + len(tied)] == sorted(names)
    for descending in (True, False):
        flipped = _order(" ".join(rows), "DESC(?v) ?s" if descending else "?v DESC(?s)")
        tied_part = [name for name in flipped if name.startswith("t")]
        assert tied_part == (sorted(names) if descending else sorted(names, reverse=True))


def test_distinct_values_keep_their_order_whatever_their_spelling():
    values = ["-2", "0.5", "1", '"1.5"^^xsd:float', "2e0", "3"]
    for permutation in itertools.islice(itertools.permutations(range(len(values))), 20):
        rows = " ".join(f"(ex:n{i} {values[i]})" for i in permutation) + ' (ex:s "s")'
        assert _order(rows) == [f"n{i}" for i in range(len(values))] + ["s"]
