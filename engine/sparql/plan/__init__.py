"""Planning: the decisions taken before (or between) operators run.

The planner orders a BGP's triple patterns (:mod:`.bgp_order`) with the cost
model's cardinality estimates (:mod:`.cost`), and the rewrites choose the
cheaper way to run a node: nested groups joined as one BGP
(:mod:`.join_groups`), two patterns that close a cycle intersected
(:mod:`.cycles`), a bind join instead of a join (:mod:`.bind_join`),
a LIMIT pushed into a BGP explored in chunks (:mod:`.limit_pushdown`), a
FILTER compared over a whole column (:mod:`.vector_filter`), a spatial
FILTER over two unrelated sides joined through an R-tree
(:mod:`.spatial_filter`). Nothing here touches solutions: the executor
(:mod:`engine.sparql.exec`) asks and acts.
"""

from engine.sparql.plan.bgp_order import connected_groups, order_patterns, pattern_variables
from engine.sparql.plan.bind_join import bind_join_applies, named_graph_bgp
from engine.sparql.plan.cost import CostModel, Estimator
from engine.sparql.plan.cycles import ClosingPair, closing_pair
from engine.sparql.plan.held_orders import HeldOrders
from engine.sparql.plan.join_groups import merged_bgp
from engine.sparql.plan.limit_pushdown import CHUNK_GROWTH, FIRST_CHUNK, LimitedBGP, chunk_bounds, limited_bgp
from engine.sparql.plan.spatial_filter import SpatialPredicate, spatial_predicates
from engine.sparql.plan.vector_filter import (
    COMPARISONS,
    ColumnComparison,
    TermIdentity,
    column_comparison,
    term_identity,
)

__all__ = [
    # spatial filters (GeoSPARQL)
    "SpatialPredicate",
    "spatial_predicates",
    "CHUNK_GROWTH",
    "COMPARISONS",
    "ClosingPair",
    "FIRST_CHUNK",
    "ColumnComparison",
    "CostModel",
    "Estimator",
    "HeldOrders",
    "LimitedBGP",
    "bind_join_applies",
    "named_graph_bgp",
    "chunk_bounds",
    "closing_pair",
    "column_comparison",
    "connected_groups",
    "TermIdentity",
    "term_identity",
    "limited_bgp",
    "merged_bgp",
    "order_patterns",
    "pattern_variables",
]
