"""A seeded fuzz run against a real server: mutated queries, updates,
uploads, stream batches and registrations. No answer may be a 5xx other
than the server's own limits (503) and a failed remote (502), no request may
hang, and a refused write must change nothing (the store's size is checked
after every refused write).

The mutations are the classic ones (bytes dropped, repeated, swapped,
inserted; a span repeated many times; brackets nested deep; escapes that are
not characters; numbers past every limit), applied to valid seeds, so most
inputs get past the first bytes of the parsers.
"""

from __future__ import annotations

import random
import time
from collections import Counter

import httpx

from engine.api import Store

EX = "http://example.org/"
SEED = 20261123
INPUTS = 5_000
BUDGET_S = 100

QUERIES = [
    f"SELECT ?s ?o WHERE {{ ?s <{EX}p> ?o FILTER(?o > 1) }} ORDER BY ?o LIMIT 5",
    f"PREFIX ex: <{EX}> SELECT (COUNT(*) AS ?n) WHERE {{ ?s ex:p ?o OPTIONAL {{ ?o ex:q ?x }} }} GROUP BY ?s",
    f"ASK {{ <{EX}a> (<{EX}p>|^<{EX}q>)* ?x }}",
    f"CONSTRUCT {{ ?s <{EX}r> ?o }} WHERE {{ ?s ?p ?o . BIND(STR(?o) AS ?t) FILTER(REGEX(?t, \"^1\")) }}",
    f"SELECT * WHERE {{ VALUES ?x {{ 1 2 \"a\"@en }} BIND(IRI(CONCAT(\"{EX}\", STR(?x))) AS ?i) }}",
]
UPDATES = [
    f"INSERT DATA {{ <{EX}n> <{EX}p> 5 . GRAPH <{EX}g2> {{ <{EX}n> <{EX}q> \"x\" }} }}",
    f"DELETE {{ ?s <{EX}p> ?o }} INSERT {{ ?s <{EX}p2> ?o }} WHERE {{ ?s <{EX}p> ?o FILTER(?o = 5) }}",
    f"DELETE DATA {{ <{EX}n> <{EX}p> 5 }}",
    f"CLEAR SILENT GRAPH <{EX}g2>",
]
UPLOADS = [
    ("application/n-triples", f'<{EX}u> <{EX}p> "a\\tb" .\n<{EX}u> <{EX}p> 3 .\n'),
    ("text/turtle", f'@prefix ex: <{EX}> . ex:u ex:p ( 1 2 ) ; ex:q [ ex:r "x"@en ] .'),
    ("application/ld+json", f'{{"@id": "{EX}u", "{EX}p": [{{"@value": 3}}]}}'),
]
BATCHES = [f'100 <{EX}s1> <{EX}v> "1" .\n200 <{EX}s2> <{EX}v> 2 .\n300']
REGISTRATIONS = [
    f"REGISTER QUERY q AS SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 1s STEP 100ms] "
    "WHERE { ?s ?p ?o }",
]
SPICE = ["(" * 200, "{" * 200, "\\uD800", "\\U00110000", "9" * 5000, "\x00", "\u00e9", "'''", "\"", "<",
         ">", "}", "]", "?", "#", "%", "\r\n", " . ", "@en-", "^^", "_:", "FILTER(", "SERVICE <"]


def mutate(text: str, rng: random.Random) -> str:
    """One to three random edits of ``text``."""
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        kind = rng.randrange(6)
        if kind == 0 and text:
            end = min(len(text), at + rng.randint(1, 8))
            text = text[:at] + text[end:]
        elif kind == 1:
            text = text[:at] + rng.choice(SPICE) + text[at:]
        elif kind == 2 and text:
            end = min(len(text), at + rng.randint(1, 12))
            text = text[:at] + text[at:end] * rng.randint(2, 50) + text[end:]
        elif kind == 3 and len(text) > 2:
            i, j = sorted(rng.sample(range(len(text)), 2))
            text = text[:i] + text[j] + text[i + 1 : j] + text[i] + text[j + 1 :]
        elif kind == 4:
            text = text[:at] + chr(rng.choice([rng.randint(1, 0x7F), rng.randint(0x80, 0x2FFF)])) + text[at:]
        else:
            text = text[:at] + str(rng.choice([-1, 0, 2**63, 10**30])) + text[at:]
    return text


COUNT_ALL = "SELECT (COUNT(*) AS ?n) { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"


def _size(client: httpx.Client, url: str) -> int:
    answer = client.get(f"{url}/sparql", headers={"Accept": "text/csv"}, params={"query": COUNT_ALL})
    return int(answer.text.split()[1])


def test_five_thousand_mutated_requests_never_break_the_server(serve):
    store = Store()
    store.update(f"INSERT DATA {{ <{EX}a> <{EX}p> 1 . <{EX}b> <{EX}p> 2 . <{EX}b> <{EX}q> <{EX}a> }}")
    url = serve(store, query_timeout=5.0, max_rows=200_000, max_body_bytes=1 << 20)
    rng = random.Random(SEED)
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    started = time.monotonic()
    with httpx.Client(timeout=20.0) as client:
        assert client.put(f"{url}/streams/s", json={"iri": f"{EX}s"}).status_code == 201
        for n in range(INPUTS):
            assert time.monotonic() - started < BUDGET_S, f"the fuzz run passed {BUDGET_S} s at input {n}"
            kind = rng.randrange(5)
            before = _size(client, url) if kind in (1, 2) else None
            if kind == 0:
                text = mutate(rng.choice(QUERIES), rng)
                response = client.get(f"{url}/sparql", params={"query": text})
            elif kind == 1:
                text = mutate(rng.choice(UPDATES), rng)
                response = client.post(f"{url}/sparql", data={"update": text})
            elif kind == 2:
                media, body = rng.choice(UPLOADS)
                text = mutate(body, rng)
                response = client.post(f"{url}/store", params={"graph": f"{EX}up"}, content=text.encode(),
                                       headers={"Content-Type": media})
            elif kind == 3:
                text = mutate(rng.choice(BATCHES), rng)
                response = client.post(f"{url}/streams/s", content=text.encode(),
                                       headers={"Content-Type": "application/x-timestamped-ntriples"})
            else:
                text = mutate(rng.choice(REGISTRATIONS), rng)
                response = client.post(f"{url}/queries", content=text.encode(),
                                       headers={"Content-Type": "application/sparql-query"})
                if response.status_code == 201:
                    client.delete(response.headers["location"])
            statuses[response.status_code] += 1
            if response.status_code >= 500 and response.status_code not in (502, 503):
                failures.append(f"{response.status_code} for {text[:200]!r}: {response.text[:200]}")
            if before is not None and response.status_code >= 400 and _size(client, url) != before:
                failures.append(f"refused write changed the store: {text[:200]!r}")
    elapsed = time.monotonic() - started
    print(f"fuzz: {INPUTS} inputs in {elapsed:.0f} s; statuses {dict(sorted(statuses.items()))}")
    assert not failures, "\n".join(failures[:20])
    assert sum(statuses.values()) == INPUTS
