"""Queries that are the same up to constants, evaluated once per window for all.

A service with many subscribers registers the same query many times with a
different constant ("the posts of *my* friends"). CQELS Cloud shares such
queries through an index of the constants of all registered patterns; here
the constants of the subject and object positions become placeholder
variables, the queries with the same abstracted pattern form one group, and
a window evaluates the group once: the placeholders and a query number seed
the basic graph pattern as a column of K rows, the planner orders the
patterns with those columns bound (so a constant-first plan stays
constant-first, now for K constants at once), and the result is split by
query number. Each query keeps its own report policy, sequence numbers and
subscribers; the cost of a window is one evaluation plus one event per query.

Which queries share is decided by :mod:`~engine.stream.shared_shape`; every
other query is evaluated alone (:meth:`RunningQuery.evaluate`).
"""

from __future__ import annotations

import time
from operator import attrgetter

import numpy as np

from engine.sparql.exec import Executor, QueryTerms, Solutions
from engine.sparql.expr import EvalContext
from engine.store import QuadStore
from engine.stream.events import WindowEvent
from engine.stream.id_rows import WindowRows
from engine.stream.running_query import RunningQuery
from engine.stream.shared_shape import SharedShape, placeholder
from engine.stream.window_dataset import read_window, window_dataset

#: the seed column that numbers the queries of a group (not a SPARQL variable name)
QUERY_NUMBER = "#query"
#: a query's report policy (RSTREAM, ISTREAM, DSTREAM), read in C for a group of K
_REPORT = attrgetter("policy.report")


def evaluate_group(group: list[RunningQuery], shape: SharedShape, quad_store: QuadStore,
                   close: int, closed_at: float) -> list[WindowEvent]:
    """The events of the window closing at ``close`` of every query in
    ``group`` (same shape, same next window), from one evaluation."""
    started = time.perf_counter()
    first = group[0]
    window = read_window(first.spec, first.schedule, close)
    terms = QueryTerms(quad_store.terms, transient=True)
    dataset = window_dataset(first.spec, window, first.streams, quad_store.snapshot().graphs, terms)
    executor = Executor(terms, dataset, EvalContext(base=first.spec.query.base), plans=first.plans)
    solutions = executor.extend(shape.pattern, _seeds(group, terms))
    numbers = solutions.column(QUERY_NUMBER) if solutions.length else np.zeros(0, dtype=np.int64)
    order = np.argsort(numbers, kind="stable")
    bounds = np.searchsorted(numbers[order], np.arange(len(group) + 1)).tolist()
    # the group's rows as ID columns, each query's a slice, decoded by its report policy
    ids = np.zeros((solutions.length, len(first.variable_names)), dtype=np.int64)
    for k, name in enumerate(first.variable_names):
        ids[:, k] = solutions.column(name)[order]
    rows = WindowRows(ids, terms.dictionary, terms.decode_column)
    if all(report == "RSTREAM" for report in map(_REPORT, group)):
        # every row is reported: decoded once for the group (each distinct ID
        # once) and split by query in one step
        parts = rows.reported().split(bounds)
        dictionary, decode = terms.dictionary, terms.decode_column
        answers = [WindowRows(ids[bounds[k]:bounds[k + 1]], dictionary, decode, part)
                   for k, part in enumerate(parts)]
    else:
        answers = [rows.take(bounds[k], bounds[k + 1]) for k in range(len(group))]
    elapsed_ms = (time.perf_counter() - started) * 1000 / len(group)
    return [running.report_rows(answer, window, closed_at, elapsed_ms)
            for answer, running in zip(answers, group, strict=True)]


def _seeds(group: list[RunningQuery], terms: QueryTerms) -> Solutions:
    """One row per query: its constants in the placeholder columns, its number."""
    rows = np.array([_constant_ids(running, terms) for running in group], dtype=np.int64)
    rows = rows.reshape(len(group), len(group[0].shape.constants))
    columns = {placeholder(i): rows[:, i] for i in range(rows.shape[1])}
    columns[QUERY_NUMBER] = np.arange(len(group), dtype=np.int64)
    return Solutions(columns, len(group))


def _constant_ids(running: RunningQuery, terms: QueryTerms) -> tuple[int, ...]:
    """The IDs of a query's constants; kept on the query once all are pinned
    (such an ID is never freed nor reused), so that a group of K queries does
    not look up K spellings in the dictionary at every window."""
    dictionary = terms.dictionary
    kept = running.constant_ids
    if kept is not None and kept[0] is dictionary:
        return kept[1]
    pinned = tuple(dictionary.lookup_pinned(term) for term in running.shape.constants)
    if all(pinned):
        running.constant_ids = (dictionary, pinned)
        return pinned
    return tuple(terms.encode(term) for term in running.shape.constants)
