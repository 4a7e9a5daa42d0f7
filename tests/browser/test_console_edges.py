"""The console's rough edges found by a newcomer (issue 29), each as a person
meets it, in headless Chromium against a real server: stale notes, numbers
written as typed literals, prefixes on screen but undeclared, tables without
sort, filter or page size, no way to stop a slow request, no download of a
CONSTRUCT answer, a Listen that shows nothing until the next window, and one
live chart only."""

from __future__ import annotations

import json
import re
import socket
import threading

import httpx
import pytest

from endpoint.settings import Settings
from engine.api import Store
from tests.browser.conftest import EX, Server, store_data

pytest.importorskip("playwright", reason="browser tests skipped: Playwright is not installed")

from playwright.sync_api import expect  # noqa: E402  (only once Playwright is known to be there)

from tests.browser.test_console import HIGH_WATER, LENGTHS, readings, type_query  # noqa: E402

BATCH = "application/x-timestamped-ntriples"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _post(http: httpx.Client, body: str) -> dict:
    posted = http.post("/streams/gauges", headers={"Content-Type": BATCH}, content=body)
    assert posted.status_code == 202, posted.text
    return posted.json()


def test_a_note_on_screen_always_belongs_to_the_last_request(page, server):
    type_query(page, "SELECT * WHERE { ?s ?p }")
    results = page.locator("#results")
    expect(results).to_contain_text("the request failed")
    declared = httpx.put(server.url + "/streams/gauges", json={"iri": f"{EX}gauges"}, timeout=10)
    assert declared.status_code == 201, declared.text
    type_query(page, HIGH_WATER)
    expect(results).to_contain_text("Registered continuous query high_water")
    expect(results).not_to_contain_text("failed")
    expect(page.locator("#status")).to_contain_text("Registered continuous query high_water")
    type_query(page, f"INSERT DATA {{ <{EX}gauge-dresden> <{EX}on> <{EX}Elbe> }}")
    expect(results).to_have_text("Update applied.")
    type_query(page, HIGH_WATER.replace("high_water", "high_water_2"))
    expect(results).to_contain_text("Registered continuous query high_water_2")
    expect(results).not_to_contain_text("Update applied")


def test_numbers_read_as_numbers_and_other_literals_keep_their_type(page):
    type_query(page, f"""PREFIX ex: <{EX}> PREFIX xsd: <{XSD}>
SELECT ?km ?half ?when ?odd WHERE {{ ex:Danube ex:lengthKm ?km BIND(?km / 2 AS ?half)
  BIND("2024-05-01"^^xsd:date AS ?when) BIND("twelve"^^xsd:integer AS ?odd) }}""")
    cells = page.locator("#results tbody tr").first.locator("td")
    expect(cells.nth(1)).to_have_text("2850")
    expect(cells.nth(1).locator(".term-number")).to_have_attribute("title", "xsd:integer")
    expect(cells.nth(2)).to_have_text(re.compile(r"^1425(\.0*)?$"))
    expect(cells.nth(3)).to_have_text("2024-05-01^^xsd:date")
    expect(cells.nth(4)).to_have_text("twelve^^xsd:integer")  # not a number: the type stays in sight


def test_a_prefix_on_screen_is_declared_for_the_query_and_completed_by_tab(page):
    expect(page.locator(".chip.found", has_text="rivers:")).to_be_visible()
    type_query(page, "SELECT ?river ?km WHERE { ?river rivers:lengthKm ?km } ORDER BY DESC(?km)")
    expect(page.locator("#results table.results tbody tr")).to_have_count(3)
    expect(page.locator("#status")).to_contain_text("Declared rivers: for it.")
    expect(page.locator("#query")).to_have_value(
        f"PREFIX rivers: <{EX}>\nSELECT ?river ?km WHERE {{ ?river rivers:lengthKm ?km }} ORDER BY DESC(?km)")
    editor = page.locator("#query")
    editor.fill("SELECT ?r WHERE { ?r riv")
    editor.press("End")
    editor.press("Tab")
    expect(editor).to_have_value(f"PREFIX rivers: <{EX}>\nSELECT ?r WHERE {{ ?r rivers:")
    editor.fill("SELECT ?r WHERE {\n")
    editor.press("End")
    editor.press("Tab")  # nothing to complete: Tab indents
    expect(editor).to_have_value("SELECT ?r WHERE {\n  ")


