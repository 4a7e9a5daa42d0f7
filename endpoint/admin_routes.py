"""``POST /admin/checkpoint``: an operator asks for a checkpoint now.

A checkpoint is otherwise taken in the background once the log passes
``--checkpoint-mb``; before a backup, a planned restart (which then replays
nothing) or a large delete, an operator may want one at once. The request is
a write (guarded like one: refused 403 on a read-only server, 401 without
the ``--update-token``), runs the checkpoint in a thread of its own (queries
and writes go on; a background checkpoint running meanwhile is waited for)
and answers once the checkpoint is recorded: its LSN, its triples, the
seconds it took, and whether it was new (``taken`` false: nothing was
logged since the last one, which it names). A server without
``--data-dir`` has nothing to checkpoint: 409.
"""

from __future__ import annotations

import logging

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from endpoint.asgi_requests import require_write
from endpoint.problems import ProtocolError
from endpoint.settings import Settings
from engine.stream import StreamEngine

log = logging.getLogger("rivulet.endpoint")


class AdminRoutes:
    """The operator's requests; the data directory is the stream engine's journal."""

    def __init__(self, streams: StreamEngine, settings: Settings) -> None:
        self.streams = streams
        self.settings = settings

    def routes(self) -> list[Route]:
        return [Route("/admin/checkpoint", self.checkpoint, methods=["POST"])]

    async def checkpoint(self, request: Request) -> Response:
        require_write(request, self.settings)
        directory = self._data_directory()
        try:
            report = await anyio.to_thread.run_sync(directory.take_checkpoint)
        except Exception as exc:
            log.exception("requested checkpoint failed")
            raise ProtocolError(500, f"the checkpoint failed ({exc}); the log still holds every write") \
                from exc
        return JSONResponse({"lsn": report.lsn, "triples": report.triples,
                             "seconds": round(report.seconds, 3), "taken": report.taken})

    def _data_directory(self):
        journal = self.streams.journal
        if journal is not None:
            # imported here: only a server with a data directory has loaded the durability layer
            from engine.durability import DataDirectory

            if isinstance(journal, DataDirectory):
                return journal
        raise ProtocolError(409, "this server keeps no data directory (start it with --data-dir): "
                                 "there is nothing to checkpoint")
