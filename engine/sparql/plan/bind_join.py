"""The bind-join decision: when a BGP can continue from the rows found so far.

A join (or OPTIONAL) whose right side is a BGP can extend the left side's
rows through the store's neighbour lists instead of matching the BGP
everywhere and joining afterwards, provided every left column the BGP reads
is bound on every row (an unbound value from an OPTIONAL cannot seed a
lookup). The same holds for a BGP inside ``GRAPH <iri>``: it continues
from the left rows in that graph.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from engine.rdf import IRI, Variable
from engine.sparql import algebra as A


def bind_join_applies(left_columns: Mapping[str, np.ndarray], right: A.Pattern) -> bool:
    """True when ``right`` is a BGP that can extend rows with these columns directly."""
    return isinstance(right, A.BGP) and _fully_bound(left_columns, right)


def _fully_bound(columns: Mapping[str, np.ndarray], bgp: A.BGP) -> bool:
    """True when the columns used by the BGP have no unbound values."""
    for p in bgp.triples:
        for t in (p.subject, p.predicate, p.object):
            if isinstance(t, Variable) and t.name in columns and (columns[t.name] == 0).any():
                return False
    return True


def named_graph_bgp(node: A.Pattern) -> tuple[IRI, A.BGP] | None:
    """``(iri, bgp)`` of ``GRAPH <iri> { bgp }``, which a bind join can enter;
    None for any other pattern."""
    if isinstance(node, A.Graph) and isinstance(node.name, IRI) and isinstance(node.pattern, A.BGP):
        return node.name, node.pattern
    return None
