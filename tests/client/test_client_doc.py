"""docs/client.md run as a reader runs it: every Python snippet, in the order
shown, in one namespace, against a real server holding the demo dataset;
what a snippet prints must be the output block the page shows after it.

Only the server's address is changed (the snippets call port 8000), and the
"Resume" snippet, whose loop body is ``...``, is left out: it reads forever.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from engine.api import Store
from tests.endpoint.conftest import DEMO

PAGE = Path(__file__).resolve().parents[2] / "docs" / "client.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: the address the page's Client is made with
PAGE_URL = 'Client("http://127.0.0.1:8000"'


def snippets() -> list[tuple[str, str | None]]:
    """``(code, the output block right after it or None)`` of the page's Python snippets."""
    blocks = FENCE.findall(PAGE.read_text())
    found = []
    for k, (language, text) in enumerate(blocks):
        if language == "python":
            after = blocks[k + 1] if k + 1 < len(blocks) and blocks[k + 1][0] == "" else None
            found.append((text, after[1] if after else None))
    return found


def test_the_page_runs_in_order_and_prints_what_it_shows(serve):
    store = Store()
    store.load(DEMO)
    url = serve(store)
    namespace: dict = {}
    ran = 0
    for code, shown in snippets():
        if "Reconnect(" in code:
            continue
        assert PAGE_URL in code or "Client(" not in code
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            try:
                exec(compile(code.replace(PAGE_URL, f'Client("{url}"'), str(PAGE), "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"this snippet of docs/client.md failed:\n{code}") from exc
        ran += 1
        if shown is not None:
            assert printed.getvalue().splitlines() == shown.splitlines(), code
    assert ran >= 7, "the page's snippets were not found"
    namespace["rivulet"].close()
