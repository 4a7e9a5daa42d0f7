"""SERVICE: evaluate part of a query at a remote SPARQL endpoint over HTTP."""

from __future__ import annotations

import httpx
import numpy as np

from engine.sparql import algebra as A
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.results.dispatch import read_select

ACCEPT = "application/sparql-results+json, application/sparql-results+xml;q=0.9"


class ServiceError(Exception):
    """The remote endpoint failed or answered something unusable."""


class ServiceClient:
    """Sends a SERVICE block's query to its endpoint and returns the solutions.

    ``endpoints`` maps a SERVICE IRI to the URL actually called (SERVICE
    aliases); IRIs not in it are called as written.
    """

    def __init__(self, timeout: float = 30.0, endpoints: dict[str, str] | None = None) -> None:
        self.timeout = timeout
        self.endpoints = dict(endpoints or {})

    def __call__(self, node: A.Service, terms: QueryTerms) -> Solutions:
        if not isinstance(node.endpoint, A.IRI):
            if node.silent:
                return Solutions.unit()
            raise ServiceError("SERVICE with a variable endpoint is not supported")
        try:
            url = self.endpoints.get(node.endpoint.value, node.endpoint.value)
            return self._fetch(url, node.query_text, terms)
        except (httpx.HTTPError, ServiceError, ValueError) as exc:
            if node.silent:
                return Solutions.unit()
            raise ServiceError(f"SERVICE <{node.endpoint.value}> failed: {exc}") from exc

    def _fetch(self, endpoint: str, query: str, terms: QueryTerms) -> Solutions:
        response = httpx.post(
            endpoint, data={"query": query}, headers={"Accept": ACCEPT}, timeout=self.timeout
        )
        if response.status_code != 200:
            raise ServiceError(f"HTTP {response.status_code}")
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
