"""Each SPARQL stage exports its API from its package: the names the stream
engine, the endpoint and the Python API import are there, and nothing else
is promised."""

import importlib

import pytest

CONTRACT = {
    "engine.sparql.syntax": {
        "parse_query", "parse_update", "parse_registration", "is_registration", "ContinuousQuery",
        "WindowSpec", "SparqlSyntaxError",
    },
    "engine.sparql.plan": {"order_patterns", "CostModel", "bind_join_applies", "limited_bgp", "chunk_bounds",
                           "column_comparison"},
    "engine.sparql.exec": {
        "Executor", "QueryDataset", "QueryCancelled", "QueryTerms", "Solutions", "construct", "describe",
        "merged", "build_dataset", "UpdateRunner", "UpdateError", "ServiceClient", "ServiceError",
    },
    "engine.sparql.expr": {"EvalContext", "ExprError", "evaluate", "effective_boolean_value", "order_key"},
}


@pytest.mark.parametrize("package", sorted(CONTRACT))
def test_each_stage_exports_what_its_callers_import(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__
    assert CONTRACT[package] <= set(module.__all__)
    assert all(hasattr(module, name) for name in module.__all__)


def test_errors_that_reach_http_carry_their_status() -> None:
    from engine.sparql.exec import QueryCancelled, ServiceError, UpdateError
    from engine.sparql.syntax import SparqlSyntaxError

    assert (SparqlSyntaxError.status, UpdateError.status, ServiceError.status, QueryCancelled.status) == (
        400, 400, 502, 503)
