"""The URLs the server names itself by: IRIs of graphs and streams it
creates, ``Location`` headers, the base IRI of queries and updates.

They must not come from the request's ``Host`` header: any client can send
``Host: evil.example``, and the name would end up in stored data and in
answers to other clients. An operator behind a proxy gives the public base
(``--base-url https://data.example.org/rivulet``); without one the server
uses the address the client connected to.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request

from endpoint.settings import Settings


def public_url(request: Request, settings: Settings, path: str | None = None) -> str:
    """The URL of ``path`` (default: the request's path) on this server,
    without query string or fragment."""
    url = request.url.replace(query="", fragment="")
    if path is not None:
        url = url.replace(path=path)
    if settings.base_url:
        base = urlsplit(settings.base_url)
        return str(url.replace(scheme=base.scheme, netloc=base.netloc, path=base.path.rstrip("/") + url.path))
    server = request.scope.get("server")
    if not server:
        return str(url)
    host, port = server[0], server[1]
    host = f"[{host}]" if ":" in host else host
    return str(url.replace(netloc=f"{host}:{port}"))
