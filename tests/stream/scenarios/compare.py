"""Expected against actual, window by window: the first difference of each
query, each refused or accepted operation that should not have been, each
stored graph that ended wrong."""

from __future__ import annotations

from dataclasses import dataclass

from tests.stream.scenarios.actual import Actual
from tests.stream.scenarios.model import Scenario, describe_op
from tests.stream.scenarios.oracle import Event, Expected, Result

#: events shown before and after the first difference
CONTEXT = 2


@dataclass(frozen=True)
class Difference:
    """One way the engine disagreed; ``kind`` groups differences of one sort
    (``events``, ``outcome``, ``graph``, ``error``)."""

    kind: str
    where: str
    detail: str

    def show(self) -> str:
        return f"[{self.kind}] {self.where}\n{self.detail}"


def _event_matches(expected: Event, actual: Event) -> bool:
    return (
        expected.sequence == actual.sequence
        and (expected.start is None or expected.start == actual.start)
        and (expected.end is None or expected.end == actual.end)
        and expected.result == actual.result
    )


def compare_events(name: str, expected: list[Event], actual: list[Event]) -> Difference | None:
    for index in range(max(len(expected), len(actual))):
        want = expected[index] if index < len(expected) else None
        got = actual[index] if index < len(actual) else None
        if want is not None and got is not None and _event_matches(want, got):
            continue
        low, high = max(0, index - CONTEXT), index + CONTEXT + 1
        lines = [
            f"first difference at event {index + 1} (expected {len(expected)} events, got {len(actual)})",
            "expected:",
        ]
        lines += [
            ("  > " if i == index else "    ") + e.show() for i, e in enumerate(expected) if low <= i < high
        ]
        lines.append("actual:")
        lines += [
            ("  > " if i == index else "    ") + e.show() for i, e in enumerate(actual) if low <= i < high
        ]
        if want is not None and got is not None and want.result.form != "ASK":
            missing = Result.of(want.result.form, want.result.counter() - got.result.counter())
            extra = Result.of(want.result.form, got.result.counter() - want.result.counter())
            lines.append(f"in event {index + 1}: missing {missing.show()}; extra {extra.show()}")
        return Difference("events", f"query {name}", "\n".join(lines))
    return None


def compare(scenario: Scenario, expected: Expected, actual: Actual) -> list[Difference]:
    differences = []
    for index, (want, got) in enumerate(zip(expected.outcomes, actual.outcomes, strict=False)):
        if want != got:
            kind = "error" if got.startswith("error") else "outcome"
            differences.append(
                Difference(
                    kind,
                    f"operation [{index}]",
                    f"expected {want}, got {got}\n{describe_op(scenario.ops[index])}",
                )
            )
    for name, events in expected.events.items():
        difference = compare_events(name, events, actual.events.get(name, []))
        if difference is not None:
            differences.append(difference)
    for name, (after, events) in actual.resumed.items():
        difference = compare_events(
            f"{name} resumed after Last-Event-ID {after}", expected.events.get(name, [])[after:], events
        )
        if difference is not None:
            differences.append(difference)
    for graph in sorted(set(expected.graphs) | set(actual.graphs)):
        want, got = expected.graphs.get(graph, frozenset()), actual.graphs.get(graph, frozenset())
        if want != got:
            differences.append(
                Difference(
                    "graph",
                    f"stored graph <{graph}> at the end",
                    f"missing {sorted(want - got)[:10]}\nextra {sorted(got - want)[:10]}",
                )
            )
    if actual.cleanup:
        differences.append(
            Difference("cleanup", "queries unregistered, streams dropped", "\n".join(actual.cleanup))
        )
    return differences
