"""EXPLAIN over HTTP on a real server: ``explain=plan`` runs nothing and
answers the plan as JSON, ``explain=analyze`` runs the query under its time
limit and adds the actual figures; bad values and updates are 400s."""

from __future__ import annotations

import time

import httpx

from tests.endpoint.test_http_cancellation import SLOW
from tests.endpoint.test_request_timeout_http import slow_store

RIVERS = ("PREFIX ex: <http://example.org/rivers/> "
          "SELECT ?river ?country { ?river ex:flowsInto ex:Danube ; ex:crosses ?country }")


def test_explain_plan_and_analyze_of_a_query(demo):
    answer = httpx.get(demo + "/sparql", params={"query": RIVERS}, timeout=10).json()
    rows = len(answer["results"]["bindings"])
    assert rows == 3  # the Inn crosses three countries
    for method in ("GET", "POST"):
        fields = {"query": RIVERS, "explain": "plan"}
        plan = (httpx.get(demo + "/sparql", params=fields, timeout=10) if method == "GET"
                else httpx.post(demo + "/sparql", data=fields, timeout=10))
        assert plan.status_code == 200 and plan.headers["content-type"] == "application/json"
        body = plan.json()
        assert body["form"] == "SELECT" and body["analyzed"] is False
        bgp = body["plan"]["children"][0]
        assert bgp["operator"] == "BGP"
        assert [s["pattern"].split()[1] for s in bgp["steps"]] == [
            "<http://example.org/rivers/flowsInto>", "<http://example.org/rivers/crosses>"]
        assert bgp["steps"][0]["estimated_rows"] == 1.0  # exactly one river flows into the Danube

    analyzed = httpx.post(demo + "/sparql", data={"query": RIVERS, "explain": "analyze"}, timeout=10).json()
    assert analyzed["analyzed"] is True and analyzed["rows"] == rows and analyzed["time_ms"] >= 0
    bgp = analyzed["plan"]["children"][0]
    assert [s["actual_rows"] for s in bgp["steps"]] == [1, 3]
    assert bgp["calls"] == 1 and bgp["actual_rows"] == 3


def test_explain_of_a_direct_post_and_of_each_query_form(demo):
    for query, form in (("ASK { ?s ?p ?o }", "ASK"), ("CONSTRUCT WHERE { ?s ?p ?o }", "CONSTRUCT"),
                        ("DESCRIBE <http://example.org/rivers/Inn>", "DESCRIBE")):
        response = httpx.post(demo + "/sparql?explain=analyze", content=query,
                              headers={"Content-Type": "application/sparql-query"}, timeout=10)
        assert response.status_code == 200, response.text
        assert response.json()["form"] == form


def test_explain_refusals(demo):
    bad = httpx.get(demo + "/sparql", params={"query": RIVERS, "explain": "yes"}, timeout=10)
    assert bad.status_code == 400 and "'explain' must be one of plan, analyze" in bad.text
    update = httpx.post(demo + "/sparql", data={"update": "INSERT DATA { <a:x> <a:y> <a:z> }",
                                                "explain": "plan"}, timeout=10)
    assert update.status_code == 400 and "applies to a query" in update.text
    syntax = httpx.get(demo + "/sparql", params={"query": "SELECT * {", "explain": "plan"}, timeout=10)
    assert syntax.status_code == 400 and "malformed query" in syntax.text


def test_explain_plan_runs_nothing_and_analyze_keeps_the_time_limit(serve):
    url = serve(slow_store(), query_timeout=60, workers=1) + "/sparql"
    started = time.monotonic()
    plan = httpx.get(url, params={"query": SLOW, "explain": "plan"}, timeout=30)
    assert plan.status_code == 200 and time.monotonic() - started < 5  # the query takes a minute
    assert plan.json()["plan"]["operator"] == "Project"
    analyzed = httpx.get(url, params={"query": SLOW, "explain": "analyze", "timeout": "0.3"}, timeout=30)
    assert analyzed.status_code == 503 and "time limit of 0.3 s" in analyzed.text
