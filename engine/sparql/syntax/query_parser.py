"""Query forms and solution modifiers, translated as SPARQL 1.1 18.2.4-18.2.5.

The pattern is wrapped in this order: GroupBy (when there is GROUP BY or an
aggregate), Filter for HAVING, Join with the trailing VALUES, Extend for each
SELECT expression, OrderBy, Project, Distinct/Reduced, Slice. The static
rules the grammar cannot express (grouped variables, re-bound variables) are
checked here and reported at the offending token.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from engine.rdf import IRI, BNode, Variable
from engine.sparql.algebra import (
    Aggregate,
    BinaryExpr,
    CallExpr,
    Dataset,
    Distinct,
    Expr,
    Extend,
    Filter,
    FunctionExpr,
    GroupBy,
    InExpr,
    OrderBy,
    Pattern,
    Project,
    Query,
    Reduced,
    Slice,
    TriplePattern,
    TripleTermPattern,
    UnaryExpr,
    Values,
    VarExpr,
)
from engine.sparql.syntax.expression_parser import CONSTRAINT_START
from engine.sparql.syntax.graph_pattern_parser import EMPTY, GraphPatternParser, Scope, conjunction, join
from engine.sparql.syntax.parser_base import BLANKS_AS_NODES, BLANKS_AS_VARS
from engine.sparql.syntax.tokenizer import Token
from engine.sparql.syntax.triples_parser import TRIPLE_START, Triple


def _as_blank(term: object) -> object:
    """A blank node of a pattern (a hidden ``.bN`` variable) as the template's
    blank node, inside triple terms too."""
    if term.__class__ is Variable and term.name.startswith(".b"):  # type: ignore[attr-defined]
        return BNode(term.name)  # type: ignore[attr-defined]
    if term.__class__ is TripleTermPattern:
        return TripleTermPattern(*(_as_blank(t) for t in (term.subject, term.predicate,  # type: ignore
                                                               term.object)))  # type: ignore[attr-defined]
    return term


def expr_vars(expr: Expr, out: list[Variable]) -> None:
    """Variables an expression reads outside EXISTS (for the GROUP BY check)."""
    cls = expr.__class__
    if cls is VarExpr:
        out.append(expr.var)  # type: ignore[union-attr]
    elif cls is BinaryExpr:
        expr_vars(expr.left, out)  # type: ignore[union-attr]
        expr_vars(expr.right, out)  # type: ignore[union-attr]
    elif cls is UnaryExpr:
        expr_vars(expr.operand, out)  # type: ignore[union-attr]
    elif cls is CallExpr or cls is FunctionExpr:
        for arg in expr.args:  # type: ignore[union-attr]
            expr_vars(arg, out)
    elif cls is InExpr:
        expr_vars(expr.expr, out)  # type: ignore[union-attr]
        for option in expr.options:  # type: ignore[union-attr]
            expr_vars(option, out)


@dataclass
class _Modifiers:
    """What follows the WHERE clause, before it is applied to the pattern."""

    group_by: list[tuple[Expr, Variable | None]] | None = None
    having: list[Expr] = field(default_factory=list)
    order: list[tuple[Expr, bool]] = field(default_factory=list)
    limit: int | None = None
    offset: int = 0
    values: Values | None = None


@dataclass
class _SelectItem:
    var: Variable
    expr: Expr | None
    tok: Token


#: the largest LIMIT or OFFSET (a signed 64-bit integer)
MAX_SLICE = 2**63 - 1


class QueryParser(GraphPatternParser):
    """SELECT, CONSTRUCT, ASK and DESCRIBE queries and sub-SELECTs."""

    def query(self) -> Query:
        self.prologue()
        kind = self.tok[0]
        if kind == "SELECT":
            pattern, variables, dataset = self._select(top=True)
            result = Query("SELECT", pattern, variables=variables, dataset=dataset)
        elif kind == "CONSTRUCT":
            result = self._construct()
        elif kind == "ASK":
            self.advance()
            dataset = self._dataset()
            pattern = self._simple_form(self._where()[0])
            result = Query("ASK", pattern, dataset=dataset)
        elif kind == "DESCRIBE":
            result = self._describe()
        else:
            raise self.unexpected("SELECT, CONSTRUCT, DESCRIBE or ASK")
        if self.tok[0] != "eof":
            raise self.unexpected("end of query")
        return replace(result, base=self.base, prefixes=dict(self.prefixes))

    def sub_select(self) -> tuple[Pattern, Scope]:
        pattern, variables, _ = self._select(top=False)
        return pattern, dict.fromkeys(v.name for v in variables)

    # ---------------------------------------------------------------- forms

    def _select(self, top: bool) -> tuple[Pattern, tuple[Variable, ...], Dataset | None]:
        self.advance()
        distinct = self.accept("DISTINCT")
        reduced = not distinct and self.accept("REDUCED")
        aggregates: dict[Aggregate, Variable] = {}
        saved = self.aggregates
        self.aggregates = aggregates
        star_tok = self.tok
        items: list[_SelectItem] = []
        if not self.accept("*"):
            while True:
                tok = self.tok
                if tok[0] == "var":
                    items.append(_SelectItem(self.variable(), None, tok))
                elif tok[0] == "(":
                    self.advance()
                    expr = self.expression()
                    self.expect("AS")
                    var_tok = self.tok
                    items.append(_SelectItem(self.variable(), expr, var_tok))
                    self.expect(")")
                else:
                    break
            if not items:
                raise self.unexpected("a variable, '(' or '*'")
        self.aggregates = None
        dataset = self._dataset() if top else None
        where, scope = self._where()
        mods = self._modifiers(aggregates)
        self.aggregates = saved
        if mods.values is not None:
            scope = {**scope, **dict.fromkeys(v.name for v in mods.values.vars)}
        grouped = mods.group_by is not None or bool(aggregates)
        pattern = self._group_having_values(where, mods, aggregates, grouped)
        if items:
            pattern, variables = self._project_items(items, scope, mods, pattern, grouped)
        else:
            if grouped:
                raise self.error("SELECT * is not allowed with GROUP BY or aggregates", star_tok)
            variables = tuple(Variable(name) for name in scope if name[0] != ".")
        pattern = self._order(pattern, mods)
        pattern = Project(pattern, variables)
        if distinct:
            pattern = Distinct(pattern)
        elif reduced:
            pattern = Reduced(pattern)
        return self._slice(pattern, mods), variables, dataset

    def _project_items(
        self, items: list[_SelectItem], scope: Scope, mods: _Modifiers, pattern: Pattern, grouped: bool
    ) -> tuple[Pattern, tuple[Variable, ...]]:
        """Check the SELECT list and add an Extend per expression."""
        allowed: set[str] = set()
        if grouped:
            for expr, var in mods.group_by or ():
                if var is not None:
                    allowed.add(var.name)
                elif expr.__class__ is VarExpr:
                    allowed.add(expr.var.name)  # type: ignore[union-attr]
        projected: dict[Variable, None] = {}
        for item in items:
            name = item.var.name
            if item.expr is None:
                if grouped and name not in allowed:
                    raise self.error(f"?{name} is selected but is not a GROUP BY key", item.tok)
            else:
                # SPARQL 1.2: after GROUP BY only the keys (and earlier AS names) are in scope
                if (name in allowed if grouped else name in scope) or item.var in projected:
                    raise self.error(f"?{name} is already in scope and cannot be bound by AS", item.tok)
                if grouped:
                    used: list[Variable] = []
                    expr_vars(item.expr, used)
                    for var in used:
                        if var.name not in allowed and not var.name.startswith(".agg"):
                            raise self.error(
                                f"?{var.name} is used in a SELECT expression but is not grouped", item.tok
                            )
                    allowed.add(name)
                pattern = Extend(pattern, item.var, item.expr)
            projected[item.var] = None
        return pattern, tuple(projected)

    def _construct(self) -> Query:
        self.advance()
        template: list[Triple] = []
        if self.tok[0] == "{":
            self.advance()
            self.blank_mode = BLANKS_AS_NODES
            self.template_scope += 1
            if self.tok[0] in TRIPLE_START:
                self.triples_template(template)
            self.blank_mode = BLANKS_AS_VARS
            self.expect("}")
            dataset = self._dataset()
            pattern = self._simple_form(self._where()[0])
        else:
            dataset = self._dataset()
            self.expect("WHERE", "'{' or WHERE")
            self.expect("{")
            self.scope_counter += 1
            self.bgp_scope = self.scope_counter
            if self.tok[0] in TRIPLE_START:
                self.triples_template(template)
            self.expect("}")
            pattern = self._simple_form(self.bgp(template))
            # as a template, the pattern's blank nodes are fresh ones per solution
            template = [TriplePattern(*(_as_blank(t) for t in (x.subject, x.predicate, x.object)))
                        for x in template]  # type: ignore[union-attr]
        return Query("CONSTRUCT", pattern, template=tuple(template), dataset=dataset)  # type: ignore[arg-type]

    def _describe(self) -> Query:
        self.advance()
        targets: list[IRI | Variable] = []
        if not self.accept("*"):
            while self.tok[0] in ("var", "iri", "pname"):
                targets.append(self.var_or_iri())
            if not targets:
                raise self.unexpected("a variable, an IRI or '*'")
            star = False
        else:
            star = True
        dataset = self._dataset()
        if self.tok[0] == "WHERE" or self.tok[0] == "{":
            where, scope = self._where()
        else:
            where, scope = EMPTY, {}
        aggregates: dict[Aggregate, Variable] = {}
        mods = self._modifiers(aggregates)
        if mods.values is not None:
            scope = {**scope, **dict.fromkeys(v.name for v in mods.values.vars)}
        if star:
            targets = [Variable(name) for name in scope if name[0] != "."]
        pattern = self._finish_simple(where, mods, aggregates)
        return Query("DESCRIBE", pattern, describe=tuple(targets), dataset=dataset)

    def _simple_form(self, where: Pattern) -> Pattern:
        """Modifiers for CONSTRUCT and ASK (no projection)."""
        aggregates: dict[Aggregate, Variable] = {}
        return self._finish_simple(where, self._modifiers(aggregates), aggregates)

    def _finish_simple(
        self, where: Pattern, mods: _Modifiers, aggregates: dict[Aggregate, Variable]
    ) -> Pattern:
        grouped = mods.group_by is not None or bool(aggregates)
        pattern = self._group_having_values(where, mods, aggregates, grouped)
        return self._slice(self._order(pattern, mods), mods)

    # -------------------------------------------------------------- clauses

    def _dataset(self) -> Dataset | None:
        default: list[IRI] = []
        named: list[IRI] = []
        while self.accept("FROM"):
            if self.accept("NAMED"):
                named.append(self.iri())
            else:
                default.append(self.iri())
        if not default and not named:
            return None
        return Dataset(tuple(default), tuple(named))

    def _where(self) -> tuple[Pattern, Scope]:
        self.accept("WHERE")
        if self.tok[0] != "{":
            raise self.unexpected("'{'")
        return self.graph_pattern()

    def _modifiers(self, aggregates: dict[Aggregate, Variable]) -> _Modifiers:
        """GROUP BY, HAVING, ORDER BY, LIMIT/OFFSET and a trailing VALUES."""
        mods = _Modifiers()
        if self.accept("GROUP"):
            self.expect("BY")
            mods.group_by = []
            while True:
                key = self._group_condition()
                if key is None:
                    break
                mods.group_by.append(key)
            if not mods.group_by:
                raise self.unexpected("a GROUP BY condition")
        self.aggregates = aggregates
        if self.accept("HAVING"):
            mods.having.append(self.constraint())
            while self.tok[0] in CONSTRAINT_START:
                mods.having.append(self.constraint())
        if self.accept("ORDER"):
            self.expect("BY")
            while True:
                condition = self._order_condition()
                if condition is None:
                    break
                mods.order.append(condition)
            if not mods.order:
                raise self.unexpected("an ORDER BY condition")
        self.aggregates = None
        if self.accept("LIMIT"):
            mods.limit = self._integer()
            if self.accept("OFFSET"):
                mods.offset = self._integer()
        elif self.accept("OFFSET"):
            mods.offset = self._integer()
            if self.accept("LIMIT"):
                mods.limit = self._integer()
        if self.accept("VALUES"):
            mods.values = self.data_block()
        return mods

    def _integer(self) -> int:
        """A LIMIT or OFFSET: at most 2^63 - 1 (a longer number is refused
        before Python is asked to convert it)."""
        tok = self.expect("int", "an integer")
        digits = str(tok[1]).lstrip("+")
        if len(digits) > 19 or int(digits) > MAX_SLICE:
            raise self.error(f"LIMIT and OFFSET are at most {MAX_SLICE}", tok)
        return int(digits)

    def _group_condition(self) -> tuple[Expr, Variable | None] | None:
        kind = self.tok[0]
        if kind == "var":
            var = self.variable()
            return VarExpr(var), var
        if kind == "(":
            self.advance()
            expr = self.expression()
            var = self.variable() if self.accept("AS") else None
            self.expect(")")
            return expr, var
        if kind != "(" and kind in CONSTRAINT_START:
            return self.constraint(), None
        return None

    def _order_condition(self) -> tuple[Expr, bool] | None:
        kind = self.tok[0]
        if kind == "ASC" or kind == "DESC":
            self.advance()
            if self.tok[0] != "(":
                raise self.unexpected("'('")
            return self.primary(), kind == "ASC"
        if kind == "var":
            return VarExpr(self.variable()), True
        if kind in CONSTRAINT_START:
            return self.constraint(), True
        return None

    # ------------------------------------------------------------- algebra

    def _group_having_values(
        self, where: Pattern, mods: _Modifiers, aggregates: dict[Aggregate, Variable], grouped: bool
    ) -> Pattern:
        pattern = where
        if grouped:
            aggs = tuple((var, agg) for agg, var in aggregates.items())
            pattern = GroupBy(pattern, tuple(mods.group_by or ()), aggs)
        if mods.having:
            pattern = Filter(conjunction(mods.having), pattern)
        if mods.values is not None:
            pattern = join(pattern, mods.values)
        return pattern

    @staticmethod
    def _order(pattern: Pattern, mods: _Modifiers) -> Pattern:
        return OrderBy(pattern, tuple(mods.order)) if mods.order else pattern

    @staticmethod
    def _slice(pattern: Pattern, mods: _Modifiers) -> Pattern:
        if mods.limit is None and not mods.offset:
            return pattern
        return Slice(pattern, mods.offset, mods.limit)


