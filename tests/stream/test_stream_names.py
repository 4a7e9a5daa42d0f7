"""Streams are named by IRIs: a name derived from an IRI never takes over
another stream, and a stream's IRI never changes (issue 26, item 4).

``REGISTER STREAM <http://x/out/NAME>`` used to redeclare the stream called
NAME with the output IRI: the stream lost its IRI, its timing predicates and
its graph, the queries reading it answered 404 or failed with a 500. The
generated test declares streams whose names are the last segments of the
output IRIs (with trailing slashes and ``#``, percent-escapes, characters a
name may not hold), chains ``REGISTER STREAM`` queries into those IRIs, and
checks against an oracle that every IRI is one stream of its own, that every
query reads its own stream, and that a restart (with and without a
checkpoint) gives every stream the same name.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from engine.api import Store
from engine.durability import DataDirectory
from engine.rdf import IRI, Literal
from engine.stream import StreamDefinition, StreamEngine
from engine.stream.errors import DuplicateName, StreamError

EX = "http://example.org/"
#: what a stream name may be (docs/http-api.md): the derived names must be addressable too
NAME = re.compile(r"[A-Za-z0-9._~-]{1,200}")


def copy_query(name: str, source: str, target: str) -> str:
    return (f"REGISTER STREAM <{target}> AS CONSTRUCT {{ ?s ?p ?o }} FROM STREAM <{source}> "
            f"[RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")


def reader(name: str, source: str) -> str:
    return (f"REGISTER QUERY {name} AS SELECT ?s FROM STREAM <{source}> [RANGE 1s STEP 1s] "
            "WHERE { ?s ?p ?o }")


def subjects_seen(engine: StreamEngine, query: str) -> set[str]:
    events = engine.query(query).subscribe(0).replay
    assert all(event.error is None for event in events), [event.error for event in events]
    return {row[0].value for event in events for row in event.rows}


def definitions(engine: StreamEngine) -> dict[str, dict]:
    return {name: state.definition.to_json() for name, state in engine.streams.items()}


def test_register_stream_into_an_iri_ending_in_a_streams_name_leaves_that_stream_alone():
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("NAME", IRI(f"{EX}in/NAME"), timing=frozenset({f"{EX}t"}),
                                           graph=IRI(f"{EX}graph")))
    before = engine.stream("NAME").definition
    engine.register(reader("r", f"{EX}in/NAME"))
    engine.register(copy_query("out", f"{EX}in/NAME", "http://x/out/NAME"))
    engine.register(reader("r_out", "http://x/out/NAME"))
    assert engine.stream("NAME").definition == before
    (derived,) = [s for s in engine.streams.values() if s.definition.iri == IRI("http://x/out/NAME")]
    assert derived.definition.name != "NAME" and NAME.fullmatch(derived.definition.name)
    engine.ingest("NAME", [(500, [(IRI(f"{EX}a"), IRI(f"{EX}t"), Literal("1"))])])
    engine.heartbeat("NAME", 2000)
    assert subjects_seen(engine, "r") == {f"{EX}a"}
    assert subjects_seen(engine, "r_out") == {f"{EX}a"}
    # the timing triple stayed out of NAME's graph; the output stream (all timeless) absorbed it into its own
    held = engine.store.query("SELECT ?g ?s { GRAPH ?g { ?s ?p ?o } }").rows()
    assert [(str(g), str(s)) for g, s in held] == [("<http://x/out/NAME>", f"<{EX}a>")]


def test_a_name_keeps_its_iri_and_an_iri_keeps_its_name():
    engine = StreamEngine(Store())
    engine.declare_stream(StreamDefinition("s", IRI(f"{EX}s")))
    engine.declare_stream(StreamDefinition("t", IRI(f"{EX}t")))
    before = definitions(engine)
    with pytest.raises(DuplicateName, match="IRI does not change"):
        engine.declare_stream(StreamDefinition("s", IRI(f"{EX}other")))
    with pytest.raises(DuplicateName, match="already declared as 't'"):
        engine.declare_stream(StreamDefinition("s", IRI(f"{EX}t")))
    assert definitions(engine) == before


def test_while_a_query_reads_a_stream_a_redeclaration_may_change_its_idle_policy_only():
    engine = StreamEngine(Store())
    base = StreamDefinition("s", IRI(f"{EX}s"), timing=frozenset({f"{EX}t"}))
    engine.declare_stream(base)
    engine.register(reader("q", f"{EX}s"))
    for changed in (StreamDefinition("s", IRI(f"{EX}s")),
                    StreamDefinition("s", IRI(f"{EX}s"), timing=base.timing, graph=IRI(f"{EX}g")),
                    StreamDefinition("s", IRI(f"{EX}s"), timeless=frozenset({f"{EX}v"}))):
        with pytest.raises(StreamError, match="'q'") as refused:
            engine.declare_stream(changed)
        assert refused.value.status == 409
        assert engine.stream("s").definition == base
    idle = StreamDefinition("s", IRI(f"{EX}s"), timing=base.timing, idle="wallclock", idle_lag_ms=500)
    assert engine.declare_stream(idle) == (engine.stream("s"), False)
    engine.unregister("q")
    engine.declare_stream(StreamDefinition("s", IRI(f"{EX}s"), graph=IRI(f"{EX}g")))
    assert engine.stream("s").definition.stored_graph == IRI(f"{EX}g")
    engine.close()


# ------------------------------------------------------------ generated
def colliding_iris(rng: random.Random, name: str) -> list[str]:
    """IRIs whose last segment reads as ``name`` (or as a name it becomes)."""
    escaped = "".join(f"%{ord(c):02X}" if rng.random() < 0.5 else c for c in name)
    return [
        f"http://x/out/{name}",
        f"http://x/other/{name}/",
        f"http://x/{name}#",
        f"http://x/{name}//#/",
        f"http://x/frag#{name}",
        f"http://x/esc/{escaped}",
        f"http://x/uni/{name}\u00e9",
        f"http://x/uni/\u00fc{name}",
        f"http://x/sp/{quote(name + ' x')}",
        f"urn:x:{name}",
    ]


def random_name(rng: random.Random) -> str:
    alphabet = "abcXYZ019._~-"
    name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
    return name if name.strip(".") else f"n{name}"


class Scenario:
    """Input streams with random names, copy chains into IRIs whose last
    segments are those names (or names derived from earlier chains), a
    reader on every stream; ``expected`` maps each reader to the subjects
    of the inputs whose items reach its stream."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.rng = rng
        self.inputs = {f"{name}": f"{EX}in/{k}/{name}" for k, name in
                       enumerate(dict.fromkeys(random_name(rng) for _ in range(rng.randint(2, 5))))}
        candidates = [iri for name in self.inputs for iri in colliding_iris(rng, name)]
        self.outputs = rng.sample(candidates, rng.randint(3, min(10, len(candidates))))
        #: where each output's items come from: an input, or an earlier output (a chain)
        self.sources = {}
        for i, output in enumerate(self.outputs):
            earlier = self.outputs[:i]
            self.sources[output] = (rng.choice(earlier) if earlier and rng.random() < 0.3
                                    else self.inputs[rng.choice(sorted(self.inputs))])

    def origin(self, iri: str) -> str:
        """The input stream whose items reach ``iri``."""
        while iri in self.sources:
            iri = self.sources[iri]
        return iri

    def subject(self, input_iri: str, round_: int) -> str:
        return f"{EX}subject/{round_}/{quote(input_iri, safe='')}"

    def register(self, engine: StreamEngine) -> None:
        for name, iri in self.inputs.items():
            engine.declare_stream(StreamDefinition(name, IRI(iri), timing=frozenset({f"{EX}t"})))
        self.readers = {f"r{k}": iri for k, iri in enumerate([*self.inputs.values(), *self.outputs])}
        for k, output in enumerate(self.outputs):
            engine.register(copy_query(f"c{k}", self.sources[output], output))
        for query, iri in self.readers.items():
            engine.register(reader(query, iri))

    def play(self, engine: StreamEngine, round_: int) -> None:
        """One item per input in the window of ``round_``, then heartbeats far
        enough for every chain (each link adds one window)."""
        start = round_ * 20_000
        for name, iri in self.inputs.items():
            engine.ingest(name, [(start + 500, [(IRI(self.subject(iri, round_)), IRI(f"{EX}t"),
                                                 Literal(name))])])
        for name in self.inputs:
            engine.heartbeat(name, start + 15_000)

    def check(self, engine: StreamEngine, rounds: int) -> None:
        iris = {state.definition.iri.value: name for name, state in engine.streams.items()}
        assert len(iris) == len(engine.streams) == len(self.inputs) + len(self.outputs)
        for name, iri in self.inputs.items():
            assert iris[iri] == name, f"input {name} lost its name or IRI"
        assert all(NAME.fullmatch(name) for name in engine.streams), sorted(engine.streams)
        for query, iri in self.readers.items():
            expected = {self.subject(self.origin(iri), r) for r in range(rounds)}
            assert subjects_seen(engine, query) == expected, f"{query} reads <{iri}>"


@pytest.mark.parametrize("seed", range(12))
def test_generated_names_never_collide_and_queries_read_their_own_streams(seed):
    scenario = Scenario(seed)
    engine = StreamEngine(Store())
    scenario.register(engine)
    scenario.play(engine, 0)
    scenario.check(engine, 1)
    engine.close()


@pytest.mark.parametrize("seed", range(2))
def test_derived_names_survive_a_restart_and_a_checkpoint(seed, tmp_path: Path):
    """Restarted from the log (seed 0), then from a checkpoint (both seeds)."""
    scenario = Scenario(100 + seed)
    data = DataDirectory.open(tmp_path, sync=False)
    scenario.register(data.engine)
    scenario.play(data.engine, 0)
    names = definitions(data.engine)
    if seed:
        data.checkpoint()
    data.close()
    data = DataDirectory.open(tmp_path, sync=False)
    try:
        assert definitions(data.engine) == names
        scenario.play(data.engine, 1)
        scenario.check(data.engine, 2)
        data.checkpoint()
    finally:
        data.close()
    data = DataDirectory.open(tmp_path, sync=False)
    try:
        assert definitions(data.engine) == names
    finally:
        data.close()
