"""Headless Chromium (Debian's, driven by Playwright, as tests/browser does)
for the client tests, and a plain static web server for pages that live
somewhere other than the endpoint.

Playwright's sync API allows one running instance per thread, and
tests/browser keeps one open for the whole session, so each scenario here
runs in a thread of its own with its own browser (about a second to start).
Every request the page makes to an address other than loopback is aborted:
a test talks to nothing but its own servers."""

from __future__ import annotations

import functools
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path

T = TypeVar("T")
LOOPBACK = ("127.0.0.1", "localhost")


def in_browser(scenario: Callable[[object], T], timeout: float = 90.0) -> T:
    """``scenario(page)`` on a fresh page of a fresh headless Chromium, in a
    thread of its own; its result, or its exception raised here. Skips the
    test without Chromium or Playwright."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("browser client tests skipped: no Chromium on PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser client tests skipped: Playwright is not installed (pip install -e '.[dev]')")
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                                     args=CHROMIUM_ARGS)
                try:
                    context = browser.new_context(viewport={"width": 1280, "height": 900})
                    context.route("**/*", _loopback_only)
                    outcome["result"] = scenario(context.new_page())
                finally:
                    browser.close()
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"the browser scenario did not finish in {timeout} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _loopback_only(route) -> None:
    if urlsplit(route.request.url).hostname in LOOPBACK or route.request.url.startswith(("data:", "blob:")):
        route.continue_()
    else:
        route.abort()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:
        pass  # the tests read what they need; the request lines would only clutter the output


@contextmanager
def static_site(files: dict[str, Path | str]) -> Iterator[str]:
    """A web server on loopback serving ``files`` (URL path -> file, or the
    page's text) from a temporary directory; yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="rivulet-site-") as root:
        for name, source in files.items():
            target = Path(root) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, Path):
                target.write_bytes(source.read_bytes())
            else:
                target.write_text(source)
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=root))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
