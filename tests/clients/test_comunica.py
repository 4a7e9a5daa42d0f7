"""Comunica (``@comunica/query-sparql``, the ``comunica-sparql`` command line
of tests/clients/node) with Rivulet as a SPARQL source: one endpoint, two
endpoints federated by one query whose join spans both, and an update sent
to an endpoint that wants credentials (Comunica's ``httpAuth`` context entry,
sent as HTTP Basic with the request; its command line has no option for it).

Comunica 4.5 is the version locked in tests/clients/node/package.json: 5.x
needs Node 22 (its HTTP library, undici 8, does not load on Node 20)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.api import Store

NODE_DIR = Path(__file__).resolve().parent / "node"
COMUNICA = NODE_DIR / "node_modules" / ".bin" / "comunica-sparql"
EX = "http://example.org/rivers/"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not COMUNICA.exists(),
    reason="Comunica tests skipped: needs node and 'npm ci' in tests/clients/node (.ci/run does both)")


def comunica(*args: str) -> str:
    """Run comunica-sparql (60 s at most) and return its output, checked to have succeeded."""
    done = subprocess.run([str(COMUNICA), *args], capture_output=True, text=True, timeout=60, cwd=NODE_DIR)
    assert done.returncode == 0, f"comunica-sparql exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def select(*sources: str, query: str) -> list[dict[str, str]]:
    out = comunica(*(f"sparql@{source}" for source in sources), "-q", query,
                   "-t", "application/sparql-results+json")
    bindings = json.loads(out)["results"]["bindings"]
    return [{name: term["value"] for name, term in row.items()} for row in bindings]


def test_a_query_over_one_endpoint(recorded):
    server = recorded()
    rows = select(server.sparql, query=f"""PREFIX ex: <{EX}>
        SELECT ?river ?km WHERE {{ ?river ex:lengthKm ?km }} ORDER BY DESC(?km) LIMIT 3""")
    assert rows == [{"river": f"{EX}Danube", "km": "2850"}, {"river": f"{EX}Rhine", "km": "1230"},
                    {"river": f"{EX}Elbe", "km": "1094"}], server.show()


def discharges() -> Store:
    """The second endpoint's data: mean discharges, which the demo dataset has not."""
    store = Store()
    store.load("\n".join(f'<{EX}{river}> <{EX}dischargeM3s> "{m3s}"^^<{XSD_INT}> .'
                         for river, m3s in [("Rhine", 2330), ("Danube", 6500), ("Thames", 66)]).encode(),
               format="nt")
    return store


def test_two_endpoints_federated_by_one_join(recorded):
    rivers, flows = recorded(), recorded(discharges())
    rows = select(rivers.sparql, flows.sparql, query=f"""PREFIX ex: <{EX}>
        SELECT ?river ?km ?m3s WHERE {{ ?river ex:lengthKm ?km ; ex:dischargeM3s ?m3s }} ORDER BY ?river""")
    assert rows == [{"river": f"{EX}Danube", "km": "2850", "m3s": "6500"},
                    {"river": f"{EX}Rhine", "km": "1230", "m3s": "2330"}], rivers.show() + flows.show()
    # each endpoint was asked
    assert rivers.recorder.requests and flows.recorder.requests


def test_an_update_with_credentials(recorded):
    server = recorded(update_token="s3cret")
    insert = f"INSERT DATA {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}"
    comunica(f"sparql@{server.sparql}", "--to", server.sparql, "-c", json.dumps({"httpAuth": "admin:s3cret"}),
             "-q", insert)
    assert server.recorder.requests[-1].status == 204, server.show()
    assert server.recorder.requests[-1].header("authorization").startswith("Basic ")
    rows = select(server.sparql, query=f"SELECT ?into WHERE {{ <{EX}Isar> <{EX}flowsInto> ?into }}")
    assert rows == [{"into": f"{EX}Danube"}]
