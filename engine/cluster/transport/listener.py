"""The threaded TCP listener under both transports' servers.

The TCP region server answers reads on it and the RDMA region server runs its
queue-pair handshake on it; both need the same thing (a thread per
connection, a clean stop that wakes and joins every one), so it is written
once here.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable

log = logging.getLogger("rivulet.cluster")


class ThreadedListener:
    """A TCP listener with a thread per connection: ``handler(sock)`` serves one
    connection until it returns. Shared by the TCP server and the RDMA handshake;
    ``stop`` closes the listener and every open connection and joins the threads."""

    def __init__(self, host: str, port: int, handler: Callable[[socket.socket], None], label: str) -> None:
        self._host, self._port = host, port
        self._handler = handler
        self._label = label
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def start(self) -> tuple[str, int]:
        """Bind and start accepting; returns the bound address (port 0 picks one).
        SO_REUSEADDR lets a restarted shard bind the port it had before."""
        if self._sock is not None:
            return self.address
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self._host, self._port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        sock.settimeout(0.2)  # accept wakes up to notice stop()
        self._sock = sock
        self._stopping.clear()
        self._thread = threading.Thread(target=self._accept_loop, name=f"{self._label}-accept", daemon=True)
        self._thread.start()
        return self.address

    @property
    def address(self) -> tuple[str, int]:
        if self._sock is None:
            raise RuntimeError(f"{self._label} is not started")
        host, port = self._sock.getsockname()[:2]
        return host, port

    @property
    def open_connections(self) -> int:
        """Connections being served now."""
        with self._lock:
            return len(self._conns)

    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            name = f"{self._label}-conn"
            thread = threading.Thread(target=self._serve, args=(conn,), name=name, daemon=True)
            with self._lock:
                if self._stopping.is_set():
                    conn.close()
                    break
                self._conns.add(conn)
                self._threads.add(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._handler(conn)
        except OSError:
            pass  # the peer went away, or stop() shut the socket
        except Exception:  # noqa: BLE001 - one bad connection must not kill the server
            log.exception("%s: connection handler failed", self._label)
        finally:
            with self._lock:
                self._conns.discard(conn)
                self._threads.discard(threading.current_thread())
            conn.close()

    def stop(self) -> None:
        """Stop accepting, shut every open connection (waking its thread) and join."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout=5)
