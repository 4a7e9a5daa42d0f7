"""What a continuous query reports for one window.

An event holds its rows as positions in their distinct terms, decoded when
the window was reported (:class:`~engine.stream.reported_rows.ReportedRows`),
and no serialisation: the endpoint writes the wire format from those (each
distinct term's JSON once) and caches it per event, however many
subscribers read it. ``rows`` and ``triples`` give the rows as tuples of
terms, made on first use. Events compare by identity, so a writer can key a
cache on them.

A window whose evaluation failed (over its time limit or its row budget)
is reported too, by an event with an :class:`WindowError` and no answer:
every window gets one event and one sequence number, so a subscriber sees
each window exactly once, as a result or as an error, and resumes after
either with ``Last-Event-ID``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property

from engine.rdf import Term
from engine.stream.reported_rows import ReportedRows


@dataclass(frozen=True)
class WindowError:
    """Why a window has no result: ``reason`` is ``"time_limit"``,
    ``"row_limit"`` or ``"error"`` (anything else the evaluation raised);
    ``message`` says what happened in words."""

    reason: str
    message: str


@dataclass(frozen=True)
class WindowBounds:
    """One stream window of an evaluation: the stream's IRI, the window's
    name (RSP-QL; None in C-SPARQL) and its ``[start_ms, end_ms)``."""

    stream: str
    name: str | None
    start_ms: int
    end_ms: int


@dataclass(eq=False)
class WindowEvent:
    """The report of one window: rows (SELECT), a boolean (ASK) or triples
    (CONSTRUCT), with the window's bounds and a per-query sequence number that
    clients use to resume (``Last-Event-ID``).

    ``start_ms``/``end_ms`` bound the evaluation as a whole: ``end_ms`` is
    its instant (the close), ``start_ms`` the earliest start of its windows;
    ``windows`` gives each stream window's own bounds, which differ when the
    query's windows have different RANGEs or STEPs."""

    query: str
    sequence: int
    start_ms: int
    end_ms: int
    form: str
    variables: list[str]
    #: the rows (SELECT) or triples (CONSTRUCT) reported; None: ASK, or no answer
    reported: ReportedRows | None = None
    boolean: bool | None = None
    #: wall-clock time (s) when the item or heartbeat that closed the window was
    #: received, and when the window's result was ready
    closed_at: float = 0.0
    reported_at: float = field(default_factory=time.time)
    #: why the window has no result (None: it has one)
    error: WindowError | None = None
    #: each stream window's bounds, in registration order (events retained by an
    #: older checkpoint have none)
    windows: tuple[WindowBounds, ...] = ()

    @property
    def count(self) -> int:
        """The rows (SELECT) or triples (CONSTRUCT) reported."""
        return 0 if self.reported is None else len(self.reported)

    @cached_property
    def rows(self) -> list[tuple[Term | None, ...]]:
        """The rows of a SELECT window as tuples of terms (made once)."""
        return [] if self.reported is None or self.form == "CONSTRUCT" else self.reported.tuples()

    @cached_property
    def triples(self) -> list[tuple[Term, Term, Term]]:
        """The triples a CONSTRUCT window reports (made once)."""
        return [] if self.reported is None or self.form != "CONSTRUCT" else self.reported.tuples()

    def __getstate__(self) -> dict:
        """What a checkpoint keeps: not the tuples made from ``reported``."""
        state = dict(self.__dict__)
        state.pop("rows", None)
        state.pop("triples", None)
        return state

    def __setstate__(self, state: dict) -> None:
        """An event of an older checkpoint holds its rows or triples as tuples."""
        state = dict(state)
        rows, triples = state.pop("rows", None), state.pop("triples", None)
        if "reported" not in state:
            width = 3 if state.get("form") == "CONSTRUCT" else len(state.get("variables", []))
            decoded = triples if state.get("form") == "CONSTRUCT" else rows
            state["reported"] = (None if state.get("boolean") is not None or state.get("error") is not None
                                 else ReportedRows.of_tuples(decoded or [], width))
        self.__dict__.update(state)
