"""ORDER BY: a stable sort of the solutions on one rank column per condition.

A rank is a number per solution that sorts like ORDER BY's order of its
term: all-numeric columns sort by value directly; otherwise each distinct
term is ranked once by :func:`engine.sparql.expr.order_key` (Python over
distinct terms, not rows), terms of equal value sharing a rank
(:func:`engine.sparql.expr.order_ties`), so that the next condition orders
them; ``np.lexsort`` sorts on all ranks at once.
"""

from __future__ import annotations

import numpy as np

from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.evaluation import encoded_values
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.expr import order_key, order_ties
from engine.store.distinct_ids import unique_inverse


def order_by(node: A.OrderBy, cx: ExecutionContext) -> Solutions:
    solutions = cx.run(node.pattern)
    if solutions.length <= 1:
        return solutions
    sort_keys = []
    for expr, ascending in node.conditions:
        if isinstance(expr, A.VarExpr):
            ids = solutions.column(expr.var.name)
        else:
            ids = encoded_values(expr, solutions, cx)
        ranks = order_ranks(ids, cx.terms)
        sort_keys.append(ranks if ascending else -ranks)
    # np.lexsort is stable and takes its primary key last
    return solutions.take(np.lexsort(sort_keys[::-1]))


def order_ranks(ids: np.ndarray, terms: QueryTerms) -> np.ndarray:
    """A number per row that sorts like ORDER BY's order of the row's term."""
    numbers = terms.numbers(ids)
    if not np.isnan(numbers).any():
        return numbers
    distinct_ids, inverse = unique_inverse(ids)
    decoded = terms.decode_column(distinct_ids)
    keys = [order_key(t) for t in decoded]
    ties = [order_ties(t) for t in decoded]
    ranked = sorted(range(len(keys)), key=keys.__getitem__)
    rank_of = np.empty(len(keys), dtype=np.int64)
    rank = 0
    for position, i in enumerate(ranked):
        if position and ties[i] != ties[ranked[position - 1]]:
            rank += 1
        rank_of[i] = rank
    return rank_of[inverse.reshape(-1)]
