"""Runner for the W3C SPARQL 1.1 test suite (``python -m tests.conformance``).

The suite lives outside the repository, in ``<repo>/../shared``; everything
here degrades to a printed reason when it is missing so the product never
depends on it.
"""
