"""The benchmark workload: named SPARQL 1.1 queries over the generated social network.

Queries are templates over :class:`benchmarks.generate.Constants`, so the
constants they start from always exist in the data that was generated (the
latency benchmark formats them with the generated graph's constants; the
parse-time benchmark, which never touches data, uses :data:`DEFAULT_CONSTANTS`).
Each one exercises a different part of an engine: index lookups, joins,
filters, aggregation, OPTIONAL, property paths and ASK.
"""

from __future__ import annotations

from benchmarks.generate import SN, Constants

PREFIXES = f"""PREFIX sn: <{SN}>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""

#: name -> (what it measures, template over ``{user}`` and ``{tag}``)
TEMPLATES: dict[str, tuple[str, str]] = {
    "friends": (
        "point lookup from a constant, one join for the names",
        """SELECT ?friend ?name WHERE {
  <{user}> sn:knows ?friend .
  ?friend sn:name ?name .
}""",
    ),
    "friends_of_friends": (
        "2-hop expansion from a constant with DISTINCT and a FILTER",
        """SELECT DISTINCT ?fof WHERE {
  <{user}> sn:knows ?friend .
  ?friend sn:knows ?fof .
  FILTER(?fof != <{user}>)
}""",
    ),
    "user_posts_star": (
        "star join on one subject, ordered by date",
        """SELECT ?post ?content ?date WHERE {
  ?post a sn:Post ;
        sn:hasCreator <{user}> ;
        sn:content ?content ;
        sn:created ?date .
}
ORDER BY DESC(?date)""",
    ),
    "age_filter": (
        "numeric FILTER over a type scan, with LIMIT",
        """SELECT ?user ?name ?age WHERE {
  ?user a sn:User ;
        sn:name ?name ;
        sn:age ?age .
  FILTER(?age > 60)
}
LIMIT 100""",
    ),
    "top_liked_posts": (
        "GROUP BY + COUNT over every like, ORDER BY DESC, LIMIT 10",
        """SELECT ?post (COUNT(?fan) AS ?likes) WHERE {
  ?fan sn:likes ?post .
}
GROUP BY ?post
ORDER BY DESC(?likes)
LIMIT 10""",
    ),
    "posts_optional_tags": (
        "OPTIONAL (left join) from a constant; posts without tags keep one row",
        """SELECT ?post ?tag WHERE {
  ?post sn:hasCreator <{user}> .
  OPTIONAL { ?post sn:hasTag ?tag }
}""",
    ),
    "knows_path": (
        "transitive property path knows+ from a constant, with LIMIT",
        """SELECT ?reached WHERE {
  <{user}> sn:knows+ ?reached .
}
LIMIT 100""",
    ),
    "fans_of_user": (
        "selective join likes/hasCreator from a constant",
        """SELECT ?fan ?post ?name WHERE {
  ?post sn:hasCreator <{user}> .
  ?fan sn:likes ?post .
  ?fan sn:name ?name .
}""",
    ),
    "recent_tagged_posts": (
        "dateTime range FILTER joined with a tag lookup",
        """SELECT ?post ?date WHERE {
  ?post sn:hasTag <{tag}> ;
        sn:created ?date .
  FILTER(?date >= "2023-01-01T00:00:00Z"^^xsd:dateTime)
}""",
    ),
    "ask_friend_likes": (
        "ASK: does a friend of the user like one of the user's posts?",
        """ASK {
  <{user}> sn:knows ?friend .
  ?friend sn:likes ?post .
  ?post sn:hasCreator <{user}> .
}""",
    ),
}

#: a typical hand-written query of about ten lines, for parse-time comparisons
TYPICAL_10_LINE = f"""{PREFIXES}SELECT ?name (COUNT(?post) AS ?posts) WHERE {{
  ?user a sn:User ;
        sn:name ?name ;
        sn:age ?age .
  ?post sn:hasCreator ?user .
  OPTIONAL {{ ?post sn:hasTag ?tag }}
  FILTER(?age >= 18 && ?age < 30)
}}
GROUP BY ?name
ORDER BY DESC(?posts) LIMIT 20"""

DEFAULT_CONSTANTS = Constants(user=f"{SN}user/42", tag=f"{SN}tag/9")


def build_queries(constants: Constants = DEFAULT_CONSTANTS) -> dict[str, str]:
    """Full query texts (with prefixes) for the given constants, in workload order."""
    values = {"user": constants.user, "tag": constants.tag}
    out = {}
    for name, (_, template) in TEMPLATES.items():
        text = template
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        out[name] = PREFIXES + text
    return out


def describe(name: str) -> str:
    """One line saying what the named query exercises."""
    return TEMPLATES[name][0]
