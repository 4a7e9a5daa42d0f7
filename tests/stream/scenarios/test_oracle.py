"""The oracle against answers worked out by hand from SEMANTICS.md, one rule
per test, so that a disagreement with the engine is not the oracle's
doing. The engine is not run here."""

from __future__ import annotations

import random

import pytest

from tests.stream.scenarios.model import (
    Declare,
    Post,
    QuerySpec,
    Register,
    Scenario,
    StreamSpec,
    Update,
    Window,
)
from tests.stream.scenarios.oracle import Ambiguous, Oracle, expect

EX = "http://example.org/"


def iri(local: str) -> str:
    return f"<{EX}{local}>"


def triple(s: str, p: str, o: str) -> tuple[str, str, str]:
    return iri(s), iri(p), iri(o)


def stream(name: str, graph: str | None = None, timing: frozenset[str] = frozenset()) -> StreamSpec:
    return StreamSpec(name, EX + name, EX + (graph or name), timing)


def query(
    name: str,
    head: str,
    where: str,
    windows,
    *,
    language="csparql",
    policy="RSTREAM",
    form="SELECT",
    stored=(),
    output=None,
    modifiers="",
) -> QuerySpec:
    return QuerySpec(
        name, language, policy, form, head, where, tuple(windows), modifiers, tuple(stored), (), output
    )


def window(name: str, range_ms: int, step_ms: int, label: str = "") -> Window:
    return Window(EX + name, range_ms, step_ms, name=EX + (label or f"w{name}"))


def windows_of(scenario: Scenario, name: str) -> list[tuple]:
    """(start, end, shown result) of each expected event of query ``name``."""
    return [(e.start, e.end, e.result.show()) for e in expect(scenario).events[name]]


def test_windows_are_half_open_and_epoch_aligned():
    q = query("q", "SELECT ?s", f"?s {iri('p')} ?o", [window("a", 1000, 500)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {},
        [
            Register(q),
            Post("a", ((1200, (triple("x", "p", "y"),)), (1500, (triple("z", "p", "y"),)), (2600, ()))),
        ],
    )
    x, z = f"(?s={iri('x')})", f"(?s={iri('z')})"
    # the first window is the one that holds the first item: floor(1200 / 500) + 1 = 3, so t = 1500;
    # z at exactly 1500 is in the windows closing at 2000 and 2500, not in [500, 1500)
    assert windows_of(scenario, "q") == [
        (500, 1500, "{" + x + "}"),
        (1000, 2000, "{" + ", ".join([x, z]) + "}"),
        (1500, 2500, "{" + z + "}"),
    ]


def test_empty_windows_are_reported_with_sparql_aggregates():
    q = query(
        "q", "SELECT (COUNT(*) AS ?n) (AVG(?v) AS ?m)", f"?s {iri('val')} ?v", [window("a", 1000, 1000)]
    )
    number = f'"4"^^<{"http://www.w3.org/2001/XMLSchema#integer"}>'
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {},
        [
            Register(q),
            Post("a", ((100, ((iri("x"), iri("val"), number),)), (3000, ()))),
        ],
    )
    assert windows_of(scenario, "q") == [
        (0, 1000, "{(?m=num:4 ?n=num:1)}"),
        (1000, 2000, "{(?m=num:0 ?n=num:0)}"),
        (2000, 3000, "{(?m=num:0 ?n=num:0)}"),
    ]


