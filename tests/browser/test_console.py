"""The query console as a person uses it, in headless Chromium against a real server."""

from __future__ import annotations

import re

import httpx
import pytest

from endpoint.settings import Settings
from engine.api import Store
from tests.browser.conftest import EX, XSD_INT, Server

pytest.importorskip("playwright", reason="browser tests skipped: Playwright is not installed")

from playwright.sync_api import expect  # noqa: E402  (only once Playwright is known to be there)

BATCH = "application/x-timestamped-ntriples"

LENGTHS = f"""PREFIX ex: <{EX}>
SELECT ?river ?km WHERE {{ ?river ex:lengthKm ?km }} ORDER BY DESC(?km)"""

HIGH_WATER = f"""PREFIX ex: <{EX}>
REGISTER RSTREAM high_water AS
SELECT ?river (MAX(?cm) AS ?peak)
FROM NAMED WINDOW ex:w ON <{EX}gauges> [RANGE PT10S STEP PT5S]
WHERE {{ WINDOW ex:w {{ ?gauge ex:levelCm ?cm }} ?gauge ex:on ?river }}
GROUP BY ?river ORDER BY ?river"""


def type_query(page, text: str) -> None:
    """Replace the editor's text as typing would, then run it with Ctrl+Enter."""
    editor = page.locator("#query")
    editor.fill(text)
    editor.press("Control+Enter")


def readings(*lines: tuple[int, str, int]) -> str:
    return "\n".join(f'{ms} <{EX}{gauge}> <{EX}levelCm> "{cm}"^^<{XSD_INT}> .' for ms, gauge, cm in lines)


