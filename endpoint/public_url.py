"""The URLs the server names itself by: IRIs of graphs and streams it
creates, ``Location`` headers, the base IRI of queries and updates.

They must not come from the request's ``Host`` header: any client can send
``Host: evil.example``, and the name would end up in stored data and in
answers to other clients. An operator behind a proxy gives the public base
(``--base-url https://data.example.org/rivulet``); without one the server
uses the address the client connected to.

:func:`server_url` is the rule, for any web framework; :func:`public_url`
applies it to a Starlette request.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request

from endpoint.settings import Settings


def server_url(settings: Settings, scheme: str, server: tuple[str, int] | None, path: str,
               connected_to: str) -> str:
    """The URL of ``path`` on this server: under ``--base-url`` when one is
    set, else at the ``server`` address the client connected to (host,
    port); ``connected_to`` (``scheme://netloc``) is used when the server
    does not know its address."""
    if settings.base_url:
        base = urlsplit(settings.base_url)
        return f"{base.scheme}://{base.netloc}{base.path.rstrip('/')}{path}"
    if not server:
        return connected_to + path
    host, port = server[0], server[1]
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}{path}"


def public_url(request: Request, settings: Settings, path: str | None = None) -> str:
    """The URL of ``path`` (default: the request's path) on this server,
    without query string or fragment."""
    url = request.url
    return server_url(settings, url.scheme, request.scope.get("server"), url.path if path is None else path,
                      f"{url.scheme}://{url.netloc}")
