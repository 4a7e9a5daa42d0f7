"""The array reader of (timestamped) N-Triples takes only what the statement
parser reads to the same items, and leaves everything else to it."""

import numpy as np
import pytest

from engine.rdf import IRI, BNode, Literal, SpelledTerms
from engine.store.compact_dictionary import CompactTermDictionary
from engine.stream.batch_format import MEDIA_TYPE
from engine.stream.batch_scan import scan_body
from engine.stream.errors import StreamError
from engine.stream.items import parse_items, read_batch

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"

PLAIN = [
    f"1000 <{EX}s> <{EX}p> <{EX}o> .\n",
    f"1000 <{EX}s> <{EX}p> <{EX}o> .",  # no final newline
    f'1000 <{EX}s> <{EX}p> "21.5"^^<{XSD}double> .\n1000 _:b1 <{EX}p> "x y . z"@en .\n2000\n',
    f'1 <{EX}s> <{EX}p> "caf\u00e9 # not a comment" .\n1 <{EX}s> <{EX}p> "a"@en-gb .\n',
    f"5 <{EX}s> <{EX}p> _:x.y-z .\n5 <{EX}s> <{EX}p> <{EX}o> .\n5 <{EX}s> <{EX}p> <{EX}o> .\n7\n9\n",
    "253402300799999\n",
]

LEFT_TO_THE_PARSER = [
    f"1000 <{EX}s> <{EX}p> <{EX}o> . # a comment\n",
    f"# a comment\n1000 <{EX}s> <{EX}p> <{EX}o> .\n",
    f"1000 <{EX}s> <{EX}p> <{EX}o> .\n\n2000\n",
    f"1000\t<{EX}s> <{EX}p> <{EX}o> .\n",
    f"1000  <{EX}s> <{EX}p> <{EX}o> .\n",
    f"1000 <{EX}s> <{EX}p> <{EX}o>.\n",
    f"1000 <{EX}s> <{EX}p> <{EX}o> .\r\n",
    f'1000 <{EX}s> <{EX}p> "a\\"b" .\n',
    f"1000 <{EX}s> <{EX}p> <{EX}\\u00E9> .\n",
    f'1000 <{EX}s> <{EX}p> "a"@EN .\n',
    f'1000 <{EX}s> <{EX}p> "a"^^<{XSD}string> .\n',
    f'1000 <{EX}s> <{EX}p> "a\u2028b" .\n',
    f"1970-01-01T00:00:01Z <{EX}s> <{EX}p> <{EX}o> .\n",
    f"-5 <{EX}s> <{EX}p> <{EX}o> .\n",
    "253402300800000\n",
    "2000\n1000\n",
    f"1000 <{EX}s> <{EX}p> <{EX}o> <{EX}g> .\n",
]

REFUSED = [
    f"1000 <{EX}s> <{EX}p> <o> .\n",
    f"1000 <{EX}s> <{EX}p> <{EX}a b> .\n",
    f"1000 <{EX}s> <{EX}p> _:.x .\n",
    f'1000 <{EX}s> <{EX}p> "a"@-en .\n',
    f'1000 "s" <{EX}p> <{EX}o> .\n',
    f"1000 <{EX}s> <{EX}p>\n",
    f"1000 <{EX}s <{EX}p> <{EX}o> .\n",
    "10000000000000000\n",
]


def _outcome(read, body: bytes):
    """The items read, as terms, or the error's type, status and message."""
    try:
        batch = read(body, MEDIA_TYPE)
    except StreamError as exc:
        return type(exc), exc.status, str(exc)
    return batch if isinstance(batch, list) else batch.items()


@pytest.mark.parametrize("body", PLAIN + LEFT_TO_THE_PARSER + REFUSED)
def test_a_body_reads_to_the_items_or_the_error_the_parser_reads(body):
    assert _outcome(read_batch, body.encode()) == _outcome(parse_items, body.encode())


@pytest.mark.parametrize("body", PLAIN)
def test_the_plain_form_is_read_in_array_steps(body):
    assert scan_body(body.encode(), timestamped=True) is not None


@pytest.mark.parametrize("body", LEFT_TO_THE_PARSER + REFUSED)
def test_anything_else_is_left_to_the_parser(body):
    assert scan_body(body.encode(), timestamped=True) is None


def test_a_single_ntriples_item_keeps_the_timestamp_given_beside_it_or_its_arrival():
    body = f"<{EX}s> <{EX}p> <{EX}o> .\n<{EX}s> <{EX}p> \"x\" .\n".encode()
    assert scan_body(body, timestamped=False) is not None
    stamped = read_batch(body, "application/n-triples", "1000")
    assert stamped.items() == parse_items(body, "application/n-triples", "1000")
    arriving = read_batch(body, "application/n-triples")
    assert arriving.arrival.tolist() == [True]
    assert arriving.stamped(5).items() == [(5, parse_items(body, "application/n-triples")[0][1])]


def test_spelled_terms_encode_as_one_at_a_time_does():
    terms = CompactTermDictionary()
    stored = [IRI(EX + "s"), Literal("1", "http://www.w3.org/2001/XMLSchema#integer"), BNode("b")]
    terms.encode_spellings(_arrow(stored))
    batch = [IRI(EX + "new"), stored[0], IRI(EX + "new"), Literal("x", None, "en"), stored[1], stored[2]]
    ids = terms.encode_spelled_transient(SpelledTerms.of_terms(batch))
    assert ids.tolist() == [terms.encode_transient(t) for t in batch]
    assert ids[0] == ids[2] and len(set(ids.tolist())) == 5
    assert terms.decode_many(ids) == batch


def _arrow(terms):
    import pyarrow as pa

    from engine.rdf import format_term
    return pa.array(sorted({format_term(t) for t in terms}), pa.large_string())


def test_spelled_terms_compare_byte_for_byte():
    spelled = SpelledTerms.of_terms([IRI(EX + "a"), IRI(EX + "b")])
    other = np.frombuffer(f"<{EX}a><{EX}c>".encode(), dtype=np.uint8)
    width = len(EX) + 3
    assert spelled.equal_to(other, np.array([0, width]), np.array([width, width])).tolist() == [True, False]
