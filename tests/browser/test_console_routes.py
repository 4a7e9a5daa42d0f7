"""The console's files as served over HTTP; no browser needed, so these run everywhere."""

from __future__ import annotations

import re

import httpx

from endpoint.console import STATIC

IMPORT = re.compile(r'^import .* from "\./([\w-]+\.js)";$', re.M)


def test_the_root_serves_the_page_and_every_module_it_imports(server):
    http = httpx.Client(base_url=server.url, timeout=10)
    page = http.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-cache"
    assert '<script type="module" src="static/js/main.js">' in page.text

    # walk the import graph from main.js: a module the page cannot load shows
    # only as a blank panel in the browser, so check each one resolves here
    seen, todo = set(), ["main.js"]
    while todo:
        name = todo.pop()
        seen.add(name)
        module = http.get(f"/static/js/{name}")
        assert module.status_code == 200, name
        assert "javascript" in module.headers["content-type"], name
        assert module.headers["cache-control"] == "no-cache"
        todo += [m for m in IMPORT.findall(module.text) if m not in seen]
    assert seen == {p.name for p in (STATIC / "js").glob("*.js")}, "a module is unused or missing"

    for asset in ("console.css", "favicon.svg"):
        assert http.get(f"/static/{asset}").status_code == 200


def test_static_serves_only_the_console_files(server):
    http = httpx.Client(base_url=server.url, timeout=10)
    assert http.get("/static/nothing.js").status_code == 404
    # no way out of static/ to the checkout's other files
    assert http.get("/static/../pyproject.toml").status_code == 404
    assert http.get("/static/%2e%2e/pyproject.toml").status_code == 404
