"""The engine's Python API: open a store, load RDF, query, update.

    from engine.api import Store
    store = Store()
    store.load("data.ttl")
    for row in store.query("SELECT ?s WHERE { ?s ?p ?o }").rows():
        ...
    store.update("INSERT DATA { <a> <b> <c> }")

Parsed queries are cached by text (LRU), so a repeated query is only parsed
once. Every query reads one snapshot of the store; every update is atomic.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import httpx
import numpy as np

from engine.rdf import IRI, Term, canonical_nquads, guess_format, parse_rdf, rdf_format, split_nquads
from engine.sparql import algebra as A
from engine.sparql.exec import (
    Executor,
    LeanPlan,
    OutboundPolicy,
    OutboundRefused,
    QueryCancelled,
    QueryTerms,
    ServiceClient,
    Solutions,
    Trace,
    UpdateError,
    UpdateRunner,
    build_dataset,
    construct_ids,
    default_graph,
    describe,
    explain_plan,
)
from engine.sparql.expr import EvalContext
from engine.sparql.results import decoded_rows
from engine.sparql.syntax import SparqlSyntaxError, parse_query, parse_update
from engine.sparql.syntax.shapes import ShapeCache, Template
from engine.store import DEFAULT_GRAPH, QuadStore, Shutdown, deadline_check, row_budget, triples_by_graph

__all__ = ["QueryCancelled", "QueryResult", "Store"]

PLAN_CACHE_SIZE = 512
#: rows decoded at a time when a result is read
ROW_CHUNK = 4096


class QueryResult:
    """The answer of one query; terms are decoded only when read."""

    def __init__(self, form: str, terms: QueryTerms, solutions: Solutions | None = None,
                 variables: list[str] | None = None, boolean: bool | None = None,
                 triples: list[tuple[Term, Term, Term]] | None = None,
                 prefixes: dict[str, str] | None = None, triple_ids: np.ndarray | None = None) -> None:
        self.form = form
        self._terms = terms
        self._solutions = solutions
        self.variables = variables or []
        self.boolean = boolean
        self._triples = triples
        #: CONSTRUCT triples as an (n, 3) array of IDs, decoded when read
        self._triple_ids = triple_ids
        #: the query's PREFIX declarations (prefix -> namespace IRI): a graph
        #: answer written in Turtle, JSON-LD or RDF/XML uses the query's own names
        self.prefixes = prefixes or {}

    def __len__(self) -> int:
        if self._solutions is not None:
            return self._solutions.length
        if self._triple_ids is not None:
            return len(self._triple_ids)
        return len(self._triples or [])

    def rows(self) -> Iterator[tuple[Term | None, ...]]:
        """SELECT rows in result order, one term (or None when unbound) per
        variable. Decoded a chunk at a time, so a large result is never held
        in memory as terms all at once."""
        return decoded_rows(self.id_chunks(), self.decode_ids)

    def id_chunks(self) -> Iterator[tuple[int, list[np.ndarray]]]:
        """SELECT rows as ``(rows, ID columns)`` batches in result order, a
        column per variable (0: unbound); decode with :meth:`decode_ids`. A
        writer that spells each distinct term once starts from here."""
        solutions = self._solutions
        if solutions is None:
            return
        columns = [solutions.column(v) for v in self.variables]
        for start in range(0, solutions.length, ROW_CHUNK):
            yield min(ROW_CHUNK, solutions.length - start), [c[start : start + ROW_CHUNK] for c in columns]

    def decode_ids(self, ids: np.ndarray) -> list[Term | None]:
        """The terms of a column of :meth:`id_chunks` (None for unbound)."""
        return self._terms.decode_column(ids)

    def spell_ids(self, ids: np.ndarray) -> list[bytes | None]:
        """The stored N-Triples spellings of a column of :meth:`id_chunks`
        where the store keeps one, None elsewhere (decode those)."""
        return self._terms.spellings(ids)

    def triples(self) -> Iterator[tuple[Term, Term, Term]]:
        """CONSTRUCT / DESCRIBE triples; CONSTRUCT's are decoded a chunk at a
        time, so a writer's first chunk does not wait for the last triple."""
        if self._triple_ids is not None:
            return self._decoded_triples(self._triple_ids)
        return iter(self._triples or [])

    def _decoded_triples(self, ids: np.ndarray) -> Iterator[tuple[Term, Term, Term]]:
        decode = self._terms.decode_column
        for start in range(0, len(ids), ROW_CHUNK):
            block = ids[start : start + ROW_CHUNK]
            yield from zip(decode(block[:, 0]), decode(block[:, 1]), decode(block[:, 2]), strict=True)


