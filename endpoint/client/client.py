"""``Client``: Rivulet's HTTP API from Python, for what SPARQL clients do not cover.

Streams (declare, describe, drop, post items, batched writing), continuous
queries (register, describe, unregister) and their windows over
Server-Sent Events, resumed after a dropped connection. It speaks the HTTP
API of docs/http-api.md over httpx and imports nothing of the server, so it
runs in any Python program.

    with Client("http://127.0.0.1:8000") as rivulet:
        rivulet.declare_stream("gauges", timing=["http://example.org/rivers/levelCm"])
        handle = rivulet.register(REGISTRATION)
        for window in handle.windows():
            print(window.sequence, window.rows)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from urllib.parse import quote

import httpx

from endpoint.client.errors import RivuletError
from endpoint.client.terms import Triple, ntriples_lines
from endpoint.client.windows import DEFAULT_RECONNECT, Reconnect, Window, read_windows
from endpoint.client.writer import StreamWriter, item_lines, timestamp_ms

SPARQL_JSON = "application/sparql-results+json"


class QueryHandle:
    """A registered continuous query: its ``name``, the ``description`` the
    server gave when it was registered, and shortcuts to its windows."""

    def __init__(self, client: Client, description: dict) -> None:
        self.client = client
        self.description = description
        self.name: str = description["name"]

    def windows(self, after: int | None = None, reconnect: Reconnect = DEFAULT_RECONNECT) -> Iterator[Window]:
        """See :meth:`Client.windows`."""
        return self.client.windows(self.name, after, reconnect)

    def describe(self) -> dict:
        return self.client.describe_query(self.name)

    def unregister(self) -> None:
        self.client.unregister(self.name)

    def __repr__(self) -> str:
        return f"QueryHandle({self.name!r})"


class Client:
    """A connection pool to one Rivulet server; a context manager that closes it.

    ``token`` is the server's ``--update-token`` (sent as a bearer token);
    ``timeout`` bounds each request in seconds (an event stream's reads have
    their own bound, :class:`~endpoint.client.windows.Reconnect`). Every
    error answer raises :class:`~endpoint.client.errors.RivuletError`."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # ---------------------------------------------------------------- requests
    def request(self, method: str, path: str, *, check: bool = True, **kwargs) -> httpx.Response:
        """One request; a RivuletError for no answer, and (with ``check``) for an error answer."""
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise RivuletError.unreachable(_request_of(exc), exc) from exc
        if check and response.status_code >= 400:
            raise RivuletError.from_response(response)
        return response

    @staticmethod
    def stream_path(name: str) -> str:
        return f"/streams/{quote(name, safe='')}"

    @staticmethod
    def query_path(name: str) -> str:
        return f"/queries/{quote(name, safe='')}"

    # ------------------------------------------------------------------ SPARQL
    def query(self, text: str) -> dict:
        """A SPARQL query's SPARQL JSON results (SELECT and ASK)."""
        return self.request("POST", "/sparql", content=text.encode("utf-8"), headers={
            "Content-Type": "application/sparql-query", "Accept": SPARQL_JSON}).json()

    def update(self, text: str) -> None:
        """A SPARQL update, applied atomically."""
        self.request("POST", "/sparql", content=text.encode("utf-8"),
                     headers={"Content-Type": "application/sparql-update"})

    # ----------------------------------------------------------------- streams
    def declare_stream(self, name: str, iri: str | None = None, timing: Iterable[str] | None = None,
                       timeless: Iterable[str] | None = None, graph: str | None = None,
                       idle: str | None = None, idle_lag_ms: int | None = None) -> dict:
        """Declare (or re-declare) a stream; the server's description of it.
        Fields left None take the server's defaults (docs/http-api.md)."""
        spec: dict[str, object] = {}
        for key, value in (("iri", iri), ("graph", graph), ("idle", idle), ("idle_lag_ms", idle_lag_ms)):
            if value is not None:
                spec[key] = value
        for key, values in (("timing", timing), ("timeless", timeless)):
            if values is not None:
                spec[key] = list(values)
        return self.request("PUT", self.stream_path(name), json=spec).json()

    def streams(self) -> list[dict]:
        """Every declared stream, with its watermark and counters."""
        return self.request("GET", "/streams").json()["streams"]

    def describe_stream(self, name: str) -> dict:
        return self.request("GET", self.stream_path(name)).json()

    def drop_stream(self, name: str) -> None:
        """Drop a stream: what it absorbed stays in its stored graph. The
        server refuses (409) while a registered query reads it or writes
        into it: unregister those first."""
        self.request("DELETE", self.stream_path(name))

    def post_item(self, name: str, data: Iterable[Triple] | str | bytes,
                  timestamp: int | datetime | None = None,
                  content_type: str = "application/n-triples") -> dict:
        """One item: triples, or a document in ``content_type`` (N-Triples,
        Turtle, JSON-LD, RDF/XML); at ``timestamp`` (ms or a datetime), the
        arrival time when None. The server's summary (watermark, windows fired)."""
        if isinstance(data, str | bytes):
            body = data.encode("utf-8") if isinstance(data, str) else data
        else:
            body = "".join(f"{line}\n" for line in ntriples_lines(data)).encode("utf-8")
            content_type = "application/n-triples"
        headers = {"Content-Type": content_type}
        if timestamp is not None:
            headers["X-Timestamp"] = str(timestamp_ms(timestamp))
        return self.request("POST", self.stream_path(name), content=body, headers=headers).json()

    def heartbeat(self, name: str, timestamp: int | datetime) -> dict:
        """Move the stream's watermark to ``timestamp`` without an item (closes due windows)."""
        return self.request("POST", self.stream_path(name), content=b"",
                            headers={"X-Timestamp": str(timestamp_ms(timestamp))}).json()

    def post_batch(self, name: str, items: Iterable[tuple[int | datetime, Iterable[Triple] | str]]) -> dict:
        """Many ``(timestamp, triples)`` items in one request, in time order;
        all or none of them are ingested."""
        lines = [line for stamp, data in items for line in item_lines(data, timestamp_ms(stamp))]
        return self.request("POST", self.stream_path(name), content=("\n".join(lines) + "\n").encode(),
                            headers={"Content-Type": "application/x-timestamped-ntriples"}).json()

    def stream_writer(self, name: str, batch_size: int = 1000, max_pending: int = 4,
                      max_pending_bytes: int = 16 << 20, retries: int = 5) -> StreamWriter:
        """A batched writer to stream ``name`` (:class:`~endpoint.client.writer.StreamWriter`)."""
        return StreamWriter(self, name, batch_size, max_pending, max_pending_bytes, retries)

    # ------------------------------------------------------- continuous queries
    def register(self, text: str) -> QueryHandle:
        """Register a C-SPARQL or RSP-QL query (``REGISTER ...``)."""
        response = self.request("POST", "/queries", content=text.encode("utf-8"),
                                headers={"Content-Type": "application/sparql-query"})
        return QueryHandle(self, response.json())

    def unregister(self, name: str) -> None:
        """Unregister a query; its event streams end."""
        self.request("DELETE", self.query_path(name))

    def queries(self) -> list[dict]:
        return self.request("GET", "/queries").json()["queries"]

    def describe_query(self, name: str) -> dict:
        return self.request("GET", self.query_path(name)).json()

    def windows(self, name: str, after: int | None = None,
                reconnect: Reconnect = DEFAULT_RECONNECT) -> Iterator[Window]:
        """Query ``name``'s windows, in sequence order, as they are reported:
        those after sequence ``after`` that the server still retains (its
        last 1000), or with None those reported from now on. A dropped
        connection is resumed after the last window yielded, so none is lost
        or repeated; the iteration ends when the query is unregistered.
        Raises at once if the query does not exist."""
        if after is None:
            after = int(self.describe_query(name)["windows_reported"])
        else:
            self.describe_query(name)
        return read_windows(self.http, name, after, reconnect)


def _request_of(exc: httpx.TransportError) -> httpx.Request | None:
    try:
        return exc.request
    except RuntimeError:  # raised before a request was made
        return None
