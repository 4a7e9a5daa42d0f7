"""N-Quads and TriG dumps of a whole dataset (:func:`engine.rdf.write_dataset`):
generated datasets with awkward terms, written chunk by chunk and read back
by Oxigraph's parsers, give the same quads."""

from __future__ import annotations

import random

import pytest

from engine.api import Store
from engine.rdf import IRI, XSD, BNode, Literal, parse_rdf, write_dataset
from engine.rdf.graph_writers import CHUNK_TRIPLES

AWKWARD = ["plain", "with \"quotes\" and 'apostrophes'", "line\nbreak\ttab\rreturn", "back\\slash",
           "unicode é ü 日本 \U0001F600", "", " ", "ends with dot.", "#hash", "a;b,c"]


def term(rng: random.Random, position: str):
    kind = rng.randrange(6) if position == "o" else rng.randrange(2)
    if kind == 0:
        path = rng.choice(["a", "b/c", "d#e", "f%20g", "h.i", "ü"])
        return IRI(f"http://example.org/{path}{rng.randrange(30)}")
    if kind == 1:
        return BNode(f"b{rng.randrange(10)}")
    text = rng.choice(AWKWARD)
    if kind == 2:
        return Literal(text)
    if kind == 3:
        return Literal(text, lang=rng.choice(["en", "de-AT", "x-private"]))
    if kind == 4:
        return Literal(rng.choice(["1", "-0", "01", "1.50", "2.0E3", "true", "0"]),
                       XSD + rng.choice(["integer", "decimal", "double", "boolean"]))
    return Literal(text, "http://example.org/type")


def generated(seed: int, statements: int) -> Store:
    rng = random.Random(seed)
    store = Store()
    graphs: dict[str | None, list] = {None: []}
    for _ in range(statements):
        graph = rng.choice([None, "http://example.org/g1", "http://example.org/g 2".replace(" ", "%20")])
        triple = (term(rng, "s"), IRI(f"http://example.org/p{rng.randrange(4)}"), term(rng, "o"))
        graphs.setdefault(graph, []).append(triple)
    for graph, triples in graphs.items():
        store.add(triples, graph)
    store.add([], "http://example.org/empty")  # an empty named graph
    return store


def canonical(quads) -> list[tuple]:
    """The quads, each blank node written as one placeholder (a dump names
    them its own way), sorted: equal as multisets of statements."""
    return sorted(tuple("_:" if isinstance(t, BNode) else repr(t) for t in q) for q in quads)


def stored_quads(store: Store) -> list[tuple]:
    return [(s, p, o, name) for name, triples in store.graphs() for s, p, o in triples]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("format", ["nquads", "trig"])
def test_a_dump_reads_back_as_the_same_quads(seed, format):
    store = generated(seed, statements=CHUNK_TRIPLES + 300 if seed == 0 else 200)
    chunks = list(write_dataset(format, store.graphs()))
    if seed == 0:
        assert len(chunks) > 1  # streamed, not written whole
    read = list(parse_rdf(b"".join(chunks), format))
    expected = stored_quads(store)
    assert len(read) == len(expected)
    # a blank node is one node across the graphs and chunks of one document
    assert len({t.id for q in read for t in q if isinstance(t, BNode)}) == len(
        {t.id for q in expected for t in q if isinstance(t, BNode)})
    assert canonical(read) == canonical(expected)


def test_trig_keeps_an_empty_named_graph_and_uses_prefixes():
    store = Store()
    store.add([(IRI("http://www.w3.org/2000/01/rdf-schema#Class"),
                IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
                IRI("http://www.w3.org/2000/01/rdf-schema#Class"))], "http://example.org/g")
    store.add([], "http://example.org/empty")
    text = b"".join(write_dataset("trig", store.graphs())).decode()
    assert text.startswith("@prefix rdf:")
    assert "<http://example.org/g> {\nrdfs:Class a rdfs:Class .\n}\n" in text
    assert "<http://example.org/empty> {\n}\n" in text


def test_an_empty_store_dumps_as_nothing_but_prefixes():
    assert b"".join(write_dataset("nquads", Store().graphs())) == b""
    assert list(parse_rdf(b"".join(write_dataset("trig", Store().graphs())), "trig")) == []
    with pytest.raises(ValueError, match="cannot write a dataset as 'turtle'"):
        write_dataset("turtle", [])
