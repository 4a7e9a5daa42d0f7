"""The W3C RDF 1.2 syntax suites (N-Triples, N-Quads, Turtle, TriG) run
against the engine's readers and writers.

``manifest`` reads the suites' manifests into test descriptions, ``runner``
runs them: syntax tests through the store's loader (and, for the line
formats, the streaming statement reader too), evaluation tests by loading,
reading the store back and writing it out in Turtle and N-Triples, and
canonicalisation tests through the N-Triples writer. ``python -m
tests.harness.w3c12`` runs these with the SPARQL 1.2 suite and publishes
the tables in docs/conformance.md.
"""
