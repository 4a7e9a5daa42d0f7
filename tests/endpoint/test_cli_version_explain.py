"""``rivulet --version`` and ``rivulet query --explain`` / ``--analyze``, run
as a user runs them (a subprocess of the command line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "endpoint" / "demo" / "rivers.trig"
QUERY = ("PREFIX ex: <http://example.org/rivers/> "
         "SELECT ?river ?country { ?river ex:flowsInto ex:Danube ; ex:crosses ?country }")


def rivulet(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "endpoint.cli", *arguments], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_version():
    done = rivulet("--version")
    assert done.returncode == 0
    assert done.stdout == f"rivulet {version('rivulet')}\n"


def test_query_explain_prints_the_plan_and_analyze_the_actual_rows():
    plan = rivulet("query", "--data", str(DEMO), "--explain", QUERY)
    assert plan.returncode == 0, plan.stderr
    explained = json.loads(plan.stdout)
    assert explained["analyzed"] is False
    steps = explained["plan"]["children"][0]["steps"]
    assert steps[0]["estimated_rows"] == 1.0 and steps[1]["estimated_rows"] > 0
    assert all("actual_rows" not in s for s in steps)

    analyzed = rivulet("query", "--data", str(DEMO), QUERY, "--analyze")
    assert analyzed.returncode == 0, analyzed.stderr
    explained = json.loads(analyzed.stdout)
    assert explained["analyzed"] is True and explained["rows"] == 3
    assert [s["actual_rows"] for s in explained["plan"]["children"][0]["steps"]] == [1, 3]

    answer = rivulet("query", "--data", str(DEMO), QUERY)  # without either: the answer, as before
    assert answer.returncode == 0 and len(answer.stdout.splitlines()) == 4  # header and three rows
