"""The error type and per-query state shared by the expression modules.

Kept apart from the evaluator so that the function library can use both
without importing the evaluator (which imports the library).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from engine.rdf import XSD_DATETIME, BNode, Literal, Term, Variable
from engine.sparql.algebra import Pattern


class ExprError(Exception):
    """A SPARQL expression error: type error, unbound variable, bad argument.

    FILTER treats it as false, BIND/SELECT leave the variable unbound, and the
    error-tolerant operators (``||``, ``&&``, IN, COALESCE, IF) absorb it.
    """


def _current_time() -> Literal:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return Literal(stamp, XSD_DATETIME)


@dataclass
class EvalContext:
    """State that must stay fixed for one query (or one update operation).

    Create one per query: ``now`` is read once so every NOW() call agrees,
    and fresh blank node labels get a query-unique prefix. Call
    :meth:`new_row` before evaluating the expressions of each solution so that
    ``BNODE("x")`` gives the same node within a row and a new one in the next.
    """

    base: str | None = None
    now: Literal = field(default_factory=_current_time)
    exists: Callable[[Pattern, Mapping[Variable, Term]], bool] | None = None
    #: extension functions by IRI (e.g. C-SPARQL's f:timestamp), given evaluated arguments
    functions: dict[str, Callable[..., Term]] = field(default_factory=dict)
    _row_bnodes: dict[str, BNode] = field(default_factory=dict, repr=False)
    _bnode_prefix: str = field(default_factory=lambda: "q" + uuid.uuid4().hex[:10], repr=False)
    _counter: itertools.count = field(default_factory=itertools.count, repr=False)

    def new_row(self) -> None:
        """Start a new solution: BNODE(label) forgets the labels of the last one."""
        if self._row_bnodes:
            self._row_bnodes.clear()

    def fresh_bnode(self) -> BNode:
        """A blank node never handed out before in this query."""
        return BNode(f"{self._bnode_prefix}n{next(self._counter)}")

    def bnode_for(self, label: str) -> BNode:
        """The blank node for ``label`` in the current row."""
        node = self._row_bnodes.get(label)
        if node is None:
            node = self._row_bnodes[label] = self.fresh_bnode()
        return node
