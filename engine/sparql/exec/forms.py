"""Building the answers of CONSTRUCT and DESCRIBE from the solutions of the pattern."""

from __future__ import annotations

import numpy as np

from engine.rdf import KIND_BNODE, KIND_IRI, KIND_LITERAL, BNode, Variable, fresh_bnode
from engine.sparql import algebra as A
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.exec.template_terms import triple_term_column
from engine.store import Graph


def construct(template: tuple[A.TriplePattern, ...], solutions: Solutions, terms: QueryTerms) -> list:
    """Instantiate a CONSTRUCT template for every solution, as term triples
    (see :func:`construct_ids`)."""
    triples = construct_ids(template, solutions, terms)
    return list(zip(terms.decode_column(triples[:, 0]), terms.decode_column(triples[:, 1]),
                    terms.decode_column(triples[:, 2]), strict=True))


def construct_ids(template: tuple[A.TriplePattern, ...], solutions: Solutions,
                  terms: QueryTerms) -> np.ndarray:
    """Instantiate a CONSTRUCT template for every solution, as an (n, 3)
    array of IDs in first-met order: a blank node of the template is a fresh
    blank node per solution; ill-formed triples are left out; duplicates are
    removed on IDs, so each distinct triple is decoded once, when it is read
    (an HTTP answer decodes a chunk at a time and sends its first bytes early)."""
    n = solutions.length
    if not n:
        return np.empty((0, 3), dtype=np.int64)
    fresh: dict[BNode, np.ndarray] = {}
    parts = []

    def column(t: object) -> np.ndarray:
        if isinstance(t, Variable):
            return solutions.column(t.name)
        if isinstance(t, BNode):
            if t not in fresh:
                fresh[t] = terms.encode_column([fresh_bnode() for _ in range(n)])
            return fresh[t]
        if isinstance(t, A.TripleTermPattern):
            return triple_term_column(t, column, terms.decode_column, terms.encode_column)
        return np.full(n, terms.encode(t), dtype=np.int64)  # type: ignore[arg-type]

    for pattern in template:
        s, p, o = (column(t) for t in (pattern.subject, pattern.predicate, pattern.object))
        ok = (s != 0) & (p != 0) & (o != 0)
        ok &= terms.kinds(s) < KIND_LITERAL  # an IRI or a blank node
        ok &= terms.kinds(p) == KIND_IRI
        parts.append(np.stack([s[ok], p[ok], o[ok]], axis=1))
    triples = np.concatenate(parts)
    if not len(triples):
        return triples
    _, first = np.unique(triples, axis=0, return_index=True)
    return triples[np.sort(first)]


def describe(targets, solutions: Solutions, terms: QueryTerms, graph: Graph) -> list:
    """DESCRIBE: the triples whose subject is a described resource, followed
    through blank-node objects (a concise bounded description)."""
    ids: set[int] = set()
    for t in targets:
        if isinstance(t, Variable):
            ids.update(int(i) for i in solutions.column(t.name).tolist() if i > 0)
        else:
            found = terms.encode(t)
            if found > 0:
                ids.add(found)
    out: dict[tuple, None] = {}
    seen: set[int] = set()
    frontier = np.array(sorted(ids), dtype=np.int64)
    while len(frontier):
        seen.update(frontier.tolist())
        _, s, p, o = graph.match(frontier, None, None, len(frontier))
        for triple in zip(terms.decode_column(s), terms.decode_column(p), terms.decode_column(o),
                          strict=True):
            out[triple] = None
        blank = o[(terms.kinds(o) == KIND_BNODE)]
        frontier = np.array(sorted(set(blank.tolist()) - seen), dtype=np.int64)
    return list(out)
