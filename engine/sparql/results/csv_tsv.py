"""SPARQL 1.1 Query Results CSV and TSV Formats (text/csv, text/tab-separated-values).

CSV keeps only the text of each value (lexical form, IRI, ``_:label``; a
triple term, which has none, as its N-Triples ``<<( s p o )>>``), so it is
lossy: reading it back gives simple literals, blank nodes and triple terms. TSV writes
full Turtle terms and round-trips exactly. Neither format defines a boolean
result; like common practice, ASK is written as a single ``true``/``false``
line, which the readers recognise.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence

from engine.rdf import IRI, BNode, Literal, Term, TripleTerm, format_term, parse_term

#: solutions serialised per yielded chunk
BATCH = 1000

_CSV_SPECIAL = frozenset(',"\r\n')


def _csv_field(text: str) -> str:
    """Quote per RFC 4180 when the field needs it."""
    if _CSV_SPECIAL.isdisjoint(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def _csv_value(term: Term | None) -> str:
    if term is None:
        return ""
    cls = term.__class__
    if cls is IRI:
        return _csv_field(term.value)
    if cls is BNode:
        return _csv_field("_:" + term.id)
    if cls is TripleTerm:  # no text of its own: its N-Triples spelling
        return _csv_field(format_term(term))
    return _csv_field(term.lexical)


def _chunked(lines: Iterable[str]) -> Iterator[bytes]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= BATCH:
            yield "".join(batch).encode()
            batch = []
    if batch:
        yield "".join(batch).encode()


def write_csv(variables: list[str], rows: Iterable[Sequence[Term | None]]) -> Iterator[bytes]:
    """Yield the CSV document (CRLF line ends) for a SELECT result."""
    header = ",".join(_csv_field(var) for var in variables) + "\r\n"
    yield header.encode()
    yield from _chunked(",".join(_csv_value(term) for term in row) + "\r\n" for row in rows)


def write_tsv(variables: list[str], rows: Iterable[Sequence[Term | None]]) -> Iterator[bytes]:
    """Yield the TSV document (LF line ends) for a SELECT result."""
    yield ("\t".join("?" + var for var in variables) + "\n").encode()
    yield from _chunked(
        "\t".join("" if term is None else format_term(term, tsv=True) for term in row) + "\n" for row in rows
    )


def write_boolean(value: bool) -> bytes:
    """ASK result as one line, for clients that ask for CSV or TSV."""
    return b"true\n" if value else b"false\n"


def _boolean(text: str) -> bool | None:
    stripped = text.strip()
    if stripped in ("true", "false"):
        return stripped == "true"
    return None


def _csv_term(value: str) -> Term | None:
    if value == "":
        return None
    if value.startswith("_:"):
        return BNode(value[2:])
    if value.startswith("<<("):
        try:
            return parse_term(value, shorthands=True)
        except ValueError:
            pass  # a string that merely starts so
    return Literal(value)


def _fit(row: list[Term | None], width: int) -> list[Term | None]:
    return (row + [None] * width)[:width]


def read_csv(data: bytes) -> tuple[list[str], list[list[Term | None]]] | bool:
    """Parse CSV results: values come back as simple literals or blank nodes."""
    text = data.decode("utf-8-sig")
    boolean = _boolean(text)
    if boolean is not None:
        return boolean
    records = list(csv.reader(io.StringIO(text, newline="")))
    if not records:
        return [], []
    variables = records[0]
    rows = [_fit([_csv_term(value) for value in record], len(variables)) for record in records[1:]]
    return variables, rows


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_tsv(data: bytes) -> tuple[list[str], list[list[Term | None]]] | bool:
    """Parse TSV results; terms are in Turtle syntax."""
    text = data.decode("utf-8-sig")
    boolean = _boolean(text)
    if boolean is not None:
        return boolean
    lines = _lines(text)
    if not lines:
        return [], []
    variables = [name.strip().lstrip("?$") for name in lines[0].split("\t")] if lines[0] else []
    rows: list[list[Term | None]] = []
    for line in lines[1:]:
        fields = [field.strip() for field in line.split("\t")]
        rows.append(_fit([parse_term(f, shorthands=True) if f else None for f in fields], len(variables)))
    return variables, rows
