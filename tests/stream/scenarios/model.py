"""What a scenario is: streams, stored data, continuous queries and the
operations a client performs on them, in order.

Everything is plain data (terms are N-Triples spellings), so that the same
scenario drives the engine in-process and over HTTP, the oracle reads it
without the engine, and a failure prints it as a self-contained recipe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER = XSD + "integer"

#: a triple: subject, predicate, object in N-Triples spelling
Triple = tuple[str, str, str]
#: a stream item: its timestamp (ms) and its triples, repeats kept as posted;
#: no triples means a heartbeat
Item = tuple[int, tuple[Triple, ...]]


@dataclass(frozen=True)
class StreamSpec:
    """A stream declaration (``PUT /streams/{name}``)."""

    name: str
    iri: str
    #: the stored graph that absorbs the stream's timeless triples
    graph: str
    timing: frozenset[str] = frozenset()
    #: if given, only these predicates are absorbed: every other one is timing
    timeless: frozenset[str] | None = None

    def is_timing(self, predicate: str) -> bool:
        """Whether triples with ``predicate`` (an IRI) stay out of the stored graph."""
        return predicate in self.timing or (self.timeless is not None and predicate not in self.timeless)

    def declaration(self) -> dict:
        """The JSON body of ``PUT /streams/{name}``."""
        body = {"iri": self.iri, "graph": self.graph, "timing": sorted(self.timing)}
        if self.timeless is not None:
            body["timeless"] = sorted(self.timeless)
        return body


@dataclass(frozen=True)
class Window:
    """One window of a query: a time window ``[RANGE r STEP s]`` or a count
    window ``[TRIPLES n]`` over the stream with IRI ``stream``."""

    stream: str
    range_ms: int = 0
    step_ms: int = 0
    triples: int = 0
    tumbling: bool = False
    #: RSP-QL's window name (``FROM NAMED WINDOW <name> ON <stream>``)
    name: str = ""

    @property
    def is_count(self) -> bool:
        return self.triples > 0

    def csparql(self) -> str:
        if self.is_count:
            return f"[TRIPLES {self.triples}]"
        if self.tumbling:
            return f"[RANGE {_csparql_duration(self.range_ms)} TUMBLING]"
        return f"[RANGE {_csparql_duration(self.range_ms)} STEP {_csparql_duration(self.step_ms)}]"

    def rspql(self) -> str:
        return f"[RANGE {_iso_duration(self.range_ms)} STEP {_iso_duration(self.step_ms)}]"


def _csparql_duration(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def _iso_duration(ms: int) -> str:
    seconds = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return f"PT{seconds}S"


@dataclass(frozen=True)
class QuerySpec:
    """A continuous query, kept in parts so that the registration and the
    oracle's one-shot query are both written from it.

    ``where`` is the body of the WHERE clause; in RSP-QL it uses
    ``WINDOW <w> { }`` blocks, which the one-shot query reads as
    ``GRAPH <w> { }`` over a dataset holding each window as a named graph.
    """

    name: str
    language: str  # "csparql" | "rspql"
    policy: str  # "RSTREAM" | "ISTREAM" | "DSTREAM"
    form: str  # "SELECT" | "ASK" | "CONSTRUCT"
    head: str  # "SELECT ?a ?b", "ASK", "CONSTRUCT { ... }"
    where: str
    windows: tuple[Window, ...]
    modifiers: str = ""  # GROUP BY ...
    from_graphs: tuple[str, ...] = ()
    from_named: tuple[str, ...] = ()
    #: REGISTER STREAM <output>: the query's windows become items of this stream
    output: str | None = None

    @property
    def event_name(self) -> str:
        """The name the engine reports (and serves events under): the output
        stream's IRI for ``REGISTER STREAM``."""
        return self.output or self.name

    @property
    def streams(self) -> tuple[str, ...]:
        """The IRIs of the streams the query reads, each once, in window order."""
        return tuple(dict.fromkeys(w.stream for w in self.windows))

    @property
    def is_count(self) -> bool:
        return any(w.is_count for w in self.windows)

    @property
    def steps(self) -> set[int]:
        return {w.step_ms for w in self.windows}

    @property
    def max_range(self) -> int:
        return max(w.range_ms for w in self.windows)

    def registration(self) -> str:
        """The registration text (C-SPARQL or RSP-QL)."""
        stored = " ".join(
            [*(f"FROM <{g}>" for g in self.from_graphs), *(f"FROM NAMED <{g}>" for g in self.from_named)]
        )
        if self.language == "csparql":
            register = f"REGISTER STREAM <{self.output}>" if self.output else f"REGISTER QUERY {self.name}"
            windows = " ".join(f"FROM STREAM <{w.stream}> {w.csparql()}" for w in self.windows)
        else:
            target = f"<{self.output}>" if self.output else self.name
            register = f"REGISTER {self.policy} {target}"
            windows = " ".join(
                f"FROM NAMED WINDOW <{w.name}> ON <{w.stream}> {w.rspql()}" for w in self.windows
            )
        parts = [register, "AS", self.head, windows, stored, f"WHERE {{ {self.where} }}", self.modifiers]
        return " ".join(p for p in parts if p)

    def one_shot(self) -> str:
        """The plain SPARQL the oracle runs over one window's dataset."""
        where = self.where.replace("WINDOW <", "GRAPH <")
        parts = [self.head, f"WHERE {{ {where} }}", self.modifiers]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Post:
    """One ``POST /streams/{stream}``: a batch of items in body order.
    ``form`` says how the HTTP driver sends it: ``batch`` (timestamped
    N-Triples), ``ntriples`` or ``turtle`` (one item, ``X-Timestamp``)."""

    stream: str
    items: tuple[Item, ...]
    form: str = "batch"

    @property
    def triple_count(self) -> int:
        return sum(len(triples) for _, triples in self.items)


