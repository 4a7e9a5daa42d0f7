"""Expressions: operators, built-in calls, function calls and aggregates.

Binary operators use precedence climbing instead of one function per
precedence level: most expressions are a single variable or call, and the
climb returns at once when the next token is not an operator, which keeps
FILTER parsing cheap. Unary operators nest (``!!?x``, ``- -1``), a little
more lenient than the grammar, as other engines are.
"""

from __future__ import annotations

from engine.rdf import IRI, Literal, TripleTerm, Variable, geof_problem
from engine.sparql.algebra import (
    Aggregate,
    BinaryExpr,
    CallExpr,
    ExistsExpr,
    Expr,
    FunctionExpr,
    InExpr,
    TermExpr,
    UnaryExpr,
    VarExpr,
)
from engine.sparql.syntax.parser_base import FALSE, NUMBER_TYPES, RDF_TYPE_IRI, TRUE, ParserBase

_PRECEDENCE = {
    "||": 1, "&&": 2,
    "=": 3, "!=": 3, "<": 3, ">": 3, "<=": 3, ">=": 3, "IN": 3, "NOT": 3,
    "+": 4, "-": 4, "*": 5, "/": 5,
}
_RELATIONAL = 3

#: built-in name -> (min args, max args or None for any number)
_BUILTINS: dict[str, tuple[int, int | None]] = {
    **{name: (1, 1) for name in (
        "STR LANG DATATYPE IRI URI ABS CEIL FLOOR ROUND STRLEN UCASE LCASE ENCODE_FOR_URI "
        "YEAR MONTH DAY HOURS MINUTES SECONDS TIMEZONE TZ MD5 SHA1 SHA256 SHA384 SHA512 "
        "ISIRI ISURI ISBLANK ISLITERAL ISNUMERIC "
        "ISTRIPLE SUBJECT PREDICATE OBJECT LANGDIR HASLANG HASLANGDIR"
    ).split()},
    **{name: (2, 2) for name in (
        "LANGMATCHES CONTAINS STRSTARTS STRENDS STRBEFORE STRAFTER STRLANG STRDT SAMETERM"
    ).split()},
    **{name: (0, 0) for name in ("RAND", "NOW", "UUID", "STRUUID")},
    "BNODE": (0, 1), "IF": (3, 3), "REGEX": (2, 3), "SUBSTR": (2, 3), "REPLACE": (3, 4),
    "TRIPLE": (3, 3), "STRLANGDIR": (3, 3),
    "CONCAT": (0, None), "COALESCE": (0, None),
}
#: synonyms normalised so the executor sees one name per function
_ALIASES = {"URI": "IRI", "ISURI": "ISIRI"}
AGGREGATES = frozenset(("COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"))
#: token kinds that may start a FILTER / ORDER BY / GROUP BY constraint
CONSTRAINT_START = frozenset(("(", "iri", "pname", "BOUND", "EXISTS", "NOT", *_BUILTINS, *AGGREGATES))


