"""A continuous query plans its patterns once and plans again only when the
window's workload moves past Strider's threshold; the answers never change."""

from engine.api import Store
from engine.rdf import IRI, Variable
from engine.sparql.algebra import TriplePattern
from engine.sparql.plan.held_orders import REPLAN_FACTOR, HeldOrders, moved
from engine.stream import StreamDefinition, StreamEngine

EX = "http://example.org/"


class Sized:
    """A stand-in graph: only its size is read by the trigger."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def patterns() -> tuple[TriplePattern, TriplePattern]:
    x, y = Variable("x"), Variable("y")
    return TriplePattern(x, IRI(EX + "p"), y), TriplePattern(y, IRI(EX + "q"), x)


def test_the_trigger_fires_past_the_factor_or_when_an_input_empties_or_fills():
    assert not moved((100, 10), (100 * REPLAN_FACTOR, 10))
    assert moved((100, 10), (100 * REPLAN_FACTOR + 1, 10))
    assert moved((100, 10), (100, 4))
    assert moved((0, 10), (1, 10)) and moved((1, 10), (0, 10))
    assert not moved((0, 10), (0, 10))


def test_an_order_is_kept_across_new_graphs_until_the_workload_moves():
    a, b = patterns()
    held = HeldOrders()
    made = []

    def plan():
        made.append(1)
        return [b, a]

    for size in (100, 120, 90, 150):  # a new graph every window, about as large
        graph = Sized(size)
        assert held.order({a: graph, b: graph}, frozenset(), 1, plan) == [b, a]
    assert (held.plans, held.replans) == (1, 0)
    graph = Sized(1000)
    held.order({a: graph, b: graph}, frozenset(), 1, lambda: [a, b])
    assert (held.plans, held.replans, held.changed) == (2, 1, 1)
    # the patterns in graphs of their own are another plan
    held.order({a: Sized(1000), b: Sized(1000)}, frozenset(), 1, plan)
    assert held.plans == 3 and held.replans == 1


def test_a_registered_query_plans_at_its_first_window_and_answers_every_window():
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("a", IRI(EX + "a")))
    running = engine.register(
        f"REGISTER QUERY q AS PREFIX ex: <{EX}> SELECT ?x ?z FROM STREAM <{EX}a> [RANGE 1s STEP 100ms] "
        "WHERE { ?x ex:knows ?y . ?y ex:name ?z }")
    subscription = running.subscribe()
    for step in range(1, 30):
        t = step * 100
        engine.ingest("a", [(t - 50, [(IRI(f"{EX}u{step}"), IRI(EX + "knows"), IRI(f"{EX}v{step}")),
                                      (IRI(f"{EX}v{step}"), IRI(EX + "name"), IRI(f"{EX}n{step}"))])])
        engine.heartbeat("a", t)
    events = subscription.drain()
    assert [len(e.rows) for e in events[-5:]] == [10] * 5
    assert running.plans.plans <= 4  # the window grows from 1 to 10 items, then holds
    engine.close()
