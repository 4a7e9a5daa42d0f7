"""What a driver saw: the events of every query, the outcome of every
operation and the stored graphs at the end, in the oracle's terms
(:class:`~tests.stream.scenarios.oracle.Event`), so that one comparison
serves both drivers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tests.stream.scenarios.model import Triple
from tests.stream.scenarios.oracle import Event, Result
from tests.stream.scenarios.terms import canonical


@dataclass
class Actual:
    events: dict[str, list[Event]] = field(default_factory=dict)
    outcomes: list[str] = field(default_factory=list)
    graphs: dict[str, frozenset[Triple]] = field(default_factory=dict)
    #: HTTP: a reader that resumed with Last-Event-ID k at the end: query -> (k, events)
    resumed: dict[str, tuple[int, list[Event]]] = field(default_factory=dict)
    #: what the driver saw that is no difference (an SSE reader the server dropped, say)
    notes: list[str] = field(default_factory=list)
    #: HTTP: what went wrong unregistering the queries and dropping the streams at the end
    cleanup: list[str] = field(default_factory=list)


def select_result(variables: list[str], rows: list[list[str | None]]) -> Result:
    """A SELECT result from rows of N-Triples spellings (None: unbound)."""
    counter: Counter = Counter()
    for row in rows:
        counter[
            tuple(sorted((name, canonical(term)) for name, term in zip(variables, row, strict=True)))
        ] += 1
    return Result.of("SELECT", counter)


def construct_result(triples: list[tuple[str, str, str]]) -> Result:
    counter: Counter = Counter()
    for triple in triples:
        counter[tuple(canonical(t) for t in triple)] += 1
    return Result.of("CONSTRUCT", counter)
