"""What a continuous query reports for one window.

An event holds decoded terms and no serialisation: the endpoint writes the
wire format (and caches it per event, however many subscribers read it).
Events compare by identity, so a writer can key a cache on them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from engine.rdf import Term


@dataclass(eq=False)
class WindowEvent:
    """The report of one window: rows (SELECT), a boolean (ASK) or triples
    (CONSTRUCT), with the window's bounds and a per-query sequence number that
    clients use to resume (``Last-Event-ID``)."""

    query: str
    sequence: int
    start_ms: int
    end_ms: int
    form: str
    variables: list[str]
    rows: list[tuple[Term | None, ...]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[tuple[Term, Term, Term]] = field(default_factory=list)
    #: wall-clock time (s) when the item or heartbeat that closed the window was
    #: received, and when the window's result was ready
    closed_at: float = 0.0
    reported_at: float = field(default_factory=time.time)
