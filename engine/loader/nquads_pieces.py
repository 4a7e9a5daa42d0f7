"""A file's statements as canonical N-Quads, in pieces, read while parsed.

``engine.rdf.canonical_nquads`` reads a whole document and returns all of
its N-Quads: two copies of the input in memory at once. A load of a large
file instead lets Oxigraph read the file itself and serialises at most
``statements`` statements at a time. There is one parse per file, so the
renamed blank nodes (a file's labels are its own, as RDF merging requires)
stay the same node from piece to piece.

RDF/XML, JSON-LD and N3 are read whole, as before: the entity-growth checks
of ``engine.rdf`` need the document, and such files are not bulk-load sized.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from pathlib import Path

from engine.rdf import RdfSyntaxError, canonical_nquads, guess_format

#: statements per piece (about 150 bytes each in LSBench-shaped data)
PIECE_STATEMENTS = 250_000
#: the syntaxes parsed as a stream
_STREAMED = {"nt": "N_TRIPLES", "nquads": "N_QUADS", "turtle": "TURTLE", "trig": "TRIG"}


def nquads_pieces(path: Path, statements: int = PIECE_STATEMENTS) -> Iterator[bytes]:
    """Canonical N-Quads of ``path`` (syntax from its suffix), at most
    ``statements`` statements a piece; a syntax error says where in the file."""
    fmt = guess_format(path.name) or "turtle"
    if fmt not in _STREAMED:
        yield canonical_nquads(path)
        return
    import pyoxigraph as ox

    quads = ox.parse(path=str(path), format=getattr(ox.RdfFormat, _STREAMED[fmt]),
                     base_iri=path.resolve().as_uri(), rename_blank_nodes=True)
    while True:
        out = io.BytesIO()
        try:
            ox.serialize(itertools.islice(quads, statements), out, ox.RdfFormat.N_QUADS)
        except SyntaxError as exc:
            raise RdfSyntaxError(exc.msg) from None
        except ValueError as exc:
            raise RdfSyntaxError(str(exc)) from None
        piece = out.getvalue()
        if not piece:
            return
        yield piece
