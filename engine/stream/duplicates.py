"""Continuous queries registered more than once: one evaluation per window for all.

CityBench's "queryDuplicates" registers the same query K times under K
names, as a service does when each client registers its own copy of one
dashboard query. Copies equal but for their name read the same windows and
stored graphs at the same instant, so they have the same answer there: the
engine evaluates the first copy due at an instant (the leader) and hands its
answer to the others (:func:`fan_out`), each of which applies its own report
policy (to one count of the answer's ID rows, made once for all) and numbers
its own events, as ``docs/semantics.md`` requires of every query. A copy
registered later shares only at an instant where its own clock and the
leader's coincide, so it starts where the contract says its own first
window is.

The report policy is not part of the key (each copy applies its own to the
shared answer). A ``REGISTER STREAM`` query is never shared: each copy's
output is absorbed into the store, which the next copy would read.
"""

from __future__ import annotations

from engine.sparql.syntax import ContinuousQuery
from engine.stream.events import WindowEvent
from engine.stream.report_policy import shared_count
from engine.stream.running_query import RunningQuery


def duplicate_key(spec: ContinuousQuery) -> tuple | None:
    """What ``spec`` shares with its copies (None: it shares with none): the
    language, the windows and the parsed query, base included; not the name
    and not the report policy."""
    if spec.output_stream is not None:
        return None
    return (spec.language, spec.windows, spec.query)


def fan_out(leader_event: WindowEvent, answer, copies: list[RunningQuery], close: int, closed_at: float
            ) -> list[WindowEvent]:
    """The events of ``copies`` for the window closing at ``close`` that the
    leader reported with ``leader_event``, whose whole answer (before the
    leader's report policy) is ``answer``; a failed window fails for every
    copy with the same error (it was the same evaluation)."""
    if leader_event.error is not None:
        return [running.fail(close, closed_at, leader_event.error, 0.0) for running in copies]
    bounds = tuple((w.start_ms, w.end_ms) for w in leader_event.windows)
    # the answer's multiset, counted once for every copy whose policy keeps it
    counted = (shared_count(answer) if not isinstance(answer, bool)
               and any(c.policy.keep_result for c in copies) else None)
    reported: dict = {}
    return [running.report_answer(answer, leader_event.start_ms, leader_event.end_ms, bounds, closed_at,
                                  counted, reported)
            for running in copies]
