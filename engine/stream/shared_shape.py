"""Which continuous queries are the same up to constants, and so share one plan.

The constants in the subject and object positions of a query's triple
patterns become placeholder variables (one per distinct constant; predicates
stay, they choose the indexes); two queries with equal abstracted patterns,
windows, dataset and projection form one group that
:mod:`~engine.stream.shared_plan` evaluates once per window. Only the shape
for which that is exactly equivalent qualifies: a SELECT whose pattern is a
projection of one basic graph pattern, not feeding a REGISTER STREAM.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.rdf import Term, Variable
from engine.sparql import algebra as A
from engine.sparql.syntax import ContinuousQuery


def placeholder(number: int) -> str:
    """The name of placeholder ``number`` (not a valid SPARQL variable name, so
    it never meets a query's own variables)."""
    return f"#constant{number}"


@dataclass(frozen=True)
class SharedShape:
    """A query's pattern with its constants abstracted: ``key`` is equal for
    queries that share a plan; ``constants`` are this query's values of the
    placeholders, in placeholder order."""

    key: tuple
    pattern: A.BGP
    constants: tuple[Term, ...]


def shared_shape(spec: ContinuousQuery) -> SharedShape | None:
    """The shape of ``spec`` if it can share its evaluation, else None."""
    query = spec.query
    pattern = query.pattern
    if spec.output_stream is not None or query.form != "SELECT" or not isinstance(pattern, A.Project):
        return None
    bgp = pattern.pattern
    if not isinstance(bgp, A.BGP) or not bgp.triples:
        return None
    placeholders: dict[Term, Variable] = {}

    def abstract(term):
        if isinstance(term, Variable):
            return term
        if term not in placeholders:
            placeholders[term] = Variable(placeholder(len(placeholders)))
        return placeholders[term]

    triples = tuple(A.TriplePattern(abstract(t.subject), t.predicate, abstract(t.object))
                    for t in bgp.triples)
    if not placeholders:
        return None
    windows = tuple((w.stream, w.name, w.range_ms, w.step_ms, w.triples) for w in spec.windows)
    key = (spec.language, windows, query.dataset, triples, pattern.vars)
    return SharedShape(key, A.BGP(triples), tuple(placeholders))
