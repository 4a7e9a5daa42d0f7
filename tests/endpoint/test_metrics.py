"""``/metrics`` under load: a real server is given queries, updates, bad
requests, a stream with a continuous query and an SSE subscriber, and the
scraped numbers must move by exactly what was done."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.api import Store
from engine.rdf import IRI, Literal
from tests.endpoint.rivulet_process import REPO, RivuletProcess
from tests.endpoint.test_http_cancellation import SLOW

EX = "http://example.org/"
BATCH = "application/x-timestamped-ntriples"
http = httpx.Client(timeout=30)
#: seconds to wait for a number that moves after the answer (a subscriber leaving)
SETTLE = 10

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> Samples:
    response = http.get(f"{url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def wait_until(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + SETTLE
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def first_window(lines: Iterator[str]) -> bool:
    """Read an SSE stream until its first window event (heartbeat comments
    keep the connection alive, so the read timeout alone would not end it)."""
    deadline = time.monotonic() + SETTLE
    for line in lines:
        if line.startswith("event: window"):
            return True
        if time.monotonic() > deadline:
            return False
    return False


def buckets(samples: Samples, name: str, **labels: str) -> list[float]:
    """The cumulative bucket counts of one histogram, in bound order."""
    found = []
    for (sample, sample_labels), count in samples.items():
        given = dict(sample_labels)
        if sample == f"{name}_bucket" and all(given.get(k) == v for k, v in labels.items()):
            found.append((float(given["le"]), count))
    return [count for _, count in sorted(found)]


def check_histogram(samples: Samples, name: str, **labels: str) -> float:
    """The histogram's count, after checking its buckets are cumulative and end with it."""
    counts = buckets(samples, name, **labels)
    assert counts and counts == sorted(counts)
    assert counts[-1] == value(samples, f"{name}_count", **labels)
    return counts[-1]


@pytest.fixture
def store() -> Store:
    store = Store()
    store.add((IRI(f"{EX}s{i}"), IRI(f"{EX}p"), Literal(str(i))) for i in range(20))
    return store


def test_sparql_requests_are_counted_by_kind_and_outcome(serve, store):
    url = serve(store)
    before = scrape(url)
    queries = 0
    for _ in range(25):  # one query repeated: after its first runs it takes the short path
        answer = http.get(f"{url}/sparql", params={"query": f"ASK {{ <{EX}s1> ?p ?o }}"})
        assert answer.status_code == 200
        queries += 1
    for i in range(5):
        answer = http.post(f"{url}/sparql", content=f"SELECT * {{ <{EX}s{i}> ?p ?o }}",
                           headers={"Content-Type": "application/sparql-query"})
        assert answer.status_code == 200
        queries += 1
    for i in range(3):
        assert http.post(f"{url}/sparql", data={"update": f"INSERT DATA {{ <{EX}n{i}> <{EX}p> 1 }}"}
                         ).status_code == 204
    assert http.get(f"{url}/sparql", params={"query": "SELECT * { ?s ?p }"}).status_code == 400
    assert http.post(f"{url}/sparql", data={"update": "INSERT DATA { <a> }"}).status_code == 400
    assert http.get(f"{url}/sparql").status_code == 200  # the service description
    for probe in ("/healthz", "/readyz", "/metrics"):  # not traffic
        assert http.get(url + probe).status_code == 200
    after = scrape(url)

    assert moved(before, after, "rivulet_requests_total", kind="query", outcome="ok") == queries
    assert moved(before, after, "rivulet_requests_total", kind="query", outcome="client_error") == 1
    assert moved(before, after, "rivulet_requests_total", kind="update", outcome="ok") == 3
    assert moved(before, after, "rivulet_requests_total", kind="update", outcome="client_error") == 1
    assert moved(before, after, "rivulet_requests_total", kind="sparql", outcome="ok") == 1
    counted = sum(v for (name, _), v in after.items() if name == "rivulet_requests_total")
    assert counted == queries + 3 + 1 + 1 + 1
    assert check_histogram(after, "rivulet_request_duration_seconds", kind="query") == queries + 1
    assert check_histogram(after, "rivulet_request_duration_seconds", kind="update") == 4
    assert value(after, "rivulet_request_duration_seconds_sum", kind="query") > 0
    assert value(after, "rivulet_store_triples") == 23
    assert value(after, "rivulet_store_named_graphs") == 0
    assert value(after, "rivulet_store_terms") >= 23
    assert value(after, "process_resident_memory_bytes") > 10 * 2**20


def test_a_query_over_the_time_limit_counts_as_a_timeout(serve):
    big = Store()
    big.add((IRI(f"{EX}s{i}"), IRI(f"{EX}p"), Literal(str(i))) for i in range(5000))
    url = serve(big, query_timeout=0.3, workers=1)
    before = scrape(url)
    assert http.post(f"{url}/sparql", data={"query": SLOW}).status_code == 503
    after = scrape(url)
    assert moved(before, after, "rivulet_requests_total", kind="query", outcome="timeout") == 1
    assert moved(before, after, "rivulet_query_cancellations_total", reason="time_limit") == 1
    assert moved(before, after, "rivulet_query_cancellations_total", reason="client_gone") == 0


