"""Shared state of the recursive-descent SPARQL parser: the token cursor,
errors with positions, the prologue (BASE/PREFIX), and RDF terms.

The parser is split into layers, one job per module, each subclassing the
one below: terms (here) -> expressions -> triples and paths -> graph
patterns -> queries -> updates. Every layer works on the same token list.
"""

from __future__ import annotations

from engine.rdf import (
    IRI,
    RDF,
    RDF_REIFIES,
    RDF_TYPE,
    XSD_BOOLEAN,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    BNode,
    Literal,
    Term,
    TripleTerm,
    Variable,
    resolve_iri,
)
from engine.sparql.algebra import Pattern, TripleTermPattern
from engine.sparql.syntax.errors import SparqlSyntaxError, error_at
from engine.sparql.syntax.tokenizer import Token, tokenize

RDF_TYPE_IRI = IRI(RDF_TYPE)
RDF_FIRST = IRI(RDF + "first")
RDF_REST = IRI(RDF + "rest")
RDF_NIL = IRI(RDF + "nil")
RDF_REIFIES_IRI = IRI(RDF_REIFIES)
TRUE = Literal("true", XSD_BOOLEAN)
FALSE = Literal("false", XSD_BOOLEAN)
NUMBER_TYPES = {"int": XSD_INTEGER, "dec": XSD_DECIMAL, "dbl": XSD_DOUBLE}

#: how blank nodes in the triples being parsed are turned into terms
BLANKS_AS_VARS = 0  # query patterns: non-distinguished variables
BLANKS_AS_NODES = 1  # CONSTRUCT / INSERT templates and INSERT DATA
BLANKS_FORBIDDEN = 2  # DELETE templates, DELETE DATA, DELETE WHERE

#: deepest nesting of brackets, braces and prefix operators a request may
#: have. The parser is recursive descent (an expression in parentheses is
#: about ten Python frames deep) and so is the executor: without a bound, a
#: few hundred parentheses would overflow Python's stack. Real queries stay
#: far below it.
MAX_NESTING = 64
_OPENING = frozenset("{([")
_CLOSING = frozenset("})]")
_PREFIX_OPERATORS = frozenset("!-+^")


def check_nesting(text: str, tokens: list[Token]) -> None:
    """Refuse ``text`` at the first token that nests deeper than
    :data:`MAX_NESTING` (a run of prefix operators counts as nesting)."""
    depth = run = 0
    for kind, _, start, _ in tokens:
        if kind in _OPENING:
            depth += 1
            run = 0
        elif kind in _CLOSING:
            depth -= 1
            run = 0
        elif kind in _PREFIX_OPERATORS:
            run += 1
        else:
            run = 0
        if depth + run > MAX_NESTING:
            raise error_at(text, start, f"nested more than {MAX_NESTING} levels deep (brackets, braces "
                                        "or prefix operators); the server refuses deeper requests")


def make_triple_term(subject: object, predicate: object, obj: object, fresh_blanks: bool = False
                     ) -> TripleTerm | TripleTermPattern:
    """A triple term constant, or a pattern when a component is a variable
    or itself a pattern, or (``fresh_blanks``: a template, where each
    solution has its own blank nodes) a blank node."""
    for part in (subject, predicate, obj):
        if (part.__class__ is Variable or part.__class__ is TripleTermPattern
                or (fresh_blanks and part.__class__ is BNode)):
            return TripleTermPattern(subject, predicate, obj)  # type: ignore[arg-type]
    return TripleTerm(subject, predicate, obj)  # type: ignore[arg-type]


