"""Groups joined as one BGP: ``{ a b { c } { d } }`` is matched as ``{ a b c d }``.

The algebra turns every nested group into its own BGP and joins them in the
order they are written, so a query whose first group binds variables that
only a later group connects (CityBench's ``?p1 a :ParkingVacancy . ?p2 a
:ParkingVacancy . { ... ?obId1 ssn:observedProperty ?p1 ... }``) would
explore the first group whole, a product, and filter it afterwards. Join is
associative and commutative, and two BGPs' solutions joined are the
solutions of the BGP of both pattern sets (a blank node label cannot be
shared by two groups, so each group's blank nodes stay apart), so a join
tree whose every leaf is a BGP can be handed to the planner as one BGP and
ordered across the groups.
"""

from __future__ import annotations

from engine.sparql import algebra as A


def merged_bgp(node: A.Join) -> A.BGP | None:
    """The one BGP a join of BGPs (nested to any depth) means; None when a
    leaf of the join tree is anything else (it keeps its own evaluation)."""
    triples: list[A.TriplePattern] = []
    stack: list[A.Pattern] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, A.Join):
            stack.extend((item.right, item.left))
        elif isinstance(item, A.BGP):
            triples.extend(item.triples)
        else:
            return None
    return A.BGP(tuple(dict.fromkeys(triples)))
