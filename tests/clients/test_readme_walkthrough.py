"""The README's continuous-query walkthrough, run as written against ``rivulet
serve --demo`` on a port other than the README's 8000.

Only the URLs curl calls are moved to the server's port (the README says to
change them, nothing else): an IRI written into a request body stays as it
is, so a walkthrough whose query named the stream by its URL would fail here
with the 404 a reader on another port gets. Each command's output is
compared with the block the README shows after it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
#: the base URL the README's commands call
README_URL = "http://127.0.0.1:8000"
#: a fenced block: its info string and its text
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def walkthrough_blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of the fenced blocks of the "Continuous queries" section, in order."""
    text = README.read_text()
    start = text.index("\n## Continuous queries\n")
    end = text.index("\n## ", start + 1)
    return FENCE.findall(text[start:end])


def on_port(command: str, url: str) -> str:
    """The command with the URLs it calls (a word of its own) moved to ``url``."""
    return re.sub(r"(?<=\s)" + re.escape(README_URL), url, command)


def shell(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)


def _fields(lines: list[str]) -> dict[str, str]:
    """An event's ``field: value`` lines as a dict."""
    return {line.partition(":")[0]: line.partition(":")[2].strip() for line in lines if line.strip()}


def test_the_walkthrough_blocks_are_where_this_test_expects_them():
    kinds = [language for language, _ in walkthrough_blocks()]
    assert kinds[:6] == ["sh", "", "sh", "sh", "", ""], kinds


def test_the_readme_walkthrough_works_on_another_port(rivulet):
    server = rivulet("--demo")
    assert not server.url.endswith(":8000")
    blocks = walkthrough_blocks()[:6]
    (_, setup), (_, setup_out), (_, listen), (_, post), (_, post_out), (_, event_out) = blocks

    done = shell(on_port(setup, server.url))
    assert done.stdout.split() == setup_out.split(), done.stdout + done.stderr

    listener = subprocess.Popen(["bash", "-c", on_port(listen.strip(), server.url).replace(
        "curl -N", "curl -N --silent --max-time 30")], stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(listener.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 20
        while httpx.get(f"{server.url}/queries/high_water").json()["subscribers"] < 1:
            assert time.monotonic() < deadline, "the listener did not connect within 20 s"
            time.sleep(0.05)
        done = shell(on_port(post, server.url))
        assert json.loads(done.stdout) == json.loads(post_out), done.stdout + done.stderr
        deadline = time.monotonic() + 20
        while not any(line.startswith("data:") for line in lines):
            assert time.monotonic() < deadline, f"no window event within 20 s: {lines}"
            time.sleep(0.05)
    finally:
        listener.terminate()
        listener.wait(timeout=10)
        reader.join(timeout=10)

    shown = _fields(event_out.splitlines())
    got = _fields(lines)
    assert (got["id"], got["event"]) == (shown["id"], shown["event"])
    data = json.loads(got["data"])
    expected = json.loads(shown["data"].replace(":...", ":null"))
    for clock in ("closed_at_ms", "reported_at_ms"):
        assert isinstance(data[clock], int), f"{clock} is {data[clock]!r}: whole milliseconds expected"
        assert abs(data[clock] / 1000 - time.time()) < 120, clock
        data[clock] = expected[clock] = None
    assert data == expected
