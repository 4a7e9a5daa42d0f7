"""LIMIT push-down: which sliced patterns can stop early, and in what chunks.

``LIMIT n`` without ORDER BY over ``[Project] Filter* BGP`` does not need the
whole BGP: the executor explores the BGP's first pattern a chunk at a time
and stops once enough rows passed the filters. Chunks grow geometrically, so
a selective filter costs few rounds and an unselective one stops after the
first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from engine.rdf import Variable
from engine.sparql import algebra as A

#: first-pattern rows explored in the first chunk of a LIMIT query
FIRST_CHUNK = 64
#: each chunk is this many times larger than the one before
CHUNK_GROWTH = 4


@dataclass(frozen=True, slots=True)
class LimitedBGP:
    """A sliced pattern of the shape ``[Project] Filter* BGP``, taken apart.
    ``conditions`` are innermost first (the order they apply in)."""

    bgp: A.BGP
    conditions: tuple[A.Expr, ...]
    project: tuple[Variable, ...] | None


def limited_bgp(node: A.Pattern) -> LimitedBGP | None:
    """The parts of ``node`` when a LIMIT over it can be pushed into its BGP;
    None for any other shape (the executor then runs the pattern whole)."""
    project = node.vars if isinstance(node, A.Project) else None
    inner = node.pattern if isinstance(node, A.Project) else node
    conditions = []
    while isinstance(inner, A.Filter):
        conditions.append(inner.condition)
        inner = inner.pattern
    if not isinstance(inner, A.BGP) or not inner.triples:
        return None
    return LimitedBGP(inner, tuple(reversed(conditions)), project)


def chunk_bounds(total: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of each chunk over ``total`` seed rows: FIRST_CHUNK
    rows first, CHUNK_GROWTH times more each time after."""
    start, size = 0, FIRST_CHUNK
    while start < total:
        yield start, min(start + size, total)
        start, size = start + size, size * CHUNK_GROWTH
