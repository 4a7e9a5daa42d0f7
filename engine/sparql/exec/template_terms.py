"""Triple terms with variables in CONSTRUCT and INSERT/DELETE templates.

A template position holding ``<<( ?s :p ?o )>>`` is a triple term built per
solution from its components' values; a solution where a component is
unbound, or where the subject is not an IRI or blank node or the predicate
not an IRI, builds none (its template triple is left out, as for any
ill-formed triple).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.rdf import IRI, BNode, Term, TripleTerm
from engine.sparql.algebra import TripleTermPattern


def triple_term_column(pattern: TripleTermPattern, column_of: Callable[[object], np.ndarray],
                       decode: Callable[[np.ndarray], list[Term | None]],
                       encode: Callable[[list[Term | None]], np.ndarray]) -> np.ndarray:
    """The IDs (0: none built) of ``pattern`` for every solution; ``column_of``
    gives the ID column of a plain template position."""
    columns = [triple_term_column(part, column_of, decode, encode) if part.__class__ is TripleTermPattern
               else column_of(part) for part in (pattern.subject, pattern.predicate, pattern.object)]
    built: list[Term | None] = []
    for s, p, o in zip(*(decode(column) for column in columns), strict=True):
        ok = (s.__class__ is IRI or s.__class__ is BNode) and p.__class__ is IRI and o is not None
        built.append(TripleTerm(s, p, o) if ok else None)  # type: ignore[arg-type]
    return encode(built)
