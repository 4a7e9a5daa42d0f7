"""SPARQL query result formats (JSON, XML, CSV, TSV): streaming writers and
readers, one module per format, chosen by a short format name.

Callers use :func:`write_select` (or :func:`write_select_ids` from ID
columns; :func:`write_json_indexed` from positions in distinct terms),
:func:`write_boolean` and :func:`read_select`; media types map
to format names through :func:`format_for_media_type` (derived from :mod:`engine.rdf.media_types`).
"""

from engine.sparql.results.dispatch import (
    MEDIA_TYPES,
    Parsed,
    Rows,
    decoded_rows,
    format_for_media_type,
    read_select,
    write_boolean,
    write_select,
    write_select_ids,
)
from engine.sparql.results.json_results import write_json_indexed

__all__ = [
    "MEDIA_TYPES",
    "Parsed",
    "Rows",
    "decoded_rows",
    "format_for_media_type",
    "read_select",
    "write_boolean",
    "write_select",
    "write_select_ids",
    "write_json_indexed",
]