def test_a_table_sorts_filters_and_pages_as_asked(page, shot):
    type_query(page, f"SELECT ?r ?n WHERE {{ ?r <{EX}seq> ?n }}")
    info = page.locator(".page-info")
    expect(info).to_have_text("rows 1–50 of 120 · page 1 of 3")
    first_n = page.locator("#results tbody tr").first.locator("td .term-literal")
    head = page.locator("#results th[data-variable=n]")
    head.click()
    expect(head).to_contain_text("▲")
    expect(first_n).to_have_text("0")
    head.click()
    expect(head).to_contain_text("▼")
    expect(first_n).to_have_text("119")  # by value: 119 before 99, which text order would not give
    page.locator("#results .page-size").select_option("10")
    expect(info).to_have_text("rows 1–10 of 120 · page 1 of 12")
    page.locator("#results .table-filter").fill("11")
    expect(info).to_have_text("rows 1–10 of 11 (filtered from 120) · page 1 of 2")
    expect(first_n).to_have_text("119")  # still sorted
    page.locator("#results .table-filter").fill("no such row")
    expect(info).to_contain_text("no rows match (of 120)")
    shot(page, "filtered")


def test_a_construct_answer_can_be_downloaded(page):
    type_query(page, f"PREFIX ex: <{EX}> CONSTRUCT {{ ?g ex:on ?r }} WHERE {{ ?g ex:on ?r }}")
    expect(page.locator("#results pre.turtle")).to_contain_text("gauge-koblenz")
    expect(page.locator("#downloads [data-format=csv]")).to_be_hidden()
    with page.expect_download() as download:
        page.locator("#downloads [data-format=nt]").click()
    assert download.value.suggested_filename == "results.nt"
    lines = sorted(download.value.path().read_text().splitlines())
    assert lines == [f"<{EX}gauge-koblenz> <{EX}on> <{EX}Rhine> .",
                     f"<{EX}gauge-passau> <{EX}on> <{EX}Danube> ."]
    with page.expect_download() as download:
        page.locator("#downloads [data-format=jsonld]").click()
    assert download.value.suggested_filename == "results.jsonld"
    assert json.loads(download.value.path().read_text())
    type_query(page, LENGTHS)  # a table again: its own formats
    expect(page.locator("#downloads [data-format=csv]")).to_be_visible()
    expect(page.locator("#downloads [data-format=nt]")).to_be_hidden()


