"""The browser query console: ``/`` is ``static/index.html``, ``/static/...`` its assets.

The console is plain HTML, CSS and ES modules served as they are in the
checkout (no build step), so these routes only hand out files; everything
the page does goes through the public HTTP API like any other client.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parents[1] / "static"

#: browsers revalidate (cheaply, by ETag) instead of guessing a lifetime, so an
#: edited module is never mixed with stale cached ones after an upgrade
REVALIDATE = {"Cache-Control": "no-cache"}


class _RevalidatedFiles(StaticFiles):
    def file_response(self, *args, **kwargs) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(REVALIDATE)
        return response


def console_routes(directory: Path = STATIC) -> list[BaseRoute]:
    """The page at ``/`` and its assets under ``/static``."""

    async def index(request: Request) -> Response:
        return FileResponse(directory / "index.html", headers=REVALIDATE)

    return [
        Route("/", index, methods=["GET", "HEAD"]),
        Mount("/static", app=_RevalidatedFiles(directory=directory), name="static"),
    ]