def test_a_query_whose_client_leaves_counts_as_cancelled(serve):
    big = Store()
    big.add((IRI(f"{EX}s{i}"), IRI(f"{EX}p"), Literal(str(i))) for i in range(5000))
    url = serve(big, query_timeout=600, workers=1)
    before = scrape(url)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{url}/sparql", data={"query": SLOW}, timeout=0.5)
    assert wait_until(lambda: moved(before, scrape(url), "rivulet_requests_total", kind="query",
                                    outcome="cancelled") == 1)
    after = scrape(url)
    assert moved(before, after, "rivulet_query_cancellations_total", reason="client_gone") == 1
    assert moved(before, after, "rivulet_requests_total", kind="query", outcome="timeout") == 0


def test_streams_continuous_queries_and_subscribers(serve):
    url = serve()
    assert http.put(f"{url}/streams/levels", json={"iri": f"{EX}levels", "timing": [f"{EX}cm"]}
                    ).status_code == 201
    registration = (f"REGISTER QUERY peaks AS SELECT (MAX(?cm) AS ?peak) "
                    f"FROM STREAM <{EX}levels> [RANGE 1s STEP 1s] WHERE {{ ?g <{EX}cm> ?cm }}")
    assert http.post(f"{url}/queries", content=registration,
                     headers={"Content-Type": "application/sparql-query"}).status_code == 201
    before = scrape(url)
    assert value(before, "rivulet_continuous_query_subscribers", query="peaks") == 0

    events_url = f"{url}/queries/peaks/events"
    with httpx.Client(timeout=30) as listener, listener.stream("GET", events_url) as events:
        assert events.status_code == 200
        assert wait_until(lambda: value(scrape(url), "rivulet_continuous_query_subscribers",
                                        query="peaks") == 1)
        # stamped with the wall clock, as a live producer does: the lag is then seconds
        start = (int(time.time()) - 30) * 1000
        items = 0
        for second in range(3):
            body = "\n".join(f"{start + second * 1000 + 10 * i} <{EX}g{i}> <{EX}cm> \"{100 + i}\" ."
                             for i in range(4))
            answer = http.post(f"{url}/streams/levels", content=body, headers={"Content-Type": BATCH})
            assert answer.status_code == 202, answer.text
            items += 4
        heartbeat = str(start + 3000)
        answer = http.post(f"{url}/streams/levels", content=heartbeat, headers={"Content-Type": BATCH})
        assert answer.json()["windows_fired"] >= 1
        late = http.post(f"{url}/streams/levels", content=f"{start} <{EX}g0> <{EX}cm> \"1\" .\n"
                         f"{start + 5000} <{EX}g0> <{EX}cm> \"2\" .", headers={"Content-Type": BATCH})
        assert late.status_code == 409
        assert first_window(events.iter_lines())
        during = scrape(url)
    # the listener has left
    assert wait_until(lambda: value(scrape(url), "rivulet_continuous_query_subscribers",
                                    query="peaks") == 0)
    after = scrape(url)

    assert moved(before, during, "rivulet_stream_items_total", stream="levels") == items
    assert moved(before, during, "rivulet_stream_triples_total", stream="levels") == items
    assert moved(before, during, "rivulet_stream_late_items_total", stream="levels") == 2
    lag = value(during, "rivulet_stream_watermark_lag_seconds", stream="levels")
    assert 20 < lag < 150  # the watermark is 27 s behind the clock at the start, and the test has run since
    windows = moved(before, during, "rivulet_continuous_query_windows_total", query="peaks")
    assert windows == 3  # three seconds of items, closed by the heartbeat
    assert check_histogram(during, "rivulet_continuous_query_evaluation_seconds", query="peaks") == windows
    assert check_histogram(during, "rivulet_continuous_query_window_delay_seconds", query="peaks") == windows
    assert value(during, "rivulet_continuous_query_subscriber_drops_total", query="peaks") == 0
    assert moved(before, during, "rivulet_requests_total", kind="stream", outcome="ok") == 4
    assert moved(before, during, "rivulet_requests_total", kind="stream", outcome="client_error") == 1
    assert moved(before, after, "rivulet_requests_total", kind="subscription", outcome="ok") == 1
    assert value(after, "rivulet_request_duration_seconds_count", kind="subscription") == 0
    assert value(before, "rivulet_requests_total", kind="registration", outcome="ok") == 1
    assert value(before, "rivulet_requests_total", kind="stream", outcome="ok") == 1  # the declaration


def test_data_directory_log_and_checkpoint(tmp_path):
    server = RivuletProcess("--data-dir", str(tmp_path / "data"), "--data",
                            str(REPO / "endpoint" / "demo" / "rivers.trig"))
    try:
        before = scrape(server.url)
        assert value(before, "rivulet_store_triples") == 87
        assert ("rivulet_data_checkpoint_age_seconds", ()) in before  # the first checkpoint: the --data files
        assert 0 <= value(before, "rivulet_data_checkpoint_age_seconds") < 600
        update = http.post(f"{server.url}/sparql", data={"update": f"INSERT DATA {{ <{EX}a> <{EX}b> 1 }}"})
        assert update.status_code == 204
        after = scrape(server.url)
        assert value(after, "rivulet_data_log_bytes") > value(before, "rivulet_data_log_bytes")
        assert value(after, "rivulet_store_triples") == 88
    finally:
        server.stop()
