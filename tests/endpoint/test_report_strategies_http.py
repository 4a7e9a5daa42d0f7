"""RSP-QL's report strategies over a real server: each registration chooses
when its windows are reported (on window close, non-empty content, content
change, periodic) with the ``report`` parameter or a ``REPORT`` clause in
its head; the SSE events of each strategy are those its definition gives,
a bad choice is a 400, and the choice survives a restart."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.endpoint.rivulet_process import RivuletProcess
from tests.endpoint.sse_client import SSEReader

EX = "http://example.org/"
BATCH = "application/x-timestamped-ntriples"
WINDOW = f"FROM STREAM <{EX}s> [RANGE 2s STEP 1s]"
SELECT = f"AS SELECT ?o {WINDOW} WHERE {{ ?s ?p ?o }}"
#: items (ms, object) then a heartbeat at 10 s; the window closing at c holds [c - 2 s, c)
ITEMS = [(500, "a"), (1200, "b"), (6500, "c")]
CONTENT = {1000: ["a"], 2000: ["a", "b"], 3000: ["b"], 4000: [], 5000: [], 6000: [], 7000: ["c"],
           8000: ["c"], 9000: [], 10000: []}
#: the closes each strategy reports, by its definition, over CONTENT
EXPECTED = {
    "window-close": list(CONTENT),
    "non-empty": [c for c, content in CONTENT.items() if content],
    "content-change": [1000, 2000, 3000, 4000, 7000, 9000],
    "periodic": [3000, 6000, 9000],
}


def register(http: httpx.Client, text: str, params: dict | None = None, form: bool = False) -> httpx.Response:
    if form:
        return http.post("/queries", params=None, data={"query": text, **(params or {})})
    return http.post("/queries", params=params, content=text,
                     headers={"Content-Type": "application/sparql-query"})


def feed(http: httpx.Client) -> None:
    assert http.put("/streams/s", json={"iri": f"{EX}s"}).status_code == 201


def post_items(http: httpx.Client) -> None:
    body = "".join(f"{ts} <{EX}x{ts}> <{EX}p> <{EX}{o}> .\n" for ts, o in ITEMS) + "10000\n"
    answer = http.post("/streams/s", content=body.encode(), headers={"Content-Type": BATCH})
    assert answer.status_code == 202, answer.text


def events(url: str, name: str, count: int) -> list[dict]:
    reader = SSEReader(f"{url}/queries/{quote(name, safe='')}/events", last_event_id="0")
    got = reader.wait_for(count, timeout=20)
    time.sleep(0.2)  # an event too many would have come with the others
    reader.close()
    assert len(reader.events) == count, [data["window"] for data in got]
    return got


def objects(event: dict) -> list[str]:
    return sorted(b["o"]["value"][len(EX):] for b in event["results"]["results"]["bindings"])


def test_each_strategy_reports_the_windows_its_definition_gives(serve):
    url = serve()
    with httpx.Client(base_url=url, timeout=30) as http:
        feed(http)
        assert register(http, f"REGISTER QUERY wc {SELECT}").status_code == 201
        assert register(http, f"REGISTER QUERY ne {SELECT}", {"report": "non-empty"}).status_code == 201
        assert register(http, f"REGISTER QUERY cc {SELECT}", {"report": "content-change"},
                        form=True).status_code == 201
        assert register(http, f"REGISTER QUERY pe {SELECT}",
                        {"report": "periodic", "period": "PT3S"}).status_code == 201
        # the same choices written in the head
        assert register(http, f"REGISTER QUERY head_cc REPORT ON CONTENT CHANGE {SELECT}").status_code == 201
        assert register(http, f"REGISTER QUERY head_pe REPORT EVERY 3s {SELECT}").status_code == 201
        head_ne = f"REGISTER QUERY head_ne REPORT ON NON-EMPTY CONTENT {SELECT}"
        assert register(http, head_ne).status_code == 201
        post_items(http)
        described = {q["name"]: q for q in http.get("/queries").json()["queries"]}
    names = {"wc": "window-close", "ne": "non-empty", "cc": "content-change", "pe": "periodic",
             "head_cc": "content-change", "head_pe": "periodic", "head_ne": "non-empty"}
    for name, strategy in names.items():
        got = events(url, name, len(EXPECTED[strategy]))
        assert [e["window"]["end_ms"] for e in got] == EXPECTED[strategy], name
        # no gaps: a close passed over is no event
        assert [e["sequence"] for e in got] == list(range(1, len(got) + 1))
        for event in got:  # RSTREAM: each reported window's whole content
            assert objects(event) == CONTENT[event["window"]["end_ms"]]
        report = described[name]["report_strategy"]
        assert report["name"] == strategy and report["windows_skipped"] == len(CONTENT) - len(got)
        assert report["period_ms"] == (3000 if strategy == "periodic" else None)
    assert "REPORT ON NON-EMPTY CONTENT" in described["ne"]["query"]  # the choice is kept with the text


def test_istream_on_content_change_reports_what_is_new_since_the_last_report(serve):
    url = serve()
    with httpx.Client(base_url=url, timeout=30) as http:
        feed(http)
        text = (f"REGISTER ISTREAM <{EX}icc> REPORT ON CONTENT CHANGE AS SELECT ?o "
                f"FROM NAMED WINDOW <{EX}w> ON <{EX}s> [RANGE PT2S STEP PT1S] "
                f"WHERE {{ WINDOW <{EX}w> {{ ?s ?p ?o }} }}")
        assert register(http, text).status_code == 201
        post_items(http)
    got = events(url, f"{EX}icc", len(EXPECTED["content-change"]))
    assert [(e["window"]["end_ms"], objects(e)) for e in got] == [
        (1000, ["a"]), (2000, ["b"]), (3000, []), (4000, []), (7000, ["c"]), (9000, [])]


@pytest.mark.parametrize("text, params, message", [
    (f"REGISTER QUERY q {SELECT}", {"report": "sometimes"}, "unknown report strategy 'sometimes'"),
    (f"REGISTER QUERY q {SELECT}", {"report": "periodic"}, "needs a period"),
    (f"REGISTER QUERY q {SELECT}", {"report": "periodic", "period": "3s ; DROP"}, "needs a period"),
    (f"REGISTER QUERY q {SELECT}", {"report": "non-empty", "period": "3s"}, "only for the periodic"),
    (f"REGISTER QUERY q {SELECT}", {"period": "3s"}, "needs report=periodic"),
    (f"REGISTER QUERY q {SELECT}", {"report": "periodic", "period": "1500ms"},
     "multiple of the windows' STEP"),
    (f"REGISTER QUERY q REPORT ON CONTENT CHANGE {SELECT}", {"report": "non-empty"}, "already"),
    (f"REGISTER QUERY q REPORT ON SUNDAYS {SELECT}", None, "line 1, column 28"),
    (f"REGISTER QUERY q REPORT EVERY 2s AS SELECT ?o FROM STREAM <{EX}s> [TRIPLES 3] WHERE {{ ?s ?p ?o }}",
     None, "needs time windows"),
])
def test_a_bad_choice_is_a_400_and_registers_nothing(serve, text, params, message):
    url = serve()
    with httpx.Client(base_url=url, timeout=30) as http:
        feed(http)
        answer = register(http, text, params)
        assert answer.status_code == 400 and message in answer.text, answer.text
        assert http.get("/queries").json()["queries"] == []


def test_the_strategy_survives_a_restart(tmp_path: Path):
    data = str(tmp_path / "data")
    server = RivuletProcess("--data-dir", data, "--sync", "none")
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            feed(http)
            assert register(http, f"REGISTER QUERY ne {SELECT}", {"report": "non-empty"}).status_code == 201
    finally:
        server.stop()
    restarted = RivuletProcess("--data-dir", data, "--sync", "none")
    try:
        with httpx.Client(base_url=restarted.url, timeout=30) as http:
            assert http.get("/queries/ne").json()["report_strategy"]["name"] == "non-empty"
            post_items(http)
            got = events(restarted.url, "ne", len(EXPECTED["non-empty"]))
            assert [e["window"]["end_ms"] for e in got] == EXPECTED["non-empty"]
    finally:
        restarted.stop()
