"""Drive a scenario through :class:`engine.stream.StreamEngine` over an
in-memory :class:`engine.api.Store`, in this process: the fast driver most
scenarios take."""

from __future__ import annotations

from engine.api import Store
from engine.rdf import IRI, Literal, Term, format_term
from engine.stream import StreamDefinition, StreamEngine, StreamError, Subscription, WindowEvent
from tests.stream.scenarios.actual import Actual, construct_result, select_result
from tests.stream.scenarios.model import (
    Declare,
    Post,
    Reconnect,
    Register,
    Scenario,
    StreamSpec,
    Triple,
    Unregister,
    Update,
)
from tests.stream.scenarios.oracle import Event, Expected, Result
from tests.stream.scenarios.terms import canonical, parse_literal

#: statuses of a refused post: 409 late, 400 decreasing inside the batch
REFUSED = (400, 409)
#: the driver drains after every operation, and one post may close hundreds of
#: windows: the queue must hold them (a consumer that falls behind the
#: default 256 is dropped, as documented)
CAPACITY = 1_000_000


def engine_term(text: str) -> Term:
    if text.startswith("<"):
        return IRI(text[1:-1])
    lexical, datatype, lang = parse_literal(text)
    return Literal(lexical, datatype, lang)


def engine_triple(triple: Triple) -> tuple[Term, Term, Term]:
    s, p, o = triple
    return engine_term(s), engine_term(p), engine_term(o)


def definition(spec: StreamSpec) -> StreamDefinition:
    graph = IRI(spec.graph) if spec.graph != spec.iri else None
    return StreamDefinition(spec.name, IRI(spec.iri), timing=spec.timing, timeless=spec.timeless, graph=graph)


def spelling(term: Term | None) -> str | None:
    return None if term is None else format_term(term)


def to_event(event: WindowEvent, form: str) -> Event:
    if form == "ASK":
        result = Result.of("ASK", boolean=bool(event.boolean))
    elif form == "CONSTRUCT":
        result = construct_result([tuple(spelling(t) for t in triple) for triple in event.triples])
    else:
        names = [str(v).lstrip("?") for v in event.variables]
        result = select_result(names, [[spelling(t) for t in row] for row in event.rows])
    return Event(event.sequence, event.start_ms, event.end_ms, result)


def run(scenario: Scenario, expected: Expected | None = None) -> Actual:
    """Run ``scenario`` on a fresh engine; every outcome and event it gave
    (``expected`` is not read: the HTTP driver's signature)."""
    store = Store()
    for graph, triples in scenario.static.items():
        store.add([engine_triple(t) for t in triples], graph=graph)
    engine = StreamEngine(store)
    actual = Actual()
    subscriptions: dict[str, tuple[Subscription, str]] = {}
    try:
        for spec in scenario.streams:
            engine.declare_stream(definition(spec))
        for op in scenario.ops:
            actual.outcomes.append(_apply(engine, op, subscriptions, actual))
            _drain(subscriptions, actual)
        for graph in scenario.checked_graphs():
            rows = store.query(f"SELECT ?s ?p ?o WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")
            actual.graphs[graph] = frozenset(
                tuple(canonical(spelling(t)) for t in row) for row in rows.rows()
            )
    finally:
        engine.close()
    return actual


def _apply(engine: StreamEngine, op, subscriptions: dict, actual: Actual) -> str:
    try:
        if isinstance(op, Post):
            items = [(ts, [engine_triple(t) for t in triples]) for ts, triples in op.items]
            engine.ingest(op.stream, items)
        elif isinstance(op, Register):
            running = engine.register(op.query.registration())
            name = op.query.event_name
            subscriptions[name] = (running.subscribe(None, CAPACITY), op.query.form)
            actual.events[name] = []
        elif isinstance(op, Declare):
            engine.declare_stream(definition(op.stream))
        elif isinstance(op, Update):
            engine.store.update(op.text())
        elif isinstance(op, Unregister):
            engine.unregister(op.query)
        else:
            assert isinstance(op, Reconnect)  # an HTTP matter
    except StreamError as error:
        status = getattr(error, "status", 400)
        if isinstance(op, (Post, Declare)) and status in REFUSED:
            return "refused"
        return f"error {status}: {error}"
    except Exception as error:  # noqa: BLE001 - any crash is a finding, reported with the scenario
        return f"error: {type(error).__name__}: {error}"
    return "ok"


def _drain(subscriptions: dict, actual: Actual) -> None:
    for name, (subscription, form) in subscriptions.items():
        actual.events[name].extend(to_event(e, form) for e in subscription.drain())
