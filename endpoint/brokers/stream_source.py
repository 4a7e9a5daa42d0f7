"""A stream fed by a broker: messages in, items ingested, acknowledgements out.

The inlet (:mod:`~endpoint.brokers.connector`) hands deliveries to a bounded
queue; one thread takes what has arrived (up to the in-flight window),
reads each payload as ``POST /streams/{name}`` reads a body
(:func:`~engine.stream.items.read_batch`), and ingests the good ones
together through :meth:`~engine.stream.StreamEngine.ingest`, the path HTTP
takes: the same write-ahead log, checks, windows and errors. Only when that
call returns, the batch being durable, are the messages acknowledged to the
broker, in the order received. So the broker keeps every message whose item
could still be lost, and a crash makes it deliver them again.

A second delivery must not change a window. The log keeps each batch's
message identities (:mod:`~engine.stream.deliveries`), so after a restart the
stream still knows the last few thousand; a delivery whose identity is
among them is acknowledged and counted as a duplicate, not ingested, when
it is known to be the same item: it carries an explicit id (an MQTT 5 user
property), or its timestamp comes with it (payload or property: the same
payload at the same time is the same item), or the broker flagged it as a
redelivery (DUP). A message stamped on arrival without an id that the broker
sends as new is always ingested, even if its payload repeats an earlier one.

A message that cannot be read, or whose item is older than the stream's
watermark (the whole group is then ingested again message by message, so
only the late ones are refused), is counted as bad, logged with its topic
and the parser's message (line and column), and acknowledged: sending it
again would not make it readable. Nothing stops the source but the stream's
drop or the server's shutdown; an engine failure (a store briefly away) is
retried with the same messages, unacknowledged meanwhile.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass

import numpy as np

from endpoint.brokers.config import BrokerUnreachable, SourceConfig
from endpoint.brokers.connector import Delivery, Inlet, inlet_for
from engine.stream import BATCH_MEDIA_TYPE, StreamEngine, StreamError
from engine.stream.errors import LateItem, UnknownStream
from engine.stream.items import parse_items, read_batch
from engine.stream.spelled_batch import SpelledBatch

log = logging.getLogger("rivulet.brokers")

#: seconds between attempts when the engine cannot take a batch now
RETRY_S = 0.5
#: seconds between attempts to start an inlet whose credentials cannot be read
RESTART_S = 2.0
#: payloads above this many bytes are read by the array scanner, smaller ones by the statement parser
SCANNED_PAYLOAD = 16384


@dataclass
class SourceCounts:
    """What a source did since the server started."""

    messages: int = 0
    items: int = 0
    triples: int = 0
    bad: int = 0
    duplicates: int = 0
    acknowledged: int = 0
    last_bad: str | None = None


class StreamSource:
    """The source of one stream: its inlet and the thread that ingests."""

    def __init__(self, engine: StreamEngine, stream: str, config: SourceConfig, inlet: Inlet | None = None
                 ) -> None:
        self.engine = engine
        self.stream = stream
        self.config = config
        self.inlet = inlet or inlet_for(config.broker, config.topic, config.qos, config.inflight,
                                        config.timestamp_property if config.timestamp == "property" else None,
                                        config.id_property, dedupe_all=config.timestamp != "arrival")
        self.counts = SourceCounts()
        # twice the window the broker is asked for: when full, the inlet stops reading the connection
        self._queue: queue.Queue[Delivery] = queue.Queue(maxsize=2 * config.inflight)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"rivulet-source-{stream}", daemon=True)
        #: the oldest delivery received and not yet acknowledged (for the lag)
        self._oldest_pending: float | None = None
        #: identities of the group being ingested that the stream knew before
        self._known_before: set[str] = set()

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._thread.start()

    def stop(self, forget: bool = False) -> None:
        """Stop ingesting and disconnect; unacknowledged messages stay with the broker."""
        self._stopping.set()
        self.inlet.stop(forget=forget)
        self._thread.join(timeout=10)

    def _deliver(self, delivery: Delivery) -> None:
        """The inlet's callback: wait for room (this is what slows a fast broker)."""
        while not self._stopping.is_set():
            try:
                self._queue.put(delivery, timeout=RETRY_S)
                return
            except queue.Full:
                continue

    # ------------------------------------------------------------- the work
    def _run(self) -> None:
        said = None
        while not self._stopping.is_set():
            try:
                self.inlet.start(self._deliver)
                break
            except BrokerUnreachable as exc:
                if str(exc) != said:  # once per reason, not every attempt
                    log.warning("source of stream %r cannot connect: %s; retrying every %g s", self.stream,
                                exc, RESTART_S)
                    said = str(exc)
                self._stopping.wait(RESTART_S)
        while not self._stopping.is_set():
            try:
                first = self._queue.get(timeout=RETRY_S)
            except queue.Empty:
                continue
            group = [first]
            while len(group) < self.config.inflight:
                try:
                    group.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._oldest_pending = group[0].received
            self._take(group)
            self._oldest_pending = None

    def _take(self, group: list[Delivery]) -> None:
        """Ingest a group of deliveries, then acknowledge them all."""
        self.counts.messages += len(group)
        seen = self.engine.stream(self.stream).deliveries if self.stream in self.engine.streams else ()
        identities: set[str] = set()
        candidates: list[Delivery] = []
        for delivery in group:
            if delivery.dedupe and (delivery.identity in seen or delivery.identity in identities):
                self.counts.duplicates += 1
                continue
            candidates.append(delivery)
            identities.add(delivery.identity)
        # an identity the stream learns from now on was logged by an attempt that then failed
        self._known_before = {d.identity for d in candidates if d.identity in seen}
        if candidates and not self._ingest_together(candidates):
            fresh = [(delivery, batch) for delivery in candidates if not self._logged(delivery)
                     and (batch := self._read(delivery)) is not None]
            if fresh and not self._ingest(fresh):
                return  # stopped before the batch could be taken: nothing is acknowledged
        for delivery in group:
            self.inlet.acknowledge(delivery)
        self.counts.acknowledged += len(group)

    def _ingest_together(self, candidates: list[Delivery]) -> bool:
        """Timestamped N-Triples payloads read as one body and ingested as one
        batch: the array scanner's cost is per body, and most groups are
        well formed. False when that is not done (another format, one
        message unreadable or late, the engine failing): the messages are
        then read and ingested one by one, to find which are bad."""
        if self.config.format != BATCH_MEDIA_TYPE or len(candidates) < 2 or self._stopping.is_set():
            return False
        body = b"".join(d.payload if d.payload.endswith(b"\n") or not d.payload else d.payload + b"\n"
                        for d in candidates)
        try:
            self._ingest_batch(read_batch(body, BATCH_MEDIA_TYPE), [d.identity for d in candidates])
        except Exception:  # the message-by-message path says what it was, and retries
            return False
        return True

    def _logged(self, delivery: Delivery) -> bool:
        """Whether an attempt of this group logged ``delivery`` before it failed
        (the engine remembers a batch's identities once it is logged)."""
        state = self.engine.streams.get(self.stream)
        return (state is not None and delivery.identity in state.deliveries
                and delivery.identity not in self._known_before)

    def _read(self, delivery: Delivery) -> SpelledBatch | None:
        """One message's items, read as a POST body of the stream's format
        is (a small one by the statement parser, which costs less than
        setting up the array scanner for a few lines)."""
        if self.config.timestamp == "property" and delivery.timestamp is None:
            self._bad(delivery, f"no {self.config.timestamp_property!r} user property: the stream's items "
                                "are stamped by their producer")
            return None
        try:
            if len(delivery.payload) > SCANNED_PAYLOAD:
                return read_batch(delivery.payload, self.config.format, delivery.timestamp)
            items = parse_items(delivery.payload, self.config.format, delivery.timestamp)
            return SpelledBatch.of_items(items)
        except StreamError as exc:
            self._bad(delivery, str(exc))
            return None

    def _ingest(self, fresh: list[tuple[Delivery, SpelledBatch]]) -> bool:
        """Ingest the readable deliveries as one batch (message by message if
        one of them is late); False if the source stopped first. An attempt
        that fails for the engine's sake is made again with what it has not
        ingested yet."""
        done: set[int] = set()  # positions in ``fresh`` ingested or refused for good
        while not self._stopping.is_set():
            left = [(k, pair) for k, pair in enumerate(fresh) if k not in done and not self._logged(pair[0])]
            if not left:
                return True
            try:
                try:
                    self._ingest_batch(SpelledBatch.joined([batch for _, (_, batch) in left]),
                                       [delivery.identity for _, (delivery, _) in left])
                    return True
                except LateItem:
                    pass
                for k, (delivery, batch) in left:
                    try:
                        self._ingest_batch(batch, [delivery.identity])
                    except UnknownStream:
                        raise
                    except StreamError as exc:
                        self._bad(delivery, str(exc))
                    done.add(k)
                return True
            except UnknownStream:
                log.warning("stream %r is gone: its source stops", self.stream)
                self._stopping.set()
                return False
            except StreamError as exc:  # the whole group is refused (too many windows at once)
                for _, (delivery, _) in left:
                    self._bad(delivery, str(exc))
                return True
            except Exception:  # the store briefly unavailable, a full disk: the same messages again
                log.exception("source of stream %r could not ingest %d messages; retrying", self.stream,
                              len(left))
                self._stopping.wait(RETRY_S)
        return False

    def _ingest_batch(self, batch: SpelledBatch, identities: list[str]) -> None:
        summary = self.engine.ingest(self.stream, batch, deliveries=identities)
        self.counts.items += int(np.count_nonzero(batch.counts))  # as the stream counts: heartbeats apart
        self.counts.triples += summary["triples"]

    def _bad(self, delivery: Delivery, reason: str) -> None:
        self.counts.bad += 1
        self.counts.last_bad = f"topic {delivery.topic!r}: {reason}"[:500]
        log.warning("stream %r: bad message on topic %r, acknowledged and left out: %s", self.stream,
                    delivery.topic, reason[:500])

    # ------------------------------------------------------------ reporting
    def lag_seconds(self) -> float:
        """How long the oldest message received and not yet acknowledged has waited."""
        pending = self._oldest_pending
        if pending is None:
            try:
                pending = self._queue.queue[0].received
            except IndexError:
                return 0.0
        return max(0.0, time.time() - pending)

    def to_json(self) -> dict:
        counts = self.counts
        return {
            "broker": self.config.broker.describe(),
            "topic": self.config.topic,
            "client_id": self.config.broker.client_id,
            **self.inlet.state.to_json(),
            "messages": counts.messages,
            "items": counts.items,
            "triples": counts.triples,
            "bad_messages": counts.bad,
            "duplicates": counts.duplicates,
            "acknowledged": counts.acknowledged,
            "waiting": self._queue.qsize(),
            "lag_s": round(self.lag_seconds(), 3),
            "last_bad_message": counts.last_bad,
        }