class SilentEndpoint:
    """A TCP server on loopback that takes connections and never answers: a
    SERVICE call to it waits, so a query calling it runs until cancelled."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/sparql"
        self.held: list[socket.socket] = []
        self.accepted = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(connection)
            self.accepted.set()

    def close(self) -> None:
        self.sock.close()
        for connection in self.held:
            connection.close()


def test_cancel_stops_waiting_for_a_slow_query(browser, shot):
    silent = SilentEndpoint()
    store = Store()
    store.load(store_data(), format="nt")
    server = Server(store, Settings(outbound_allowed=("127.0.0.1",)))
    server.start()
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server.url + "/")
        type_query(page, f"SELECT * WHERE {{ SERVICE <{silent.url}> {{ ?s ?p ?o }} }}")
        cancel = page.get_by_role("button", name="Cancel")
        expect(cancel).to_be_visible()
        expect(page.locator("#run")).to_be_disabled()
        assert silent.accepted.wait(10), "the query never reached its SERVICE"
        cancel.click()
        expect(page.locator("#status")).to_contain_text("Cancelled after")
        expect(page.locator("#results")).to_have_text("Cancelled: no answer.")
        expect(cancel).to_be_hidden()
        expect(page.locator("#error")).to_be_hidden()
        shot(page, "cancelled")
        type_query(page, "ASK { ?s ?p ?o }")  # the console takes the next request at once
        expect(page.locator("#results .verdict")).to_have_text("true")
        assert not errors, errors
    finally:
        context.close()
        silent.close()
        server.server.should_exit = True
        server.join()


def test_listen_shows_where_a_query_stands_and_its_latest_window(page, server, shot):
    http = httpx.Client(base_url=server.url, timeout=10)
    assert http.put("/streams/gauges", json={"iri": f"{EX}gauges"}).status_code == 201
    for query in (HIGH_WATER, HIGH_WATER.replace("high_water", "quiet")):
        assert http.post("/queries", content=query, headers={
            "Content-Type": "application/sparql-query"}).status_code == 201
    listed = page.locator("#queries li[data-name=quiet]")
    listed.get_by_role("button", name="Listen").click()
    card = page.locator(".live-query[data-name=quiet]")
    expect(card.locator(".live-state")).to_have_text(
        "No window has closed yet; its windows start with the first item of its streams.")
    card.get_by_role("button", name="Unregister").click()
    expect(card).to_have_count(0)

    assert _post(http, readings((1700000001000, "gauge-koblenz", 312), (1700000004000, "gauge-passau", 520))
                 + "\n1700000005000\n")["windows_fired"] == 1
    page.locator("#queries li[data-name=high_water]").get_by_role("button", name="Listen").click()
    card = page.locator(".live-query[data-name=high_water]")
    # the window reported before Listen, at once, not after the next close
    expect(card.locator(".window-title")).to_contain_text("Window 1")
    expect(card.locator(".live-latest tbody tr")).to_have_count(2)
    expect(card.locator(".window-log li")).to_have_text(
        ["#1 ends 22:13:25.000: 2 rows, reported before you listened"])
    expect(card.locator(".live-chart rect.bar")).to_have_count(0)  # its delay is not this view's
    shot(page, "listened")


def test_the_second_chart_follows_a_numeric_column_per_row(page, server, shot):
    http = httpx.Client(base_url=server.url, timeout=10)
    assert http.put("/streams/gauges", json={"iri": f"{EX}gauges"}).status_code == 201
    type_query(page, HIGH_WATER)
    card = page.locator(".live-query[data-name=high_water]")
    expect(card.locator(".live-status")).to_have_text("listening")
    values = card.locator("svg.live-values")
    expect(values).to_be_hidden()
    _post(http, readings((1700000001000, "gauge-koblenz", 312), (1700000004000, "gauge-passau", 520))
          + "\n1700000005000\n")
    _post(http, readings((1700000006000, "gauge-koblenz", 330)) + "\n1700000010000\n")
    expect(card.locator(".window-log li")).to_have_count(2)
    expect(values).to_be_visible()
    lines = values.locator("polyline.series")
    expect(lines).to_have_count(2)
    expect(values.locator("text.legend")).to_have_text(["ex:Danube", "ex:Rhine"])
    expect(values.locator("circle.series-dot")).to_have_count(4)
    expect(values).to_contain_text("?peak per window")
    danube = values.locator("polyline[data-label='ex:Danube']")
    rhine = values.locator("polyline[data-label='ex:Rhine']")
    # y grows downwards: the Rhine's second peak (330) is higher than its first (312)
    rhine_y = [float(p.split(",")[1]) for p in rhine.get_attribute("points").split()]
    assert len(rhine_y) == 2 and rhine_y[1] < rhine_y[0]
    assert len(danube.get_attribute("points").split()) == 2
    shot(page, "values-chart")
