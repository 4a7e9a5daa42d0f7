"""What a continuous query reports for one window."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import orjson

from engine.rdf.terms import Term
from engine.sparql.results.dispatch import write_boolean, write_select


@dataclass
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
    _json: bytes | None = field(default=None, repr=False)

    def results_json(self) -> bytes:
        """The SPARQL 1.1 JSON results of the window (CONSTRUCT: ?s ?p ?o rows)."""
        if self.form == "ASK":
            return write_boolean("json", bool(self.boolean))
        if self.form == "CONSTRUCT":
            return b"".join(write_select("json", ["subject", "predicate", "object"], self.triples))
        return b"".join(write_select("json", self.variables, self.rows))

    def to_json(self) -> bytes:
        """The event payload, serialised once however many subscribers read it."""
        if self._json is None:
            head = orjson.dumps(
                {
                    "query": self.query,
                    "sequence": self.sequence,
                    "window": {"start_ms": self.start_ms, "end_ms": self.end_ms},
                    "rows": len(self.triples) if self.form == "CONSTRUCT" else len(self.rows),
                    "closed_at_ms": round(self.closed_at * 1000, 3),
                    "reported_at_ms": round(self.reported_at * 1000, 3),
                }
            )
            # no newline inside: an SSE data field is one line
            self._json = head[:-1] + b',"results":' + self.results_json().strip() + b"}"
        return self._json
