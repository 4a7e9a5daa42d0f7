"""Connections spread evenly over the processes of ``--processes N``.

All the processes accept on one listening socket, and the kernel gives a
new connection to whichever process takes it first; the event loop then
accepts every connection waiting in one go. A process that was busy when a
few clients connected at once (a write to apply, a query to answer) leaves
them all to the other: measured with four keep-alive clients and a trickle
of writes, one process served all four while the other idled, at half the
throughput the two reach when the clients are split. Keep-alive clients
stay on the process they landed on, so the split decides the throughput for
as long as they stay.

So each process counts its open connections in a table the processes
share (:class:`ConnectionCounts`, shared memory made by the writer), and a
process that accepts a connection while another holds fewer hands the new
socket to the one with fewest, before reading a byte of it: the descriptor
goes over a Unix datagram socket (``SCM_RIGHTS``) that each process binds in
the writer's private directory, and the receiver serves it as if it had
accepted it (:meth:`ConnectionBalance.receive`). The receiver is counted
when the hand-off is decided, so that two processes deciding at once do not
pick the same one twice. A hand-off that cannot be made (the receiver not
started yet, restarting, or stopping) leaves the connection where it is.
"""

from __future__ import annotations

import array
import asyncio
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("rivulet.endpoint")

#: a process that no longer takes connections (stopping) counts as this many
CLOSED = 1 << 40


class ConnectionCounts:
    """Open connections per process, in memory shared by the processes
    (``multiprocessing`` shared array of int64, index 0 the writer)."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared

    def __len__(self) -> int:
        return len(self.shared)

    def least(self, other_than: int) -> tuple[int, int]:
        """(process, its count) of the process with fewest connections, ``other_than`` left out."""
        counts = self.shared[:]
        best = min((count, k) for k, count in enumerate(counts) if k != other_than)
        return best[1], best[0]

    def add(self, index: int, change: int) -> None:
        # one process changes an entry at a time per decision; a lost update only skews the spread
        self.shared[index] += change

    def set(self, index: int, value: int) -> None:
        self.shared[index] = value

    def get(self, index: int) -> int:
        return self.shared[index]


def handoff_path(directory: str | Path, index: int) -> str:
    """Where process ``index`` receives the connections handed to it."""
    return str(Path(directory) / f"handoff-{index}.sock")


class ConnectionBalance:
    """One process's part: its index, the shared counts, its hand-off socket."""

    def __init__(self, counts: ConnectionCounts, index: int, directory: str | Path) -> None:
        self.counts = counts
        self.index = index
        self.directory = str(directory)
        self._inbox: socket.socket | None = None
        #: the loop watching the inbox (see receive)
        self._loop: asyncio.AbstractEventLoop | None = None

    def open(self) -> None:
        """Bind this process's hand-off socket (connections sent to it wait
        there until :meth:`receive`)."""
        path = handoff_path(self.directory, self.index)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        inbox.bind(path)
        inbox.setblocking(False)
        self._inbox = inbox

    def close(self) -> None:
        """Take no more connections from the others (the process is stopping)."""
        self.counts.set(self.index, CLOSED)
        if self._inbox is not None:
            if self._loop is not None:
                self._loop.remove_reader(self._inbox.fileno())
            self._inbox.close()
            self._inbox = None

    @staticmethod
    def spreads(transport: asyncio.Transport) -> bool:
        """Is this a client's connection (TCP)? Not the writer's private
        socket: what readers forward there is the writer's to answer."""
        sock = transport.get_extra_info("socket")
        return sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6)

    def opened(self) -> None:
        self.counts.add(self.index, 1)

    def closed(self) -> None:
        self.counts.add(self.index, -1)

    def hand_off(self, transport: asyncio.Transport) -> bool:
        """Send the client connection of ``transport`` (accepted here,
        nothing read yet; :meth:`spreads`) to the process with fewest
        connections if it has fewer than this one; True if sent (the caller
        then closes its own end)."""
        target, theirs = self.counts.least(self.index)
        if theirs >= self.counts.get(self.index):
            return False
        sock = transport.get_extra_info("socket")
        self.counts.add(target, 1)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
                sender.setblocking(False)
                sender.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                         array.array("i", [sock.fileno()]))],
                               0, handoff_path(self.directory, target))
        except OSError:  # not listening (starting, restarting, stopping) or its queue full
            self.counts.add(target, -1)
            return False
        return True

    def receive(self, loop: asyncio.AbstractEventLoop, serve: Callable[[socket.socket], Any]) -> None:
        """Serve each connection handed to this process with ``serve``
        (a coroutine function taking the socket), from now on; until now
        the process counted as full, and it counts from zero (a restarted
        reader's old connections ended with it)."""
        inbox = self._inbox
        if inbox is None:
            return
        self._loop = loop
        self.counts.set(self.index, 0)

        def arrived() -> None:
            while True:
                try:
                    _, ancillary, _, _ = inbox.recvmsg(1, socket.CMSG_SPACE(array.array("i").itemsize))
                except (BlockingIOError, InterruptedError):
                    return
                except OSError:
                    return  # closed while stopping
                for level, kind, data in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        for fd in array.array("i", data[: len(data) - len(data) % 4]):
                            connection = socket.socket(fileno=fd)
                            loop.create_task(self._served(serve, connection))

        loop.add_reader(inbox.fileno(), arrived)

    async def _served(self, serve: Callable[[socket.socket], Any], connection: socket.socket) -> None:
        try:
            await serve(connection)
        except Exception:  # the client may be gone already: nothing to answer
            log.debug("a connection handed to this process could not be served", exc_info=True)
            connection.close()
            self.closed()  # counted here by the process that handed it
