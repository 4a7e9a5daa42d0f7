"""A query over its time limit, or whose client goes away, is cancelled and
frees its worker: the server, given a single worker thread, answers the
next query at once instead of after the abandoned one."""

import logging
import time

import httpx
import pytest

from engine.api import Store
from engine.rdf import IRI, Literal

# Every one of the N rows runs an EXISTS that scans all N rows with a string
# comparison: about a minute of work, checked for cancellation before each EXISTS.
SLOW = ("SELECT (COUNT(*) AS ?n) { ?a ?p ?b "
        "FILTER NOT EXISTS { ?c ?q ?d FILTER(STR(?d) = CONCAT(STR(?b), 'x')) } }")
QUICK = "ASK { ?s ?p ?o }"


@pytest.fixture
def big_store() -> Store:
    store = Store()
    store.add((IRI(f"http://example.org/s{i}"), IRI("http://example.org/p"), Literal(str(i)))
              for i in range(5000))
    return store


def ask(url: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.post(url, data={"query": QUICK}, timeout=10)
    return response, time.monotonic() - started


def test_query_over_the_time_limit_is_answered_503_and_frees_its_worker(serve, big_store, caplog):
    url = serve(big_store, query_timeout=0.5, workers=1) + "/sparql"
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="rivulet.endpoint"):
        response = httpx.post(url, data={"query": SLOW}, timeout=30)
    assert response.status_code == 503
    assert "time limit of 0.5 s" in response.text
    assert time.monotonic() - started < 5
    assert any("over the 0.5 s time limit" in r.getMessage() for r in caplog.records)

    answer, elapsed = ask(url)
    assert answer.status_code == 200 and answer.json()["boolean"] is True
    assert elapsed < 10.0  # the abandoned query would hold the only worker for a minute


def test_query_of_a_client_that_disconnects_is_cancelled_and_frees_its_worker(serve, big_store, caplog):
    url = serve(big_store, query_timeout=600, workers=1) + "/sparql"
    with caplog.at_level(logging.WARNING, logger="rivulet.endpoint"):
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(url, data={"query": SLOW}, timeout=0.5)
        answer, elapsed = ask(url)
    assert answer.status_code == 200 and answer.json()["boolean"] is True
    assert elapsed < 10.0
    assert any("client disconnected" in r.getMessage() for r in caplog.records)
