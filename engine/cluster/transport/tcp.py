"""In-place reads over TCP: the transport that works on every machine.

A :class:`TcpRegionServer` in the shard process answers requests for slices of
the arrays it published; it runs no query code, only bounds checks and copies,
so it stands in for the NIC that serves a one-sided RDMA READ. A
:class:`TcpRangeReader` in the coordinator sends one request per shard per
:meth:`~TcpRangeReader.gather` (every shard's request first, then the
answers), so a query step costs one round trip whatever its number of slices
and shards.

The bytes they exchange are defined in :mod:`engine.cluster.transport.wire`;
this module is the two ends' behaviour: what is served, limits, errors,
connection reuse and retries.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from engine.cluster.transport.base import RegionError, RegionInfo, Slices
from engine.cluster.transport.listener import ThreadedListener
from engine.cluster.transport.tcp_pool import PooledConnection, ShardPool
from engine.cluster.transport.wire import (
    ANSWER_HEADER,
    ANSWER_MAGIC,
    DATA,
    KIND_GATHER,
    KIND_REGIONS,
    MAX_ANSWER_BYTES,
    MAX_REQUEST_BYTES,
    REQUEST_HEADER,
    REQUEST_MAGIC,
    STATUS_ERROR,
    STATUS_OK,
    Buffer,
    RequestRefused,
    check_bounds,
    check_region,
    decode_gather,
    drain,
    encode_answer,
    encode_gather,
    pack_regions,
    parse_gather,
    recv_exactly,
    send_buffers,
    unpack_regions,
)

# RegionError is what TcpRangeReader raises; callers may import it from here.
__all__ = ["RegionError", "TcpExchange", "TcpRangeReader", "TcpRegionServer"]

T = TypeVar("T")

log = logging.getLogger("rivulet.cluster")


def serve_requests(sock: socket.socket, max_request_bytes: int,
                   answer: Callable[[int, memoryview], list[Buffer]], label: str) -> None:
    """Answer one connection's requests until the peer closes it: each
    request's ``answer(kind, body)`` goes back as an ok answer, a
    :class:`RequestRefused` or any other error as an error answer (and the
    connection goes on); a request over ``max_request_bytes`` is drained and
    refused; a stream that is not ours is answered once and closed."""
    while True:
        header = recv_exactly(sock, REQUEST_HEADER.size, eof_ok=True)
        if header is None:
            return
        magic, kind, request_id, body_len = REQUEST_HEADER.unpack(header)
        if magic != REQUEST_MAGIC:
            # The stream cannot be re-synchronised: answer once, then hang up.
            _send_error(sock, request_id, "not a Rivulet request (bad magic)")
            return
        if body_len > max_request_bytes:
            drain(sock, body_len)
            why = f"request of {body_len} bytes is over the {max_request_bytes} byte limit"
            _send_error(sock, request_id, why)
            continue
        body = recv_exactly(sock, body_len) if body_len else bytearray()
        assert body is not None
        try:
            parts = answer(kind, memoryview(body))
        except RequestRefused as exc:
            _send_error(sock, request_id, str(exc))
            continue
        except Exception as exc:  # noqa: BLE001 - answer, and keep serving
            log.exception("%s: request failed", label)
            _send_error(sock, request_id, f"internal error: {type(exc).__name__}: {exc}")
            continue
        size = sum(memoryview(p).nbytes for p in parts)
        send_buffers(sock, [ANSWER_HEADER.pack(ANSWER_MAGIC, STATUS_OK, request_id, size), *parts])


def _send_error(sock: socket.socket, request_id: int, message: str) -> None:
    body = message.encode("utf-8")
    send_buffers(sock, [ANSWER_HEADER.pack(ANSWER_MAGIC, STATUS_ERROR, request_id, len(body)), body])


class TcpRegionServer:
    """Serves slices of published regions to :class:`TcpRangeReader` s.

    Publishing keeps a reference to the array (a memory map stays mapped) and
    copies nothing; an answer sends a single slice straight from the array and
    gathers several slices with one vectorised copy. A bad request gets an error
    answer and the connection goes on; an answer over ``max_answer_bytes`` is
    refused before anything is copied.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        self.max_answer_bytes = max_answer_bytes
        self.max_request_bytes = max_request_bytes
        self._regions: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._listener = ThreadedListener(host, port, self._handle, "tcp-region-server")

    def publish(self, name: str, array: np.ndarray) -> RegionInfo:
        """Make ``array`` readable as ``name`` (replacing a region of that name)."""
        check_region(name, array)
        # A plain ndarray over the same memory: slicing an np.memmap costs ~1 us
        # more per slice (subclass bookkeeping), which a 64-slice answer feels.
        plain = np.asarray(array)
        with self._lock:
            self._regions[name] = plain
        return RegionInfo(name, plain.dtype.str, len(plain))

    def withdraw(self, name: str) -> None:
        """Stop serving ``name``; reads already being answered finish. ``KeyError``
        if it is not published."""
        with self._lock:
            del self._regions[name]

    def regions(self) -> list[RegionInfo]:
        """What is published now."""
        with self._lock:
            items = list(self._regions.items())
        return [RegionInfo(name, arr.dtype.str, len(arr)) for name, arr in items]

    def start(self) -> tuple[str, int]:
        """Start serving; returns the address readers connect to."""
        return self._listener.start()

    @property
    def address(self) -> tuple[str, int]:
        return self._listener.address

    @property
    def open_connections(self) -> int:
        """Readers' connections open now (a reader keeps a few per shard)."""
        return self._listener.open_connections

    def stop(self) -> None:
        """Close the listener and every connection."""
        self._listener.stop()

    def __enter__(self) -> TcpRegionServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handle(self, sock: socket.socket) -> None:
        serve_requests(sock, self.max_request_bytes, self._answer, "tcp-region-server")

    def _answer(self, kind: int, body: memoryview) -> list[Buffer]:
        if kind == KIND_GATHER:
            return self._gather(body)
        if kind == KIND_REGIONS:
            return [pack_regions(self.regions())]
        raise RequestRefused(f"unknown request kind {kind}")

    def _gather(self, body: memoryview) -> list[Buffer]:
        """Parse and validate every entry first (so nothing is copied for a request
        that will be refused), then assemble the answer's buffers."""
        entries = parse_gather(body)
        regions = self._regions  # a dict read is atomic; withdraw swaps nothing under us
        plan = []
        total = 0
        for i, (name, starts, stops) in enumerate(entries):
            array = regions.get(name)
            if array is None:
                raise RequestRefused(f"entry {i}: region {name!r} is not published")
            count = check_bounds(name, len(array), starts, stops)
            nbytes = count * array.itemsize
            total += DATA.size + nbytes + (-nbytes % 8)
            if total > self.max_answer_bytes:
                raise RequestRefused(
                    f"answer would be over the {self.max_answer_bytes} byte limit "
                    f"(at entry {i}, region {name!r}); split the gather"
                )
            plan.append((array, starts, stops, count))
        return encode_answer(plan)


