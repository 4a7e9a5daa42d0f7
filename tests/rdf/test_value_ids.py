"""Value IDs: numbers and booleans whose ID is their value, spelled back exactly."""

import math
import random

import numpy as np
import pyarrow as pa

from engine.rdf import (
    KIND_LITERAL,
    VALUE_BASE,
    XSD,
    Literal,
    SpelledTerms,
    encode_spans,
    numeric_value,
    value_id,
    value_numbers,
    value_term,
    value_terms,
)
from engine.rdf.value_ids import TYPES
from engine.store import CompactTermDictionary

FORMS = ["0", "1", "-1", "01", "+1", "-0", "0.0", "-0.0", "1.50", "1.5", "12.345", "-179.999", "67108863",
         "67108864", "-67108864", "-67108865", "8388607", "8388608", "0.0000001", "0.00000001", "1.", ".",
         ".5", "1e3", "true", "false", "True", "abc", "", "-", "--1", "1.2.3", "0.05", "-0.5", "10.0", "00",
         "8.388607", "-8.388608", " 1", "1 "]


def _samples() -> list:
    rng = random.Random(7)
    terms = [Literal(form, datatype) for datatype in TYPES for form in FORMS]
    for _ in range(2000):
        form = "".join(rng.choice("0123456789.-+e") for _ in range(rng.randint(1, 12)))
        terms.append(Literal(form, rng.choice(TYPES)))
    return terms + [Literal("5"), Literal("5", "http://x/y"), Literal("5", lang="en"),
                    Literal("2024-01-01T00:00:00Z", XSD + "dateTime")]


def test_a_spelling_is_encoded_only_when_it_decodes_back_the_same():
    for term in _samples():
        found = value_id(term)
        if found:
            assert VALUE_BASE <= found < 2**31
            assert value_term(found) == term
    kept = ("01", "+1", "-0", "1.", ".5", "1e3")  # not spelled back the same: the dictionary keeps them
    assert {value_id(Literal(form, XSD + "decimal")) for form in kept} == {0}
    assert value_id(Literal("1.50", XSD + "decimal")) != value_id(Literal("1.5", XSD + "decimal"))


def test_the_batch_encoder_agrees_with_the_one_term_encoder():
    terms = _samples()
    spelled = SpelledTerms.of_terms(terms)
    batch = encode_spans(spelled.data, spelled.starts, spelled.lengths)
    assert batch.tolist() == [value_id(t) for t in terms]


def test_distinct_terms_get_distinct_ids_and_numbers_match_the_side_array():
    terms = list(set(_samples()))
    ids = np.array([value_id(t) for t in terms])
    kept = ids != 0
    assert len(set(ids[kept].tolist())) == int(kept.sum())
    numbers = value_numbers(ids[kept])
    for term, number in zip([t for t, k in zip(terms, kept) if k], numbers.tolist()):
        expected = numeric_value(term)
        assert (math.isnan(number) and math.isnan(expected)) or number == expected
    assert value_terms(ids[kept]) == [t for t, k in zip(terms, kept) if k]


def test_the_dictionary_gives_value_ids_to_new_numbers_and_keeps_terms_it_holds():
    terms = CompactTermDictionary()
    held = Literal("3", XSD + "integer")
    # a store written without value IDs holds its numbers: they keep their IDs
    loaded = CompactTermDictionary(values=False)
    loaded.encode_spellings(pa.array(['"3"^^<http://www.w3.org/2001/XMLSchema#integer>']))
    assert 0 < loaded.lookup(held) < VALUE_BASE
    reading = Literal("-12.345", XSD + "decimal")
    found = terms.encode_transient(reading)
    assert found >= VALUE_BASE and terms.lookup(reading) == found and terms.encode(reading) == found
    assert terms.decode(found) == reading and terms.decode_many(np.array([found, 0])) == [reading, None]
    assert terms.kinds(np.array([found])).tolist() == [KIND_LITERAL]
    assert terms.numbers(np.array([found])).tolist() == [-12.345]
    assert len(terms) == 0  # nothing entered the dictionary
    terms.hold(np.array([found]))
    assert terms.release(np.array([found])) == 0
    spelled = SpelledTerms.of_terms([reading, Literal("x"), held])
    ids = terms.encode_spelled_transient(spelled)
    assert ids[0] == found and 0 < ids[1] < VALUE_BASE and ids[2] == value_id(held)
