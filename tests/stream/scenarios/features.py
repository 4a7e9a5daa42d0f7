"""The switches a scenario is generated with, one per feature, so that a
failure can be put down to the feature that made it.

Switch a feature on by removing it from :data:`KNOWN_BROKEN` once the engine
is fixed (the CI module and ``python -m tests.stream.scenarios`` generate
every feature of :data:`FEATURES` that is in neither set below).
"""

from __future__ import annotations

FEATURES: dict[str, str] = {
    # languages, report policies, query forms
    "csparql": "C-SPARQL registrations (REGISTER QUERY / REGISTER STREAM, FROM STREAM)",
    "rspql": "RSP-QL registrations (REGISTER RSTREAM|ISTREAM|DSTREAM, FROM NAMED WINDOW, WINDOW blocks)",
    "istream": "RSP-QL ISTREAM queries (multiset difference with the previous window)",
    "dstream": "RSP-QL DSTREAM queries",
    "aggregates": "SELECT with COUNT/SUM/MIN/MAX/AVG, with and without GROUP BY",
    "ask": "ASK queries",
    "construct": "CONSTRUCT queries (reported as triples)",
    "sparql_variety": "FILTER (NOT) EXISTS, MINUS, BIND, VALUES, property paths, sub-SELECTs",
    "literal_variety": "numbers as xsd:decimal, xsd:double, negatives and strings; language tags",
    # windows
    "range_multiple": "RANGE a multiple (2-4x) of STEP",
    "range_not_multiple": "RANGE not a multiple of STEP",
    "range_lt_step": "RANGE smaller than STEP (items between windows are in none)",
    "tumbling": "C-SPARQL [RANGE r TUMBLING]",
    "two_windows": "two windows in one query (same STEP, RANGEs may differ)",
    "different_steps": "two windows with different STEPs in one query",
    "count_windows": "[TRIPLES n] windows (items of distinct triples, boundaries between items)",
    "count_item_repeats": "[TRIPLES n] over items that repeat a triple inside the item",
    "count_cross_item_repeats": "[TRIPLES n] over items repeating a triple an earlier item held",
    # stored data
    "static_graphs": "FROM a stored graph loaded before the streams (RSP-QL: the default graph)",
    "static_updates": "INSERT DATA / DELETE DATA on stored graphs between posts",
    "absorbed_graph": "FROM the graph a stream of the query absorbs into (as-of reads)",
    "shared_graph": "several streams absorbing into one stored graph (distinct triples each)",
    "shared_triple": "one triple absorbed into one graph by two streams (the later post, the earlier time)",
    "foreign_absorb": "FROM a graph that a stream the query does not read absorbs into",
    "static_into_absorbed": "INSERT DATA into a graph a stream absorbs into (triples no stream posts)",
    "timing_predicates": "streams with timing predicates (never absorbed)",
    "timeless_declaration": "streams declared by their timeless predicates (every other one timing)",
    # chains
    "chains": "REGISTER STREAM outputs read by other queries (and FROM the output's graph)",
    "name_collision": "output IRIs whose last segment is another stream's name (both orders)",
    # the timeline
    "late_registration": "queries registered after data has flowed (heartbeats make the gap)",
    "late_uneven": "late registration while the query's streams have different watermarks",
    "late_items": "posts older than the watermark, or decreasing inside a batch (refused, nothing kept)",
    "unregister": "queries unregistered while data flows (their events stop, the others go on)",
    "heartbeats": "heartbeats alone and at the end of batches",
    "same_timestamp_items": "several items with one timestamp, and items at exactly the watermark",
    "repeats": "triples repeated inside an item and across items (time windows)",
    "medium_batches": "posts of 4,096-16,383 triples spanning several window closes",
    "large_batch_timing": "posts of 16,384-20,000 timing triples (nothing absorbed)",
    "large_batch_asof": "posts of 16,384-20,000 timeless triples absorbed into a graph a query reads",
    "huge_batch_asof": "a post of 65,536-70,000 timeless triples absorbed into a graph a query reads",
    "many_batches_asof": "120 posts of 180 timeless triples (21,600 in all) into a graph a query reads",
    "epoch_time": "timestamps near 1.7e12 ms (today), windows aligned on the epoch",
    "negative_time": "timestamps before the epoch",
    # HTTP only (the in-process driver ignores them)
    "http_single_items": "HTTP: single items as N-Triples or Turtle with X-Timestamp",
    "http_resume": "HTTP: SSE readers that disconnect and resume with Last-Event-ID",
}

#: features the engine gets wrong today, by issue 26's numbered items; the
#: generators leave them out until the lead switches them on
KNOWN_BROKEN: dict[str, str] = {}

#: features where the contract does not decide the answer yet; the oracle
#: follows the reading written beside each, and they stay off until
#: docs/semantics.md says so
UNSETTLED: dict[str, str] = {}

#: every feature the generators use by default
DEFAULT: frozenset[str] = frozenset(FEATURES) - set(KNOWN_BROKEN) - set(UNSETTLED)


def parse(spec: str | None) -> frozenset[str]:
    """Features from a command line: ``default``, ``all``, or a comma list
    where ``+name`` adds to and ``-name`` removes from the default set."""
    if not spec or spec == "default":
        return DEFAULT
    if spec == "all":
        return frozenset(FEATURES)
    chosen = set(DEFAULT) if all(p[:1] in "+-" for p in spec.split(",")) else set()
    for part in spec.split(","):
        name = part.lstrip("+-")
        if name not in FEATURES:
            raise ValueError(f"unknown feature {name!r}; known: {', '.join(FEATURES)}")
        (chosen.discard if part.startswith("-") else chosen.add)(name)
    return frozenset(chosen)
