"""SERVICE: evaluate part of a query at a remote SPARQL endpoint over HTTP.

The operator hands the node to the query's service client (an
:class:`ServiceClient` in production, anything with its call shape in
tests); ``SERVICE ?endpoint`` calls every endpoint the solutions on its left
bind, each once.
"""

from __future__ import annotations

from dataclasses import replace

import httpx
import numpy as np

from engine.rdf import IRI
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.outbound import (
    DEPTH_HEADER,
    OutboundPolicy,
    OutboundRefused,
    outgoing_depth,
    remote_failure,
)
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions, concat
from engine.sparql.expr import ExprError
from engine.sparql.results import read_select

ACCEPT = "application/sparql-results+json, application/sparql-results+xml;q=0.9"


class ServiceError(Exception):
    """The remote endpoint failed or answered something unusable."""

    status = 502


class ServiceRefused(ServiceError):
    """The server's outbound policy does not allow the call."""

    status = 403


class ServiceClient:
    """Sends a SERVICE block's query to its endpoint and returns the solutions.

    ``endpoints`` maps a SERVICE IRI to the URL actually called (SERVICE
    aliases); IRIs not in it are called as written.
    """

    def __init__(self, timeout: float = 30.0, endpoints: dict[str, str] | None = None) -> None:
        self.timeout = timeout
        self.endpoints = dict(endpoints or {})
        #: what may be called (aliased endpoints are the operator's choice: only
        #: SERVICE being on and the nesting depth are checked for them)
        self.policy = OutboundPolicy()

    def __call__(self, node: A.Service, terms: QueryTerms) -> Solutions:
        if not isinstance(node.endpoint, IRI):
            if node.silent:
                return Solutions.unit()
            raise ServiceError("SERVICE with a variable endpoint is not supported")
        try:
            url = self.endpoints.get(node.endpoint.value)
            if url is None:
                url = node.endpoint.value
                self.policy.check_service(url)
            else:
                replace(self.policy, private=True).check_service(url)
            return self._fetch(url, node.query_text, terms)
        except OutboundRefused as exc:
            if node.silent:
                return Solutions.unit()
            raise ServiceRefused(f"SERVICE <{node.endpoint.value}> refused by policy: {exc}") from exc
        except (httpx.HTTPError, ValueError) as exc:
            if node.silent:
                return Solutions.unit()
            raise ServiceError(f"SERVICE <{node.endpoint.value}>: {remote_failure(exc)}") from exc

    def _fetch(self, endpoint: str, query: str, terms: QueryTerms) -> Solutions:
        headers = {"Accept": ACCEPT, DEPTH_HEADER: str(outgoing_depth())}
        response = httpx.post(endpoint, data={"query": query}, headers=headers, timeout=self.timeout)
        if response.status_code != 200:
            raise httpx.HTTPStatusError(f"HTTP {response.status_code}", request=response.request,
                                        response=response)
        media = response.headers.get("content-type", "").split(";")[0].strip()
        fmt = "xml" if "xml" in media else "json"
        parsed = read_select(fmt, response.content)
        if isinstance(parsed, bool):
            return Solutions.unit() if parsed else Solutions.empty()
        variables, rows = parsed
        columns = {
            v: terms.encode_column([row[i] for row in rows]) if rows else np.zeros(0, dtype=np.int64)
            for i, v in enumerate(variables)
        }
        return Solutions(columns, len(rows))


def service(node: A.Service, cx: ExecutionContext) -> Solutions:
    """The SERVICE operator: the remote solutions of the node's pattern."""
    if cx.service_client is None:
        raise ExprError("SERVICE is not available in this context")
    return cx.service_client(node, cx.terms)


def services_of(node: A.Service, left: Solutions, cx: ExecutionContext) -> Solutions:
    """``SERVICE ?endpoint``: call each endpoint IRI the rows so far bind
    (SPARQL 1.1 Federated Query leaves an unbound endpoint an error)."""
    var = node.endpoint.name
    endpoints = np.unique(left.column(var))
    parts = []
    decoded = cx.terms.decode_column(endpoints)
    for endpoint_id, endpoint in zip(endpoints.tolist(), decoded, strict=True):
        if not isinstance(endpoint, IRI):
            if node.silent:
                continue
            raise ExprError(f"SERVICE ?{var}: the endpoint is {endpoint!r}, not an IRI")
        part = service(A.Service(endpoint, node.pattern, node.silent, node.query_text), cx)
        parts.append(part.with_column(var, np.full(part.length, endpoint_id, dtype=np.int64)))
    return concat(parts) if parts else Solutions.empty([var])
