"""The W3C SPARQL 1.1 test suite run against the engine API (no HTTP).

``manifest`` reads the manifests into test descriptions, ``expected`` the
expected result files, ``compare`` compares answers (solutions as multisets
up to blank node renaming, graphs by isomorphism), ``runner`` runs each test
in a fresh store under a time limit and renders the report.

Run it with ``python -m tests.harness.w3c`` (``make conformance``): it prints
the pass rates per category and folder and rewrites ``docs/conformance.md``;
``--folder NAME`` runs one folder, ``-v`` shows each failure's difference,
``--no-docs`` leaves the page alone. tests/conformance runs the same suite
under pytest and holds it to its figures.
"""
