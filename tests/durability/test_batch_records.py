"""A stream batch's log record: the same text as the graph writer spells
from terms (so records written before and after read alike), and read back
to the same items."""

import orjson
import pytest

from engine.durability.records import batch_items, batch_record
from engine.rdf import IRI, BNode, Literal, serialize_triples
from engine.stream.batch_format import MEDIA_TYPE
from engine.stream.items import read_batch
from engine.stream.spelled_batch import SpelledBatch

EX = "http://example.org/"
PLAIN = [(IRI(EX + "s"), IRI(EX + "p"), Literal("21.5", "http://www.w3.org/2001/XMLSchema#double")),
         (BNode("b1"), IRI(EX + "p"), Literal("x y", None, "en"))]
ESCAPED = [(IRI(EX + "s"), IRI(EX + "p"), Literal('a "quoted"\nline'))]


@pytest.mark.parametrize("items", [
    [(1000, PLAIN), (1500, []), (2000, PLAIN[:1])],
    [(1000, ESCAPED + PLAIN)],
    [(7, [])],
])
def test_a_batch_record_spells_what_the_graph_writer_spells_and_reads_back(items):
    record = orjson.loads(batch_record("s", SpelledBatch.of_items(items)))
    assert record["i"] == [[ts, serialize_triples(triples, "nt").decode()] for ts, triples in items]
    assert batch_items(record).items() == [(ts, list(triples)) for ts, triples in items]


def test_a_scanned_body_is_logged_as_its_own_lines_without_the_timestamps():
    body = (f"1000 <{EX}s> <{EX}p> \"x\" .\n1000 _:b <{EX}p> <{EX}o> .\n1500\n"
            f"2000 <{EX}s> <{EX}p> \"y\"@en .\n").encode()
    batch = read_batch(body, MEDIA_TYPE)
    record = orjson.loads(batch_record("s", batch))
    assert record["i"] == [[ts, serialize_triples(triples, "nt").decode()] for ts, triples in batch.items()]
    assert batch_items(record).items() == batch.items()
