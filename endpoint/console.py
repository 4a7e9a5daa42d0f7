"""The browser query console: ``/`` is ``static/index.html``, ``/static/...`` its assets.

The console is plain HTML, CSS and ES modules served as they are (no build
step), so these routes only hand out files; everything the page does goes
through the public HTTP API like any other client.

The files live in the checkout's top-level ``static/``, where they are
edited; a wheel installs the same folder as ``endpoint/static`` (the
``package-dir`` mapping in pyproject.toml). :func:`static_directory` looks
for the installed copy first: a checkout never has ``endpoint/static``,
while an installation has no checkout around it.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles


def static_directory() -> Path:
    """The console's files: installed beside this module, else the checkout's ``static/``."""
    package = Path(__file__).resolve().parent
    installed = package / "static"
    return installed if installed.is_dir() else package.parent / "static"


STATIC = static_directory()

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
