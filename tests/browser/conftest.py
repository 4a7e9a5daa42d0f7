"""The console in a real headless Chromium (Debian's ``chromium``, driven by
Playwright) against a real uvicorn server on loopback.

Playwright's own browser download is never used: it launches the system's
Chromium by path. Without that browser, or without Playwright, every test
here is skipped with the reason. Each test gets a fresh server, store and
browser context (so localStorage history does not leak between tests); the
browser process is shared by the session because starting it costs ~1 s.
Screenshots land in ``tests/browser/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from endpoint.settings import Settings
from engine.api import Store
from tests.endpoint.conftest import Server

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"

CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # nothing but loopback: no update checks, component downloads or sync
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: how Chromium logs a 400 answer (a malformed query) to the console
EXPECTED_CONSOLE_ERROR = "the server responded with a status of 400"

EX = "http://example.org/rivers/"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def store_data() -> bytes:
    """Three rivers with lengths and gauges, and 120 numbered readings (enough for three pages)."""
    lines = [
        f'<{EX}Danube> <{EX}lengthKm> "2850"^^<{XSD_INT}> .',
        f'<{EX}Rhine> <{EX}lengthKm> "1230"^^<{XSD_INT}> .',
        f'<{EX}Elbe> <{EX}lengthKm> "1094"^^<{XSD_INT}> .',
        f"<{EX}gauge-koblenz> <{EX}on> <{EX}Rhine> .",
        f"<{EX}gauge-passau> <{EX}on> <{EX}Danube> .",
    ]
    lines += [f'<{EX}reading/{i}> <{EX}seq> "{i}"^^<{XSD_INT}> .' for i in range(120)]
    return "\n".join(lines).encode()


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    if executable is None:
        pytest.skip("browser tests skipped: no Chromium on PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser tests skipped: Playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        # Playwright gives the browser a fresh temporary user-data dir and removes it on close
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def server() -> Iterator[Server]:
    store = Store()
    store.load(store_data(), format="nt")
    server = Server(store, Settings())
    server.start()
    yield server
    server.server.should_exit = True
    server.join()


@pytest.fixture
def page(browser, server):
    """The console loaded from ``server``; fails the test on any uncaught
    script error or failed load (a missing module shows only as the latter),
    except the 400 answers to the malformed queries a test sends on purpose."""
    context = browser.new_context(viewport={"width": 1360, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" and EXPECTED_CONSOLE_ERROR not in msg.text else None)
    page.goto(server.url + "/")
    yield page
    context.close()
    assert not errors, f"script errors in the page: {errors}"


@pytest.fixture
def shot(request):
    """``shot(page, step)`` saves ``<test name>-<step>.png`` under screenshots/."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def save(page, step: str) -> Path:
        path = SCREENSHOTS / f"{request.node.name}-{step}.png"
        page.screenshot(path=path, full_page=True)
        return path

    return save
