"""A BGP asked again about another subject or object (the same query about
another user) takes the order planned for the first one while its first
pattern costs about the same, and is planned anew when it does not (a hub);
the answers are those of every order (checked against a scan)."""

from __future__ import annotations

import random

import pytest

from engine.api import Store
from engine.sparql.exec import bgp

EX = "http://example.org/"
USERS = 40
HUB = 0


@pytest.fixture
def store() -> Store:
    rng = random.Random(8)
    lines = []
    for post in range(600):
        creator = HUB if post < 400 else rng.randrange(1, USERS)
        lines.append(f"<{EX}post{post}> <{EX}creator> <{EX}u{creator}> .")
        for fan in rng.sample(range(USERS), rng.randrange(0, 4)):
            lines.append(f"<{EX}u{fan}> <{EX}likes> <{EX}post{post}> .")
    store = Store()
    store.update("INSERT DATA { " + "\n".join(lines) + " }")
    return store


def _likes(store: Store, user: int) -> int:
    """The answer by a scan of the triples, whatever the planner does."""
    posts = {s for s, p, o in store.triples() if p.value == f"{EX}creator" and o.value == f"{EX}u{user}"}
    return sum(1 for s, p, o in store.triples() if p.value == f"{EX}likes" and o in posts)


def test_an_order_is_kept_per_skeleton_and_replanned_for_a_hub(store, monkeypatch):
    planned = []
    original = bgp.order_patterns

    def counting(patterns, estimate, bound=None):
        planned.append(len(patterns))
        return original(patterns, estimate, bound)

    monkeypatch.setattr(bgp, "order_patterns", counting)
    monkeypatch.setattr(bgp, "_ORDERS", {})
    monkeypatch.setattr(bgp, "_SKELETON_ORDERS", {})
    query = (f"SELECT (COUNT(?fan) AS ?n) WHERE {{ ?post <{EX}creator> <{EX}u{{user}}> . "
             f"?fan <{EX}likes> ?post }}")
    users = [u for u in range(1, USERS) if _likes(store, u)][:12]
    for user in users:
        (row,) = store.query(query.replace("{user}", str(user))).rows()
        assert int(row[0].lexical) == _likes(store, user)
    assert len(planned) == 1, "other users of about the same size take the first user's order"
    (row,) = store.query(query.replace("{user}", str(HUB))).rows()
    assert int(row[0].lexical) == _likes(store, HUB)
    assert len(planned) == 2, "the hub's first pattern costs far more: planned anew"
