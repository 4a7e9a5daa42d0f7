"""Decoding a column: each distinct ID once when the column repeats them, the
same terms, in the same order, as decoding one ID at a time."""

import numpy as np
import pytest

from engine.rdf import IRI, XSD, BNode, Literal, MemoryTermDictionary
from engine.sparql.exec import QueryTerms
from engine.store.compact_dictionary import CompactTermDictionary


def some_terms(count: int) -> list:
    """IRIs, blank nodes, plain, typed and tagged literals, numbers (value IDs)."""
    kinds = [lambda k: IRI(f"http://example.org/t{k}"), lambda k: BNode(f"b{k}"),
             lambda k: Literal(f"text {k}"), lambda k: Literal(f"{k}", XSD + "integer"),
             lambda k: Literal(f"{k}.5", XSD + "decimal"), lambda k: Literal(f"word {k}", lang="en"),
             lambda k: Literal(f"0{k}", XSD + "integer")]  # not canonical: kept in the dictionary
    return [kinds[k % len(kinds)](k) for k in range(count)]


@pytest.mark.parametrize("make", [MemoryTermDictionary, CompactTermDictionary])
@pytest.mark.parametrize("seed", range(6))
def test_a_repeating_column_decodes_as_one_id_at_a_time(make, seed):
    rng = np.random.default_rng(seed)
    dictionary = make()
    terms = QueryTerms(dictionary)
    vocabulary = some_terms(int(rng.integers(1, 400)))
    ids = np.array([terms.encode(t) for t in vocabulary], dtype=np.int64)
    local = np.array([terms.encode(Literal(f"computed {k}")) for k in range(5)], dtype=np.int64)
    assert (local < 0).all()
    pool = np.concatenate([ids, local, [0]])  # stored, query-local and unbound
    length = int(rng.choice([1, 255, 256, 257, 5000]))
    column = rng.choice(pool, size=length)
    expected = [terms.decode(int(i)) for i in column]
    assert terms.decode_column(column) == expected
    assert [type(t) for t in terms.decode_column(column)] == [type(t) for t in expected]
