"""Graph patterns ``{ ... }`` and their algebra translation (SPARQL 1.1 18.2.2).

The translation happens while parsing: each element of a graph pattern is
folded into the pattern ``G`` built so far (Join, LeftJoin, Minus, Extend,
...), FILTERs are collected and wrap the whole graph pattern at the end, and
triples stay in one BGP until an element other than a FILTER ends it. A blank
node label may be reused within a graph pattern across FILTER, BIND and
VALUES but not across nested ones (OPTIONAL, UNION, GRAPH, MINUS, SERVICE).
Each graph pattern also returns its in-scope variables (18.2.1, in order of
first appearance) which BIND, ``SELECT *`` and the SELECT checks need.
"""

from __future__ import annotations

from engine.rdf import IRI, Term, TripleTerm, Variable
from engine.sparql.algebra import (
    BGP,
    BinaryExpr,
    Expr,
    Extend,
    Filter,
    Graph,
    Join,
    LeftJoin,
    Minus,
    PathPattern,
    Pattern,
    Service,
    TriplePattern,
    Union_,
    Values,
)
from engine.sparql.syntax.parser_base import RDF_TYPE_IRI
from engine.sparql.syntax.triple_terms import pattern_vars, replace_triple_terms, take_apart
from engine.sparql.syntax.triples_parser import TRIPLE_START, Triple, TriplesParser

EMPTY = BGP(())
Scope = dict[str, None]


def join(left: Pattern, right: Pattern) -> Pattern:
    """Join with the 18.2.2.8 simplification: the empty BGP is the identity."""
    if left.__class__ is BGP and not left.triples:  # type: ignore[union-attr]
        return right
    if right.__class__ is BGP and not right.triples:  # type: ignore[union-attr]
        return left
    return Join(left, right)


def conjunction(conditions: list[Expr]) -> Expr:
    result = conditions[0]
    for condition in conditions[1:]:
        result = BinaryExpr("&&", result, condition)
    return result


def bgp_pattern(items: list[Triple]) -> Pattern:
    """A triples block: runs of triple patterns become BGPs, joined in order
    with the path patterns between them."""
    if all(item.__class__ is TriplePattern for item in items):
        return BGP(tuple(items))  # type: ignore[arg-type]
    result: Pattern = EMPTY
    run: list[TriplePattern] = []
    for item in items:
        if item.__class__ is TriplePattern:
            run.append(item)  # type: ignore[arg-type]
        else:
            if run:
                result = join(result, BGP(tuple(run)))
                run = []
            result = join(result, item)
    return join(result, BGP(tuple(run))) if run else result


def add_triple_vars(items: list[Triple], scope: Scope) -> None:
    for item in items:
        for term in (item.subject, item.object) if item.__class__ is PathPattern else (
            item.subject, item.predicate, item.object  # type: ignore[union-attr]
        ):
            if term.__class__ is Variable:
                scope[term.name] = None  # type: ignore[union-attr]
            elif term.__class__ is not IRI:
                pattern_vars(term, scope)