class _Retry(Exception):
    """A reused connection turned out to be broken: reconnect and ask again."""


class TcpExchange:
    """Round trips to shards over persistent TCP connections: one request per
    shard, every request sent before any answer is read, so the shards work
    at once.

    Thread-safe: each exchange checks a connection per shard out of a small
    pool. A connection found broken (the shard restarted at the same address)
    is replaced and the request sent again, once: only requests that change
    nothing travel this way, so a retry is safe. Error answers raise
    :class:`RegionError` (the connection stays usable); an unreachable or
    silent shard raises ``ConnectionError``.
    """

    def __init__(
        self,
        addresses: dict[int, tuple[str, int]],
        *,
        timeout: float = 30.0,
        max_idle_per_shard: int = 4,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        self._timeout = timeout
        self._max_idle = max_idle_per_shard
        self.max_answer_bytes = max_answer_bytes
        self._pools = {s: ShardPool(s, tuple(a), timeout, max_idle_per_shard) for s, a in addresses.items()}
        self._lock = threading.Lock()
        self._next_id = 0
        self._closed = False

    def update_address(self, shard: int, address: tuple[str, int]) -> None:
        """Point ``shard`` at a new address (restarted on another port); idle
        connections to the old one are closed, busy ones when they come back."""
        with self._lock:
            pool = self._pools.get(shard)
            if pool is None:
                self._pools[shard] = ShardPool(shard, tuple(address), self._timeout, self._max_idle)
                return
        pool.move(tuple(address))

    def exchange(self, payloads: dict[int, list[Buffer]], request_id: int,
                 decode: Callable[[int, bytearray], T]) -> dict[int, T]:
        """Send each shard its payload, then read every answer and ``decode(shard,
        body)`` it. Raises the first failure (by shard) after every answer is
        collected, so no connection is left with an unread answer."""
        if self._closed:
            raise RuntimeError("the reader is closed")
        pools = {shard: self._pool(shard) for shard in payloads}
        sent: dict[int, PooledConnection] = {}
        retry: list[int] = []
        errors: dict[int, Exception] = {}
        for shard, payload in payloads.items():
            try:
                sent[shard] = self._send(pools[shard], payload)
            except _Retry:
                retry.append(shard)
            except ConnectionError as exc:
                errors[shard] = exc
        results: dict[int, T] = {}
        for shard, conn in sent.items():
            try:
                results[shard] = self._receive(pools[shard], conn, request_id, decode)
            except _Retry:
                retry.append(shard)
            except (ConnectionError, RegionError) as exc:
                errors[shard] = exc
        for shard in retry:
            try:
                conn = pools[shard].connect()
                send_buffers(conn.sock, payloads[shard])
                results[shard] = self._receive(pools[shard], conn, request_id, decode)
            except _Retry as exc:
                why = f"shard {shard}: connection broke again after reconnecting: {exc}"
                errors[shard] = ConnectionError(why)
            except OSError as exc:
                errors[shard] = self._connection_error(pools[shard], exc)
            except RegionError as exc:
                errors[shard] = exc
        if errors:
            raise errors[min(errors)]
        return {shard: results[shard] for shard in payloads}

    def close(self) -> None:
        """Close the idle connections; busy ones close when their exchange ends."""
        self._closed = True
        for pool in self._pools.values():
            pool.generation += 1
            pool.clear()

    def _request_id(self) -> int:
        with self._lock:
            self._next_id = (self._next_id + 1) & 0xFFFFFFFF
            return self._next_id

    def _pool(self, shard: int) -> ShardPool:
        pool = self._pools.get(shard)
        if pool is None:
            raise ValueError(f"no address for shard {shard} (known: {sorted(self._pools)})")
        return pool

    def _send(self, pool: ShardPool, payload: list[Buffer]) -> PooledConnection:
        conn = pool.acquire()
        try:
            send_buffers(conn.sock, payload)
        except OSError as exc:
            conn.sock.close()
            if conn.reused and not isinstance(exc, TimeoutError):
                raise _Retry(str(exc)) from exc
            raise self._connection_error(pool, exc) from exc
        return conn

    def _receive(self, pool: ShardPool, conn: PooledConnection, request_id: int,
                 decode: Callable[[int, bytearray], T]) -> T:
        try:
            body = self._read_answer(pool, conn, request_id)
        except RegionError:
            pool.release(conn)  # a whole error answer was read: the stream is in step
            raise
        except _Retry:
            conn.sock.close()
            if conn.reused:
                raise
            raise ConnectionError(f"shard {pool.shard}: connection closed before the answer") from None
        except OSError as exc:
            conn.sock.close()
            raise self._connection_error(pool, exc) from exc
        try:
            answer = decode(pool.shard, body)
        except (ValueError, struct.error) as exc:
            conn.sock.close()
            raise ConnectionError(f"shard {pool.shard}: malformed answer: {exc}") from exc
        pool.release(conn)
        return answer

    def _read_answer(self, pool: ShardPool, conn: PooledConnection, request_id: int) -> bytearray:
        """The body of an ok answer; an error answer raises RegionError. A closed
        or desynchronised stream raises _Retry (the caller decides if it may)."""
        try:
            header = recv_exactly(conn.sock, ANSWER_HEADER.size, eof_ok=True)
        except ConnectionResetError as exc:
            raise _Retry(str(exc)) from exc
        if header is None:
            raise _Retry("connection closed by the shard")
        magic, status, answer_id, body_len = ANSWER_HEADER.unpack(header)
        if magic != ANSWER_MAGIC or answer_id != request_id:
            raise _Retry(f"unexpected answer (magic {magic!r}, id {answer_id} for {request_id})")
        if body_len > self.max_answer_bytes + (1 << 20):
            why = f"answer of {body_len} bytes is over the {self.max_answer_bytes} byte limit"
            raise ConnectionError(f"shard {pool.shard}: {why}")
        body = recv_exactly(conn.sock, body_len) if body_len else bytearray()
        assert body is not None
        if status != STATUS_OK:
            raise RegionError(pool.shard, body.decode("utf-8", "replace"))
        return body

    @staticmethod
    def _connection_error(pool: ShardPool, exc: BaseException) -> ConnectionError:
        host, port = pool.address
        if isinstance(exc, ConnectionError) and str(exc).startswith(f"shard {pool.shard}"):
            return exc
        if isinstance(exc, TimeoutError):
            return ConnectionError(f"shard {pool.shard} at {host}:{port} did not answer in time ({exc})")
        return ConnectionError(f"shard {pool.shard} at {host}:{port}: {exc}")


class TcpRangeReader(TcpExchange):
    """Reads slices of shards' regions over persistent TCP connections
    (a gather is one exchange). Results are read-only arrays."""

    name = "tcp"

    def gather(self, requests: dict[int, list[Slices]]) -> dict[int, list[np.ndarray]]:
        """One request per shard, all sent before any answer is read."""
        request_id = self._request_id()
        payloads = {shard: encode_gather(slices, request_id) for shard, slices in requests.items()}
        return self.exchange(payloads, request_id,
                             lambda shard, body: decode_gather(body, len(requests[shard])))

    def regions(self, shard: int) -> list[RegionInfo]:
        """What ``shard`` publishes (names, dtypes, lengths)."""
        request_id = self._request_id()
        header = REQUEST_HEADER.pack(REQUEST_MAGIC, KIND_REGIONS, request_id, 0)
        return self.exchange({shard: [header]}, request_id, lambda _, body: unpack_regions(body))[shard]

    def __enter__(self) -> TcpRangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
