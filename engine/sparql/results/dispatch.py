"""Entry point for the SPARQL query result formats (JSON, XML, CSV, TSV).

Callers name a format by a short name (``json``, ``xml``, ``csv``, ``tsv``)
and get streaming writers, so the HTTP layer can send a large answer without
holding it in memory, and readers, used by SERVICE federation and the tests.
Which media type names which format is the registry's job
(:mod:`engine.rdf.media_types`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from engine.rdf import RESULT_MEDIA_TYPES, Term, result_format
from engine.sparql.results import csv_tsv, json_results, xml_results

Rows = Iterable[Sequence[Term | None]]
Parsed = tuple[list[str], list[list[Term | None]]] | bool

#: format name -> its media type
MEDIA_TYPES: dict[str, str] = RESULT_MEDIA_TYPES

_SELECT_WRITERS: dict[str, Callable[[list[str], Rows], Iterator[bytes]]] = {
    "json": json_results.write_select,
    "xml": xml_results.write_select,
    "csv": csv_tsv.write_csv,
    "tsv": csv_tsv.write_tsv,
}

_BOOLEAN_WRITERS: dict[str, Callable[[bool], bytes]] = {
    "json": json_results.write_boolean,
    "xml": xml_results.write_boolean,
    "csv": csv_tsv.write_boolean,
    "tsv": csv_tsv.write_boolean,
}

_READERS: dict[str, Callable[[bytes], Parsed]] = {
    "json": json_results.read,
    "xml": xml_results.read,
    "csv": csv_tsv.read_csv,
    "tsv": csv_tsv.read_tsv,
}


def _checked(fmt: str) -> str:
    if fmt not in MEDIA_TYPES:
        raise ValueError(f"unknown result format {fmt!r}; expected one of {sorted(MEDIA_TYPES)}")
    return fmt


def write_select(fmt: str, variables: list[str], rows: Rows) -> Iterator[bytes]:
    """Stream a SELECT result as byte chunks in format ``fmt``."""
    return _SELECT_WRITERS[_checked(fmt)](variables, rows)


def write_select_ids(fmt: str, variables: list[str], chunks: Iterable[tuple[int, list[np.ndarray]]],
                     decode: Callable[[np.ndarray], list[Term | None]],
                     spell: Callable[[np.ndarray], list[bytes | None]] | None = None) -> Iterator[bytes]:
    """Stream a SELECT result given as batches of ``(rows, ID columns)``:
    JSON spells each distinct term of a batch once (from its stored
    N-Triples spelling where ``spell`` gives one); the other formats take
    decoded rows."""
    if _checked(fmt) == "json":
        return json_results.write_select_columns(variables, chunks, decode, spell)
    return write_select(fmt, variables, decoded_rows(chunks, decode))


def decoded_rows(chunks: Iterable[tuple[int, list[np.ndarray]]],
                 decode: Callable[[np.ndarray], list[Term | None]]) -> Iterator[tuple[Term | None, ...]]:
    """Rows of terms from batches of ``(rows, ID columns)``, one batch decoded at a time."""
    for length, columns in chunks:
        if not columns:
            yield from [()] * length
            continue
        yield from zip(*[decode(c) for c in columns], strict=True)


def write_boolean(fmt: str, value: bool) -> bytes:
    """An ASK result in format ``fmt``."""
    return _BOOLEAN_WRITERS[_checked(fmt)](value)


def read_select(fmt: str, data: bytes) -> Parsed:
    """Parse a result document: (variables, rows) for SELECT, a bool for ASK."""
    return _READERS[_checked(fmt)](data)


def format_for_media_type(media_type: str) -> str | None:
    """The format name for a media type (parameters such as charset ignored), or None."""
    return result_format(media_type)
