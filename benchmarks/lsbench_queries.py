"""LSBench's continuous queries L1-L6, adapted to C-SPARQL as SEMANTICS.md reads it.

The originals (``../shared/datasets/lsbench/queries.md``) are in Wukong+S's
shorthand: ``FROM poststream [RANGE 1s STEP 100ms]`` and no stored-graph
clause, because Wukong+S reads any pattern no stream carries from its store.
Under SEMANTICS.md a C-SPARQL query sees only its windows unless it names
stored graphs with ``FROM <g>``, so the queries that join with the social
graph (L2, L3, L5, L6) name ``SOCIAL_GRAPH``; L1 and L4 match stream triples
only and name no stored graph (naming it would add u6496's stored profile to
every window of L1). The WHERE clauses are the originals, unchanged.

Each query is kept in parts so that the same text gives both the
registration and the plain SPARQL that one window means (the test evaluates
the latter with an independent engine over the window's content).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.lsbench_data import DBP, FOAF, GROUP, PERSON, SIOC, SOCIAL_GRAPH, STREAMS, USER, VOCAB

PREFIXES = (
    f"PREFIX sib:  <{VOCAB}>\n"
    f"PREFIX sibu: <{USER}>\n"
    f"PREFIX sibp: <{PERSON}>\n"
    f"PREFIX sibg: <{GROUP}>\n"
    f"PREFIX sioc: <{SIOC}>\n"
    f"PREFIX foaf: <{FOAF}>\n"
    f"PREFIX dbp:  <{DBP}>\n"
)
RANGE_MS = 1_000
STEP_MS = 100


@dataclass(frozen=True)
class LSBenchQuery:
    """One continuous query: its SELECT clause and WHERE clause as in the
    original, the streams it reads, whether it joins the stored social graph,
    and the latencies (ms) the Wukong+S paper reports for it."""

    name: str
    original: str
    select: str
    where: str
    streams: tuple[str, ...]
    stored: bool
    paper_wukong_ms: float
    paper_csparql_ms: float

    def registration(self, range_ms: int = RANGE_MS, step_ms: int = STEP_MS) -> str:
        """``REGISTER QUERY`` text: one ``FROM STREAM`` window per stream, then
        ``FROM <social graph>`` if the query joins stored data."""
        window = f"[RANGE {_span(range_ms)} STEP {_span(step_ms)}]"
        clauses = [f"FROM STREAM <{STREAMS[s].iri.value}> {window}" for s in self.streams]
        if self.stored:
            clauses.append(f"FROM <{SOCIAL_GRAPH}>")
        return (f"REGISTER QUERY {self.name} AS\n{PREFIXES}{self.select}\n" + "\n".join(clauses)
                + f"\nWHERE {self.where}\n")

    def window_sparql(self) -> str:
        """The query one window evaluates, over a default graph that holds the
        window's content (and the social graph if ``stored``)."""
        return f"{PREFIXES}{self.select}\nWHERE {self.where}\n"


def _span(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


QUERIES: tuple[LSBenchQuery, ...] = (
    LSBenchQuery(
        "L1", "query1_single_user_actions", "SELECT ?p ?o",
        "{ sibu:u6496 ?p ?o . }",
        ("poststream", "gpsstream"), False, 0.13, 155,
    ),
    LSBenchQuery(
        "L2", "query2_group_post", "SELECT ?post",
        "{\n  ?user sioc:account_of sibp:p864 .\n  ?user sioc:creator_of ?post .\n}",
        ("poststream",), True, 0.10, 708,
    ),
    LSBenchQuery(
        "L3", "query3_group_friend_post", "SELECT ?friend ?post",
        "{\n  ?user sioc:account_of sibp:p3514 .\n  ?user foaf:knows ?friend .\n"
        "  ?friend sioc:creator_of ?post .\n}",
        ("poststream",), True, 0.13, 872,
    ),
    LSBenchQuery(
        "L4", "query4_posts_same_tag", "SELECT ?post1 ?post2 ?tag",
        "{\n  ?post1 sib:hashtag ?tag .\n  ?user sioc:creator_of ?post1 .\n"
        "  ?user sioc:creator_of ?post2 .\n  ?post2 sib:hashtag ?tag .\n  FILTER (?post1 != ?post2)\n}",
        ("poststream",), False, 1.19, 291,
    ),
    LSBenchQuery(
        "L5", "query5_photo_friend_like", "SELECT ?friend1 ?friend2 ?photo",
        "{\n  ?photo sib:usertag ?friend1 .\n  ?friend1 foaf:knows ?friend2 .\n"
        "  ?friend2 sib:like ?photo .\n}",
        ("photostream", "photolikestream"), True, 2.89, 1984,
    ),
    LSBenchQuery(
        "L6", "query6_post_complex", "SELECT ?user ?friend ?post ?channel",
        "{\n  ?channel sioc:container_of ?post .\n  ?user sioc:subscriber_of ?channel .\n"
        "  ?user foaf:knows ?friend .\n  ?friend sib:like ?post .\n}",
        ("poststream", "postlikestream"), True, 2.14, 3395,
    ),
)
