"""Stream names: what a name may be, and the name given to a stream that only
an IRI names (the output of ``REGISTER STREAM <iri>``).

A stream is identified by its IRI; its name is the handle of the HTTP API
(``/streams/{name}``), the log and the catalog. A name derived from an IRI
must therefore never take over another stream: when the IRI's last segment
is already a stream's name, the derived name is the first free variant
``NAME-2``, ``NAME-3``, ... The variant depends only on the names taken
when the stream is declared, and the declaration is logged with the name it
got, so a recovery gives every stream the same name again.
"""

from __future__ import annotations

import re
from collections.abc import Container
from urllib.parse import unquote

from engine.rdf import IRI

#: what a stream name may be: it becomes part of URLs, IRIs and headers
STREAM_NAME = re.compile(r"[A-Za-z0-9._~-]{1,200}")
#: the characters a name may not hold, each run of them replaced by one ``_``
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9._~-]+")
#: room left for a ``-N`` suffix in a derived name
_BASE_LENGTH = 180


def derived_name(iri: IRI, taken: Container[str]) -> str:
    """The name of a stream known by ``iri`` alone: the IRI's last segment
    (percent-escapes decoded, every run of characters a name may not hold
    made one ``_``), or its first variant ``-2``, ``-3``, ... not in ``taken``."""
    base = _segment_name(iri.value)
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def _segment_name(iri: str) -> str:
    tail = iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1]
    name = _NOT_IN_NAME.sub("_", unquote(tail))[:_BASE_LENGTH]
    # "." and ".." would be read as path steps in a URL
    return name if name.strip(".") else "stream"
