"""The TCP reader's idle connections to each shard.

Kept out of the reader so that its one subtle rule is read in one place: a
connection belongs to the shard address it was opened for (its
*generation*), so after a shard moves (``move``) a connection to the old
address is closed when it comes back instead of being reused.
"""

from __future__ import annotations

import queue
import socket
import threading
from dataclasses import dataclass


@dataclass
class PooledConnection:
    """A socket to one shard. ``reused`` says it sat idle in the pool first, so
    a failure on it may only mean the shard restarted: worth one retry."""

    sock: socket.socket
    generation: int  # the pool's address generation it was opened for
    reused: bool = False


class ShardPool:
    """Idle connections to one shard. A gather checks one out, so concurrent
    gathers never share a socket; at most ``max_idle`` are kept."""

    def __init__(self, shard: int, address: tuple[str, int], timeout: float, max_idle: int) -> None:
        self.shard = shard
        self.address = address
        self.generation = 0
        self._timeout = timeout
        self._idle: queue.LifoQueue[PooledConnection] = queue.LifoQueue()
        self._max_idle = max_idle
        self._lock = threading.Lock()

    def acquire(self) -> PooledConnection:
        """An idle connection to the current address, else a new one."""
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return self.connect()
            if conn.generation == self.generation:
                conn.reused = True
                return conn
            conn.sock.close()

    def connect(self) -> PooledConnection:
        """A new connection; ``ConnectionError`` if the shard is unreachable."""
        with self._lock:
            address, generation = self.address, self.generation
        try:
            sock = socket.create_connection(address, timeout=self._timeout)
        except OSError as exc:
            why = f"shard {self.shard} at {address[0]}:{address[1]} is unreachable: {exc}"
            raise ConnectionError(why) from exc
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(self._timeout)
        return PooledConnection(sock, generation)

    def release(self, conn: PooledConnection) -> None:
        """Give back a connection whose stream is in step (closed if stale or surplus)."""
        if conn.generation != self.generation or self._idle.qsize() >= self._max_idle:
            conn.sock.close()
        else:
            self._idle.put(conn)

    def move(self, address: tuple[str, int]) -> None:
        """Point at a new address; connections to the old one are closed."""
        with self._lock:
            self.address = address
            self.generation += 1
        self.clear()

    def clear(self) -> None:
        """Close the idle connections."""
        while True:
            try:
                self._idle.get_nowait().sock.close()
            except queue.Empty:
                return
