"""The in-memory term dictionary: IDs, side arrays, transient terms."""

import math

import numpy as np

from engine.rdf import IRI, KIND_IRI, KIND_LITERAL, XSD_INTEGER, Literal, MemoryTermDictionary, TermDictionary


def test_encoding_is_stable_and_decodes_back():
    terms: TermDictionary = MemoryTermDictionary()
    a = terms.encode(IRI("http://a"))
    assert terms.encode(IRI("http://a")) == a
    assert terms.decode(a) == IRI("http://a")
    assert terms.decode(0) is None
    assert terms.lookup(IRI("http://unknown")) == 0


def test_side_arrays_give_kind_and_number():
    terms = MemoryTermDictionary()
    ids = terms.encode_many([IRI("http://a"), Literal("42", XSD_INTEGER), Literal("x")])
    assert terms.kinds(ids).tolist() == [KIND_IRI, KIND_LITERAL, KIND_LITERAL]
    numbers = terms.numbers(ids)
    assert numbers[1] == 42 and math.isnan(numbers[0]) and math.isnan(numbers[2])


def test_a_transient_term_is_freed_when_its_last_holder_releases_it():
    terms = MemoryTermDictionary()
    reading = terms.encode_transient(IRI("http://obs/1"))
    held = np.array([reading])
    terms.hold(held)
    assert terms.lookup_pinned(IRI("http://obs/1")) == 0
    assert terms.release(held) == 1
    assert terms.lookup(IRI("http://obs/1")) == 0


def test_a_pinned_term_survives_its_release():
    terms = MemoryTermDictionary()
    kept = np.array([terms.encode_transient(IRI("http://kept"))])
    terms.hold(kept)
    terms.pin(kept)
    assert terms.release(kept) == 0
    assert terms.lookup_pinned(IRI("http://kept")) == kept[0]
