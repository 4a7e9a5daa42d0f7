"""Remembering how each term was spelled, for the graph writers.

An answer repeats its terms a lot (a subject per predicate, a class per
instance, a datatype per literal), and spelling one (choosing a prefix,
escaping) costs far more than finding it again. The engine hands the same
object for the same term (results are decoded through the dictionary's
cache), so a spelling is found by the object's ``id()``: a C-level int
lookup, where finding it by the term itself would call the term's
``__hash__``, a Python function, for every triple and position (measured on
a 200K-triple answer with 68K distinct terms: a table by term made every
writer 1.4 to 1.7 times slower than this one, and found almost nothing the
id table had not). Equal terms in distinct objects are merely spelled
twice. The terms are held while their ids are remembered: an object that is
still alive cannot share its id with another, so an id found in the table
is this very term.

The table is cleared when it reaches :data:`KEPT` entries, so writing a long
graph (a graph store GET of a whole store) cannot fill memory with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from engine.rdf.terms import Term

#: terms whose spelling is kept at once
KEPT = 200_000

S = TypeVar("S")


class Spellings(Generic[S]):
    """One use's spellings (a writer's subjects, predicates or objects).

    The writer's loop reads ``by_id.get(id(term)) or spellings.miss(term)``:
    the first half inline, with no Python call when the term is known."""

    def __init__(self, spell: Callable[[Term], S]) -> None:
        self.by_id: dict[int, S] = {}
        self._held: list[Term] = []
        self._spell = spell

    def miss(self, term: Term) -> S:
        """The spelling of a term whose id is not in ``by_id``, spelled now
        and remembered; a spelling must be truthy."""
        if len(self._held) >= KEPT:
            self.by_id.clear()
            self._held.clear()
        found = self.by_id[id(term)] = self._spell(term)
        self._held.append(term)
        return found