def test_a_query_fires_at_the_stable_watermark_of_its_streams():
    q = query("q", "SELECT ?s", "?s ?p ?o", [window("a", 1000, 1000), window("b", 1000, 1000)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"), stream("b")),
        {},
        [
            Register(q),
            Post("a", ((100, (triple("x", "p", "y"),)), (5000, ()))),
            Post("b", ((2000, ()),)),
        ],
    )
    assert [end for _, end, _ in windows_of(scenario, "q")] == [1000, 2000]  # b holds it at 2000


def test_a_late_registration_starts_after_the_smallest_watermark():
    q = query("q", "SELECT ?s", "?s ?p ?o", [window("a", 1000, 1000), window("b", 1000, 1000)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"), stream("b")),
        {},
        [
            Post("a", ((3500, ()),)),
            Register(q),
            Post("b", ((4200, (triple("x", "p", "y"),)), (6000, ()))),
            Post("a", ((6000, ()),)),
        ],
    )
    assert [end for _, end, _ in windows_of(scenario, "q")] == [4000, 5000, 6000]


def test_istream_and_dstream_are_multiset_differences():
    where = f"WINDOW <{EX}w> {{ ?s {iri('p')} ?o }}"
    spans = [window("a", 2000, 1000, "w")]
    items = ((100, (triple("x", "p", "y"),)), (1100, (triple("z", "p", "y"),)), (4000, ()))
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {},
        [
            Register(query("i", "SELECT ?o", where, spans, language="rspql", policy="ISTREAM")),
            Register(query("d", "SELECT ?o", where, spans, language="rspql", policy="DSTREAM")),
            Post("a", items),
        ],
    )
    y = f"(?o={iri('y')})"
    # results per window: {y}, {y, y}, {y}, {} -> ISTREAM adds one y, then one more; DSTREAM takes them back
    assert [r for _, _, r in windows_of(scenario, "i")] == ["{" + y + "}", "{" + y + "}", "{}", "{}"]
    assert [r for _, _, r in windows_of(scenario, "d")] == ["{}", "{}", "{" + y + "}", "{" + y + "}"]


def test_a_stored_graph_is_read_as_of_the_window_close():
    """Issue 26, case 2: B's copy of x1 at 1500 is in the snapshot of [1000, 2000),
    though A absorbed the same triple at 10000 first."""
    q = query(
        "q",
        "SELECT ?x ?y",
        f"?x {iri('rel')} ?y",
        [window("A", 1000, 1000, "wa"), window("B", 1000, 1000, "wb")],
        language="rspql",
        stored=(EX + "g",),
    )
    scenario = Scenario(
        0,
        frozenset(),
        (stream("A", "g"), stream("B", "g")),
        {},
        [
            Register(q),
            Post("B", ((1000, (triple("x0", "rel", "y0"),)),)),
            Post("A", ((10000, (triple("x1", "rel", "y1"),)),)),
            Post("B", ((1500, (triple("x1", "rel", "y1"),)), (2000, ()))),
        ],
    )
    expected = expect(scenario)
    rows = expected.events["q"][0].result.show()
    assert (expected.events["q"][0].end, rows.count("?x=")) == (2000, 2)
    assert "shared_triple" in expected.exercised


def test_what_a_later_item_absorbed_is_not_seen_and_timing_triples_never_are():
    q = query("q", "SELECT ?o", f"?s {iri('name')} ?o", [window("a", 1000, 1000)], stored=(EX + "a",))
    a = stream("a", timing=frozenset({EX + "temp"}))
    scenario = Scenario(
        0,
        frozenset(),
        (a,),
        {},
        [
            Register(q),
            Post("a", ((100, (triple("x", "temp", "t1"),)), (1500, (triple("x", "name", "n"),)), (2000, ()))),
        ],
    )
    assert [r for _, _, r in windows_of(scenario, "q")] == ["{}", f"{{(?o={iri('n')})}}"]
    assert expect(scenario).graphs[EX + "a"] == frozenset({triple("x", "name", "n")})


def test_count_windows_hold_the_items_graphs():
    """Issue 26, case 1: an item holding one triple twice is one triple."""
    q = query("q", "SELECT ?s ?o", f"?s {iri('p')} ?o", [Window(EX + "s", triples=2)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("s"),),
        {},
        [
            Register(q),
            Post("s", ((1000, (triple("a", "p", "b"), triple("a", "p", "b"))),)),
            Post("s", ((2000, (triple("c", "p", "d"),)),)),
        ],
    )
    expected = expect(scenario)
    assert [e.result.show().count("?s=") for e in expected.events["q"]] == [2]
    assert "count_item_repeats" in expected.exercised


def test_a_count_window_boundary_inside_an_item_is_not_guessed():
    q = query("q", "SELECT ?s", "?s ?p ?o", [Window(EX + "s", triples=2)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("s"),),
        {},
        [
            Register(q),
            Post("s", ((1000, (triple("a", "p", "b"), triple("c", "p", "d"), triple("e", "p", "f"))),)),
        ],
    )
    with pytest.raises(Ambiguous, match="inside an item"):
        expect(scenario)


def test_register_stream_items_are_at_the_window_close():
    producer = query(
        "p",
        f"CONSTRUCT {{ ?s {iri('hot')} ?o }}",
        f"?s {iri('p')} ?o",
        [window("a", 1000, 1000)],
        form="CONSTRUCT",
        output=EX + "out",
    )
    consumer = query("c", "SELECT ?s", f"?s {iri('hot')} ?o", [window("out", 1000, 1000)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {},
        [
            Register(producer),
            Register(consumer),
            Post("a", ((10, (triple("x", "p", "y"),)), (3000, ()))),
        ],
    )
    # the output item is at 1000: the consumer's first window is the one closing at 2000
    assert windows_of(scenario, "c") == [(1000, 2000, f"{{(?s={iri('x')})}}"), (2000, 3000, "{}")]


def test_late_posts_are_refused_whole():
    q = query("q", "SELECT ?s", "?s ?p ?o", [window("a", 1000, 1000)])
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {},
        [
            Register(q),
            Post("a", ((1500, (triple("x", "p", "y"),)),)),
            Post("a", ((1600, (triple("z", "p", "y"),)), (1400, ()))),
            Post("a", ((3000, ()),)),
        ],
    )
    expected = expect(scenario)
    assert expected.outcomes == ["ok", "ok", "refused", "ok"]
    assert [r for _, _, r in windows_of(scenario, "q")] == [f"{{(?s={iri('x')})}}", "{}"]


def test_updates_are_seen_by_the_windows_that_fire_after_them():
    q = query(
        "q",
        "SELECT ?o",
        f"?s {iri('p')} ?x . ?x {iri('label')} ?o",
        [window("a", 1000, 1000)],
        stored=(EX + "static",),
    )
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {EX + "static": ()},
        [
            Register(q),
            Post("a", ((100, (triple("s", "p", "x"),)), (1000, ()))),
            Update(EX + "static", insert=(triple("x", "label", "L"),)),
            Post("a", ((1100, (triple("s", "p", "x"),)), (2000, ()))),
        ],
    )
    assert [r for _, _, r in windows_of(scenario, "q")] == ["{}", f"{{(?o={iri('L')})}}"]


