"""The compiled plain-form reader (engine/stream/batch_scan_kernel.pyx), on
generated bodies (tests/stream/body_generator.py: escapes, Unicode, language
tags, datatypes, blank nodes, triple terms, comments, CRLF, late and
malformed timestamps, broken lines): whatever it takes reads to the items the
statement parser reads, and encodes to the IDs one-at-a-time encoding gives;
a body it leaves reads to the parser's items or the parser's refusal, with
its message and position."""

import random

import pyarrow as pa
import pytest

from engine.rdf import IRI, Literal, format_term
from engine.store.compact_dictionary import CompactTermDictionary
from engine.stream.batch_format import MEDIA_TYPE
from engine.stream.batch_scan import scan_body
from engine.stream.errors import StreamError
from engine.stream.items import parse_items, read_batch
from tests.stream.body_generator import EX, generated_body

NTRIPLES = "application/n-triples"


def _outcome(read, body: bytes, media_type: str):
    # a plain N-Triples item gets its timestamp beside it (else it is stamped on arrival)
    try:
        batch = read(body, media_type, None if media_type == MEDIA_TYPE else "1000")
    except StreamError as exc:
        return type(exc), exc.status, str(exc)
    return batch if isinstance(batch, list) else batch.items()


def _dictionary() -> CompactTermDictionary:
    terms = CompactTermDictionary()
    stored = [IRI(f"{EX}{k}") for k in range(0, 50, 3)] + [Literal("w", None, "en")]
    terms.encode_spellings(pa.array(sorted({format_term(t) for t in stored}), pa.large_string()))
    return terms


@pytest.mark.parametrize("seed", range(3))
def test_generated_bodies_read_as_the_parser_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    scanned = 0
    for _ in range(250):
        text = generated_body(rng, rng.randrange(1, 10), rng.choice([0.0, 0.6, 0.95, 1.0]))
        for media_type, body in ((MEDIA_TYPE, text.encode()),
                                 (NTRIPLES, "\n".join(line.split(" ", 1)[-1] for line in text.split("\n"))
                                  .encode())):
            read = _outcome(read_batch, body, media_type)
            assert read == _outcome(parse_items, body, media_type), body
            if scan_body(body, timestamped=media_type == MEDIA_TYPE) is None or media_type != MEDIA_TYPE:
                continue
            scanned += 1
            batch = read_batch(body, media_type)
            one, many = _dictionary(), _dictionary()
            terms = [term for _, triples in read for triple in triples for term in triple]
            assert many.encode_spelled_transient(batch.terms).tolist() == \
                [one.encode_transient(term) for term in terms]
    assert scanned > 50  # the plain form is taken often enough for the comparison to mean something


def test_a_malformed_line_is_refused_where_the_parser_refuses_it() -> None:
    good = f"1000 <{EX}s> <{EX}p> <{EX}o> .\n"
    for bad in (f"1000 <{EX}s> <{EX}p> <o> .", f"1000 <{EX}s> <{EX}p>", "99999999999999999",
                f'1000 <{EX}s> <{EX}p> "a"@-en .', f"1000 <{EX}s> <{EX}p> _:.x .", "999"):
        body = (good * 3 + bad + "\n" + good).encode()
        assert scan_body(body, timestamped=True) is None
        refusal = _outcome(read_batch, body, MEDIA_TYPE)
        assert isinstance(refusal, tuple) and refusal[1] == 400 and "line 4" in refusal[2], refusal
