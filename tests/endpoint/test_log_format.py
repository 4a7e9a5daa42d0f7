"""``rivulet serve --log-format json``: every line the server writes on
standard error is one JSON object, uvicorn's and the access log's included."""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime

import httpx

from endpoint.log_format import JsonLines
from tests.endpoint.rivulet_process import REPO, RivuletProcess

DEMO = REPO / "endpoint" / "demo" / "rivers.trig"


def test_every_line_of_the_json_log_parses(tmp_path):
    server = RivuletProcess("--data", str(DEMO), "--log-format", "json", "--access-log")
    try:
        good = httpx.get(f"{server.url}/sparql", params={"query": "ASK { ?s ?p ?o }"})
        bad = httpx.get(f"{server.url}/sparql", params={"query": "ASK {"})
        assert (good.status_code, bad.status_code) == (200, 400)
    finally:
        lines = server.stop()
    entries = [json.loads(line) for line in lines]  # fails on any line that is not JSON
    assert len(entries) >= 6
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= entry.keys()
        assert datetime.fromisoformat(entry["time"]).utcoffset() == UTC.utcoffset(None)
    loggers = {entry["logger"] for entry in entries}
    assert {"rivulet.endpoint", "uvicorn.error", "uvicorn.access"} <= loggers
    access = [entry for entry in entries if entry["logger"] == "uvicorn.access"]
    assert [(a["method"], a["status"]) for a in access] == [("GET", 200), ("GET", 400)]
    assert access[0]["path"].startswith("/sparql?query=")


def test_an_exception_is_written_inside_its_line():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonLines())
    logger = logging.Logger("rivulet.test")
    logger.addHandler(handler)
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError:
        logger.exception("failed with %s", "a number")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["level"] == "ERROR" and entry["message"] == "failed with a number"
    assert "ZeroDivisionError" in entry["exception"] and "Traceback" in entry["exception"]
