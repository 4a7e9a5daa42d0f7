"""Declared streams: what they are (IRI, predicate split, idle policy) and
where they are (watermark, counts, rate)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from engine.rdf import IRI
from engine.stream.deliveries import RecentDeliveries
from engine.stream.transient import StreamLog, TransientLog


@dataclass(frozen=True)
class StreamDefinition:
    """How a stream is declared.

    ``timing`` predicates are kept only while a window needs them; if
    ``timeless`` is given, only those predicates are absorbed and every other
    one is timing; by default everything is timeless (SEMANTICS.md).
    ``graph`` is the stored named graph that absorbs the timeless triples
    (default: the stream's IRI). With ``idle`` = "wallclock" the watermark
    follows the wall clock minus ``idle_lag_ms`` while no item arrives.
    ``source``: the broker the stream reads its items from (the endpoint's
    connectors read and check it; the engine only keeps it with the stream).
    """

    name: str
    iri: IRI
    timing: frozenset[str] = frozenset()
    timeless: frozenset[str] | None = None
    graph: IRI | None = None
    idle: str = "none"
    idle_lag_ms: int = 1000
    source: dict | None = field(default=None, hash=False)

    @property
    def stored_graph(self) -> IRI:
        return self.graph or self.iri

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "iri": self.iri.value,
            "timing": sorted(self.timing),
            "timeless": None if self.timeless is None else sorted(self.timeless),
            "graph": self.stored_graph.value,
            "idle": self.idle,
            "idle_lag_ms": self.idle_lag_ms,
            **({"source": self.source} if self.source is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict) -> StreamDefinition:
        """The definition :meth:`to_json` wrote (the catalog and the log keep it so)."""
        timeless = data.get("timeless")
        return cls(data["name"], IRI(data["iri"]), frozenset(data.get("timing", ())),
                   None if timeless is None else frozenset(timeless),
                   IRI(data["graph"]) if data.get("graph") else None,
                   data.get("idle", "none"), int(data.get("idle_lag_ms", 1000)), data.get("source"))


@dataclass(eq=False)
class StreamState:
    """A declared stream at run time. ``number`` identifies it in the store's
    timestamped deltas. Two states are equal only if they are the same object
    (a field-by-field comparison, arrays included, would cost every
    ``state in query.streams`` and mean nothing)."""

    definition: StreamDefinition
    number: int
    timing_ids: np.ndarray
    timeless_ids: np.ndarray | None
    graph_id: int
    log: StreamLog = field(default_factory=TransientLog)
    watermark: int | None = None
    items: int = 0
    triples: int = 0
    #: items of the batches refused for holding an item older than the watermark
    late_items: int = 0
    last_arrival: float | None = None
    #: identities of the broker messages ingested last (:mod:`~engine.stream.deliveries`)
    deliveries: RecentDeliveries = field(default_factory=RecentDeliveries)
    _recent: deque = field(default_factory=lambda: deque(maxlen=256))

    def is_timing(self, predicates: np.ndarray) -> np.ndarray:
        """Mask of the rows whose predicate makes the triple timing data."""
        timing = np.isin(predicates, self.timing_ids)
        if self.timeless_ids is not None:
            timing |= ~np.isin(predicates, self.timeless_ids)
        return timing

    def record(self, items: int, triples: int, from_producer: bool = True) -> None:
        """Count a batch; the idle clock's own heartbeats do not make a stream active."""
        now = time.time()
        self.items += items
        self.triples += triples
        if from_producer:
            self.last_arrival = now
        self._recent.append((now, triples))

    def clear_rate(self) -> None:
        """Forget the arrivals :meth:`rate` averages (those a recovery replayed)."""
        self._recent.clear()

    def rate(self, horizon_s: float = 10.0) -> float:
        """Triples per second over the last ``horizon_s`` seconds of arrivals."""
        now = time.time()
        recent = [(t, n) for t, n in self._recent if now - t <= horizon_s]
        if not recent:
            return 0.0
        span = max(now - recent[0][0], 1.0)
        return sum(n for _, n in recent) / span

    def to_json(self) -> dict:
        return {
            **self.definition.to_json(),
            "watermark_ms": self.watermark,
            "items": self.items,
            "triples": self.triples,
            "rate_triples_per_s": round(self.rate(), 3),
            "transient_triples": len(self.log),
        }
