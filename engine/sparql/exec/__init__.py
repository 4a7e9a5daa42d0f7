"""Execution: the solutions of an algebra tree over one snapshot of the store.

:class:`Executor` runs a pattern; it dispatches each algebra node to its
operator (one module per operator or small family: :mod:`.bgp`,
:mod:`.paths`, :mod:`.joins`, :mod:`.filter`, :mod:`.extend`,
:mod:`.graphs`, :mod:`.values`, :mod:`.service`, :mod:`.group_by`,
:mod:`.order_by`, :mod:`.modifiers`, :mod:`.slice`, :mod:`.exists`; a
spatial FILTER over two unrelated sides goes through :mod:`.spatial_join`), each
taking the node and the shared :class:`ExecutionContext`, which checks for
cancellation before every operator. Solutions are ID columns
(:mod:`.solutions`) over the query's terms (:mod:`.query_terms`) and the
query dataset (:mod:`.dataset`); :mod:`.evaluation` bridges them to the
expression evaluator. The query forms CONSTRUCT and DESCRIBE (:mod:`.forms`)
and SPARQL Update (:mod:`.update`) build on the executor; what SERVICE and
LOAD may call is :mod:`.outbound`'s policy. EXPLAIN (:mod:`.explain`) shows the
plan with estimates and, run with a :mod:`.trace`, each step's actual rows.
A small query of a known shape may run row by row instead (:mod:`.lean`),
and falls back to the executor past a few rows.
"""

from engine.sparql.exec.context import ExecutionContext, QueryCancelled, ServiceCall
from engine.sparql.exec.dataset import QueryDataset, build_dataset, default_graph, merged
from engine.sparql.exec.executor import OPERATORS, Executor
from engine.sparql.exec.explain import explain_plan
from engine.sparql.exec.forms import construct, construct_ids, describe
from engine.sparql.exec.lean import LeanPlan
from engine.sparql.exec.outbound import DEPTH_HEADER, OutboundPolicy, OutboundRefused, incoming_depth
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.service import ServiceClient, ServiceError, ServiceRefused
from engine.sparql.exec.solutions import Solutions
from engine.sparql.exec.trace import Trace
from engine.sparql.exec.update import UpdateError, UpdateRunner

__all__ = [
    "DEPTH_HEADER",
    "OPERATORS",
    "OutboundPolicy",
    "OutboundRefused",
    "ServiceRefused",
    "incoming_depth",
    "ExecutionContext",
    "LeanPlan",
    "Executor",
    "QueryCancelled",
    "QueryDataset",
    "QueryTerms",
    "ServiceCall",
    "ServiceClient",
    "ServiceError",
    "Solutions",
    "Trace",
    "UpdateError",
    "UpdateRunner",
    "build_dataset",
    "default_graph",
    "construct",
    "construct_ids",
    "describe",
    "explain_plan",
    "merged",
]
