"""YASGUI, the SPARQL editor many endpoints embed (``@zazuko/yasgui``, its
built files from tests/clients/node, no CDN), on a page served by another
web server and pointed at the endpoint, in headless Chromium: a query typed
and run as a person would, its answer read from YASGUI's results table.

The page is on another origin than the endpoint, as YASGUI usually is, so
the server runs with ``--cors`` for that origin."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.browser import in_browser, static_site

YASGUI = Path(__file__).resolve().parent / "node" / "node_modules" / "@zazuko" / "yasgui" / "build"
EX = "http://example.org/rivers/"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>YASGUI</title>
<link rel="stylesheet" href="yasgui.min.css"><script src="yasgui.min.js"></script></head>
<body><div id="yasgui"></div>
<script>
  const endpoint = new URLSearchParams(location.search).get("endpoint");
  window.yasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: { endpoint }, copyEndpointOnNewTab: false, persistenceId: null,
  });
</script></body></html>"""

QUERY = f"""PREFIX ex: <{EX}>
SELECT ?river ?km WHERE {{ ?river ex:lengthKm ?km }} ORDER BY DESC(?km) LIMIT 3"""


@pytest.fixture
def site():
    if not (YASGUI / "yasgui.min.js").exists():
        pytest.skip("YASGUI test skipped: needs 'npm ci' in tests/clients/node (.ci/run does it)")
    with static_site({"index.html": PAGE, "yasgui.min.js": YASGUI / "yasgui.min.js",
                      "yasgui.min.css": YASGUI / "yasgui.min.css"}) as url:
        yield url


def test_yasgui_runs_a_query_and_shows_its_table(site, recorded):
    server = recorded(cors_origins=(site,))

    def scenario(page):
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{site}/index.html?endpoint={server.sparql}")
        editor = page.locator(".yasqe .CodeMirror")
        editor.wait_for()
        # as a person would: select what is there, paste the query over it, press the button
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(QUERY)
        page.locator(".yasqe_queryButton").click()
        rows = page.locator(".yasr table.dataTable tbody tr")
        rows.nth(2).wait_for(timeout=20_000)
        table = [[cell.inner_text().strip() for cell in row.locator("td").all()[1:]] for row in rows.all()]
        return table, errors

    table, errors = in_browser(scenario)
    assert errors == []
    # YASGUI shortens IRIs with the query's own prefixes
    assert [row[0] for row in table] == ["ex:Danube", "ex:Rhine", "ex:Elbe"], server.show()
    assert [row[1].split("^^")[0].strip('"') for row in table] == ["2850", "1230", "1094"], table
