"""Over HTTP, a query that differs from one seen before only in a constant
is not parsed again and, when small and fast, is answered on the event loop,
by GET and by POST (a form or a query body) alike, under the same limits."""

from __future__ import annotations

import time

import httpx
import pytest

from endpoint.workers import Workers
from engine.api import Store
from engine.rdf import IRI, Literal

EX = "http://example.org/"
NAME = "SELECT ?n WHERE {{ <http://example.org/u{0}> <http://example.org/name> ?n }}"
#: one row per stored triple of the predicate, each running an EXISTS over all of them: slow for
#: <p>, at once for a predicate nothing has
SCAN = ("SELECT (COUNT(*) AS ?n) {{ ?a <http://example.org/{0}> ?b "
        "FILTER NOT EXISTS {{ ?c ?q ?d FILTER(STR(?d) = CONCAT(STR(?b), 'x')) }} }}")
JSON = {"Accept": "application/sparql-results+json"}


@pytest.fixture
def people() -> Store:
    store = Store()
    store.add((IRI(f"{EX}u{i}"), IRI(EX + "name"), Literal(f"n{i}")) for i in range(200))
    return store


@pytest.fixture
def counted(monkeypatch, people):
    """Counts of parses (a shape not cached) and of runs in a worker thread.
    A run on a busy machine may take longer than the inline budget, which
    sends the next one to a thread: the budget is raised here so that the
    count says which path was taken, not how busy the machine was."""
    monkeypatch.setattr("endpoint.workers.INLINE_BUDGET", 0.05)
    counts = {"parses": 0, "threads": 0}
    prepare = people.prepare_shape

    def counting_prepare(*args):
        counts["parses"] += 1
        return prepare(*args)

    thread = Workers.query

    async def counting_query(self, request, fn, *time_limit):
        counts["threads"] += 1
        return await thread(self, request, fn, *time_limit)

    monkeypatch.setattr(people, "prepare_shape", counting_prepare)
    monkeypatch.setattr(Workers, "query", counting_query)
    return counts


def send(client: httpx.Client, url: str, how: str, text: str) -> httpx.Response:
    if how == "GET":
        return client.get(url, params={"query": text}, headers=JSON)
    if how == "form":
        return client.post(url, data={"query": text}, headers=JSON)
    direct = {**JSON, "Content-Type": "application/sparql-query"}
    return client.post(url, content=text.encode(), headers=direct)


@pytest.mark.parametrize("how", ["GET", "form", "direct"])
def test_a_new_constant_is_answered_without_a_parse_or_a_thread(serve, people, counted, how):
    url = serve(people) + "/sparql"
    with httpx.Client() as client:
        for i in range(3):  # parsed once, then run in a thread once: its run time is then known
            assert send(client, url, how, NAME.format(i)).status_code == 200
        before = dict(counted)
        for i in range(10, 60):
            response = send(client, url, how, NAME.format(i))
            assert response.status_code == 200
            assert [b["n"]["value"] for b in response.json()["results"]["bindings"]] == [f"n{i}"]
    assert counted == before


def test_a_post_of_another_form_or_an_update_still_takes_the_whole_path(serve, people):
    url = serve(people) + "/sparql"
    with httpx.Client() as client:
        for i in range(3):
            send(client, url, "form", NAME.format(i))
        bad = client.post(url, data={"query": NAME.format(1) + " }"}, headers=JSON)
        assert bad.status_code == 400 and "line 1" in bad.text
        neither = client.post(url, data={"other": "x"}, headers=JSON)
        assert neither.status_code == 400
        update = client.post(url, data={"update": f"INSERT DATA {{ <{EX}u1> <{EX}name> \"again\" }}"})
        assert update.status_code == 204
        names = send(client, url, "form", NAME.format(1)).json()["results"]["bindings"]
        assert sorted(b["n"]["value"] for b in names) == ["again", "n1"]


@pytest.mark.parametrize("how", ["GET", "form"])
def test_the_time_limit_holds_for_a_slow_constant_of_a_fast_shape(serve, how):
    store = Store()
    store.add((IRI(f"{EX}s{i}"), IRI(EX + "p"), Literal(str(i))) for i in range(5000))
    url = serve(store, query_timeout=0.5, workers=1) + "/sparql"
    with httpx.Client(timeout=30) as client:
        for _ in range(3):  # nothing has <none>: fast, so the shape runs on the event loop next time
            assert send(client, url, how, SCAN.format("none")).status_code == 200
        slow = send(client, url, how, SCAN.format("p"))
        assert slow.status_code == 503
        assert "time limit of 0.5 s" in slow.text
        assert send(client, url, how, SCAN.format("none")).status_code == 200


def test_a_run_that_waited_without_using_the_cpu_is_still_answered_on_the_event_loop(
        serve, people, counted, monkeypatch):
    """A run slowed by waiting (for the interpreter lock while other threads
    work, here a sleep) is judged by its CPU time: the shape comes back to the
    event loop, instead of staying in threads where it would wait again."""
    url = serve(people) + "/sparql"
    waits = {"left": 2}

    def waiting(run):
        def waiting_run(*args, **kwargs):
            if waits["left"]:
                waits["left"] -= 1
                time.sleep(0.1)  # far above the inline budget on the clock, nothing in CPU
            return run(*args, **kwargs)
        return waiting_run

    # a thread runs the parsed query, the event loop the one found by its shape
    monkeypatch.setattr(people, "execute", waiting(people.execute))
    monkeypatch.setattr(people, "execute_prepared", waiting(people.execute_prepared))
    with httpx.Client() as client:
        for i in range(3):  # parsed, run in a thread, then inline (waiting once more)
            assert send(client, url, "GET", NAME.format(i)).status_code == 200
        assert waits["left"] == 0
        before = dict(counted)
        for i in range(10, 30):
            assert send(client, url, "GET", NAME.format(i)).json()["results"]["bindings"] == [
                {"n": {"type": "literal", "value": f"n{i}"}}]
    assert counted == before


def test_a_query_calling_another_endpoint_never_runs_on_the_event_loop(serve, people, counted):
    querying = Store()
    querying.service_endpoints["http://example.org/remote"] = serve(people) + "/sparql"
    url = serve(querying) + "/sparql"
    text = ("SELECT ?n WHERE {{ SERVICE <http://example.org/remote> "
            "{{ <http://example.org/u{0}> <http://example.org/name> ?n }} }}")
    with httpx.Client(timeout=30) as client:
        for i in range(6):
            for how in ("GET", "form"):
                names = send(client, url, how, text.format(i)).json()["results"]["bindings"]
                assert [b["n"]["value"] for b in names] == [f"n{i}"]
    # each of the 12 runs on the querying server took a thread (the remote's
    # own lookups, counted too, may run inline)
    assert counted["threads"] >= 12
