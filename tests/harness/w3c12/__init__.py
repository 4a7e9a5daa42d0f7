"""The W3C RDF 1.2 and SPARQL 1.2 suites, run and published together.

``python -m tests.harness.w3c12`` runs the SPARQL 1.2 suite with the 1.1
runner (:mod:`tests.harness.w3c`: same manifests, same comparisons) and the
RDF 1.2 syntax suites (:mod:`tests.harness.w3c_rdf`), prints the tables and
rewrites the RDF 1.2 / SPARQL 1.2 part of docs/conformance.md (everything
after :data:`MARKER`; the 1.1 harness keeps that part when it rewrites the
page). tests/conformance/test_w3c_12.py runs the same under pytest.
"""

from tests.harness.w3c12.report import MARKER, publish, render_section

__all__ = ["MARKER", "publish", "render_section"]