class GraphPatternParser(TriplesParser):
    """``{ ... }`` patterns: triples, FILTER, OPTIONAL, UNION, MINUS, GRAPH,
    SERVICE, BIND, VALUES and sub-SELECTs."""

    def sub_select(self) -> tuple[Pattern, Scope]:
        """Defined by the query layer (a sub-SELECT is an element of a graph pattern)."""
        raise NotImplementedError

    def bgp(self, items: list[Triple]) -> Pattern:
        """A triples block as a pattern, triple terms with variables taken
        apart after it (:mod:`engine.sparql.syntax.triple_terms`)."""
        plain, found = replace_triple_terms(items, self.fresh_var)
        if not found:
            return bgp_pattern(items)
        bound: Scope = {}
        add_triple_vars(plain, bound)
        return take_apart(bgp_pattern(plain), found, bound, self.fresh_var)

    def graph_pattern(self) -> tuple[Pattern, Scope]:
        pattern, condition, scope = self._graph_pattern_parts()
        return (pattern if condition is None else Filter(condition, pattern)), scope

    def _graph_pattern_parts(self) -> tuple[Pattern, Expr | None, Scope]:
        """A graph pattern as (pattern, conjunction of its FILTERs, scope).

        OPTIONAL needs the filters apart: only the pattern's own FILTERs become
        the LeftJoin condition, not a FILTER of a nested pattern that the
        empty-BGP simplification would otherwise bring to the top.
        """
        self.expect("{")
        if self.tok[0] == "SELECT":
            pattern, scope = self.sub_select()
            self.expect("}")
            return pattern, None, scope
        scope: Scope = {}
        pattern: Pattern = EMPTY
        filters: list[Expr] = []
        items: list[Triple] | None = None
        label_scope = 0
        while True:
            kind = self.tok[0]
            if kind in TRIPLE_START:
                if items is None:
                    items = []
                if not label_scope:
                    self.scope_counter += 1
                    label_scope = self.scope_counter
                self.bgp_scope = label_scope
                start = len(items)
                self.triples_same_subject(items, True)
                add_triple_vars(items[start:], scope)
                if not self.accept(".") and self.tok[0] in TRIPLE_START:
                    raise self.unexpected("'.'")
                continue
            if kind == "FILTER":
                self.advance()
                filters.append(self.constraint())
                self.accept(".")
                continue
            if kind == "}":
                self.advance()
                break
            if items:
                pattern = join(pattern, self.bgp(items))
                items = None
            if kind != "BIND" and kind != "VALUES":
                label_scope = 0
            pattern = self._element(kind, pattern, scope)
            self.accept(".")
        if items:
            pattern = join(pattern, self.bgp(items))
        return pattern, (conjunction(filters) if filters else None), scope

    def _element(self, kind: str, pattern: Pattern, scope: Scope) -> Pattern:
        """Fold one non-triples, non-FILTER element into ``pattern``."""
        if kind == "{":
            inner, inner_scope = self.graph_pattern()
            while self.accept("UNION"):
                right, right_scope = self.graph_pattern()
                inner = Union_(inner, right)
                inner_scope = {**inner_scope, **right_scope}
            scope.update(inner_scope)
            return join(pattern, inner)
        if kind == "OPTIONAL":
            self.advance()
            inner, condition, inner_scope = self._graph_pattern_parts()
            scope.update(inner_scope)
            return LeftJoin(pattern, inner, condition)
        if kind == "MINUS":
            self.advance()
            return Minus(pattern, self.graph_pattern()[0])
        if kind == "GRAPH":
            self.advance()
            name = self.var_or_iri()
            inner, inner_scope = self.graph_pattern()
            if name.__class__ is Variable:
                scope[name.name] = None  # type: ignore[union-attr]
            scope.update(inner_scope)
            return join(pattern, Graph(name, inner))
        if kind == "SERVICE":
            return join(pattern, self._service(scope))
        if kind == "BIND":
            self.advance()
            self.expect("(")
            expr = self.expression()
            self.expect("AS")
            var_tok = self.tok
            var = self.variable()
            if var.name in scope:
                raise self.error(f"BIND variable ?{var.name} is already in scope", var_tok)
            self.expect(")")
            scope[var.name] = None
            return Extend(pattern, var, expr)
        if kind == "VALUES":
            self.advance()
            values = self.data_block()
            scope.update(dict.fromkeys(v.name for v in values.vars))
            return join(pattern, values)
        if kind == "SELECT":
            raise self.error("a sub-SELECT must be alone in its own group { }")
        raise self.unexpected("a graph pattern or '}'")

    def data_triple_term(self) -> Term:
        """A triple term in VALUES: IRIs and literals only (no variables, no
        blank nodes, no triple term as subject)."""
        self.expect("<<(")
        subject = self.iri()
        predicate = RDF_TYPE_IRI if self.accept("a") else self.iri()
        if self.tok[0] == "<<(":
            obj: Term = self.data_triple_term()
        else:
            found = self.constant()
            if found is None:
                raise self.unexpected("an IRI, literal or triple term")
            obj = found
        self.expect(")>>", "')>>'")
        return TripleTerm(subject, predicate, obj)

    def _service(self, scope: Scope) -> Service:
        self.advance()
        silent = self.accept("SILENT")
        endpoint = self.var_or_iri()
        start = self.tok[2]
        inner, inner_scope = self.graph_pattern()
        end = self.toks[self.i - 1][3]
        scope.update(inner_scope)
        text = f"{self.prologue_text()}SELECT * WHERE {self.text[start:end]}"
        return Service(endpoint, inner, silent, text)

    def data_block(self) -> Values:
        """The body of VALUES: one variable or a parenthesised list of them."""
        if self.tok[0] == "var":
            variables = (self.variable(),)
            self.expect("{")
            rows = []
            while not self.accept("}"):
                rows.append((self._data_value(),))
            return Values(variables, tuple(rows))
        self.expect("(", "a variable or '('")
        names = []
        while self.tok[0] == "var":
            tok = self.tok
            names.append(self.variable())
            if names[-1] in names[:-1]:
                raise self.error(f"?{names[-1].name} is named twice in VALUES", tok)
        self.expect(")", "a variable or ')'")
        self.expect("{")
        rows = []
        while not self.accept("}"):
            row_tok = self.expect("(", "'(' or '}'")
            row = []
            while not self.accept(")"):
                row.append(self._data_value())
            if len(row) != len(names):
                raise self.error(f"VALUES row has {len(row)} values for {len(names)} variables", row_tok)
            rows.append(tuple(row))
        return Values(tuple(names), tuple(rows))

    def _data_value(self) -> Term | None:
        if self.accept("UNDEF"):
            return None
        if self.tok[0] == "<<(":
            return self.data_triple_term()
        term = self.constant()
        if term is None:
            raise self.unexpected("an IRI, literal or UNDEF")
        return term