def test_a_query_shows_its_table_pages_downloads_and_history(page, shot):
    # the prefixes found in the store are offered before anything is typed
    chip = page.locator(".chip.found", has_text="rivers:")
    expect(chip).to_be_visible()
    shot(page, "1-loaded")
    chip.click()
    expect(page.locator("#query")).to_have_value(
        f"PREFIX rivers: <{EX}>\nSELECT ?s ?p ?o\nWHERE {{ ?s ?p ?o }}\nLIMIT 100\n")

    type_query(page, LENGTHS)
    rows = page.locator("#results table.results tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("#status")).to_contain_text("3 rows")
    first = rows.first.locator("td")
    # IRIs are shortened with the query's own prefix; the full IRI stays in the title
    expect(first.nth(1)).to_have_text("ex:Danube")
    expect(first.nth(1).locator(".term-iri")).to_have_attribute("title", f"{EX}Danube")
    expect(first.nth(2)).to_contain_text("2850")
    expect(page.locator("#results .pager")).to_be_hidden()  # one page: no paging controls
    expect(page.locator(".editor-highlight .tok-keyword").first).to_have_text("PREFIX")
    shot(page, "2-table")

    with page.expect_download() as download:
        page.locator("#downloads [data-format=csv]").click()
    csv = download.value.path().read_text()
    assert csv.splitlines() == ["river,km", f"{EX}Danube,2850", f"{EX}Rhine,1230", f"{EX}Elbe,1094"]

    type_query(page, f"SELECT ?r ?n WHERE {{ ?r <{EX}seq> ?n }} ORDER BY ?n")
    expect(page.locator(".page-info")).to_have_text("rows 1–50 of 120 · page 1 of 3")
    page.get_by_role("button", name="Next ›").click()
    expect(page.locator(".page-info")).to_have_text("rows 51–100 of 120 · page 2 of 3")
    expect(page.locator("#results tbody tr").first.locator("td .term-literal").last).to_have_text("50")
    shot(page, "3-paged")

    # both queries are in the history, newest first, and survive a reload
    page.reload()
    history = page.locator("#history button")
    expect(history).to_have_count(2)
    expect(history.first).to_contain_text("SELECT ?r ?n")
    history.nth(1).click()
    expect(page.locator("#query")).to_have_value(LENGTHS)


def test_updates_ask_and_construct_each_get_their_view(page):
    type_query(page, f"INSERT DATA {{ <{EX}gauge-dresden> <{EX}on> <{EX}Elbe> }}")
    expect(page.locator("#status")).to_contain_text("Update applied")

    type_query(page, f"ASK {{ <{EX}gauge-dresden> <{EX}on> <{EX}Elbe> }}")
    expect(page.locator("#results .verdict")).to_have_text("true")

    type_query(page, f"PREFIX ex: <{EX}> CONSTRUCT {{ ?g ex:on ?r }} WHERE {{ ?g ex:on ?r }}")
    turtle = page.locator("#results pre.turtle")
    expect(turtle).to_contain_text("gauge-dresden")
    expect(turtle.locator(".tok-keyword").first).to_have_text("@prefix")
    expect(page.locator("#downloads [data-format=csv]")).to_be_hidden()  # CSV, TSV, JSON are for tables only
    expect(page.locator("#downloads [data-format=turtle]")).to_be_visible()


def test_a_syntax_error_shows_and_marks_its_line_and_column(page, shot):
    type_query(page, "SELECT *\nWHERE {\n  ?s ?p\n}")
    error = page.locator("#error")
    expect(error).to_be_visible()
    expect(error.locator(".error-position")).to_have_text("line 4, column 1")
    expect(error).to_contain_text("HTTP 400: malformed query")
    mark = page.locator(".editor-highlight mark.error-at")
    expect(mark).to_have_count(1)
    expect(mark).to_have_text("}")
    # the caret is put at the error: just after "SELECT *\nWHERE {\n  ?s ?p\n"
    assert page.locator("#query").evaluate("t => t.selectionStart") == 25
    shot(page, "error")

    # editing clears the mark; a good query clears the message
    page.locator("#query").press("End")
    page.keyboard.type(" ")
    expect(mark).to_have_count(0)
    type_query(page, "SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    expect(error).to_be_hidden()


def test_a_continuous_query_shows_each_window_live(page, server, shot):
    http = httpx.Client(base_url=server.url, timeout=10)
    declared = http.put("/streams/gauges", json={"iri": f"{EX}gauges", "timing": [f"{EX}levelCm"]})
    assert declared.status_code == 201, declared.text

    stream = page.locator("#streams .stream[data-name=gauges]")
    expect(stream).to_contain_text(f"{EX}gauges")
    expect(stream.locator(".stream-watermark")).to_have_text("none yet")
    stream.get_by_role("button", name="New query").click()
    template = re.compile(f"^REGISTER QUERY live_gauges AS.*<{EX}gauges>", re.S)
    expect(page.locator("#query")).to_have_value(template)

    type_query(page, HIGH_WATER)
    card = page.locator(".live-query[data-name=high_water]")
    expect(card.locator(".live-status")).to_have_text("listening")
    expect(page.locator("#queries li[data-name=high_water]")).to_be_visible()

    posted = http.post("/streams/gauges", headers={"Content-Type": BATCH}, content=readings(
        (1700000001000, "gauge-koblenz", 312), (1700000003000, "gauge-koblenz", 318),
        (1700000004000, "gauge-passau", 520)) + "\n1700000005000\n")
    assert posted.json()["windows_fired"] == 1, posted.text

    rows = card.locator(".live-latest tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("ex:Danube")
    expect(rows.nth(0)).to_contain_text("520")
    expect(rows.nth(1)).to_contain_text("318")
    expect(card.locator(".window-title")).to_contain_text("Window 1")
    expect(card.locator(".window-log li")).to_have_count(1)
    expect(card.locator(".live-chart rect.bar")).to_have_count(1)
    shot(page, "1-first-window")

    # the next window holds only the new reading; the panel's watermark follows the stream
    posted = http.post("/streams/gauges", headers={"Content-Type": BATCH},
                       content=readings((1700000012000, "gauge-koblenz", 301)) + "\n1700000015000\n")
    assert posted.json()["windows_fired"] == 2, posted.text
    expect(card.locator(".window-log li")).to_have_count(3)
    expect(card.locator(".window-title")).to_contain_text("Window 3")
    expect(card.locator(".window-title")).to_contain_text("1 row")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("301")
    expect(card.locator(".live-chart rect.bar")).to_have_count(3)
    expect(card.locator(".live-chart circle.delay-dot")).to_have_count(3)
    expect(stream.locator(".stream-watermark")).to_have_text("2023-11-14 22:13:35.000")
    shot(page, "2-more-windows")

    card.get_by_role("button", name="Unregister").click()
    expect(card).to_have_count(0)
    expect(page.locator("#queries")).to_contain_text("No continuous queries")
    assert http.get("/queries").json() == {"queries": []}
    shot(page, "3-unregistered")


def test_writes_to_a_token_server_use_the_token_field(browser, shot):
    store = Store()
    server = Server(store, Settings(update_token="s3cret"))
    server.start()
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        type_query(page, f"INSERT DATA {{ <{EX}a> <{EX}on> <{EX}b> }}")
        expect(page.locator("#error")).to_contain_text("401")
        page.locator("#token").fill("s3cret")
        type_query(page, f"INSERT DATA {{ <{EX}a> <{EX}on> <{EX}b> }}")
        expect(page.locator("#status")).to_contain_text("Update applied")
        shot(page, "token")
        assert store.query(f"ASK {{ <{EX}a> <{EX}on> <{EX}b> }}").boolean
    finally:
        context.close()
        server.server.should_exit = True
        server.join()


def test_a_window_over_the_row_limit_shows_as_failed_and_the_next_one_as_usual(browser, shot):
    store = Store()
    server = Server(store, Settings(max_rows=100))
    server.start()
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        http = httpx.Client(base_url=server.url, timeout=10)
        assert http.put("/streams/gauges", json={"iri": f"{EX}gauges"}).status_code == 201
        page.goto(server.url + "/")
        type_query(page, f"""PREFIX ex: <{EX}>
REGISTER RSTREAM pairs AS SELECT ?a ?b FROM NAMED WINDOW ex:w ON <{EX}gauges> [RANGE PT5S STEP PT5S]
WHERE {{ WINDOW ex:w {{ ?a ex:levelCm ?x . ?b ex:levelCm ?y }} }}""")
        card = page.locator(".live-query[data-name=pairs]")
        expect(card.locator(".live-status")).to_have_text("listening")
        many = [(1700000001000 + i, f"gauge-{i}", i) for i in range(20)]  # 20 x 20 pairs: over 100 rows
        posted = http.post("/streams/gauges", headers={"Content-Type": BATCH},
                           content=readings(*many) + "\n1700000005000\n")
        assert posted.json()["windows_failed"] == 1, posted.text
        failed = card.locator(".window-log li.window-failed")
        expect(failed).to_have_count(1)
        expect(failed).to_contain_text("failed, a step of the query would hold 400 rows; the limit is 100")
        expect(card.locator(".live-status")).to_have_text("window 1 failed")
        posted = http.post("/streams/gauges", headers={"Content-Type": BATCH},
                           content=readings((1700000006000, "gauge-koblenz", 312)) + "\n1700000010000\n")
        assert posted.json()["windows_failed"] == 0, posted.text
        expect(card.locator(".window-title")).to_contain_text("Window 2")
        expect(card.locator(".window-log li")).to_have_count(2)
        shot(page, "failed-window")
        assert not errors, errors
    finally:
        context.close()
        server.server.should_exit = True
        server.join()


def test_a_stream_is_dropped_from_its_card_once_no_query_reads_it(browser, server, shot):
    """The Drop button asks first; while a query reads the stream the server's
    409 (naming the query) shows and the stream stays; once the query is
    unregistered the stream goes, and its stored graph stays."""
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" and "status of 409" not in msg.text else None)
    dialogs: list[str] = []

    def answer(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.accept() if len(dialogs) > 1 else dialog.dismiss()  # the first one is declined

    page.on("dialog", answer)
    try:
        http = httpx.Client(base_url=server.url, timeout=10)
        assert http.put("/streams/gauges", json={"iri": f"{EX}gauges"}).status_code == 201
        assert http.post("/queries", content=HIGH_WATER, headers={
            "Content-Type": "application/sparql-query"}).status_code == 201
        assert http.post("/streams/gauges", headers={"Content-Type": BATCH},
                         content=readings((1700000001000, "gauge-koblenz", 312))).status_code == 202
        page.goto(server.url + "/")
        stream = page.locator("#streams .stream[data-name=gauges]")
        drop = stream.get_by_role("button", name="Drop")
        drop.click()  # declined: nothing is sent
        expect(page.locator("#error")).to_be_hidden()
        drop.click()
        expect(page.locator("#error")).to_contain_text("HTTP 409")
        expect(page.locator("#error")).to_contain_text("'high_water'")
        expect(stream).to_be_visible()
        assert dialogs == ["Drop stream gauges? What it absorbed stays in its stored graph."] * 2
        shot(page, "refused")

        page.locator("#queries li[data-name=high_water]").get_by_role("button", name="Unregister").click()
        expect(page.locator("#queries")).to_contain_text("No continuous queries")
        drop.click()
        expect(stream).to_have_count(0)
        expect(page.locator("#streams")).to_contain_text("No streams declared")
        expect(page.locator("#status")).to_have_text("Dropped stream gauges.")
        expect(page.locator("#error")).to_be_hidden()
        shot(page, "dropped")
        assert http.get("/streams").json() == {"streams": []}
        assert server.store.query(f"ASK {{ GRAPH <{EX}gauges> {{ ?s <{EX}levelCm> 312 }} }}").boolean
        assert not errors, errors
    finally:
        context.close()
