"""Make a failing scenario small: drop operations, items, triples, stored
triples and unused streams while it still fails the same way (same
attributed cause, same kind of first difference), so that the printed
reproduction is a handful of lines. Candidates the oracle cannot judge
(an ambiguity, a query over a stream that was dropped) are skipped.

Greedy, chunked like delta debugging: try removing halves, then quarters,
down to single elements, of every list in turn, and start over while
anything went. Bounded in candidates and seconds.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator

from tests.stream.scenarios.model import Post, Register, Scenario
from tests.stream.scenarios.runner import Outcome, check

MAX_CANDIDATES = 600
MAX_SECONDS = 180.0


def _signature(outcome: Outcome) -> tuple:
    return outcome.causes, outcome.differences[0].kind if outcome.differences else None


def _chunks(length: int) -> Iterator[tuple[int, int]]:
    """(start, end) slices to try removing: halves, quarters, ..., singles (from the end)."""
    size = max(1, length // 2)
    while True:
        for end in range(length, 0, -size):
            yield max(0, end - size), end
        if size == 1:
            return
        size = max(1, size // 2)


def _replace_ops(scenario: Scenario, ops: list) -> Scenario:
    return dataclasses.replace(scenario, ops=ops)


def _candidates(scenario: Scenario) -> Iterator[Scenario]:
    ops = scenario.ops
    for start, end in _chunks(len(ops)):
        yield _replace_ops(scenario, ops[:start] + ops[end:])
    for index, op in enumerate(ops):
        if not isinstance(op, Post):
            continue
        items = list(op.items)
        for start, end in _chunks(len(items)):
            if end - start < len(items):
                yield _replace_ops(
                    scenario,
                    [
                        *ops[:index],
                        dataclasses.replace(op, items=tuple(items[:start] + items[end:])),
                        *ops[index + 1 :],
                    ],
                )
        for position, (ts, triples) in enumerate(items):
            for start, end in _chunks(len(triples)):
                smaller = (ts, triples[:start] + triples[end:])
                changed = tuple(items[:position] + [smaller] + items[position + 1 :])
                yield _replace_ops(
                    scenario, [*ops[:index], dataclasses.replace(op, items=changed), *ops[index + 1 :]]
                )
    for graph, triples in scenario.static.items():
        for start, end in _chunks(len(triples)):
            yield dataclasses.replace(
                scenario, static={**scenario.static, graph: triples[:start] + triples[end:]}
            )
    used = {op.stream for op in ops if isinstance(op, Post)}
    read = {iri for op in ops if isinstance(op, Register) for iri in op.query.streams}
    for stream in scenario.streams:
        if stream.name not in used and stream.iri not in read:
            yield dataclasses.replace(scenario, streams=tuple(s for s in scenario.streams if s is not stream))


def shrink(
    outcome: Outcome, seconds: float = MAX_SECONDS, log: Callable[[str], None] = lambda _: None
) -> Outcome:
    """The smallest scenario found in ``seconds`` that fails in-process as
    ``outcome`` does (``outcome`` itself when nothing smaller does)."""
    if outcome.status != "fail":
        return outcome
    target = _signature(outcome)
    best = outcome
    tried = 0
    deadline = time.monotonic() + seconds
    progress = True
    while progress and tried < MAX_CANDIDATES and time.monotonic() < deadline:
        progress = False
        for candidate in _candidates(best.scenario):
            if tried >= MAX_CANDIDATES or time.monotonic() > deadline:
                break
            tried += 1
            result = check(candidate)
            if result.status == "fail" and _signature(result) == target:
                best = result
                progress = True
                log(f"shrunk to {len(best.scenario.ops)} operations")
                break
    return best