class PreparedQuery:
    """A query found by its shape (:meth:`Store.cached_prepared`): the
    shape's template and this query's constants. The algebra of the query
    itself is built only if asked for: a small query runs from the
    template's row-by-row plan without it."""

    __slots__ = ("template", "values", "_query")

    def __init__(self, template: Template, values: list) -> None:
        self.template = template
        self.values = values
        self._query: A.Query | None = None

    @property
    def form(self) -> str:
        return self.template.query.form

    @property
    def query(self) -> A.Query:
        if self._query is None:
            self._query = self.template.instantiate(self.values)
        return self._query


#: Template.prepared of a shape found to have no row-by-row plan
_NO_LEAN_PLAN = False


class Store:
    """An in-memory RDF dataset with SPARQL 1.1 query and update."""

    def __init__(self, service_timeout: float = 30.0, quad_store: QuadStore | None = None) -> None:
        #: the ID-level store: one process's, or a cluster coordinator's
        #: (``engine.cluster.sharded_store``), whose triples live on shards
        self._store = quad_store if quad_store is not None else QuadStore()
        #: parsed queries by shape: a query differing only in a constant is not parsed again
        self._plans = ShapeCache(PLAN_CACHE_SIZE)
        self._service = ServiceClient(service_timeout)

    @property
    def service_endpoints(self) -> dict[str, str]:
        """SERVICE aliases, editable in place: SERVICE IRI -> the URL actually
        called. An operator can point a public endpoint's IRI at a mirror;
        tests point the W3C suite's example IRIs at loopback servers."""
        return self._service.endpoints

    @property
    def terms(self):
        return self._store.terms

    @property
    def quad_store(self) -> QuadStore:
        """The ID-level store (for the stream engine, which writes into it)."""
        return self._store

    @property
    def outbound_policy(self) -> OutboundPolicy:
        """What SERVICE and LOAD may call (everything, unless a server sets
        :meth:`OutboundPolicy.for_server`)."""
        return self._service.policy

    @outbound_policy.setter
    def outbound_policy(self, policy: OutboundPolicy) -> None:
        self._service.policy = policy

    @property
    def service_client(self) -> ServiceClient:
        return self._service

    # ------------------------------------------------------------------ data
    def load(self, source: str | Path | bytes, format: str | None = None, graph: str | None = None,
             base: str | None = None) -> int:
        """Load a document (path or bytes) into the default graph or ``graph``
        (statements of a named graph in TriG or N-Quads stay in theirs).
        Returns the number of statements read. All or nothing: a parse error
        (:class:`engine.rdf.RdfSyntaxError`, with line and column) loads nothing.

        The document is parsed by Oxigraph into N-Quads text, split into
        columns of term spellings and encoded in whole-array steps; a large
        load into an empty graph builds the compact CSR arrays directly."""
        quads = split_nquads(canonical_nquads(source, format, base))
        target = DEFAULT_GRAPH if graph is None else self._store.terms.encode(IRI(graph))
        by_graph = triples_by_graph(self._store.terms, quads, target)
        txn = self._store.begin()
        try:
            if graph is not None:
                txn.create(target)
            for gid, (s, p, o) in by_graph.items():
                txn.load(gid, s, p, o)
        except BaseException:
            self._store.abort(txn)
            raise
        txn.commit()
        return len(quads)

    def replace_graph(self, graph: str | None, triples: list[tuple[Term, Term, Term]]) -> None:
        """Replace a graph's content (None: the default graph) in one transaction."""
        encode = self._store.terms.encode
        rows = [(encode(s), encode(p), encode(o)) for s, p, o in triples]
        txn = self._store.begin()
        try:
            gid = DEFAULT_GRAPH if graph is None else encode(IRI(graph))
            txn.drop(gid)
            txn.create(gid)
            if rows:
                txn.add(gid, *(np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)))
        except BaseException:
            self._store.abort(txn)
            raise
        txn.commit()

    def drop_graph(self, graph: str | None) -> None:
        """Drop a named graph, or empty the default graph (None)."""
        gid = DEFAULT_GRAPH if graph is None else self._store.terms.lookup(IRI(graph))
        if graph is not None and not gid:
            return
        txn = self._store.begin()
        txn.drop(gid)
        txn.commit()

    def add(self, triples, graph: str | None = None) -> None:
        """Add ``(s, p, o)`` term triples (one transaction) to the default graph or ``graph``."""
        self._add_quads([(s, p, o, None) for s, p, o in triples], graph)

    def _add_quads(self, quads: list, graph: str | None) -> None:
        encode = self._store.terms.encode
        by_graph: dict[int, list[tuple[int, int, int]]] = {}
        target = DEFAULT_GRAPH if graph is None else encode(IRI(graph))
        for s, p, o, g in quads:
            gid = target if g is None else encode(g)
            by_graph.setdefault(gid, []).append((encode(s), encode(p), encode(o)))
        txn = self._store.begin()
        try:
            if graph is not None:
                txn.create(target)
            for gid, rows in by_graph.items():
                s, p, o = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
                txn.add(gid, s, p, o)
        except BaseException:
            self._store.abort(txn)
            raise
        txn.commit()

    @classmethod
    def open(cls, path: str | Path) -> Store:
        """Open a store written by ``rivulet load`` (memory-mapped base store)."""
        from engine.store import open_quad_store

        store = cls()
        store._store = open_quad_store(Path(path))
        return store

    def named_graphs(self) -> list[IRI]:
        return [self._store.terms.decode(g) for g in self._store.snapshot().named_graph_ids()]

    def triples(self, graph: str | None = None) -> Iterator[tuple[Term, Term, Term]]:
        """The triples of the default graph or ``graph``, as of now (one
        snapshot), decoded a chunk at a time as they are read: a graph store
        GET of a large graph starts sending before its last term is decoded."""
        snapshot = self._store.snapshot()
        gid = DEFAULT_GRAPH if graph is None else self._store.terms.lookup(IRI(graph))
        stored = snapshot.graph(gid) if (graph is None or gid) else None
        if stored is None:
            return iter(())
        return self._decoded(stored.s, stored.p, stored.o)

    def graphs(self) -> Iterator[tuple[IRI | None, Iterator[tuple[Term, Term, Term]]]]:
        """Every graph of one snapshot (the dataset as of now, whatever is
        written meanwhile): the default graph (None) first, then each named
        graph, empty ones included, with its triples decoded as they are read."""
        snapshot = self._store.snapshot()
        decode = self._store.terms.decode
        for gid in [DEFAULT_GRAPH, *snapshot.named_graph_ids()]:
            stored = snapshot.graph(gid)
            triples = iter(()) if stored is None else self._decoded(stored.s, stored.p, stored.o)
            yield (None if gid == DEFAULT_GRAPH else decode(gid)), triples

    def _decoded(self, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> Iterator[tuple[Term, Term, Term]]:
        decode = self._store.terms.decode_many
        for start in range(0, len(s), ROW_CHUNK):
            end = start + ROW_CHUNK
            yield from zip(decode(s[start:end]), decode(p[start:end]), decode(o[start:end]), strict=True)

    def __len__(self) -> int:
        return sum(len(t) for t in self._store.snapshot().graphs.values())

    # ----------------------------------------------------------------- query
    def cached_plan(self, text: str, base: str | None = None) -> A.Query | None:
        """The parsed query if the plan cache has its shape (None otherwise); never parses."""
        found = self.cached_shape(text, base)
        return None if found is None else found[0]

    def cached_shape(self, text: str, base: str | None = None) -> tuple[A.Query, Hashable] | None:
        """The parsed query and its shape (a key that outlives this query: the
        same for every query differing only in a lifted constant) if the plan
        cache has the shape; None otherwise, and for text that does not even
        tokenize (:meth:`prepare` raises its error). Costs one tokenizer pass."""
        try:
            return self._plans.lookup(text, base)
        except SparqlSyntaxError:
            return None

    def cached_prepared(self, text: str, base: str | None = None) -> PreparedQuery | None:
        """:meth:`cached_shape` without building the query's algebra (run it
        with :meth:`execute_prepared`); None when the shape is not cached."""
        try:
            found = self._plans.find(text, base)
        except SparqlSyntaxError:
            return None
        return None if found is None else PreparedQuery(*found)

    def execute_prepared(self, prepared: PreparedQuery, should_stop: Callable[[], bool] | None = None,
                         max_rows: int | None = None, union_default_graph: bool = False) -> QueryResult:
        """:meth:`execute` of a query found by its shape, over the dataset
        it names: row by row where the shape has a lean plan and the answer
        stays small (:mod:`engine.sparql.exec.lean`), by the executor otherwise."""
        template = prepared.template
        plan = template.prepared
        if plan is None:
            slot_of = {term: slot for slot, term in template.placeholders.items()}
            plan = template.prepared = LeanPlan.compile(template.query, slot_of) or _NO_LEAN_PLAN
        if plan is not _NO_LEAN_PLAN:
            terms = QueryTerms(self._store.terms)
            graph = default_graph(self._store.snapshot(), union_default_graph)
            solutions = plan.run(graph, terms, template.terms(prepared.values), max_rows)  # type: ignore[union-attr]
            if solutions is not None:
                query = template.query
                if query.form == "ASK":
                    return QueryResult("ASK", terms, boolean=solutions.length > 0, prefixes=query.prefixes)
                return QueryResult("SELECT", terms, solutions, plan.variables,  # type: ignore[union-attr]
                                   prefixes=query.prefixes)
        return self.execute(prepared.query, should_stop=should_stop, max_rows=max_rows,
                            union_default_graph=union_default_graph)

    def prepare_shape(self, text: str, base: str | None = None) -> tuple[A.Query, Hashable]:
        """The parsed query and its shape, parsed only if the shape is new."""
        return self._plans.prepare(text, base, parse_query)

    def prepare(self, text: str, base: str | None = None) -> A.Query:
        """Parse a query, or build it from the plan cache's template of its shape."""
        return self.prepare_shape(text, base)[0]

    def query(self, text: str, base: str | None = None, default_graphs: list[str] | None = None,
              named_graphs: list[str] | None = None,
              should_stop: Callable[[], bool] | None = None) -> QueryResult:
        """Run a query. ``default_graphs``/``named_graphs`` (the protocol's
        default-graph-uri / named-graph-uri) override the query's FROM clauses.
        ``should_stop`` is polled between operators; when it returns True the
        query raises :class:`QueryCancelled`."""
        return self.execute(self.prepare(text, base), default_graphs, named_graphs, should_stop)

    def execute(self, query: A.Query, default_graphs: list[str] | None = None,
                named_graphs: list[str] | None = None,
                should_stop: Callable[[], bool] | None = None,
                max_rows: int | None = None, union_default_graph: bool = False) -> QueryResult:
        """Run a parsed query. ``max_rows`` bounds every step (a pattern's
        matches, a join, a product): a query that would exceed it raises
        :class:`engine.store.RowBudgetExceeded` and its memory is freed.
        ``union_default_graph``: a query naming no dataset (no FROM, no
        ``default_graphs``/``named_graphs``) reads the merge of every graph
        as its default graph."""
        with row_budget(max_rows, _checkpoint(should_stop)):
            return self._execute(query, default_graphs, named_graphs, should_stop, union_default_graph)

    def explain(self, query: A.Query, analyze: bool = False, default_graphs: list[str] | None = None,
                named_graphs: list[str] | None = None, should_stop: Callable[[], bool] | None = None,
                max_rows: int | None = None, union_default_graph: bool = False) -> dict:
        """The plan of a parsed query (:func:`engine.sparql.exec.explain_plan`)
        with each step's estimated rows, as a JSON-ready dict; with ``analyze``
        the query also runs, bounded as :meth:`execute` bounds it, and each
        step gets its calls, actual rows and time, the whole its rows and time."""
        _, executor = self._executor(query, default_graphs, named_graphs, should_stop, union_default_graph)
        explained: dict = {"form": query.form, "analyzed": analyze}
        if not analyze:
            explained["plan"] = explain_plan(query.pattern, executor.context)
            return explained
        trace = executor.context.trace = Trace()
        started = time.perf_counter()
        with row_budget(max_rows, _checkpoint(should_stop)):
            solutions = executor.run(query.pattern)
        explained["time_ms"] = round((time.perf_counter() - started) * 1000, 3)
        explained["rows"] = solutions.length
        explained["plan"] = explain_plan(query.pattern, executor.context, trace)
        return explained

    def _executor(self, query: A.Query, default_graphs: list[str] | None, named_graphs: list[str] | None,
                  should_stop: Callable[[], bool] | None,
                  union_default_graph: bool) -> tuple[QueryTerms, Executor]:
        """The query's terms and an executor over its dataset in the current snapshot."""
        terms = QueryTerms(self._store.terms)
        snapshot = self._store.snapshot()
        if default_graphs is not None or named_graphs is not None:
            dataset = build_dataset(snapshot, terms, [IRI(g) for g in default_graphs or []],
                                    [IRI(g) for g in named_graphs or []])
        elif query.dataset is not None:
            dataset = build_dataset(snapshot, terms, list(query.dataset.default), list(query.dataset.named))
        else:
            dataset = build_dataset(snapshot, terms, union_default=union_default_graph)
        return terms, Executor(terms, dataset, EvalContext(base=query.base), self._service, should_stop)

    def _execute(self, query: A.Query, default_graphs: list[str] | None, named_graphs: list[str] | None,
                 should_stop: Callable[[], bool] | None, union_default_graph: bool) -> QueryResult:
        terms, executor = self._executor(query, default_graphs, named_graphs, should_stop,
                                         union_default_graph)
        solutions = executor.run(query.pattern)
        prefixes = query.prefixes
        if query.form == "SELECT":
            return QueryResult("SELECT", terms, solutions, [v.name for v in query.variables],
                               prefixes=prefixes)
        if query.form == "ASK":
            return QueryResult("ASK", terms, boolean=solutions.length > 0, prefixes=prefixes)
        if query.form == "CONSTRUCT":
            return QueryResult("CONSTRUCT", terms, prefixes=prefixes,
                               triple_ids=construct_ids(query.template, solutions, terms))
        described = describe(query.describe, solutions, terms, executor.context.dataset.default)
        return QueryResult("DESCRIBE", terms, triples=described, prefixes=prefixes)

    # ---------------------------------------------------------------- update
    def update(self, text: str, base: str | None = None, using_graphs: list[str] | None = None,
               using_named_graphs: list[str] | None = None, local_files: bool = True,
               max_rows: int | None = None, time_limit: float | None = None,
               shutdown: Shutdown | None = None) -> None:
        """Apply a SPARQL Update request atomically: all operations or none.

        ``using_graphs``/``using_named_graphs`` are the protocol's
        using-graph-uri / using-named-graph-uri: they act as USING / USING NAMED
        on every DELETE/INSERT ... WHERE operation. SPARQL 1.1 Protocol 2.2.3
        makes it an error to give them for a request with USING, USING NAMED or
        WITH, so such a request raises :class:`UpdateError` and changes nothing.

        Documents named by LOAD are fetched before the store is locked (a slow
        server must not hold up other writers). ``local_files=False`` refuses
        ``file:`` IRIs: an HTTP client must not read the server's disk.
        ``max_rows`` bounds every step of the WHERE clauses, as for queries.
        ``time_limit`` (seconds, counted from when the update holds the
        store's write lock) and ``shutdown`` (the server's) stop it with
        :class:`QueryCancelled` at its next checkpoint: the transaction is
        aborted, so the update changes nothing and other writers go on."""
        request = parse_update(text, base)
        if using_graphs is not None or using_named_graphs is not None:
            request = _with_protocol_dataset(request, using_graphs or [], using_named_graphs or [])
        documents = _prefetch(request, local_files, self._service.policy)
        txn = self._store.begin()
        try:
            runner = UpdateRunner(txn, documents, lambda: EvalContext(base=request.base), self._service)
            with row_budget(max_rows, deadline_check(time_limit, shutdown)):
                runner.run(request)
        except BaseException:
            self._store.abort(txn)
            raise
        txn.commit()


def _checkpoint(should_stop: Callable[[], bool] | None) -> Callable[[], None] | None:
    """What a long step calls to stop when ``should_stop`` says so."""
    if should_stop is None:
        return None

    def check() -> None:
        if should_stop():
            raise QueryCancelled("query cancelled")

    return check


def _with_protocol_dataset(request: A.Update, default: list[str], named: list[str]) -> A.Update:
    """The request with the protocol's USING dataset on each Modify operation."""
    dataset = A.Dataset(tuple(IRI(g) for g in default), tuple(IRI(g) for g in named))
    operations = []
    for op in request.operations:
        if isinstance(op, A.Modify):
            if op.using is not None or op.with_graph is not None:
                raise UpdateError("using-graph-uri/using-named-graph-uri cannot be combined with "
                                  "USING, USING NAMED or WITH in the request")
            op = dataclasses.replace(op, using=dataset)
        operations.append(op)
    return dataclasses.replace(request, operations=tuple(operations))


def _prefetch(request: A.Update, local_files: bool, policy: OutboundPolicy) -> Callable[[IRI], list]:
    """Fetch every LOAD source of the request now; the returned lookup gives
    each one's quads, or raises the error its fetch raised."""
    fetched: dict[IRI, list | Exception] = {}
    for op in request.operations:
        if isinstance(op, A.Load) and op.source not in fetched:
            try:
                fetched[op.source] = _fetch_document(op.source, local_files, policy)
            except Exception as exc:  # reported (or ignored, SILENT) by the operation itself
                fetched[op.source] = exc

    def lookup(source: IRI) -> list:
        found = fetched[source]
        if isinstance(found, Exception):
            raise found
        return found

    return lookup


def _fetch_document(source: IRI, local_files: bool, policy: OutboundPolicy) -> list:
    """Read the document LOAD names: a file: IRI (if allowed) or an http(s)
    URL the outbound policy allows. Redirects are not followed (one could
    lead to an address the policy refuses)."""
    url = source.value
    parsed = urlparse(url)
    if parsed.scheme == "file":
        if not local_files:
            raise UpdateError("file: IRIs are not allowed here")
        return list(parse_rdf(Path(url2pathname(parsed.path)), base=url))
    try:
        policy.check(url)
    except OutboundRefused as exc:
        raise UpdateError(f"refused by policy: {exc}") from exc
    response = httpx.get(url, headers={"Accept": "text/turtle, application/rdf+xml;q=0.8, */*;q=0.1"},
                         follow_redirects=False, timeout=30.0)
    if response.is_redirect:
        raise UpdateError(f"it answered a redirect ({response.status_code}); LOAD does not follow "
                          "redirects: name the document's own URL")
    response.raise_for_status()
    media = response.headers.get("content-type", "").split(";")[0].strip()
    fmt = rdf_format(media) or guess_format(parsed.path) or "turtle"
    return list(parse_rdf(response.content, fmt, base=url))
