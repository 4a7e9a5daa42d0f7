"""Reading POST bodies into stream items: every refusal carries its HTTP status."""

import pytest

from engine.rdf import IRI
from engine.stream.errors import BadItem, UnsupportedItemType
from engine.stream.items import parse_items

EX = "http://example.org/"
TRIPLE = f"<{EX}s> <{EX}p> <{EX}o> .".encode()


def test_a_single_item_takes_the_timestamp_given_beside_it():
    assert parse_items(TRIPLE, "application/n-triples", "1000") == [
        (1000, [(IRI(EX + "s"), IRI(EX + "p"), IRI(EX + "o"))])
    ]
    assert parse_items(TRIPLE, "text/turtle", "1970-01-01T00:00:01Z")[0][0] == 1000


def test_without_a_timestamp_an_item_waits_for_its_arrival_time():
    assert parse_items(TRIPLE, "application/n-triples")[0][0] is None


def test_an_empty_body_is_a_heartbeat_and_needs_a_timestamp():
    assert parse_items(b" \n", "application/n-triples", "2000") == [(2000, [])]
    with pytest.raises(BadItem, match="heartbeat") as caught:
        parse_items(b"", "application/n-triples")
    assert caught.value.status == 400


def test_a_batch_carries_its_own_timestamps():
    body = b"1000 " + TRIPLE + b"\n2000\n"
    assert [ts for ts, _ in parse_items(body, "application/x-timestamped-ntriples")] == [1000, 2000]
    with pytest.raises(BadItem, match="their own timestamps"):
        parse_items(body, "application/x-timestamped-ntriples", "1000")


@pytest.mark.parametrize("body, media_type, timestamp, error, status", [
    (TRIPLE, "application/n-triples", "soon", BadItem, 400),
    (b"\xff", "application/n-triples", None, BadItem, 400),
    (b"<s> <p> .", "application/n-triples", None, BadItem, 400),
    (b"ex:a ex:b", "text/turtle", None, BadItem, 400),
    (TRIPLE, "application/n-quads", None, UnsupportedItemType, 415),
    (TRIPLE, "image/png", None, UnsupportedItemType, 415),
])
def test_a_body_that_cannot_be_read_is_refused_whole(body, media_type, timestamp, error, status):
    with pytest.raises(error) as caught:
        parse_items(body, media_type, timestamp)
    assert caught.value.status == status