class ExpressionParser(ParserBase):
    """Parses expressions; aggregates are replaced by ``.aggN`` variables
    collected in ``self.aggregates`` (None where aggregates are not allowed)."""

    aggregates: dict[Aggregate, Variable] | None = None

    def expression(self) -> Expr:
        left = self.unary()
        if self.tok[0] not in _PRECEDENCE:
            return left
        return self._climb(left, 1)

    def _climb(self, left: Expr, min_precedence: int) -> Expr:
        while True:
            op = self.tok[0]
            precedence = _PRECEDENCE.get(op)
            if precedence is None or precedence < min_precedence:
                return left
            if precedence == _RELATIONAL:
                left = self._relational(left)
                if _PRECEDENCE.get(self.tok[0]) == _RELATIONAL:
                    raise self.unexpected("an operator other than a comparison")
                continue
            self.advance()
            right = self.unary()
            following = _PRECEDENCE.get(self.tok[0])
            if following is not None and following > precedence:
                right = self._climb(right, precedence + 1)
            left = BinaryExpr(op, left, right)

    def _relational(self, left: Expr) -> Expr:
        op = self.tok[0]
        self.advance()
        if op == "NOT" or op == "IN":
            if op == "NOT":
                self.expect("IN")
            return InExpr(left, self.expression_list(), op == "NOT")
        right = self.unary()
        following = _PRECEDENCE.get(self.tok[0])
        if following is not None and following > _RELATIONAL:
            right = self._climb(right, _RELATIONAL + 1)
        return BinaryExpr(op, left, right)

    def unary(self) -> Expr:
        kind = self.tok[0]
        if kind == "!":
            self.advance()
            return UnaryExpr("!", self.unary())
        if kind == "-" or kind == "+":
            number = self.signed_number()
            if number is not None:
                return TermExpr(number)
            self.advance()
            return UnaryExpr(kind, self.unary())
        return self.primary()

    def primary(self) -> Expr:
        tok = self.tok
        kind = tok[0]
        if kind == "var":
            self.advance()
            return VarExpr(Variable(tok[1]))  # type: ignore[arg-type]
        if kind == "(":
            self.advance()
            expr = self.expression()
            self.expect(")")
            return expr
        if kind == "iri" or kind == "pname":
            self.advance()
            iri = self.iri_of(tok)
            if self.tok[0] == "(":
                args = self.arg_list()
                problem = geof_problem(iri, len(args))
                if problem is not None:  # never a FILTER that is silently false
                    raise self.error(problem, tok)
                return FunctionExpr(iri, args)
            return TermExpr(IRI(iri))
        if kind == "str":
            return TermExpr(self.rdf_literal())
        datatype = NUMBER_TYPES.get(kind)
        if datatype is not None:
            self.advance()
            return TermExpr(Literal(tok[1], datatype))  # type: ignore[arg-type]
        if kind == "TRUE" or kind == "FALSE":
            self.advance()
            return TermExpr(TRUE if kind == "TRUE" else FALSE)
        if kind == "<<(":
            return self.expr_triple_term()
        arity = _BUILTINS.get(kind)
        if arity is not None:
            self.advance()
            args = self.arg_list()
            low, high = arity
            if len(args) < low or (high is not None and len(args) > high):
                raise self.error(f"wrong number of arguments for {kind}", tok)
            return CallExpr(_ALIASES.get(kind, kind), args)
        if kind in AGGREGATES:
            return self.aggregate()
        if kind == "BOUND":
            self.advance()
            self.expect("(")
            var = self.variable()
            self.expect(")")
            return CallExpr("BOUND", (VarExpr(var),))
        if kind == "EXISTS" or kind == "NOT":
            self.advance()
            if kind == "NOT":
                self.expect("EXISTS")
            saved = self.aggregates
            self.aggregates = None
            pattern, _ = self.graph_pattern()
            self.aggregates = saved
            return ExistsExpr(pattern, kind == "NOT")
        raise self.unexpected("an expression")

    def expr_triple_term(self) -> Expr:
        """``<<( s p o )>>`` in an expression (SPARQL 1.2's ExprTripleTerm):
        the subject a variable or IRI, the predicate a variable or IRI, the
        object a variable, IRI, literal or another such triple term; the
        same as ``TRIPLE(s, p, o)``, a constant when nothing varies."""
        self.expect("<<(")
        kind = self.tok[0]
        if kind not in ("var", "iri", "pname"):
            raise self.unexpected("a variable or IRI as the subject of a triple term")
        subject = self.primary()
        if self.accept("a"):
            predicate: Expr = TermExpr(RDF_TYPE_IRI)
        elif self.tok[0] in ("var", "iri", "pname"):
            tok = self.tok
            self.advance()
            predicate = (VarExpr(Variable(tok[1])) if tok[0] == "var"  # type: ignore[arg-type]
                         else TermExpr(IRI(self.iri_of(tok))))
        else:
            raise self.unexpected("a variable or IRI as the predicate of a triple term")
        kind = self.tok[0]
        if kind == "<<(":
            obj = self.expr_triple_term()
        elif kind == "var" or kind == "iri" or kind == "pname":
            tok = self.tok
            self.advance()
            obj = VarExpr(Variable(tok[1])) if kind == "var" else TermExpr(IRI(self.iri_of(tok)))  # type: ignore[arg-type]
        else:
            term = self.constant()
            if term is None:
                raise self.unexpected("a variable, IRI, literal or triple term as its object")
            obj = TermExpr(term)
        self.expect(")>>", "')>>'")
        parts = (subject, predicate, obj)
        if all(part.__class__ is TermExpr for part in parts):
            return TermExpr(TripleTerm(*(part.term for part in parts)))  # type: ignore[union-attr]
        return CallExpr("TRIPLE", parts)

    def arg_list(self) -> tuple[Expr, ...]:
        """``( expr, ... )`` or ``()``; DISTINCT is only for aggregates."""
        self.expect("(")
        if self.accept(")"):
            return ()
        if self.tok[0] == "DISTINCT":
            raise self.error("DISTINCT is only allowed in aggregates")
        args = [self.expression()]
        while self.accept(","):
            args.append(self.expression())
        self.expect(")", "',' or ')'")
        return tuple(args)

    def expression_list(self) -> tuple[Expr, ...]:
        self.expect("(")
        if self.accept(")"):
            return ()
        items = [self.expression()]
        while self.accept(","):
            items.append(self.expression())
        self.expect(")", "',' or ')'")
        return tuple(items)

    def aggregate(self) -> Expr:
        """An aggregate call, replaced by the variable that will hold its value."""
        tok = self.tok
        name = tok[0]
        collected = self.aggregates
        if collected is None:
            raise self.error(f"aggregate {name} is not allowed here", tok)
        self.advance()
        self.expect("(")
        distinct = self.accept("DISTINCT")
        self.aggregates = None
        if name == "COUNT" and self.accept("*"):
            expr = None
        else:
            expr = self.expression()
        separator = " "
        if name == "GROUP_CONCAT" and self.accept(";"):
            self.expect("SEPARATOR")
            self.expect("=")
            separator = self.expect("str", "a string")[1]  # type: ignore[assignment]
        self.aggregates = collected
        self.expect(")")
        agg = Aggregate(name, expr, distinct, separator)
        var = collected.get(agg)
        if var is None:
            var = collected[agg] = Variable(f".agg{self.agg_counter}")
            self.agg_counter += 1
        return VarExpr(var)

    def constraint(self) -> Expr:
        """FILTER / ORDER BY / GROUP BY constraint: a bracketed expression, a
        built-in call or a function call (not a bare variable or constant)."""
        kind = self.tok[0]
        if kind not in CONSTRAINT_START:
            raise self.unexpected("'(' or a function call")
        if kind == "iri" or kind == "pname":
            tok = self.tok
            expr = self.primary()
            if expr.__class__ is not FunctionExpr:
                raise self.error("expected a function call", tok)
            return expr
        return self.primary()