@dataclass(frozen=True)
class Register:
    query: QuerySpec


@dataclass(frozen=True)
class Declare:
    """A stream declared after the start (its name may equal the name the
    engine derived for an output stream)."""

    stream: StreamSpec


@dataclass(frozen=True)
class Update:
    """A SPARQL update of stored data (INSERT DATA / DELETE DATA); ``graph``
    None is the default graph."""

    graph: str | None
    insert: tuple[Triple, ...] = ()
    delete: tuple[Triple, ...] = ()

    def text(self) -> str:
        def block(triples: tuple[Triple, ...]) -> str:
            body = " ".join(f"{s} {p} {o} ." for s, p, o in triples)
            return f"GRAPH <{self.graph}> {{ {body} }}" if self.graph else body

        parts = []
        if self.delete:
            parts.append(f"DELETE DATA {{ {block(self.delete)} }}")
        if self.insert:
            parts.append(f"INSERT DATA {{ {block(self.insert)} }}")
        return " ;\n".join(parts)


@dataclass(frozen=True)
class Reconnect:
    """HTTP only: the SSE reader of ``query`` disconnects here and comes back
    after ``after_ops`` more operations with ``Last-Event-ID`` set to the last
    event it saw (in-process drivers ignore it)."""

    query: str
    after_ops: int


@dataclass(frozen=True)
class Unregister:
    """``DELETE /queries/{query}``: its events stop; the other queries go on."""

    query: str


Op = Post | Register | Declare | Update | Reconnect | Unregister


@dataclass
class Scenario:
    """One generated scenario; ``features`` are the switches it was made with."""

    seed: int
    features: frozenset[str]
    streams: tuple[StreamSpec, ...]
    #: stored data loaded before anything else: graph IRI (None: default graph) -> triples
    static: dict[str | None, tuple[Triple, ...]]
    ops: list[Op] = field(default_factory=list)
    #: the namespace the scenario's names and IRIs live in ("" for in-process runs)
    tag: str = ""

    def queries(self) -> list[QuerySpec]:
        return [op.query for op in self.ops if isinstance(op, Register)]

    def checked_graphs(self) -> list[str]:
        """The named graphs whose content is compared at the end: the static
        ones and those streams (outputs too) absorb into."""
        graphs = {g for g in self.static if g is not None}
        graphs |= {s.graph for s in self.streams}
        graphs |= {op.stream.graph for op in self.ops if isinstance(op, Declare)}
        graphs |= {op.query.output for op in self.ops if isinstance(op, Register) and op.query.output}
        return sorted(graphs)

    def describe(self) -> str:
        """The scenario as a self-contained recipe (a failing scenario prints it)."""
        lines = [f"# scenario seed={self.seed} features={','.join(sorted(self.features))}"]
        for stream in self.streams:
            lines.append(f"PUT /streams/{stream.name} {stream.declaration()}")
        for graph, triples in self.static.items():
            if not triples:
                continue
            lines.append(
                f"LOAD {'default graph' if graph is None else f'<{graph}>'}: "
                + " ".join(f"{s} {p} {o} ." for s, p, o in triples)
            )
        for number, op in enumerate(self.ops):
            lines.append(f"[{number}] " + describe_op(op))
        return "\n".join(lines)


#: lines of one post that a description prints; the JSON form keeps all
DESCRIBED_LINES = 40


def describe_op(op: Op) -> str:
    if isinstance(op, Post):
        lines = [
            line
            for ts, triples in op.items
            for line in ([f"  {ts} {s} {p} {o} ." for s, p, o in triples] or [f"  {ts}"])
        ]
        if len(lines) > DESCRIBED_LINES:
            cut = len(lines) - DESCRIBED_LINES
            lines = [
                *lines[: DESCRIBED_LINES // 2],
                f"  ... {cut} more lines (see the JSON form)",
                *lines[-DESCRIBED_LINES // 2 :],
            ]
        head = f"POST /streams/{op.stream} ({op.form}, {len(op.items)} items, {op.triple_count} triples)"
        return head + "\n" + "\n".join(lines)
    if isinstance(op, Register):
        return "POST /queries " + op.query.registration()
    if isinstance(op, Declare):
        return f"PUT /streams/{op.stream.name} {op.stream.declaration()}"
    if isinstance(op, Update):
        return "POST /sparql update: " + op.text()
    if isinstance(op, Unregister):
        return f"DELETE /queries/{op.query}"
    return f"SSE {op.query}: disconnect, resume with Last-Event-ID after {op.after_ops} operations"
