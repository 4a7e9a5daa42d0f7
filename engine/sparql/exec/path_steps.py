"""One step of a property path from one node, read from Python: the node-by-node
half of :mod:`engine.sparql.exec.path_closure`.

Built once per search from the path's shape: a link reads the graph's
:func:`~engine.store.graph.neighbour_reader`, an inverse reads the other
direction, a sequence chains its steps, an alternative and a negated
property set join their parts. Only the set of ends matters to the search,
so repeats are left in. None when some part cannot be read this way (a graph
kind without a reader, a ``*`` nested inside): the search then steps every
level as arrays.
"""

from __future__ import annotations

from engine.sparql import algebra as A
from engine.sparql.exec.path_closure import StepOne
from engine.sparql.exec.query_terms import QueryTerms
from engine.store import Graph
from engine.store.graph import neighbour_reader


def step_one(path: A.Path, backward: bool, graph: Graph, terms: QueryTerms) -> StepOne | None:
    """The ends of one step of ``path`` from one node (its starts when
    ``backward``), or None when the graph or the path has no such read."""
    cls = path.__class__
    if cls is A.PathLink:
        return neighbour_reader(graph, terms.encode(path.iri), backward)
    if cls is A.PathInverse:
        return step_one(path.path, not backward, graph, terms)
    if cls is A.PathSequence:
        steps = [step_one(p, backward, graph, terms) for p in (path.steps[::-1] if backward else path.steps)]
        return None if any(s is None for s in steps) else _Sequence(steps)
    if cls is A.PathAlternative:
        parts = [step_one(p, backward, graph, terms) for p in path.options]
        return None if any(s is None for s in parts) else _alternative(parts)
    if cls is A.PathNegated:
        return _negated(path, backward, graph, terms)
    return None  # a nested repeat: searched as arrays


class _Sequence:
    """The steps one after the other; ``steps`` is read by
    :func:`engine.sparql.exec.path_closure.kernel_layouts`."""

    __slots__ = ("steps",)

    def __init__(self, steps: list[StepOne]) -> None:
        self.steps = steps

    def __call__(self, node: int) -> list[int]:
        current = [node]
        for step in self.steps:
            current = [end for start in current for end in step(start)]
        return current


def _alternative(parts: list[StepOne]) -> StepOne:
    def either(node: int) -> list[int]:
        ends: list[int] = []
        for part in parts:
            ends += part(node)
        return ends

    return either


def _negated(path: A.PathNegated, backward: bool, graph: Graph, terms: QueryTerms) -> StepOne | None:
    """``!(a|^b)``: the edges leaving by any predicate but ``a`` and, read the
    other way, those arriving by any but ``b`` (as :func:`paths.reach` does)."""
    parts = []
    if path.forward or not path.inverse:
        parts.append((path.forward, backward))
    if path.inverse:
        parts.append((path.inverse, not backward))
    readers = []
    for excluded, reverse in parts:
        banned = frozenset(terms.encode(i) for i in excluded)
        reader = neighbour_reader(graph, None, reverse, banned)
        if reader is None:
            return None
        readers.append(reader)
    return readers[0] if len(readers) == 1 else _alternative(readers)
