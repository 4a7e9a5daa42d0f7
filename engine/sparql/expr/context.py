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

    Create one per query: ``now`` is read once (at its first use, as is the
    query-unique prefix of fresh blank node labels: most queries need
    neither, and reading the clock and a UUID for each is measurable on a
    small query) so every NOW() call agrees. Call
    :meth:`new_row` before evaluating the expressions of each solution so that
    ``BNODE("x")`` gives the same node within a row and a new one in the next.
    """

    base: str | None = None
    exists: Callable[[Pattern, Mapping[Variable, Term]], bool] | None = None
    #: extension functions by IRI (e.g. C-SPARQL's f:timestamp), given evaluated arguments
    functions: dict[str, Callable[..., Term]] = field(default_factory=dict)
    _row_bnodes: dict[str, BNode] = field(default_factory=dict, repr=False)
    _counter: itertools.count = field(default_factory=itertools.count, repr=False)
    _now: Literal | None = field(default=None, repr=False)
    _bnode_prefix: str | None = field(default=None, repr=False)

    @property
    def now(self) -> Literal:
        """The query's NOW(): the time of its first use, the same for every call."""
        if self._now is None:
            self._now = _current_time()
        return self._now

    def new_row(self) -> None:
        """Start a new solution: BNODE(label) forgets the labels of the last one."""
        if self._row_bnodes:
            self._row_bnodes.clear()

    def fresh_bnode(self) -> BNode:
        """A blank node never handed out before in this query."""
        if self._bnode_prefix is None:
            self._bnode_prefix = "q" + uuid.uuid4().hex[:10]
        return BNode(f"{self._bnode_prefix}n{next(self._counter)}")

    def bnode_for(self, label: str) -> BNode:
        """The blank node for ``label`` in the current row."""
        node = self._row_bnodes.get(label)
        if node is None:
            node = self._row_bnodes[label] = self.fresh_bnode()
        return node