class ParserBase:
    """Token cursor, prologue and term parsing shared by all parser layers."""

    def __init__(self, text: str, base: str | None) -> None:
        self.text = text
        self.toks: list[Token] = tokenize(self.text)
        check_nesting(self.text, self.toks)
        self.i = 0
        self.tok: Token = self.toks[0]
        self.base = base
        self.prefixes: dict[str, str] = {}
        self._resolved: dict[str, str] = {}
        self.fresh = 0
        self.agg_counter = 0
        self.scope_counter = 0
        self.bgp_scope = 0
        self.template_scope = 0
        self.pattern_labels: dict[str, tuple[int, Variable]] = {}
        self.template_labels: dict[str, tuple[int, BNode]] = {}
        self.blank_mode = BLANKS_AS_VARS
        self.no_blanks_reason = ""
        self.vars_allowed = True
        self.no_vars_reason = ""

    # ------------------------------------------------------------ the cursor

    def advance(self) -> None:
        self.i += 1
        self.tok = self.toks[self.i]

    def accept(self, kind: str) -> bool:
        """Consume the current token if it is of ``kind``."""
        if self.tok[0] == kind:
            self.i += 1
            self.tok = self.toks[self.i]
            return True
        return False

    def expect(self, kind: str, what: str | None = None) -> Token:
        """Consume and return a token of ``kind`` or fail naming what was wanted."""
        tok = self.tok
        if tok[0] != kind:
            raise self.unexpected(what or f"'{kind}'")
        self.i += 1
        self.tok = self.toks[self.i]
        return tok

    def peek_kind(self) -> str:
        return self.toks[self.i + 1][0]

    # ---------------------------------------------------------------- errors

    def error(self, message: str, tok: Token | None = None) -> SparqlSyntaxError:
        """An error located at ``tok`` (default: the current token)."""
        return error_at(self.text, (tok or self.tok)[2], message)

    def unexpected(self, expected: str) -> SparqlSyntaxError:
        tok = self.tok
        found = "end of input" if tok[0] == "eof" else repr(self.text[tok[2] : tok[3]])
        return self.error(f"expected {expected} but found {found}")

    # -------------------------------------------------------------- prologue

    def prologue(self) -> None:
        """BASE, PREFIX and VERSION declarations (also between update operations)."""
        while True:
            kind = self.tok[0]
            if kind == "BASE":
                self.advance()
                self.base = self.resolve(self.expect("iri", "an IRI")[1])  # type: ignore[arg-type]
            elif kind == "PREFIX":
                self.advance()
                tok = self.expect("pname", "a prefix name like 'ex:'")
                prefix, local = tok[1]  # type: ignore[misc]
                if local:
                    raise self.error(f"invalid prefix name {self.text[tok[2]:tok[3]]!r}", tok)
                self.prefixes[prefix] = self.resolve(self.expect("iri", "an IRI")[1])  # type: ignore[arg-type]
            elif kind == "VERSION":  # SPARQL 1.2: the version a request is written for, informative
                self.advance()
                tok = self.expect("str", "a version string")
                if self.text[tok[2] : tok[2] + 3] in ('"""', "'''"):
                    raise self.error("a version is a short string", tok)
            else:
                return

    def resolve(self, reference: str) -> str:
        """``reference`` resolved against the current base (memoised)."""
        key = reference if self.base is None else f"{self.base}\x00{reference}"
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = resolve_iri(reference, self.base)
        return found

    def prologue_text(self) -> str:
        """The current BASE/PREFIX declarations as query text (for SERVICE)."""
        lines = [f"BASE <{self.base}>\n"] if self.base else []
        lines.extend(f"PREFIX {p}: <{iri}>\n" for p, iri in self.prefixes.items())
        return "".join(lines)

    # ----------------------------------------------------------------- terms

    def iri_of(self, tok: Token) -> str:
        """The absolute IRI of an ``iri`` or ``pname`` token."""
        if tok[0] == "iri":
            return self.resolve(tok[1])  # type: ignore[arg-type]
        prefix, local = tok[1]  # type: ignore[misc]
        namespace = self.prefixes.get(prefix)
        if namespace is None:
            raise self.error(f"undeclared prefix {prefix + ':'!r}", tok)
        return namespace + local

    def iri(self) -> IRI:
        tok = self.tok
        if tok[0] != "iri" and tok[0] != "pname":
            raise self.unexpected("an IRI")
        self.advance()
        return IRI(self.iri_of(tok))

    def variable(self) -> Variable:
        tok = self.tok
        if tok[0] != "var":
            raise self.unexpected("a variable")
        if not self.vars_allowed:
            raise self.error(self.no_vars_reason)
        self.advance()
        return Variable(tok[1])  # type: ignore[arg-type]

    def var_or_iri(self) -> IRI | Variable:
        return self.variable() if self.tok[0] == "var" else self.iri()

    def rdf_literal(self) -> Literal:
        """A string token plus an optional language tag or datatype."""
        lexical: str = self.tok[1]  # type: ignore[assignment]
        self.advance()
        kind = self.tok[0]
        if kind == "lang":
            lang = self.tok[1]
            if "--" in lang and lang.rsplit("--", 1)[1] not in ("ltr", "rtl"):  # type: ignore[union-attr]
                raise self.error("a base direction is ltr or rtl")
            self.advance()
            return Literal(lexical, lang=lang)  # type: ignore[arg-type]
        if kind == "^^":
            self.advance()
            return Literal(lexical, self.iri().value)
        return Literal(lexical)

    def signed_number(self) -> Literal | None:
        """``+1``/``-2.5``: a sign glued to a number is one literal (the grammar's
        INTEGER_POSITIVE etc.); returns None when the sign stands alone."""
        sign = self.tok
        number = self.toks[self.i + 1]
        datatype = NUMBER_TYPES.get(number[0])
        if datatype is None or number[2] != sign[3]:
            return None
        self.advance()
        self.advance()
        return Literal(sign[1] + number[1], datatype)  # type: ignore[operator]

    def constant(self) -> Term | None:
        """An IRI or literal term at the cursor, or None if there is none."""
        tok = self.tok
        kind = tok[0]
        if kind == "iri" or kind == "pname":
            self.advance()
            return IRI(self.iri_of(tok))
        if kind == "str":
            return self.rdf_literal()
        datatype = NUMBER_TYPES.get(kind)
        if datatype is not None:
            self.advance()
            return Literal(tok[1], datatype)  # type: ignore[arg-type]
        if kind == "TRUE":
            self.advance()
            return TRUE
        if kind == "FALSE":
            self.advance()
            return FALSE
        if kind == "-" or kind == "+":
            return self.signed_number()
        return None

    def var_or_term(self) -> Term | Variable:
        """VarOrTerm: a variable, constant, blank node, ``[]`` or ``()``."""
        tok = self.tok
        kind = tok[0]
        if kind == "var":
            return self.variable()
        if kind == "bnode":
            self.advance()
            return self.labelled_blank(tok)
        if kind == "[" and self.peek_kind() == "]":
            self.advance()
            self.advance()
            return self.fresh_blank(tok)
        if kind == "(" and self.peek_kind() == ")":
            self.advance()
            self.advance()
            return RDF_NIL
        if kind == "<<(":
            return self.triple_term()
        term = self.constant()
        if term is None:
            raise self.unexpected("an RDF term or variable")
        return term

    # ---------------------------------------------------------- triple terms

    def triple_term(self) -> TripleTerm | TripleTermPattern:
        """``<<( s p o )>>`` (SPARQL 1.2) in a pattern or template: a constant,
        or a pattern when a variable (or a blank node of a query pattern) is
        inside. The predicate is a variable or IRI, subject and object any
        term but a collection or a blank node property list (as for a triple
        pattern, a literal or triple term subject is grammatical; it matches
        nothing). VALUES and expressions have stricter forms of their own."""
        self.expect("<<(")
        if self.tok[0] == "(" or self.tok[0] == "[" and self.peek_kind() != "]":
            raise self.unexpected("an RDF term or variable as the subject of a triple term")
        subject = self.var_or_term()
        kind = self.tok[0]
        if kind == "a":
            self.advance()
            predicate: IRI | Variable = RDF_TYPE_IRI
        elif kind == "var" or kind == "iri" or kind == "pname":
            predicate = self.var_or_iri()
        else:
            raise self.unexpected("a variable or IRI as the predicate of a triple term")
        if self.tok[0] == "(" or self.tok[0] == "[" and self.peek_kind() != "]":
            raise self.unexpected("an RDF term or variable as the object of a triple term")
        obj = self.var_or_term()
        self.expect(")>>", "')>>'")
        return self.triple_term_of(subject, predicate, obj)

    def triple_term_of(self, subject: object, predicate: object, obj: object
                       ) -> TripleTerm | TripleTermPattern:
        """:func:`make_triple_term` where the parser is: in a CONSTRUCT or
        INSERT template a blank node inside is fresh per solution."""
        fresh_blanks = self.blank_mode == BLANKS_AS_NODES and self.vars_allowed
        return make_triple_term(subject, predicate, obj, fresh_blanks)

    # ----------------------------------------------------------- blank nodes

    def fresh_var(self) -> Variable:
        """A new hidden variable (``.bN``), for blank nodes and path joins."""
        self.fresh += 1
        return Variable(f".b{self.fresh}")

    def fresh_blank(self, tok: Token) -> Variable | BNode:
        """An anonymous blank node (``[]``, property lists, collections)."""
        mode = self.blank_mode
        if mode == BLANKS_AS_VARS:
            return self.fresh_var()
        if mode == BLANKS_FORBIDDEN:
            raise self.error(self.no_blanks_reason, tok)
        self.fresh += 1
        return BNode(f".b{self.fresh}")

    def labelled_blank(self, tok: Token) -> Variable | BNode:
        """``_:label``; a label may not be shared by two BGPs (or templates)."""
        label: str = tok[1]  # type: ignore[assignment]
        mode = self.blank_mode
        if mode == BLANKS_FORBIDDEN:
            raise self.error(self.no_blanks_reason, tok)
        if mode == BLANKS_AS_VARS:
            labels: dict = self.pattern_labels
            scope = self.bgp_scope
        else:
            labels = self.template_labels
            scope = self.template_scope
        found = labels.get(label)
        if found is None:
            term = self.fresh_var() if mode == BLANKS_AS_VARS else BNode(label)
            labels[label] = (scope, term)
            return term
        if found[0] != scope:
            raise self.error(f"blank node label '_:{label}' is used in two different scopes", tok)
        return found[1]

    # ------------------------------------------------ hooks for upper layers

    def graph_pattern(self) -> tuple[Pattern, dict[str, None]]:
        """Defined by the graph pattern layer; declared here because EXISTS (in the
        expression layer) needs it."""
        raise NotImplementedError
