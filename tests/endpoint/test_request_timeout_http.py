"""``timeout=`` per request, on a real server: the smaller of it and the
server's limit stops the work (the worker is free for the next request),
the 503 names the limit, and anything but a number of seconds above 0 is a
400 that runs nothing, on the short path of small queries as on the whole one."""

from __future__ import annotations

import logging
import random
import re
import time

import httpx
import pytest

from engine.api import Store
from engine.rdf import IRI, Literal
from tests.endpoint.test_http_cancellation import QUICK, SLOW

#: the worst a busy 2-core machine takes to notice a limit and answer
SLACK = 4.0


def slow_store() -> Store:
    """5,000 triples: SLOW takes about a minute over them."""
    store = Store()
    store.add((IRI(f"http://example.org/s{i}"), IRI("http://example.org/p"), Literal(str(i)))
              for i in range(5000))
    return store


@pytest.fixture
def big_store() -> Store:
    return slow_store()


def test_a_request_timeout_below_the_servers_stops_the_query_at_it(serve, big_store, caplog):
    url = serve(big_store, query_timeout=60, workers=1) + "/sparql"
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="rivulet.endpoint"):
        response = httpx.get(url, params={"query": SLOW, "timeout": "0.3"}, timeout=30)
    elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert "the request's time limit of 0.3 s" in response.text and "server's 60 s" in response.text
    assert elapsed < 0.3 + SLACK
    assert any("over the 0.3 s time limit" in r.getMessage() for r in caplog.records)
    # the only worker is free again: the stopped query no longer holds it
    quick = httpx.post(url, data={"query": QUICK}, timeout=10)
    assert quick.status_code == 200 and quick.json()["boolean"] is True
    metrics = httpx.get(url.replace("/sparql", "/metrics"), timeout=10).text
    assert 'rivulet_query_cancellations_total{reason="time_limit"} 1' in metrics


def test_a_request_timeout_above_the_servers_is_capped_by_it(serve, big_store):
    url = serve(big_store, query_timeout=0.4, workers=1) + "/sparql"
    started = time.monotonic()
    response = httpx.post(url, data={"query": SLOW, "timeout": "3600"}, timeout=30)
    assert response.status_code == 503
    assert "time limit of 0.4 s" in response.text
    assert time.monotonic() - started < 0.4 + SLACK


def test_a_query_within_its_timeout_is_answered(demo):
    fields = {"query": "SELECT * { ?s ?p ?o } LIMIT 3", "timeout": "5"}
    for _ in range(3):  # the third run of a small query would take the short path without one
        for response in (httpx.get(demo + "/sparql", params=fields, timeout=10),
                         httpx.post(demo + "/sparql", data=fields, timeout=10)):
            assert response.status_code == 200, response.text
            assert len(response.json()["results"]["bindings"]) == 3


def test_an_update_over_its_timeout_changes_nothing(serve, big_store):
    url = serve(big_store, query_timeout=60) + "/sparql"
    before = len(big_store)
    slow_update = ("INSERT { ?a <http://example.org/q> ?b } WHERE { ?a ?p ?b "
                   "FILTER NOT EXISTS { ?c ?q ?d FILTER(STR(?d) = CONCAT(STR(?b), 'x')) } }")
    started = time.monotonic()
    response = httpx.post(url, data={"update": slow_update, "timeout": "0.3"}, timeout=30)
    assert response.status_code == 503, response.text
    assert "update cancelled" in response.text and "time limit of 0.3 s" in response.text
    assert "nothing was changed" in response.text
    assert time.monotonic() - started < 0.3 + SLACK
    assert len(big_store) == before


def bad_timeouts(count: int) -> list[str]:
    """Values that are not a plain number of seconds above 0: signs, exponents,
    words, other scripts' digits, spaces inside, zero, huge digit runs, and
    random bytes of those kinds."""
    fixed = ["", "0", "0.0", "-1", "+1", "1e3", "inf", "nan", "abc", "1,5", "1 5", "١", "²", "0x10",
             "1..2", ".", "9" * 40, "1/2", "\u00a01", "true"]
    rng = random.Random(29)
    alphabet = "0123456789.-+eE ,_xn٣²"
    generated = []
    while len(generated) < count:
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        # the documented grammar: digits, optionally a point and digits, above 0
        plain = re.fullmatch(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+", text) and float(text) > 0
        if not plain:
            generated.append(text)
    return fixed + generated


def test_a_bad_timeout_is_a_400_naming_it_and_runs_nothing(demo):
    for value in bad_timeouts(60):
        fields = {"query": "ASK {}", "timeout": value}
        for response in (httpx.get(demo + "/sparql", params=fields, timeout=10),
                         httpx.post(demo + "/sparql", data=fields, timeout=10)):
            assert response.status_code == 400, (value, response.text)
            assert "'timeout' must be a number of seconds above 0" in response.text
    response = httpx.post(demo + "/sparql", data={"update": "INSERT DATA { <a:x> <a:y> <a:z> }",
                                                  "timeout": "soon"}, timeout=10)
    assert response.status_code == 400 and "'timeout'" in response.text
    assert httpx.get(demo + "/sparql", params={"query": "ASK { <a:x> <a:y> <a:z> }"},
                     timeout=10).json()["boolean"] is False
    twice = httpx.get(demo + "/sparql?query=ASK%7B%7D&timeout=1&timeout=2", timeout=10)
    assert twice.status_code == 400 and "2 'timeout' parameters" in twice.text
