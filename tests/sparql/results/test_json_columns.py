"""The JSON writer from ID columns (compiled row assembly) gives the bytes of
the row writer, the format's definition, on random answers: unbound cells
anywhere (whole rows, first columns), terms repeated within and across
columns, every kind of term, one and several batches, no variables."""

from __future__ import annotations

import random

import numpy as np
import orjson
import pytest

from engine.api import Store
from engine.rdf import IRI, BNode, Literal, TripleTerm
from engine.rdf.ntriples import format_term, parse_term
from engine.sparql.results import json_rows_kernel
from engine.sparql.results.json_results import _spelled, cell_of_spelling, write_select, write_select_columns

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


def _random_term(rng: random.Random):
    text = "".join(rng.choice(["a", "Z", " ", "é", "中", "😀", '"', "\\", "\n", "\t", "\x01", "<", "/", "#"])
                   for _ in range(rng.randrange(0, 8)))
    kind = rng.randrange(7)
    if kind == 0:
        return IRI("http://example.org/" + "".join(ch for ch in text if ch not in ' "\\\n\t\x01<#'))
    if kind == 1:
        return BNode(f"b{rng.randrange(9)}")
    if kind == 2:
        return Literal(text, lang=rng.choice(["en", "EN", "fr-BE", "ar--rtl"]))
    if kind == 3:
        return Literal(text, datatype=rng.choice(["http://www.w3.org/2001/XMLSchema#integer",
                                                  "http://www.w3.org/2001/XMLSchema#string",
                                                  "http://example.org/dt"]))
    if kind == 4:
        return TripleTerm(IRI("http://example.org/s"), IRI("http://example.org/p"), Literal(text))
    return Literal(text)


def test_a_cell_from_a_spelling_is_the_terms_cell() -> None:
    """An IRI's or a literal's JSON is copied from its N-Triples spelling
    where no escape is needed; whatever it does write is what the term gives."""
    rng = random.Random(5)
    copied = 0
    for _ in range(3000):
        term = _random_term(rng)
        spelling = format_term(term).encode()
        cell = cell_of_spelling(spelling)
        if cell is not None:
            copied += 1
            assert cell == _spelled(parse_term(spelling.decode())) == _spelled(term), spelling
    assert copied > 600
    # spellings no term of ours writes, which a store's files may still hold: the
    # decoder's reading of each is the one to match
    for spelling in [b'"a"@EN', b'"a"@en-GB', b'"a"^^<http://www.w3.org/2001/XMLSchema#string>',
                     b'"it\\\'s"', b'"\\U0001F600"', b'"\\u00e9"', b'"a\\\\b"', b'"tab\\t"',
                     b"<http://example.org/\\u00e9>", b'"a"@ar--rtl', b'"x"^^<http://example.org/dt>']:
        cell = cell_of_spelling(spelling)
        assert cell is None or cell == _spelled(parse_term(spelling.decode())), spelling


def test_a_stores_answer_written_from_spellings_is_the_same_document() -> None:
    """A loaded store's terms (compact: spelled from the term file) and
    terms added after it (an overlay: decoded) in one answer."""
    rng = random.Random(9)
    objects = [format_term(_random_term(rng)) if rng.random() < 0.5 else f"<http://example.org/o{i}>"
               for i in range(6000)]
    lines = {f"<http://example.org/s{rng.randrange(300)}> <http://example.org/p{rng.randrange(4)}> {o} .\n"
             for o in objects if not o.startswith("<<(")}
    store = Store()
    store.load("".join(sorted(lines)).encode(), "nt")
    store.update('INSERT DATA { <http://example.org/new> <http://example.org/p0> "fresh", 7, _:b }')
    result = store.query("SELECT ?s ?p ?o { ?s ?p ?o }")
    spelled = [s for s in result.spell_ids(np.arange(1, 200, dtype=np.int64)) if s is not None]
    assert len(spelled) > 150  # the loaded terms have spellings to copy
    plain = b"".join(write_select_columns(result.variables, result.id_chunks(), result.decode_ids))
    fast = b"".join(write_select_columns(result.variables, result.id_chunks(), result.decode_ids,
                                         result.spell_ids))
    assert fast == plain
    assert len(orjson.loads(fast)["results"]["bindings"]) == len(result)
