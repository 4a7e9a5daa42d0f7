"""Writing a whole dataset (the default graph and every named graph) as
N-Quads or TriG, a chunk at a time: what ``GET /store`` sends.

The graphs come as ``(name, triples)`` pairs, the default graph's name
None; each is cut into batches as :func:`engine.rdf.write_graph` cuts a
graph, so the first bytes leave before the last graph is read. TriG writes
the default graph's triples bare and each named graph in a block (an empty
named graph as an empty block, so it survives a reload); its statements
are Turtle's (:mod:`engine.rdf.turtle_writer`), with the prefixes given.
N-Quads has no way to write an empty graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from engine.rdf.graph_writers import STANDARD_PREFIXES, batches
from engine.rdf.ntriples import format_term
from engine.rdf.terms import Term
from engine.rdf.turtle_writer import TurtleSpeller, turtle_statements

Triple = tuple[Term, Term, Term]
#: a graph of a dataset: its name (None: the default graph) and its triples
NamedTriples = tuple[Term | None, Iterable[Triple]]


def write_nquads(graphs: Iterable[NamedTriples], prefixes: Mapping[str, str]) -> Iterator[bytes]:
    """N-Quads (it has no prefixes): one chunk per batch, in the store's spelling."""
    spell = format_term
    for name, triples in graphs:
        end = " .\n" if name is None else f" {spell(name)} .\n"
        for batch in batches(triples):
            yield "".join([f"{spell(s)} {spell(p)} {spell(o)}{end}" for s, p, o in batch]).encode()


def write_trig(graphs: Iterable[NamedTriples], prefixes: Mapping[str, str]) -> Iterator[bytes]:
    """TriG: the prefix lines, the default graph's statements, then a block
    per named graph; a graph's opening and closing lines go out with the
    next chunk."""
    speller = TurtleSpeller(prefixes)
    pending = speller.header()
    for name, triples in graphs:
        if name is not None:
            pending += f"{speller.term(name)} {{\n"
        for chunk in turtle_statements(batches(triples), speller):
            yield pending.encode() + chunk
            pending = ""
        if name is not None:
            pending += "}\n"
    if pending:
        yield pending.encode()


_WRITERS = {"nquads": write_nquads, "trig": write_trig}

#: the format names write_dataset knows (those of engine.rdf.media_types)
DATASET_FORMATS = frozenset(_WRITERS)


def write_dataset(format: str, graphs: Iterable[NamedTriples],
                  prefixes: Mapping[str, str] | None = None) -> Iterator[bytes]:
    """The dataset in ``format`` ("nquads", "trig"), in chunks of bytes, using
    ``prefixes`` (None: :data:`~engine.rdf.graph_writers.STANDARD_PREFIXES`)
    where the syntax has them. Nothing is written until the first chunk is asked for."""
    writer = _WRITERS.get(format)
    if writer is None:
        raise ValueError(f"cannot write a dataset as {format!r}; known: {', '.join(sorted(_WRITERS))}")
    return writer(graphs, STANDARD_PREFIXES if prefixes is None else prefixes)
