"""SPARQL 1.1 Update requests: operations separated by ';', each possibly
preceded by its own BASE/PREFIX declarations.

Templates and data blocks reuse the triples parser with blank-node and
variable rules set per block: DATA blocks take no variables, DELETE blocks
take no blank nodes, INSERT blocks keep blank nodes as ``BNode`` (fresh per
execution). A blank node label of an INSERT DATA block may not reappear in
another operation of the request; labels of INSERT templates are local to
their template (W3C tests insert-where-same-bnode*).
"""

from __future__ import annotations

from engine.rdf import IRI
from engine.sparql.algebra import (
    Clear,
    Create,
    Dataset,
    DeleteData,
    DeleteWhere,
    Drop,
    Graph,
    GraphTarget,
    InsertData,
    Join,
    Load,
    Modify,
    Pattern,
    Quad,
    Transfer,
    TriplePattern,
    TripleTermPattern,
    Update,
    UpdateOperation,
)
from engine.sparql.syntax.parser_base import BLANKS_AS_NODES, BLANKS_AS_VARS, BLANKS_FORBIDDEN
from engine.sparql.syntax.query_parser import QueryParser
from engine.sparql.syntax.triples_parser import TRIPLE_START, Triple


class UpdateParser(QueryParser):
    """Parses an update request (the query layers supply WHERE patterns)."""

    def update(self) -> Update:
        operations: list[UpdateOperation] = []
        self.prologue()
        while self.tok[0] != "eof":
            operations.append(self._operation())
            if self.tok[0] == "eof":
                break
            self.expect(";", "';' or end of input")
            self.prologue()
        return Update(tuple(operations), self.base, dict(self.prefixes))

    def _operation(self) -> UpdateOperation:
        self.template_scope += 1
        kind = self.tok[0]
        if kind == "INSERT":
            self.advance()
            if self.accept("DATA"):
                return InsertData(self._quads(BLANKS_AS_NODES, "variables are not allowed in INSERT DATA"))
            return self._modify(None, insert_only=True)
        if kind == "DELETE":
            self.advance()
            if self.accept("DATA"):
                return DeleteData(
                    self._quads(BLANKS_FORBIDDEN, "variables are not allowed in DELETE DATA", "DELETE DATA")
                )
            if self.accept("WHERE"):
                return self._delete_where(self._quads(BLANKS_FORBIDDEN, "", "DELETE WHERE"))
            return self._modify(None, insert_only=False)
        if kind == "WITH":
            self.advance()
            graph = self.iri()
            if self.accept("INSERT"):
                return self._modify(graph, insert_only=True)
            self.expect("DELETE", "DELETE or INSERT")
            return self._modify(graph, insert_only=False)
        if kind in _GRAPH_OPERATIONS:
            self.advance()
            return _GRAPH_OPERATIONS[kind](self, self.accept("SILENT"))
        raise self.unexpected("an update operation")

    def _delete_where(self, quads: tuple[Quad, ...]) -> DeleteWhere | Modify:
        """DELETE WHERE; with triple terms holding variables it is spelled out
        as the DELETE ... WHERE it stands for, whose pattern takes the triple
        terms apart (:mod:`engine.sparql.syntax.triple_terms`)."""
        if not any(q.subject.__class__ is TripleTermPattern or q.object.__class__ is TripleTermPattern
                   for q in quads):
            return DeleteWhere(quads)
        where: Pattern = self.bgp([TriplePattern(q.subject, q.predicate, q.object) for q in quads
                                   if q.graph is None])
        graphs: dict = {}
        for q in quads:
            if q.graph is not None:
                graphs.setdefault(q.graph, []).append(TriplePattern(q.subject, q.predicate, q.object))
        for graph, triples in graphs.items():
            where = Join(where, Graph(graph, self.bgp(triples)))
        return Modify(quads, (), where)

    def _modify(self, with_graph: IRI | None, insert_only: bool) -> Modify:
        """After DELETE or INSERT of a DELETE/INSERT ... WHERE operation."""
        delete: tuple[Quad, ...] = ()
        if not insert_only:
            delete = self._quads(BLANKS_FORBIDDEN, "", "DELETE templates")
            insert_only = self.accept("INSERT")
        insert: tuple[Quad, ...] = ()
        if insert_only:
            shared = self.template_labels
            self.template_labels = {}
            insert = self._quads(BLANKS_AS_NODES, "")
            self.template_labels = shared
        default: list[IRI] = []
        named: list[IRI] = []
        while self.accept("USING"):
            (named if self.accept("NAMED") else default).append(self.iri())
        using = Dataset(tuple(default), tuple(named)) if default or named else None
        self.expect("WHERE", "USING or WHERE")
        where, _ = self.graph_pattern()
        return Modify(delete, insert, where, with_graph, using)

    def _quads(self, blank_mode: int, no_vars: str, no_blanks_in: str = "") -> tuple[Quad, ...]:
        """``{ triples GRAPH g { triples } ... }``; ``no_vars`` is the error
        for a variable (empty when variables are allowed)."""
        self.blank_mode = blank_mode
        self.no_blanks_reason = f"blank nodes are not allowed in {no_blanks_in}"
        self.vars_allowed = not no_vars
        self.no_vars_reason = no_vars
        self.expect("{")
        quads: list[Quad] = []
        while not self.accept("}"):
            if self.accept("GRAPH"):
                graph = self.var_or_iri()
                self.expect("{")
                triples: list[Triple] = []
                if self.tok[0] in TRIPLE_START:
                    self.triples_template(triples)
                self.expect("}")
                quads.extend(Quad(t.subject, t.predicate, t.object, graph) for t in triples)  # type: ignore[union-attr]
                self.accept(".")
            elif self.tok[0] in TRIPLE_START:
                triples = []
                self.triples_template(triples)
                quads.extend(Quad(t.subject, t.predicate, t.object) for t in triples)  # type: ignore[union-attr]
                if self.tok[0] != "GRAPH" and self.tok[0] != "}":
                    raise self.unexpected("'.', GRAPH or '}'")
            else:
                raise self.unexpected("triples, GRAPH or '}'")
        self.blank_mode = BLANKS_AS_VARS
        self.vars_allowed = True
        return tuple(quads)

    # ------------------------------------------------- graph management ops

    def _load(self, silent: bool) -> Load:
        source = self.iri()
        graph = None
        if self.accept("INTO"):
            self.expect("GRAPH")
            graph = self.iri()
        return Load(source, graph, silent)

    def _graph_ref_all(self) -> GraphTarget:
        kind = self.tok[0]
        if kind == "DEFAULT" or kind == "NAMED" or kind == "ALL":
            self.advance()
            return kind
        self.expect("GRAPH", "GRAPH, DEFAULT, NAMED or ALL")
        return self.iri()

    def _graph_or_default(self) -> GraphTarget:
        if self.accept("DEFAULT"):
            return "DEFAULT"
        self.accept("GRAPH")
        return self.iri()

    def _clear(self, silent: bool) -> Clear:
        return Clear(self._graph_ref_all(), silent)

    def _drop(self, silent: bool) -> Drop:
        return Drop(self._graph_ref_all(), silent)

    def _create(self, silent: bool) -> Create:
        self.expect("GRAPH")
        return Create(self.iri(), silent)

    def _transfer(self, op: str, silent: bool) -> Transfer:
        source = self._graph_or_default()
        self.expect("TO")
        return Transfer(op, source, self._graph_or_default(), silent)


_GRAPH_OPERATIONS = {
    "LOAD": UpdateParser._load,
    "CLEAR": UpdateParser._clear,
    "DROP": UpdateParser._drop,
    "CREATE": UpdateParser._create,
    "ADD": lambda parser, silent: parser._transfer("ADD", silent),
    "MOVE": lambda parser, silent: parser._transfer("MOVE", silent),
    "COPY": lambda parser, silent: parser._transfer("COPY", silent),
}