def test_the_store_reused_across_windows_holds_exactly_each_window():
    """The oracle changes one pyoxigraph store from window to window; after
    each change it must hold exactly that window's dataset."""
    rng = random.Random(7)
    oracle = Oracle(Scenario(0, frozenset(), (), {}, []))
    pool = [triple(f"s{i}", "p", f"o{j}") for i in range(6) for j in range(6)]
    for _ in range(40):
        dataset = {
            graph: set(rng.sample(pool, rng.randint(0, 12)))
            for graph in (None, EX + "w", EX + "g")
            if rng.random() < 0.8
        }
        store = oracle._load("q", dataset)
        held = {
            (str(q.subject), str(q.predicate), str(q.object), getattr(q.graph_name, "value", None))
            for q in store
        }
        assert held == {(*t, g) for g, triples in dataset.items() for t in triples}


def test_an_empty_window_is_still_a_graph_of_the_dataset():
    """FROM NAMED WINDOW puts the window in the dataset, empty or not: a
    GRAPH pattern that needs no triple matches it once."""
    q = query(
        "q",
        "ASK",
        f"WINDOW <{EX}w> {{ BIND(1 AS ?one) }}",
        [window("a", 1000, 1000, "w")],
        language="rspql",
        form="ASK",
    )
    scenario = Scenario(
        0,
        frozenset(),
        (stream("a"),),
        {},
        [
            Register(q),
            Post("a", ((100, (triple("x", "p", "y"),)), (2000, ()))),
        ],
    )
    assert [r for _, _, r in windows_of(scenario, "q")] == ["True", "True"]


def test_a_name_is_one_streams_an_outputs_derived_name_too():
    producer = query("p", f"CONSTRUCT {{ ?s {iri('hot')} ?o }}", f"?s {iri('p')} ?o",
                     [window("a", 1000, 1000)], form="CONSTRUCT", output="http://x/out/a")
    taken_by_output = StreamSpec("a-2", EX + "late", EX + "late")
    free = StreamSpec("late", EX + "late", EX + "late")
    scenario = Scenario(
        0, frozenset(), (stream("a"),), {},
        [Register(producer), Declare(taken_by_output), Declare(free), Declare(stream("a"))],
    )
    # the output <http://x/out/a> is named a-2 (a is taken); a redeclaration of a is no collision
    assert expect(scenario).outcomes == ["ok", "refused", "ok", "ok"]
