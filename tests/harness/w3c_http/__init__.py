"""The W3C suites that need a live server: SPARQL 1.1 Protocol, Graph Store
HTTP Protocol, Service Description and SERVICE.

``manifest`` reads the HTTP exchanges the manifests describe and replays them
against a server; the tests that do so are tests/endpoint/test_w3c_*.py, run
by ``make test``. ``python -m tests.harness.w3c_http.report`` runs those tests
and rewrites ``docs/conformance-http.md`` with the outcome of each manifest
entry.
"""
