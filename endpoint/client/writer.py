"""A batched, back-pressured writer of stream items.

``send(triples, timestamp_ms)`` adds one item to the batch being filled; a
full batch (``batch_size`` items) becomes one ``POST /streams/{name}`` in
timestamped N-Triples (``TIMESTAMP <s> <p> <o> .`` per line, a timestamp
alone for a heartbeat; ``engine/stream/batch_format.py`` on the server).

One background thread sends the batches one after the other: the server
refuses an item older than the stream's watermark, so two batches of one
stream in flight at once could overtake each other and make the later one
late. Batches waiting or in flight are *pending*; ``send`` blocks while
``max_pending`` batches (or ``max_pending_bytes`` of their bodies) are, so
a producer faster than the server waits for it instead of filling memory.

The server answers a refused batch with its reason and nothing of it is
ingested; the writer then stops (the batches after it would be out of
order) and raises a :class:`~endpoint.client.errors.RivuletError` from the
next ``send``, ``flush`` or ``close``, with the line and timestamp of the
offending item where the server named them. Only answers that say the
batch was not taken, 429 and 503 with ``Retry-After``, are retried (at most
``retries`` times), so no batch is ever ingested twice.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

import httpx

from endpoint.client.errors import RivuletError
from endpoint.client.terms import Triple, ntriples_lines

if TYPE_CHECKING:
    from endpoint.client.client import Client

BATCH_MEDIA_TYPE = "application/x-timestamped-ntriples"
#: statuses after which the server has taken nothing and says when to come back
RETRYABLE = (429, 503)
#: an N-Triples line end (str.splitlines() also splits at U+2028, U+0085 and
#: the like, which a literal may hold raw)
_LINE_END = re.compile(r"\r\n|\r|\n")
#: longest wait (seconds) a Retry-After may impose before the writer gives up
MAX_RETRY_AFTER = 60.0


@dataclass
class _Batch:
    body: bytes
    items: int


def timestamp_ms(moment: int | datetime) -> int:
    """Milliseconds since the epoch of an int (as is) or a datetime (naive: UTC)."""
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return round(moment.timestamp() * 1000)
    if isinstance(moment, bool) or not isinstance(moment, int):
        raise TypeError(f"a timestamp is milliseconds (int) or a datetime, not {moment!r}")
    return moment


def item_lines(data: Iterable[Triple] | str, stamp: int) -> list[str]:
    """One item as lines of a batch body: each triple (or each statement of
    N-Triples text) after the timestamp; a timestamp alone when there is none."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if isinstance(data, str):
        statements = [line.strip(" \t") for line in _LINE_END.split(data)]
        statements = [s for s in statements if s and not s.startswith("#")]
    else:
        statements = ntriples_lines(data)
    return [f"{stamp} {s}" for s in statements] or [str(stamp)]


def retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asks to wait (``Retry-After``: seconds or an HTTP date), None if it does not."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit() alone takes superscripts too
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class StreamWriter:
    """Writes items to stream ``name`` in batches; a context manager that
    flushes on a normal exit. ``pending``/``peak_pending`` (batches) and
    ``pending_bytes``/``peak_pending_bytes`` tell how full it is and was,
    ``waits`` how often ``send`` waited for room."""

    def __init__(self, client: Client, name: str, batch_size: int = 1000, max_pending: int = 4,
                 max_pending_bytes: int = 16 << 20, retries: int = 5) -> None:
        if batch_size < 1 or max_pending < 1 or max_pending_bytes < 1:
            raise ValueError("batch_size, max_pending and max_pending_bytes must be at least 1")
        self.client = client
        self.name = name
        self.batch_size = batch_size
        self.max_pending = max_pending
        self.max_pending_bytes = max_pending_bytes
        self.retries = retries
        self.pending = 0
        self.pending_bytes = 0
        self.peak_pending = 0
        self.peak_pending_bytes = 0
        #: how many times ``send`` had to wait for room
        self.waits = 0
        #: batches and items the server acknowledged, and its last answer
        self.sent_batches = 0
        self.sent_items = 0
        self.last_summary: dict | None = None
        self._lines: list[str] = []
        self._items = 0
        self._last_stamp: int | None = None
        self._queue: deque[_Batch] = deque()
        self._error: RivuletError | None = None
        self._closing = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=f"rivulet-writer-{name}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ producer side
    def send(self, data: Iterable[Triple] | str, timestamp: int | datetime) -> None:
        """Add one item: triples, or N-Triples text, at ``timestamp`` (ms or a
        datetime). Consecutive items with one timestamp become one item on the
        server; an empty one is a heartbeat. Blocks while the writer is full;
        raises the error of a refused batch."""
        stamp = timestamp_ms(timestamp)
        self._raise_error()
        if self._last_stamp is not None and stamp < self._last_stamp:
            raise ValueError(f"timestamp {stamp} is older than the one sent before ({self._last_stamp}); "
                             "a stream's items go in time order")
        self._lines.extend(item_lines(data, stamp))
        self._last_stamp = stamp
        self._items += 1
        if self._items >= self.batch_size:
            self._enqueue()

    def heartbeat(self, timestamp: int | datetime) -> None:
        """An item without triples: it moves the stream's watermark (and closes windows)."""
        self.send((), timestamp)

    def flush(self) -> None:
        """Send the partial batch and wait until every batch is acknowledged."""
        self._enqueue()
        with self._changed:
            while self.pending and self._error is None:
                self._changed.wait()
        self._raise_error()

    def close(self) -> None:
        """Flush, then stop the sending thread."""
        try:
            self.flush()
        finally:
            self._stop()

    def __enter__(self) -> StreamWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:  # the batches already formed still go, the partial one does not;
            self._stop()  # the body's exception is the one to see

    def _enqueue(self) -> None:
        """Hand the batch being filled to the sender, waiting for room."""
        if not self._lines:
            return
        batch = _Batch(("\n".join(self._lines) + "\n").encode("utf-8"), self._items)
        self._lines, self._items = [], 0
        with self._changed:
            waited = False
            # a batch larger than the byte bound alone still goes, by itself
            while self._error is None and self.pending and (
                    self.pending >= self.max_pending
                    or self.pending_bytes + len(batch.body) > self.max_pending_bytes):
                waited = True
                self._changed.wait()
            self.waits += waited
            self._raise_error()
            self._queue.append(batch)
            self.pending += 1
            self.pending_bytes += len(batch.body)
            self.peak_pending = max(self.peak_pending, self.pending)
            self.peak_pending_bytes = max(self.peak_pending_bytes, self.pending_bytes)
            self._changed.notify_all()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def _stop(self) -> None:
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join()

    # -------------------------------------------------------------- sender side
    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._queue and not self._closing:
                    self._changed.wait()
                if not self._queue:
                    return
                batch = self._queue[0]
            try:
                summary = self._post(batch)
            except Exception as exc:  # any failure must reach the producer, not end the thread unseen
                error = exc if isinstance(exc, RivuletError) else RivuletError(None, f"failed: {exc!r}")
                with self._changed:
                    self._error = error
                    self._queue.clear()
                    self.pending = self.pending_bytes = 0
                    self._changed.notify_all()
                return
            with self._changed:
                self._queue.popleft()
                self.pending -= 1
                self.pending_bytes -= len(batch.body)
                self.sent_batches += 1
                self.sent_items += batch.items
                self.last_summary = summary
                self._changed.notify_all()

    def _post(self, batch: _Batch) -> dict:
        """POST one batch, waiting out 429/503 with Retry-After; the error of any other refusal."""
        attempt = 0
        while True:
            response = self.client.request(
                "POST", self.client.stream_path(self.name), content=batch.body,
                headers={"Content-Type": BATCH_MEDIA_TYPE}, check=False)
            if response.status_code < 400:
                return response.json()
            wait = retry_after(response) if response.status_code in RETRYABLE else None
            if wait is None or wait > MAX_RETRY_AFTER or attempt >= self.retries:
                raise _batch_error(response, batch)
            attempt += 1
            time.sleep(wait)


def _batch_error(response: httpx.Response, batch: _Batch) -> RivuletError:
    """The server's refusal, with the timestamp of the line it named."""
    error = RivuletError.from_response(response)
    if error.line is not None and error.timestamp_ms is None:
        lines = _LINE_END.split(batch.body.decode("utf-8"))
        if 0 < error.line <= len(lines):
            head = lines[error.line - 1].split(" ", 1)[0]
            if re.fullmatch(r"-?[0-9]{1,18}", head):
                error.timestamp_ms = int(head)
    return error
