"""Random scenarios from a seed and a set of features.

Each scenario picks a random subset of the enabled features, declares one
to four streams, loads stored graphs, registers queries (some late, some
reading another query's output stream) and then interleaves posts (small
batches, heartbeats, late posts, large batches), updates and SSE
reconnects, ending with a heartbeat on every stream that closes every
window holding data. The vocabulary is small, so that triples repeat and
joins meet; every IRI lives under a per-scenario namespace, so that many
scenarios can share one server.

The generator keeps clear of what the contract leaves open (see
``oracle.Ambiguous``): count windows read streams whose items have distinct
timestamps and whose item boundaries fall on window boundaries; a late
query's windows never reach the items posted before it was registered.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from tests.stream.scenarios.model import (
    XSD,
    XSD_INTEGER,
    Declare,
    Item,
    Post,
    QuerySpec,
    Reconnect,
    Register,
    Scenario,
    StreamSpec,
    Triple,
    Unregister,
    Update,
    Window,
)

STEPS = (100, 200, 250, 300, 400, 500, 600, 700, 1000, 1500, 2000)
EPOCH_BASE = 1_700_000_000_000
#: sizes of the big posts: below and above the 16,384 the issue names
MEDIUM_TRIPLES = (4_096, 16_383)
LARGE_TRIPLES = (16_384, 20_000)
#: above the 65,536 rows where the store's delta layer changes its ways
HUGE_TRIPLES = (65_536, 70_000)
#: many small posts that add up past those thresholds: posts x triples each
MANY_POSTS = (120, 180)
#: features the generator may leave out of one scenario (the others are on
#: whenever enabled): each scenario tries a random half of these
OPTIONAL = (
    "istream",
    "dstream",
    "aggregates",
    "ask",
    "construct",
    "sparql_variety",
    "literal_variety",
    "unregister",
    "range_multiple",
    "range_not_multiple",
    "range_lt_step",
    "tumbling",
    "two_windows",
    "different_steps",
    "count_windows",
    "count_item_repeats",
    "count_cross_item_repeats",
    "static_graphs",
    "static_updates",
    "absorbed_graph",
    "shared_graph",
    "shared_triple",
    "foreign_absorb",
    "static_into_absorbed",
    "timing_predicates",
    "timeless_declaration",
    "chains",
    "name_collision",
    "late_registration",
    "late_uneven",
    "late_items",
    "heartbeats",
    "same_timestamp_items",
    "repeats",
    "medium_batches",
    "large_batch_timing",
    "large_batch_asof",
    "huge_batch_asof",
    "many_batches_asof",
    "epoch_time",
    "negative_time",
    "http_single_items",
    "http_resume",
)
#: features that make a scenario slow: tried in fewer scenarios
RARE = {
    "medium_batches": 0.08,
    "large_batch_timing": 0.05,
    "large_batch_asof": 0.05,
    "huge_batch_asof": 0.02,
    "many_batches_asof": 0.04,
}


@dataclass
class _Stream:
    spec: StreamSpec
    #: predicates its items use (local names), and the subjects it may use
    predicates: list[str]
    subjects: list[int] | None = None
    #: [TRIPLES n] read it: items of distinct timestamps and n-aligned boundaries
    count_n: int = 0
    clock: int = 0
    watermark: int | None = None
    last_data: int | None = None
    #: count streams: the distinct triples the current block still owes
    block_left: int = 0
    history: list[Triple] = field(default_factory=list)


class Generator:
    """Builds one scenario; :func:`generate` is the entry point."""

    def __init__(
        self, seed: int, enabled: frozenset[str], tag: str = "", force: frozenset[str] = frozenset()
    ) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        rng = self.rng
        # sorted: a set's order changes with the hash seed, the scenario must not
        self.features = frozenset(
            f for f in sorted(enabled) if f not in OPTIONAL or rng.random() < RARE.get(f, 0.5) or f in force
        )
        if not {"csparql", "rspql"} & self.features:
            self.features |= {"csparql"} & enabled or {"rspql"}
        self.tag = tag
        self.ns = f"http://example.org/{tag}/" if tag else "http://example.org/"
        self.prefix = f"{tag}_" if tag else ""
        self.vertices = rng.randint(4, 9)
        self.ops: list = []
        self.streams: list[_Stream] = []
        self.queries: list[QuerySpec] = []
        self.counter = 0  # fresh subjects
        self.static: dict[str | None, tuple[Triple, ...]] = {}

    # ----------------------------------------------------------------- terms
    def iri(self, local: str) -> str:
        return f"<{self.ns}{local}>"

    def vertex(self, k: int | None = None) -> str:
        return self.iri(f"v{self.rng.randrange(self.vertices) if k is None else k}")

    def number(self) -> str:
        """A small number; with ``literal_variety`` also a decimal, a negative
        number or a string. Canonical spellings only ("2.50" and "2.5" are one
        value but two terms, a difference the contract does not decide); no
        xsd:int or xsd:double: pyoxigraph folds "6"^^xsd:int into xsd:integer
        and spells "2.5E0"^^xsd:double as "2.5" (STR() shows it), where the
        engine rightly keeps the terms as posted."""
        rng = self.rng
        n = rng.randint(0, 6)
        if not self.has("literal_variety") or rng.random() < 0.5:
            return f'"{n}"^^<{XSD_INTEGER}>'
        kind = rng.choice(("decimal", "negative", "string"))
        if kind == "decimal":
            return f'"{n}.5"^^<{XSD}decimal>'
        if kind == "negative":
            return f'"-{n + 1}"^^<{XSD_INTEGER}>'
        return f'"{n}"'

    def label(self, k: int) -> str:
        if self.has("literal_variety") and self.rng.random() < 0.4:
            return f'"L{k}"@{self.rng.choice(("en", "de"))}'
        return f'"L{k}"'

    def has(self, feature: str) -> bool:
        return feature in self.features

    def asof_probe(self) -> bool:
        """Big posts are coming that a query should read as of its windows."""
        return any(self.has(f) for f in ("large_batch_asof", "huge_batch_asof", "many_batches_asof"))

    # ----------------------------------------------------------------- streams
    def make_streams(self) -> None:
        rng = self.rng
        count = rng.randint(1, 4)
        shared = f"{self.ns}graph/shared" if self.has("shared_graph") and count > 1 else None
        sharers = set(rng.sample(range(count), rng.choice((2, 2, count)))) if shared else set()
        count_stream = rng.randrange(count) if self.has("count_windows") else None
        for i in range(count):
            name = f"{self.prefix}s{i}"
            iri = f"{self.ns}stream/s{i}"
            timing = (
                frozenset({f"{self.ns}temp"})
                if self.has("timing_predicates") and rng.random() < 0.5
                else frozenset()
            )
            graph = shared if i in sharers and i != count_stream else iri
            spec = StreamSpec(name, iri, graph, timing)
            if timing and self.has("timeless_declaration") and rng.random() < 0.5:
                # the same split, declared the other way: the absorbed predicates, every other one timing
                everything = {f"{self.ns}{p}" for p in ("p", "q", "r", "val", "label")}
                spec = StreamSpec(name, iri, graph, timeless=frozenset(everything))
            stream = _Stream(spec, ["p", "q", "r", "val", "temp"])
            if graph == shared and not self.has("shared_triple"):
                # each stream of a shared graph owns its subjects: no triple is absorbed twice
                members = sorted(sharers - {count_stream})
                slot = members.index(i)
                stream.subjects = [k for k in range(self.vertices) if k % len(members) == slot] or [slot]
            if i == count_stream:
                stream.count_n = rng.choice((1, 2, 3, 4, 5, 7))
            self.streams.append(stream)

    def make_static(self) -> None:
        if not self.has("static_graphs"):
            return
        rng = self.rng
        edges = [(self.vertex(), self.iri("q"), self.vertex()) for _ in range(rng.randint(1, 6))]
        labels = [
            (self.vertex(k), self.iri("label"), self.label(k))
            for k in range(self.vertices)
            if rng.random() < 0.5
        ]
        self.static[f"{self.ns}graph/static"] = tuple(dict.fromkeys(edges + labels))
        self.static[None] = tuple(
            dict.fromkeys(
                [
                    (self.vertex(), self.iri(rng.choice(("q", "label"))), self.vertex())
                    for _ in range(rng.randint(1, 5))
                ]
            )
        )

    # ----------------------------------------------------------------- items
    def triple(self, stream: _Stream) -> Triple:
        rng = self.rng
        subjects = stream.subjects
        subject = self.vertex(rng.choice(subjects)) if subjects else self.vertex()
        predicate = rng.choice(stream.predicates)
        if predicate == "temp" and not self.has("timing_predicates"):
            predicate = "val"
        obj = self.number() if predicate in ("val", "temp") else self.vertex()
        return subject, self.iri(predicate), obj

    def item_triples(self, stream: _Stream) -> tuple[Triple, ...]:
        rng = self.rng
        if stream.count_n:
            return self.count_item(stream)
        triples = [self.triple(stream) for _ in range(rng.randint(1, 4))]
        if self.has("shared_triple") and rng.random() < 0.4:
            # a triple another stream of the graph posted (maybe at a later time: it may be ahead)
            others = [
                t
                for s in self.streams
                if s is not stream and s.spec.graph == stream.spec.graph
                for t in s.history[-20:]
            ]
            if others:
                triples.append(rng.choice(others))
        if self.has("repeats") and rng.random() < 0.3:
            triples.append(rng.choice(triples))  # a triple repeated inside the item
            if stream.history and rng.random() < 0.5:
                triples.append(rng.choice(stream.history[-30:]))  # ... and one an earlier item held
        stream.history.extend(triples)
        return tuple(triples)

    def count_item(self, stream: _Stream) -> tuple[Triple, ...]:
        """An item of a count-window stream: 1.. the triples left in the
        current block of n, fresh ones (or, with the switch, one an earlier
        item held), so that window boundaries fall between items."""
        rng = self.rng
        if stream.block_left == 0:
            stream.block_left = stream.count_n
        size = rng.randint(1, min(stream.block_left, 3))
        stream.block_left -= size
        triples: list[Triple] = []
        while len(triples) < size:
            if self.has("count_cross_item_repeats") and stream.history and rng.random() < 0.3:
                candidate = rng.choice(stream.history)
            else:
                self.counter += 1
                predicate = rng.choice(("p", "val"))
                candidate = (
                    self.iri(f"c{self.counter}"),
                    self.iri(predicate),
                    self.vertex() if predicate == "p" else self.number(),
                )
            if candidate not in triples:
                triples.append(candidate)
        stream.history.extend(triples)
        if self.has("count_item_repeats") and rng.random() < 0.4:
            triples.append(rng.choice(triples))
        return tuple(triples)

    def gap(self, stream: _Stream, ts: int) -> int:
        """How far the next item is from one at ``ts``: often onto a window's
        border (a close ``k*STEP`` or a start ``k*STEP - RANGE``), where an
        off-by-one would show."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.15 and self.has("same_timestamp_items") and not stream.count_n:
            return 0
        windows = [w for q in self.queries for w in q.windows if not w.is_count]
        if roll < 0.4 and windows:
            window = rng.choice(windows)
            k = ts // window.step_ms + rng.randint(1, 3)
            border = k * window.step_ms - (window.range_ms if rng.random() < 0.4 else 0)
            if border > ts:
                return border - ts
        if roll < 0.6:
            return rng.randint(1, 120)
        if roll < 0.9:
            return rng.randint(120, 700)
        return rng.randint(700, 2500)

    def post(self, stream: _Stream, items: list[Item]) -> None:
        form = "batch"
        if len(items) == 1 and items[0][1] and self.has("http_single_items") and self.rng.random() < 0.5:
            form = self.rng.choice(("ntriples", "turtle"))
        self.ops.append(Post(stream.spec.name, tuple(items), form))
        data = [ts for ts, triples in items if triples]
        if data:
            stream.last_data = data[-1]
        stream.watermark = items[-1][0]
        stream.clock = max(stream.clock, stream.watermark)

    def small_post(self, stream: _Stream) -> None:
        rng = self.rng
        items: list[Item] = []
        ts = stream.clock
        if stream.watermark is None or stream.count_n or not self.has("same_timestamp_items"):
            ts += 1 if stream.watermark is not None else 0
        for _ in range(rng.choice((1, 1, 2, 3, 5, 8, 15))):
            items.append((ts, self.item_triples(stream)))
            ts += self.gap(stream, ts)
            if stream.count_n and ts == items[-1][0]:
                ts += 1
        if self.has("heartbeats") and rng.random() < 0.3:
            items.append((ts + rng.randint(0, 800), ()))
        self.post(stream, items)

    def big_post(self, stream: _Stream, low: int, high: int, timeless: bool) -> None:
        """One post of low..high triples over a few seconds, crossing window closes."""
        rng = self.rng
        total = rng.randint(low, high)
        count = rng.randint(20, 200)
        span = rng.randint(1500, 3500)
        start = stream.clock + 1
        items = []
        for i in range(count):
            size = total // count + (1 if i < total % count else 0)
            triples = []
            for _ in range(size):
                self.counter += 1
                predicate = "val" if timeless else "temp"
                triples.append(
                    (
                        self.iri(f"obs{self.counter}"),
                        self.iri(predicate),
                        f'"{self.counter % 97}"^^<{XSD_INTEGER}>',
                    )
                )
            if timeless and i % 7 == 0:
                triples.append(self.triple(stream))
            items.append((start + i * span // count, tuple(triples)))
        self.post(stream, items)

    def heartbeat(self, stream: _Stream, ts: int) -> None:
        self.post(stream, [(ts, ())])

    def late_post(self, stream: _Stream) -> None:
        rng = self.rng
        mark = stream.watermark
        if mark is None:
            return
        if rng.random() < 0.5:
            items = [(mark - rng.randint(1, 1000), (self.triple(stream),))]
        else:  # a valid start, then a timestamp that goes back
            items = [
                (mark, (self.triple(stream),)),
                (mark + 200, (self.triple(stream),)),
                (mark + 200 - rng.randint(1, 150), (self.triple(stream),)),
            ]
        self.ops.append(Post(stream.spec.name, tuple(items)))

    def update(self) -> None:
        rng = self.rng
        graphs = [g for g in self.static if g is not None]
        if self.has("static_into_absorbed") and rng.random() < 0.4:
            target = rng.choice(self.streams).spec.graph
            triples = tuple(
                (self.vertex(), self.iri("label"), f'"U{rng.randint(0, 3)}"')
                for _ in range(rng.randint(1, 3))
            )
            self.ops.append(Update(target, insert=triples))
            return
        graph = rng.choice([*graphs, None])
        existing = list(self.static.get(graph, ()))
        insert = tuple(
            sorted(
                {(self.vertex(), self.iri("q"), self.vertex()) for _ in range(rng.randint(0, 3))}
                | {
                    (self.vertex(k), self.iri("label"), self.label(k))
                    for k in range(self.vertices)
                    if rng.random() < 0.1
                }
            )
        )
        delete = tuple(rng.sample(existing, min(len(existing), rng.randint(0, 2))))
        if insert or delete:
            self.ops.append(Update(graph, insert, delete))
            kept = [t for t in existing if t not in delete]
            self.static[graph] = tuple(dict.fromkeys(kept + list(insert)))

    # ----------------------------------------------------------------- queries
    def window_spans(self, step: int) -> tuple[int, bool]:
        rng = self.rng
        kinds = ["equal"]
        kinds += [
            k for k in ("range_multiple", "range_not_multiple", "range_lt_step", "tumbling") if self.has(k)
        ]
        kind = rng.choice(kinds)
        if kind == "range_multiple":
            return step * rng.randint(2, 4), False
        if kind == "range_not_multiple":
            return step * rng.randint(1, 3) + rng.randint(1, step - 1), False
        if kind == "range_lt_step":
            return rng.randint(max(1, step // 5), step - 1), False
        return step, kind == "tumbling"

    def make_query(
        self,
        number: int,
        streams: list[_Stream],
        *,
        output: str | None = None,
        reads_output: tuple[str, str] | None = None,
        stored: tuple[str, ...] | None = None,
    ) -> QuerySpec:
        """A time-window query over ``streams``; ``output``: a REGISTER STREAM
        producer; ``reads_output``: (IRI, predicate) of an output stream it
        reads; ``stored``: its FROM graphs (default: a random choice)."""
        rng = self.rng
        languages = [lang for lang in ("csparql", "rspql") if self.has(lang)]
        language = rng.choice(languages)
        step = rng.choice(STEPS)
        sources = [s.spec.iri for s in streams]
        if reads_output:
            sources = [reads_output[0], *sources]
        if self.has("two_windows") and rng.random() < 0.4 and len(sources) == 1:
            sources.append(rng.choice([s.spec.iri for s in self.streams]))
        sources = sources[:2]
        windows = []
        for i, source in enumerate(sources):
            window_step = step
            if i == 1 and self.has("different_steps") and rng.random() < 0.5:
                window_step = rng.choice([s for s in STEPS if s != step])
            span, tumbling = self.window_spans(window_step)
            windows.append(
                Window(
                    source,
                    span,
                    window_step,
                    tumbling=tumbling and language == "csparql",
                    name=f"{self.ns}w{number}_{i}",
                )
            )
        policy = "RSTREAM"
        if language == "rspql" and not output:
            policy = rng.choice(["RSTREAM"] + [p.upper() for p in ("istream", "dstream") if self.has(p)])
        choices = self.stored_choices(sources)
        from_graphs = tuple(rng.sample(choices, rng.randint(0, min(2, len(choices))))) if choices else ()
        from_graphs = from_graphs if stored is None else stored
        from_named: tuple[str, ...] = ()
        if language == "csparql" and choices and rng.random() < 0.2:
            from_named = (rng.choice(choices),)
        predicates = {w.name: self.window_predicates(w.stream, reads_output) for w in windows}
        where, variables, numeric = self.where(
            language, windows, predicates, from_graphs, from_named, bool(output or reads_output)
        )
        form, head, modifiers = self.head(policy, variables, numeric, output)
        name = f"{self.prefix}q{number}"
        return QuerySpec(
            name,
            language,
            policy,
            form,
            head,
            where,
            tuple(windows),
            modifiers,
            from_graphs,
            from_named,
            output,
        )

    def stored_choices(self, sources: list[str]) -> list[str]:
        choices = []
        if self.has("static_graphs"):
            choices.append(f"{self.ns}graph/static")
        graphs = {s.spec.graph for s in self.streams}
        # a graph is the query's own when every stream absorbing into it is one the query reads
        own = {g for g in graphs if all(s.spec.iri in sources for s in self.streams if s.spec.graph == g)}
        foreign = graphs - own
        if self.has("absorbed_graph"):
            choices += sorted(own)
        if self.has("foreign_absorb"):
            choices += sorted(foreign)
        return choices

    def absorbed_graphs(self) -> set[str]:
        return {s.spec.graph for s in self.streams}

    def window_predicates(self, stream: str, reads_output: tuple[str, str] | None) -> list[str]:
        if reads_output and stream == reads_output[0]:
            return [reads_output[1]]
        return ["p", "q", "r", "val"] + (["temp"] if self.has("timing_predicates") else [])

    def where(
        self,
        language: str,
        windows: list[Window],
        predicates: dict[str, list[str]],
        from_graphs: tuple[str, ...],
        from_named: tuple[str, ...],
        single: bool = False,
    ) -> tuple[str, list[str], str | None]:
        """A WHERE body (``single``: one pattern, for chains, so that they
        carry data): a few triple patterns chained over ?a ?b ?c ?d, each
        from a window or the stored data (RSP-QL), with FILTER, OPTIONAL or
        UNION now and then; its variables and a numeric variable if any."""
        rng = self.rng
        stored_ok = bool(from_graphs) or (language == "rspql" and self.has("static_graphs"))
        atoms: list[tuple[str, str | None]] = []  # (pattern, window name or None for stored)
        variables: list[str] = []
        numeric = None
        chain = ["?a", "?b", "?c", "?d"]
        for i in range(1 if single else rng.choice((1, 1, 1, 2, 2, 3))):
            window = rng.choice(windows)
            source: str | None = window.name
            if language == "rspql" and stored_ok and rng.random() < (0.4 if i else 0.25):
                source = None
            # stored patterns: what static graphs hold, and what streams absorb when a FROM graph is theirs
            absorbed = any(g in self.absorbed_graphs() for g in from_graphs)
            pool = (
                predicates[window.name]
                if source
                else ["q", "label"] + (["p", "r", "val"] if absorbed else [])
            )
            predicate = rng.choice(pool)
            subject = chain[i]
            if predicate in ("val", "temp"):
                obj = "?v" if numeric is None else "?w"
                numeric = numeric or "?v"
                pattern = f"{subject} {self.iri(predicate)} {obj}"
                if rng.random() < 0.3:
                    pattern += f" FILTER({obj} > {rng.randint(0, 4)})"
            elif predicate == "label":
                obj = "?l"
                pattern = f"{subject} {self.iri(predicate)} {obj}"
            else:
                obj = chain[i + 1]
                pattern = (
                    f"{subject} {self.iri(predicate) if not predicate.startswith('<') else predicate} {obj}"
                )
                if i == 0 and rng.random() < 0.15:
                    pattern = f"{self.vertex()} {pattern.split(' ', 1)[1]}"
                    subject = None
                if source and rng.random() < 0.1:  # a variable predicate, windows only
                    pattern = f"{subject or self.vertex()} ?p {obj}"
                    variables.append("?p")
            for var in (subject, obj):
                if var and var.startswith("?") and var not in variables:
                    variables.append(var)
            atoms.append((pattern, source))
            if obj in ("?v", "?w", "?l"):
                break
        body = []
        for pattern, source in atoms:
            text = pattern
            if language == "rspql" and source:
                text = f"WINDOW <{source}> {{ {pattern} }}"
            body.append(text if text.endswith("}") or ")" in text.split()[-1] else text + " .")
        if len(atoms) == 1 and rng.random() < 0.15 and "?b" in variables:
            alternative = f"?a {self.iri(rng.choice(('p', 'r')))} ?b"
            if language == "rspql":
                alternative = f"WINDOW <{atoms[0][1]}> {{ {alternative} }}" if atoms[0][1] else alternative
            body = [f"{{ {body[0]} }} UNION {{ {alternative} }}"]
        if "?b" in variables and stored_ok and rng.random() < 0.25:
            optional = f"?b {self.iri('label')} ?lb"
            if from_named:
                optional = f"GRAPH <{from_named[0]}> {{ {optional} }}"
            body.append(f"OPTIONAL {{ {optional} }}")
            variables.append("?lb")
        elif from_named and "?a" in variables:
            body.append(f"GRAPH <{from_named[0]}> {{ ?a ?gp ?go }}")
            variables += ["?gp", "?go"]
        if self.has("sparql_variety") and rng.random() < 0.5:
            extra = self.extra_pattern(variables)
            if extra is not None:
                text, added = extra
                if language == "rspql" and rng.random() < 0.5:
                    text = f"WINDOW <{rng.choice(windows).name}> {{ {text} }}"
                body.append(text)
                variables += added
        return " ".join(body), list(dict.fromkeys(variables)), numeric

    def extra_pattern(self, variables: list[str]) -> tuple[str, list[str]] | None:
        """One more SPARQL construct over a variable already bound: its text
        and the variables it adds."""
        rng = self.rng
        iris = [v for v in ("?a", "?b", "?c", "?d") if v in variables]
        if not iris:
            return None
        x = rng.choice(iris)

        def predicate() -> str:
            return self.iri(rng.choice(("p", "q", "r")))

        kind = rng.choice(("not_exists", "exists", "minus", "bind", "values", "filter", "path", "subquery"))
        if kind == "not_exists":
            return f"FILTER NOT EXISTS {{ {x} {predicate()} ?nx }}", []
        if kind == "exists":
            return f"FILTER EXISTS {{ ?ex {predicate()} {x} }}", []
        if kind == "minus":
            return f"MINUS {{ {x} {predicate()} {rng.choice(iris)} }}", []
        if kind == "bind":
            return f'BIND(CONCAT(STR({x}), "#") AS ?bd)', ["?bd"]
        if kind == "values":
            chosen = rng.sample(range(self.vertices), min(3, self.vertices))
            return f"VALUES {x} {{ {' '.join(self.vertex(k) for k in chosen)} }}", []
        if kind == "filter":
            return rng.choice(
                (
                    f"FILTER(isIRI({x}))",
                    f"FILTER({x} != {self.vertex()})",
                    f'FILTER(REGEX(STR({x}), "v[0-3]$"))',
                )
            ), []
        if kind == "path":
            # only + : pyoxigraph gives / and | set semantics, where SPARQL 1.1 (18.4) has a
            # join and a union that keep duplicates (the engine does)
            return f"{x} {predicate()}+ ?pp .", ["?pp"]
        return f"{{ SELECT {x} (COUNT(*) AS ?sc) WHERE {{ {x} ?sp ?so }} GROUP BY {x} }}", ["?sc"]

    def head(
        self, policy: str, variables: list[str], numeric: str | None, output: str | None
    ) -> tuple[str, str, str]:
        rng = self.rng
        iris = [v for v in ("?a", "?b", "?c", "?d") if v in variables]
        if output:
            s, o = (iris + iris)[:2] if iris else ("?a", "?a")
            return "CONSTRUCT", f"CONSTRUCT {{ {s} <{output}#p> {o} }}", ""
        forms = ["SELECT"]
        forms += [
            f
            for f, feature in (("AGG", "aggregates"), ("ASK", "ask"), ("CONSTRUCT", "construct"))
            if self.has(feature) and not (f == "ASK" and policy != "RSTREAM")
        ]
        form = rng.choice(forms)
        if form == "ASK":
            return "ASK", "ASK", ""
        if form == "CONSTRUCT" and iris:
            s = rng.choice(iris)
            o = rng.choice(iris + ([numeric] if numeric else []))
            return "CONSTRUCT", f"CONSTRUCT {{ {s} {self.iri('derived')} {o} }}", ""
        if form == "AGG":
            group = rng.choice(iris) if iris and rng.random() < 0.5 else None
            if numeric and rng.random() < 0.6:
                # MIN/MAX over numbers and strings: SPARQL leaves their relative order open
                mixed = self.has("literal_variety")
                aggregate = rng.choice(
                    ("SUM", "AVG", "COUNT") if mixed else ("SUM", "MIN", "MAX", "AVG", "COUNT")
                )
                expression = f"({aggregate}({numeric}) AS ?agg)"
            else:
                expression = rng.choice(("(COUNT(*) AS ?agg)", f"(COUNT(DISTINCT {variables[-1]}) AS ?agg)"))
            if group:
                return "SELECT", f"SELECT {group} {expression}", f"GROUP BY {group}"
            return "SELECT", f"SELECT {expression}", ""
        if rng.random() < 0.2:
            return "SELECT", "SELECT *", ""
        chosen = rng.sample(variables, rng.randint(1, len(variables)))
        distinct = "DISTINCT " if rng.random() < 0.2 else ""
        return "SELECT", f"SELECT {distinct}{' '.join(chosen)}", ""

    def probe_query(self, number: int) -> QuerySpec | None:
        """A query that reads its streams' stored graph as of each window (the
        issue's cases 2 and 3): it reads every stream absorbing into that graph
        (two at most) and matches the graph's triples outside its windows."""
        rng = self.rng
        groups = {}
        for stream in self.streams:
            if not stream.count_n:
                groups.setdefault(stream.spec.graph, []).append(stream)
        groups = {
            g: members
            for g, members in groups.items()
            if len(members) <= 2 and len(members) == sum(s.spec.graph == g for s in self.streams)
        }
        if not groups:
            return None
        shared = [g for g, members in groups.items() if len(members) == 2]
        graph = (
            rng.choice(shared)
            if shared and (self.has("shared_triple") or rng.random() < 0.5)
            else rng.choice(sorted(groups))
        )
        readers = groups[graph]
        language = rng.choice([lang for lang in ("csparql", "rspql") if self.has(lang)])
        step = rng.choice(STEPS)
        windows = []
        for i, reader in enumerate(readers):
            span, tumbling = self.window_spans(step)
            windows.append(
                Window(
                    reader.spec.iri,
                    span,
                    step,
                    tumbling=tumbling and language == "csparql",
                    name=f"{self.ns}w{number}_{i}",
                )
            )
        predicate = "val" if self.asof_probe() and rng.random() < 0.7 else rng.choice(("p", "q", "r", "val"))
        pattern = f"?a {self.iri(predicate)} {'?v' if predicate == 'val' else '?b'} ."
        variables = ["?a", "?v" if predicate == "val" else "?b"]
        if language == "rspql" and rng.random() < 0.3:
            pattern += f" WINDOW <{windows[0].name}> {{ ?a ?wp ?wo }}"
            variables += ["?wp", "?wo"]
        policy = (
            "RSTREAM"
            if language == "csparql"
            else rng.choice(["RSTREAM"] + [p.upper() for p in ("istream", "dstream") if self.has(p)])
        )
        form, head, modifiers = self.head(policy, variables, "?v" if predicate == "val" else None, None)
        return QuerySpec(
            f"{self.prefix}q{number}",
            language,
            policy,
            form,
            head,
            pattern,
            tuple(windows),
            modifiers,
            (graph,),
        )

    def count_query(self, number: int, stream: _Stream) -> QuerySpec:
        rng = self.rng
        n = stream.count_n * rng.choice((1, 1, 2))
        window = Window(stream.spec.iri, triples=n)
        stored = self.stored_choices([stream.spec.iri])
        from_graphs = (rng.choice(stored),) if stored and rng.random() < 0.5 else ()
        pattern = rng.choice(("?a ?p ?b .", f"?a {self.iri('p')} ?b .", f"?a {self.iri('val')} ?v ."))
        if from_graphs and "?b" in pattern and rng.random() < 0.6:
            pattern += f" ?b {self.iri(rng.choice(('q', 'label', 'p')))} ?c ."
        variables = [v for v in ("?a", "?p", "?b", "?c", "?v") if v in pattern]
        form, head, modifiers = self.head("RSTREAM", variables, "?v" if "?v" in pattern else None, None)
        return QuerySpec(
            f"{self.prefix}q{number}",
            "csparql",
            "RSTREAM",
            form,
            head,
            pattern,
            (window,),
            modifiers,
            from_graphs,
        )

    # ----------------------------------------------------------------- timeline
    def prepare_late(self, query: QuerySpec) -> None:
        """Heartbeats that put every item already posted on the query's
        streams before its first window reaches back (docs/semantics.md
        frees what no registered window reaches)."""
        rng = self.rng
        streams = [s for s in self.streams if s.spec.iri in query.streams]
        marks = [s.watermark for s in streams if s.watermark is not None]
        data = [s.last_data for s in streams if s.last_data is not None]
        base = max([*marks, *(d + query.max_range + 1 for d in data)], default=None)
        if base is None:
            if len(query.steps) == 1:
                return  # nothing has flowed: the first data item decides
            base = self.start
        uneven = self.has("late_uneven")
        for stream in streams:
            if (
                uneven
                and len(query.steps) == 1
                and stream.watermark is None
                and stream.last_data is None
                and rng.random() < 0.5
            ):
                continue  # the smallest of the watermarks there are decides
            ts = base + (rng.randint(0, 3000) if uneven else 0)
            self.heartbeat(stream, max(ts, stream.watermark or ts))

    def register(self, query: QuerySpec) -> None:
        if len(query.steps) > 1:
            self.prepare_late(query)
        self.ops.append(Register(query))
        self.queries.append(query)

    def build(self) -> Scenario:
        rng = self.rng
        self.make_streams()
        self.make_static()
        if self.has("negative_time"):
            self.start = -rng.randint(2_000, 20_000)
        elif self.has("epoch_time"):
            self.start = EPOCH_BASE + rng.randint(0, 10_000_000)
        else:
            self.start = rng.choice((0, rng.randint(1, 5_000)))
        for stream in self.streams:
            stream.clock = self.start
        initial_streams = list(self.streams)
        declared = tuple(s.spec for s in initial_streams)
        late: list[QuerySpec] = []
        number = 0
        for stream in self.streams:
            if stream.count_n:
                for _ in range(rng.randint(1, 2)):
                    self.register(self.count_query(number, stream))
                    number += 1
        for _ in range(rng.randint(1, 3)):
            readers = rng.sample(self.streams, min(len(self.streams), rng.choice((1, 1, 2))))
            query = self.make_query(number, readers)
            number += 1
            if self.has("late_registration") and rng.random() < 0.35 and len(query.steps) == 1:
                late.append(query)
            else:
                self.register(query)
        if (
            self.asof_probe()
            or self.has("shared_triple")
            or (self.has("absorbed_graph") and rng.random() < 0.5)
        ):
            probe = self.probe_query(number)
            if probe is not None:
                self.register(probe)
                number += 1
        if self.has("chains"):
            self.make_chain(number)
            number += 3
        self.timeline(late)
        return Scenario(self.seed, self.features, declared, self.static, self.ops, self.tag)

    def make_chain(self, number: int) -> None:
        """A REGISTER STREAM producer and a query reading its output."""
        rng = self.rng
        source = rng.choice(self.streams)
        if self.has("name_collision") and rng.random() < 0.6:
            output = f"http://x/out/{rng.choice(self.streams).spec.name}"
        else:
            output = f"{self.ns}out/{self.prefix}o{number}"
        producer = self.make_query(number, [source], output=output)
        self.register(producer)
        others = [s for s in self.streams if rng.random() < 0.3][:1]
        consumer = self.make_query(number + 1, others, reads_output=(output, f"<{output}#p>"))
        if consumer.language == "csparql" and self.has("absorbed_graph") and rng.random() < 0.4:
            consumer = QuerySpec(
                consumer.name,
                consumer.language,
                consumer.policy,
                consumer.form,
                consumer.head,
                consumer.where,
                consumer.windows,
                consumer.modifiers,
                (*consumer.from_graphs, output),
                consumer.from_named,
            )
        self.register(consumer)
        if self.has("name_collision") and rng.random() < 0.5:
            # a stream declared later under the name the engine derived for the output, then
            # under a free one
            name = output.rsplit("/", 1)[-1]
            if name not in {s.spec.name for s in self.streams}:
                spec = StreamSpec(name, f"{self.ns}stream/late-{name}", f"{self.ns}stream/late-{name}")
                self.ops.append(Declare(spec))  # refused (409) while the output has the name
                spec = replace(spec, name=f"late-{name}")
                self.ops.append(Declare(spec))
                stream = _Stream(spec, ["p", "q", "r", "val"], clock=self.start)
                self.streams.append(stream)
                reader = self.make_query(number + 2, [stream])
                self.register(reader)

    def timeline(self, late: list[QuerySpec]) -> None:
        rng = self.rng
        span = rng.randint(2_000, 8_000)
        end = self.start + span
        late_at = sorted(rng.randint(2, 25) for _ in late)
        big = [
            f
            for f in (
                "medium_batches",
                "large_batch_timing",
                "large_batch_asof",
                "huge_batch_asof",
                "many_batches_asof",
            )
            if self.has(f)
        ]
        steps = 0
        while min(s.clock for s in self.streams) < end and steps < 400:
            steps += 1
            while late_at and late_at[0] <= steps:
                late_at.pop(0)
                query = late.pop(0)
                self.prepare_late(query)
                self.register(query)
            roll = rng.random()
            behind = min(self.streams, key=lambda s: s.clock)
            # mostly the stream furthest behind; with shared triples, let streams run ahead more
            stream = (
                behind
                if rng.random() < (0.3 if self.has("shared_triple") else 0.6)
                else rng.choice(self.streams)
            )
            if big and (roll < 0.04 or (steps == 1 and rng.random() < 0.5)):
                # at the first step: a big first batch, before any window holds a retention bound
                self.big(stream, big.pop(rng.randrange(len(big))))
            elif roll < 0.08 and self.has("late_items"):
                self.late_post(stream)
            elif roll < 0.14 and self.has("heartbeats") and not stream.count_n:
                self.heartbeat(stream, stream.clock + rng.randint(0, 1500))
            elif roll < 0.18 and (
                self.has("static_updates") and (self.static or self.has("static_into_absorbed"))
            ):
                self.update()
            elif roll < 0.21 and self.has("http_resume") and self.queries:
                self.ops.append(Reconnect(rng.choice(self.queries).event_name, rng.randint(1, 8)))
            elif roll < 0.23 and self.has("unregister"):
                self.unregister()
            else:
                self.small_post(stream)
        for query in late:  # registered before the end after all
            self.prepare_late(query)
            self.register(query)
        for feature in big:  # the big posts the loop did not get to
            self.big(min(self.streams, key=lambda s: s.clock), feature)
        longest = max((q.max_range + max(q.steps) for q in self.queries if not q.is_count), default=0)
        final = max(s.clock for s in self.streams) + longest + rng.randint(0, 500)
        for stream in self.streams:
            if stream.watermark is None or stream.watermark < final:
                self.heartbeat(stream, final)

    def unregister(self) -> None:
        """Unregister a query no other query depends on (not a producer)."""
        candidates = [q for q in self.queries if not q.output]
        if candidates:
            query = self.rng.choice(candidates)
            self.queries.remove(query)
            self.ops.append(Unregister(query.event_name))

    def big(self, stream: _Stream, feature: str) -> None:
        if feature == "medium_batches":
            if not stream.count_n:
                self.big_post(stream, *MEDIUM_TRIPLES, timeless=rng_bool(self.rng))
        elif feature == "large_batch_timing":
            timed = [s for s in self.streams if s.spec.is_timing(f"{self.ns}temp") and not s.count_n]
            if timed:
                self.big_post(self.rng.choice(timed), *LARGE_TRIPLES, timeless=False)
        else:
            # a stream whose graph a query reads as of its windows, if there is one
            read = [
                s
                for s in self.streams
                for q in self.queries
                if s.spec.iri in q.streams and s.spec.graph in q.from_graphs and not s.count_n
            ]
            if not read and stream.count_n:
                return
            # best a stream whose query also waits for another one: windows stay pending while it runs ahead
            waiting = [
                s
                for s in read
                for q in self.queries
                if s.spec.iri in q.streams and len(q.streams) > 1 and s.spec.graph in q.from_graphs
            ]
            target = self.rng.choice(waiting or read) if read else stream
            if feature == "many_batches_asof":
                self.many_posts(target)
            else:
                self.big_post(
                    target, *(HUGE_TRIPLES if feature == "huge_batch_asof" else LARGE_TRIPLES), timeless=True
                )

    def many_posts(self, stream: _Stream) -> None:
        """Posts of a few item each, every one small, that add up to some
        20,000 absorbed triples while windows keep closing between them."""
        rng = self.rng
        posts, per_post = MANY_POSTS
        for _ in range(posts):
            items = []
            ts = stream.clock + rng.randint(1, 60)
            for _ in range(3):
                triples = []
                for _ in range(per_post // 3):
                    self.counter += 1
                    triples.append(
                        (
                            self.iri(f"obs{self.counter}"),
                            self.iri("val"),
                            f'"{self.counter % 97}"^^<{XSD_INTEGER}>',
                        )
                    )
                items.append((ts, tuple(triples)))
                ts += rng.randint(0, 20)
            self.post(stream, items)


def rng_bool(rng: random.Random) -> bool:
    return rng.random() < 0.5


def generate(
    seed: int, enabled: frozenset[str], tag: str = "", force: frozenset[str] = frozenset()
) -> Scenario:
    """The scenario of ``seed`` with features drawn from ``enabled`` (those in
    ``force`` always on); ``tag`` puts its names and IRIs in a namespace of
    their own (for a shared server)."""
    return Generator(seed, enabled, tag, force & enabled).build()
