"""The console (static/) as a person uses it, in headless Chromium against a
real server: a request that fails leaves no earlier answer on screen under
its error (issue 14), whether that answer was a table, a verdict or a graph."""

from __future__ import annotations

from tests.clients.browser import in_browser

EX = "http://example.org/rivers/"
LONGEST = f"SELECT ?river ?km WHERE {{ ?river <{EX}lengthKm> ?km }} ORDER BY DESC(?km)"

GOOD_ANSWERS = {
    "table": (LONGEST, "#results table.results"),
    "verdict": (f"ASK {{ <{EX}Inn> <{EX}flowsInto> <{EX}Danube> }}", "#results .verdict"),
    "graph": (f"CONSTRUCT {{ ?r <{EX}flowsInto> <{EX}Rhine> }} WHERE {{ ?r <{EX}flowsInto> <{EX}Rhine> }}",
              "#results pre.turtle"),
}
FAILURES = {
    "malformed query": "SELECT * WHERE { ?s ?p }",
    "failed update": f"CREATE GRAPH <{EX}readings>",  # it exists: refused, as the standard says
}


def run(page, text: str) -> None:
    editor = page.locator("#query")
    editor.fill(text)
    editor.press("Control+Enter")


def test_a_failed_request_clears_the_previous_answer(recorded):
    server = recorded()

    def scenario(page):
        page.goto(f"{server.url}/")
        seen = {}
        for answer, (good, shown) in GOOD_ANSWERS.items():
            for failure, bad in FAILURES.items():
                run(page, good)
                page.locator(shown).wait_for(timeout=20_000)
                run(page, bad)
                page.locator("#error").wait_for(state="visible", timeout=20_000)
                seen[answer, failure] = {
                    "answer left": page.locator(shown).count(),
                    "downloads shown": page.locator("#downloads").is_visible(),
                    "results": page.locator("#results").inner_text(),
                    "error": page.locator("#error").inner_text(),
                }
        return seen

    for case, seen in in_browser(scenario).items():
        assert seen["answer left"] == 0, (case, seen)
        assert not seen["downloads shown"], case
        assert "request failed" in seen["results"], (case, seen)
        assert "HTTP 400" in seen["error"], (case, seen, server.show())
