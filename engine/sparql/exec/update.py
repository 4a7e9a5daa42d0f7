"""SPARQL 1.1 Update, applied inside one store transaction.

Operations run in order against the transaction's working state (each sees
the effect of the ones before it); the caller commits only if all succeed,
so a failing request changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.rdf import IRI, KIND_IRI, KIND_LITERAL, BNode, RdfSyntaxError, TripleTerm, Variable, fresh_bnode
from engine.sparql import algebra as A
from engine.sparql.exec.context import ServiceCall
from engine.sparql.exec.dataset import build_dataset
from engine.sparql.exec.executor import Executor
from engine.sparql.exec.outbound import remote_failure
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import Solutions
from engine.sparql.exec.template_terms import triple_term_column
from engine.sparql.expr import EvalContext
from engine.store import DEFAULT_GRAPH, Transaction


class UpdateError(Exception):
    """An update operation that cannot be applied (the request is rolled back)."""

    status = 400


class UpdateRunner:
    """Applies the operations of one update request to one transaction."""

    def __init__(
        self,
        txn: Transaction,
        load_document: Callable[[IRI], list],
        make_context: Callable[[], EvalContext],
        service_client: ServiceCall | None = None,
    ) -> None:
        self.service_client = service_client
        self.txn = txn
        self.dictionary = txn.store.terms
        self.load_document = load_document
        self.make_context = make_context

    def run(self, update: A.Update) -> None:
        handlers = {
            A.InsertData: self._insert_data,
            A.DeleteData: self._delete_data,
            A.DeleteWhere: self._delete_where,
            A.Modify: self._modify,
            A.Load: self._load,
            A.Clear: self._clear,
            A.Drop: self._drop,
            A.Create: self._create,
            A.Transfer: self._transfer,
        }
        for op in update.operations:
            handlers[op.__class__](op)

    # ---------------------------------------------------------------- helpers
    def _graph_id(self, graph: IRI | None) -> int:
        return DEFAULT_GRAPH if graph is None else self.dictionary.encode(graph)

    def _apply(self, quads: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], insert: bool) -> None:
        for gid, (s, p, o) in quads.items():
            if insert:
                self.txn.add(gid, s, p, o)
            else:
                self.txn.remove(gid, s, p, o)

    def _ground_quads(self, quads: tuple[A.Quad, ...], lookup_only: bool) -> dict:
        """Quads made of terms only, grouped by graph ID. With ``lookup_only``
        (DELETE DATA) terms unknown to the store are dropped, not added."""
        grouped: dict[int, list[tuple[int, int, int]]] = {}
        bnodes: dict[BNode, BNode] = {}

        def fresh(t):  # the request's blank nodes, inside triple terms too, are new ones
            if isinstance(t, BNode):
                return bnodes.setdefault(t, fresh_bnode())
            if isinstance(t, TripleTerm):
                return TripleTerm(fresh(t.subject), t.predicate, fresh(t.object))
            return t

        for q in quads:
            terms = [fresh(t) for t in (q.subject, q.predicate, q.object)]
            if lookup_only:
                ids = [self.dictionary.lookup(t) for t in terms]
                if not all(ids):
                    continue
                gid = DEFAULT_GRAPH if q.graph is None else self.dictionary.lookup(q.graph)
                if q.graph is not None and not gid:
                    continue
            else:
                ids = [self.dictionary.encode(t) for t in terms]
                gid = self._graph_id(q.graph)
            grouped.setdefault(gid, []).append(tuple(ids))
        return {
            g: tuple(np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
            for g, rows in grouped.items()
        }

    def _where(self, pattern: A.Pattern, using: A.Dataset | None, with_graph: IRI | None):
        snapshot = self.txn.snapshot()
        terms = QueryTerms(self.dictionary)
        if using is not None and (using.default or using.named):
            dataset = build_dataset(snapshot, terms, list(using.default), list(using.named))
        elif with_graph is not None:
            full = build_dataset(snapshot, terms)
            dataset = build_dataset(snapshot, terms, [with_graph], None)
            dataset.named = full.named
        else:
            dataset = build_dataset(snapshot, terms)
        executor = Executor(terms, dataset, self.make_context(), self.service_client)
        return executor.run(pattern), terms

    def _instantiate(
        self, templates: tuple[A.Quad, ...], solutions: Solutions, terms: QueryTerms,
        default_graph: IRI | None, fresh_bnodes: bool,
    ) -> dict:
        """Ground the templates with every solution; rows where a position is
        unbound or of the wrong kind (literal subject, ...) are skipped."""
        grouped: dict[int, list[list[np.ndarray]]] = {}
        n = solutions.length
        if not n:
            return {}
        row_bnodes: dict[BNode, np.ndarray] = {}
        for q in templates:
            s, p, o = (
                self._template_column(t, solutions, terms, row_bnodes, fresh_bnodes, n)
                for t in (q.subject, q.predicate, q.object)
            )
            graph = q.graph if q.graph is not None else default_graph
            if graph is None:
                g = np.zeros(n, dtype=np.int64)
            else:
                g = self._template_column(graph, solutions, terms, row_bnodes, fresh_bnodes, n)
                g = np.where(g > 0, g, -1)
            kinds = self.dictionary.kinds
            ok = (s > 0) & (p > 0) & (o > 0) & (g >= 0)
            ok &= kinds(np.where(s > 0, s, 0)) < KIND_LITERAL  # an IRI or a blank node
            ok &= kinds(np.where(p > 0, p, 0)) == KIND_IRI
            ok &= (g == 0) | (kinds(np.where(g > 0, g, 0)) == KIND_IRI)
            for gid in np.unique(g[ok]).tolist():
                sel = ok & (g == gid)
                grouped.setdefault(gid, []).append([s[sel], p[sel], o[sel]])
        return {
            gid: tuple(np.concatenate([part[i] for part in parts]) for i in range(3))
            for gid, parts in grouped.items()
        }

    def _template_column(self, t, solutions: Solutions, terms: QueryTerms, row_bnodes, fresh: bool, n: int):
        """Store IDs for one template position across all rows (0 where unbound)."""
        if isinstance(t, Variable):
            col = solutions.column(t.name)
            local = col < 0
            if local.any():
                col = col.copy()
                col[local] = [self.dictionary.encode(terms.decode(i)) for i in col[local].tolist()]
            return col
        if isinstance(t, BNode) and fresh:
            if t not in row_bnodes:
                row_bnodes[t] = self.dictionary.encode_many([fresh_bnode() for _ in range(n)])
            return row_bnodes[t]
        if isinstance(t, A.TripleTermPattern):
            return triple_term_column(
                t, lambda part: self._template_column(part, solutions, terms, row_bnodes, fresh, n),
                self.dictionary.decode_many,
                lambda built: np.array([self.dictionary.encode(b) if b is not None else 0 for b in built],
                                       dtype=np.int64))
        return np.full(n, self.dictionary.encode(t), dtype=np.int64)

    # ------------------------------------------------------------- operations
    def _insert_data(self, op: A.InsertData) -> None:
        self._apply(self._ground_quads(op.quads, lookup_only=False), insert=True)

    def _delete_data(self, op: A.DeleteData) -> None:
        self._apply(self._ground_quads(op.quads, lookup_only=True), insert=False)

    def _delete_where(self, op: A.DeleteWhere) -> None:
        self._modify(A.Modify(op.quads, (), quads_to_pattern(op.quads)))

    def _modify(self, op: A.Modify) -> None:
        solutions, terms = self._where(op.where, op.using, op.with_graph)
        deletes = self._instantiate(op.delete, solutions, terms, op.with_graph, fresh_bnodes=False)
        inserts = self._instantiate(op.insert, solutions, terms, op.with_graph, fresh_bnodes=True)
        self._apply(deletes, insert=False)
        self._apply(inserts, insert=True)

    def _load(self, op: A.Load) -> None:
        try:
            quads = self.load_document(op.source)
        except Exception as exc:
            if op.silent:
                return
            raise UpdateError(f"LOAD <{op.source.value}> failed: {_load_failure(exc)}") from exc
        gid = self._graph_id(op.graph)
        if not quads:
            self.txn.create(gid)
            return
        columns = list(zip(*[(s, p, o) for s, p, o, _ in quads], strict=True))
        ids = [self.dictionary.encode_many(list(c)) for c in columns]
        self.txn.add(gid, *ids)

    def _targets(self, target: A.GraphTarget) -> list[int]:
        if target == "DEFAULT":
            return [DEFAULT_GRAPH]
        if target == "NAMED":
            return [g for g in self.txn.graphs if g != DEFAULT_GRAPH]
        if target == "ALL":
            return list(self.txn.graphs)
        return [self.dictionary.encode(target)]

    def _require(self, target: A.GraphTarget, silent: bool) -> bool:
        graph_id = self.dictionary.lookup(target) if isinstance(target, IRI) else 0
        if isinstance(target, IRI) and not (graph_id and self.txn.exists(graph_id)):
            if silent:
                return False
            raise UpdateError(f"graph <{target.value}> does not exist")
        return True

    def _clear(self, op: A.Clear) -> None:
        if self._require(op.target, op.silent):
            for gid in self._targets(op.target):
                self.txn.clear(gid)

    def _drop(self, op: A.Drop) -> None:
        if self._require(op.target, op.silent):
            for gid in self._targets(op.target):
                self.txn.drop(gid)

    def _create(self, op: A.Create) -> None:
        gid = self.dictionary.encode(op.graph)
        if self.txn.exists(gid):
            if op.silent:
                return
            raise UpdateError(f"graph <{op.graph.value}> already exists")
        self.txn.create(gid)

    def _transfer(self, op: A.Transfer) -> None:
        source, target = self._targets(op.source)[0], self._targets(op.target)[0]
        if not self._require(op.source, op.silent) or source == target:
            return
        graph = self.txn.graph(source)
        if op.op in ("COPY", "MOVE"):
            self.txn.drop(target)
        self.txn.create(target)
        self.txn.add(target, graph.s, graph.p, graph.o)
        if op.op == "MOVE":
            self.txn.drop(source)


def quads_to_pattern(quads: tuple[A.Quad, ...]) -> A.Pattern:
    """The WHERE pattern of DELETE WHERE: default-graph triples as one BGP,
    each GRAPH block as its own BGP, all joined."""
    default = tuple(A.TriplePattern(q.subject, q.predicate, q.object) for q in quads if q.graph is None)
    pattern: A.Pattern = A.BGP(default)
    by_graph: dict = {}
    for q in quads:
        if q.graph is not None:
            by_graph.setdefault(q.graph, []).append(A.TriplePattern(q.subject, q.predicate, q.object))
    for graph, triples in by_graph.items():
        pattern = A.Join(pattern, A.Graph(graph, A.BGP(tuple(triples))))
    return pattern


def _load_failure(exc: Exception) -> str:
    """Why a LOAD failed, in words that tell the client what to fix but
    repeat neither the fetched document nor the server's own error text."""
    if isinstance(exc, UpdateError):
        return str(exc)
    if isinstance(exc, RdfSyntaxError):
        return f"the document is not valid RDF: {exc}"
    if isinstance(exc, OSError):
        return "the file could not be read"
    return remote_failure(exc)
