"""A response's head and its first body part leave in one write.

uvicorn's protocol writes a response's status line and headers as soon as
the application starts the response, and its body in a second write: two
system calls and, on a keep-alive connection, two segments for the client
to wake up on, for an answer of a few hundred bytes. :class:`HeadHolding`
stands for the connection's transport in one request's cycle: it keeps the
first write (the head) until the next one (the body, in the same turn of the
event loop when the whole answer is known) and writes both as one. Should no
second write come in that turn (a streamed answer whose first part is still
being computed, an event stream), the head leaves at the next turn of the
loop on its own, so no client waits for it.
"""

from __future__ import annotations

import asyncio
from typing import Any


class HeadHolding:
    """A cycle's view of the connection's ``transport``: the first write is
    held until the second, or until the loop's next turn."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        #: the first write, waiting; None once written
        self._held: bytes | None = None
        #: the first write was seen (later writes go straight through)
        self._holding_done = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def write(self, data: bytes) -> None:
        if not self._holding_done:
            self._holding_done = True
            self._held = bytes(data)
            self._loop.call_soon(self._flush)
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._transport.write(data)

    def _flush(self) -> None:
        """The held head, alone: no second write came in its turn."""
        if self._held is not None:
            held, self._held = self._held, None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self._flush()
        self._transport.close()
