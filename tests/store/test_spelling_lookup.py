"""A spelling's ID in a compact dictionary, found in one compiled call
(engine/store/spelling_lookup_kernel.pyx), equals the NumPy way (hash,
binary search, compare) for generated terms: present and absent, in arrays
numbered by hash rank and grown with their own ID column, built in memory
and mapped from a store's files, ASCII and not."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa

from engine.store import spelling_lookup_kernel
from engine.store.compact_dictionary import CompactTermDictionary, TermArrays
from engine.store.term_hash import SEED, term_hash


def _reference(arrays: TermArrays, nt: str) -> int:
    found = int(arrays.find(np.array([term_hash(nt)], dtype=np.int64))[0])
    return found if found and arrays.spelling(found) == nt else 0


def _spellings(rng: random.Random, count: int) -> list[str]:
    alphabet = "abcxyz0189/_-é日\u00b7"
    made = set()
    while len(made) < count:
        word = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        made.add(rng.choice([f"<http://example.org/{word}>", f'"{word}"', f'"{word}"@en', f"_:b{word}x"]))
    return sorted(made)


def _check(arrays: TermArrays, present: list[str], absent: list[str]) -> None:
    for nt in present:
        got = arrays.find_spelling(nt)
        assert got != 0 and got == _reference(arrays, nt) and arrays.spelling(got) == nt
    for nt in absent:
        assert arrays.find_spelling(nt) == 0 == _reference(arrays, nt)


def test_lookups_equal_the_numpy_way(tmp_path):
    rng = random.Random(3)
    terms = _spellings(rng, 1200)
    first, second, absent = terms[:500], terms[500:900], terms[900:]
    dictionary = CompactTermDictionary()
    dictionary.encode_spellings(pa.array(first))
    assert dictionary.arrays.hash_ids is None  # numbered by hash rank
    _check(dictionary.arrays, first, second + absent)
    dictionary.encode_spellings(pa.array(second))  # grown: an ID column beside the hashes
    grown = dictionary.arrays
    assert grown.hash_ids is not None
    _check(grown, first + second, absent)
    grown.save(tmp_path / "terms")
    mapped = TermArrays.open(tmp_path / "terms")
    _check(mapped, first + second, absent + [nt[:-1] for nt in first[:50]])


def test_an_empty_dictionary_finds_nothing():
    assert TermArrays.empty().find_spelling("<http://example.org/a>") == 0


def test_the_kernel_checks_the_spelling_not_only_the_hash():
    dictionary = CompactTermDictionary()
    dictionary.encode_spellings(pa.array(["<http://example.org/a>", '"b"']))
    arrays = dictionary.arrays
    a = arrays.find_spelling("<http://example.org/a>")
    data = b"<http://example.org/a>"
    assert spelling_lookup_kernel.spelled_as(arrays.offsets, arrays.blob, a, data)
    for wrong in (0, 3, -1, 99):  # another ID, or none at all
        if wrong != a:
            assert not spelling_lookup_kernel.spelled_as(arrays.offsets, arrays.blob, wrong, data)
    assert spelling_lookup_kernel.hash_position(arrays.hashes, b"<http://example.org/zz>", SEED) == -1


def test_terms_found_lately_keep_their_ids_through_growth_and_overlay_terms():
    """Compact IDs found once are answered from memory: the answer stays the
    dictionary's own through appended loads, overlay terms and value IDs."""
    from engine.rdf import IRI, Literal
    from engine.rdf.ntriples import format_term

    rng = random.Random(7)
    dictionary = CompactTermDictionary()
    first = [IRI(f"http://example.org/{i}") for i in range(200)]
    ids = dictionary.encode_spellings(pa.array([format_term(t) for t in first]))
    assert [dictionary.lookup_pinned(t) for t in first] == ids.tolist()
    later = [IRI(f"http://example.org/later/{i}") for i in range(100)]
    before = [dictionary.lookup_pinned(t) for t in later]  # misses, not remembered as IDs
    assert before == [0] * len(later)
    more = dictionary.encode_spellings(pa.array([format_term(t) for t in later]))
    assert [dictionary.lookup(t) for t in later] == more.tolist()
    overlay = IRI("http://example.org/overlay")
    overlay_id = dictionary.encode(overlay)
    number = Literal("12", datatype="http://www.w3.org/2001/XMLSchema#integer")
    for _ in range(500):
        term = rng.choice([*first, *later, overlay, number])
        term_id = dictionary.lookup_pinned(term)
        assert dictionary.decode(term_id) == term
        if term == overlay:
            assert term_id == overlay_id
