"""Harnesses: code that drives external test suites, kept apart from the tests.

Nothing here is collected by pytest (no ``test_*`` modules); the tests that
use these harnesses live beside the code they test, and the harnesses also
run on their own:

* :mod:`tests.harness.w3c`: the W3C SPARQL 1.1 query, update, syntax and
  result-format suites against the engine API. ``python -m tests.harness.w3c``
  (what ``make conformance`` runs) prints the table and rewrites
  ``docs/conformance.md``; tests/conformance holds the suite to its figures.
* :mod:`tests.harness.w3c_http`: the W3C suites that need a live server
  (protocol, graph store protocol, service description, SERVICE), replayed
  by tests/endpoint/test_w3c_*.py; ``python -m tests.harness.w3c_http.report``
  rewrites ``docs/conformance-http.md``.
* :mod:`tests.harness.csrbench`: CSRBench's items, queries and expected
  windows, for tests/stream/test_csrbench_engine.py and the HTTP stream tests.
* :mod:`tests.harness.citybench`: CityBench's queries whose windows have
  different STEPs, with observations generated in its shape, for
  tests/stream/test_multi_step_windows.py and the HTTP window tests.

The suites are read from ``../shared/conformance`` (CityBench from
``../shared/datasets``) beside the checkout; when
it is absent the tests that need them skip and the commands say so. The
LSBench drivers are benchmarks (``benchmarks/lsbench_*.py``), not harnesses.
"""
