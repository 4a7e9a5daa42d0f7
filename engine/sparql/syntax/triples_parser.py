"""Triples: property lists, ``[ ... ]``, collections and property paths.

Triples are appended to a caller-owned list as ``TriplePattern`` or
``PathPattern``, in the order their terms appear in the text (a triple comes
before those of a ``[ ... ]`` or collection in its object) so that
``SELECT *`` lists variables in order of first appearance.

Paths are translated on the spot as section 18.2.2.4 says: a plain IRI (or
a variable) is a triple, ``^p`` swaps subject and object, a sequence is split
into steps joined by fresh hidden variables, and what remains (alternatives,
``*``, ``+``, ``?``, negated sets) becomes a ``PathPattern`` for the executor.
"""

from __future__ import annotations

from engine.rdf import IRI, Term, Variable
from engine.sparql.algebra import (
    Path,
    PathAlternative,
    PathInverse,
    PathLink,
    PathNegated,
    PathPattern,
    PathRepeat,
    PathSequence,
    TriplePattern,
)
from engine.sparql.syntax.expression_parser import ExpressionParser
from engine.sparql.syntax.parser_base import (
    NUMBER_TYPES,
    RDF_FIRST,
    RDF_NIL,
    RDF_REIFIES_IRI,
    RDF_REST,
    RDF_TYPE_IRI,
)

Triple = TriplePattern | PathPattern

#: token kinds that can start a triple's subject
TRIPLE_START = frozenset(
    ("var", "iri", "pname", "bnode", "str", "int", "dec", "dbl", "TRUE", "FALSE", "(", "[", "+", "-",
     "<<(", "<<")
)
_VERB_START = frozenset(("var", "iri", "pname", "a"))
_PATH_VERB_START = _VERB_START | {"^", "!", "("}
#: tokens after a predicate IRI that mean it is part of a longer path
_PATH_CONTINUE = frozenset(("/", "|", "*", "+", "?"))


class TriplesParser(ExpressionParser):
    """Triples blocks with (``paths=True``) or without property paths."""

    def triples_same_subject(self, out: list[Triple], paths: bool) -> None:
        kind = self.tok[0]
        if kind == "[" and self.peek_kind() != "]":
            subject = self.blank_property_list(out, paths)
            if self.tok[0] in (_PATH_VERB_START if paths else _VERB_START):
                self.property_list(subject, out, paths)
        elif kind == "(" and self.peek_kind() != ")":
            subject = self.collection(out, paths)
            if self.tok[0] in (_PATH_VERB_START if paths else _VERB_START):
                self.property_list(subject, out, paths)
        elif kind == "<<":  # a reified triple, alone or with properties of its reifier
            subject = self.reified_triple(out, paths)
            if self.tok[0] in (_PATH_VERB_START if paths else _VERB_START):
                self.property_list(subject, out, paths)
        else:
            subject = self.var_or_term()
            self.property_list(subject, out, paths)

    def triples_template(self, out: list[Triple]) -> None:
        """TriplesTemplate: triples separated by '.', no paths."""
        while True:
            self.triples_same_subject(out, False)
            if not self.accept(".") or self.tok[0] not in TRIPLE_START:
                return

    def property_list(self, subject: Term | Variable, out: list[Triple], paths: bool) -> None:
        verb_start = _PATH_VERB_START if paths else _VERB_START
        while True:
            verb = self.verb(paths)
            simple = verb.__class__ is IRI or verb.__class__ is Variable
            while True:
                mark = len(out)
                obj = self.graph_node(out, paths)
                if simple:
                    triple = TriplePattern(subject, verb, obj)  # type: ignore[arg-type]
                    if len(out) == mark:
                        out.append(triple)
                    else:
                        out.insert(mark, triple)
                elif len(out) == mark:
                    self.add_path(subject, verb, obj, out)  # type: ignore[arg-type]
                else:
                    spliced: list[Triple] = []
                    self.add_path(subject, verb, obj, spliced)  # type: ignore[arg-type]
                    out[mark:mark] = spliced
                if self.tok[0] == "~" or self.tok[0] == "{|":
                    if not simple:
                        raise self.error("an annotation needs a plain predicate (an IRI or a variable), "
                                         "not a property path")
                    self.annotation(subject, verb, obj, out, paths)  # type: ignore[arg-type]
                if not self.accept(","):
                    break
            if self.tok[0] != ";":
                return
            while self.accept(";"):
                pass
            if self.tok[0] not in verb_start:
                return

    def verb(self, paths: bool) -> IRI | Variable | Path:
        tok = self.tok
        kind = tok[0]
        if kind == "var":
            return self.variable()
        if kind == "a" or kind == "iri" or kind == "pname":
            if not paths or not self._path_continues():
                self.advance()
                return RDF_TYPE_IRI if kind == "a" else IRI(self.iri_of(tok))
        elif not paths:
            raise self.unexpected("a predicate")
        return self.path()

    def _path_continues(self) -> bool:
        """Whether the token after the predicate makes it a longer path; a
        ``+`` glued to a number is a signed object, not a path modifier."""
        following = self.toks[self.i + 1]
        if following[0] not in _PATH_CONTINUE:
            return False
        if following[0] == "+":
            number = self.toks[self.i + 2]
            return not (number[0] in NUMBER_TYPES and number[2] == following[3])
        return True

    def graph_node(self, out: list[Triple], paths: bool) -> Term | Variable:
        kind = self.tok[0]
        if kind == "<<":
            return self.reified_triple(out, paths)
        if kind == "[" and self.peek_kind() != "]":
            return self.blank_property_list(out, paths)
        if kind == "(" and self.peek_kind() != ")":
            return self.collection(out, paths)
        return self.var_or_term()

    def blank_property_list(self, out: list[Triple], paths: bool) -> Term | Variable:
        node = self.fresh_blank(self.tok)
        self.advance()
        self.property_list(node, out, paths)
        self.expect("]")
        return node

    def collection(self, out: list[Triple], paths: bool) -> Term | Variable:
        """``( a b )`` as an rdf:first/rdf:rest list; returns its head node."""
        open_tok = self.tok
        self.advance()
        items = []
        while self.tok[0] != ")":
            items.append(self.graph_node(out, paths))
        self.advance()
        nodes = [self.fresh_blank(open_tok) for _ in items]
        for index, (node, item) in enumerate(zip(nodes, items, strict=True)):
            out.append(TriplePattern(node, RDF_FIRST, item))
            rest = nodes[index + 1] if index + 1 < len(nodes) else RDF_NIL
            out.append(TriplePattern(node, RDF_REST, rest))
        return nodes[0]

    # ------------------------------------------------- reifiers (SPARQL 1.2)

    def reified_triple(self, out: list[Triple], paths: bool) -> Term | Variable:
        """``<< s p o ~ r >>``: the reifier ``r`` (a fresh blank node without
        ``~``), with ``r rdf:reifies <<( s p o )>>`` added to ``out``; the
        triple itself is not asserted."""
        open_tok = self.expect("<<")
        subject = self._reified_part(out, paths)
        kind = self.tok[0]
        if kind not in _VERB_START:
            raise self.unexpected("a variable or IRI as the predicate of a reified triple")
        predicate = self.verb(False)
        obj = self._reified_part(out, paths)
        reifier = self._reifier() if self.tok[0] == "~" else None
        self.expect(">>", "'>>'")
        if reifier is None:
            reifier = self.fresh_blank(open_tok)
        out.append(TriplePattern(reifier, RDF_REIFIES_IRI, self.triple_term_of(subject, predicate, obj)))
        return reifier

    def _reified_part(self, out: list[Triple], paths: bool) -> Term | Variable:
        kind = self.tok[0]
        if kind == "<<":
            return self.reified_triple(out, paths)
        if kind == "(" or kind == "[" and self.peek_kind() != "]":
            raise self.unexpected("an RDF term or variable in a reified triple")
        return self.var_or_term()

    def _reifier(self) -> Term | Variable:
        """After ``~``: the reifier named, or a fresh blank node."""
        tok = self.expect("~")
        kind = self.tok[0]
        if kind == "var" or kind == "iri" or kind == "pname" or kind == "bnode":
            return self.var_or_term()
        if kind == "[" and self.peek_kind() == "]":
            return self.var_or_term()
        return self.fresh_blank(tok)

    def annotation(self, subject: Term | Variable, predicate: IRI | Variable, obj: Term | Variable,
                   out: list[Triple], paths: bool) -> None:
        """``~ r`` and ``{| ... |}`` after an object: each reifier reifies the
        triple just written; a block describes the reifier before it, or a
        fresh blank node."""
        triple = self.triple_term_of(subject, predicate, obj)
        reifier: Term | Variable | None = None
        while True:
            kind = self.tok[0]
            if kind == "~":
                reifier = self._reifier()
                out.append(TriplePattern(reifier, RDF_REIFIES_IRI, triple))  # type: ignore[arg-type]
            elif kind == "{|":
                tok = self.tok
                self.advance()
                if reifier is None:
                    reifier = self.fresh_blank(tok)
                    out.append(TriplePattern(reifier, RDF_REIFIES_IRI, triple))  # type: ignore[arg-type]
                self.property_list(reifier, out, paths)
                self.expect("|}", "'|}'")
                reifier = None
            else:
                return

    # ---------------------------------------------------------------- paths

    def path(self) -> Path:
        first = self._path_sequence()
        if self.tok[0] != "|":
            return first
        options = [first]
        while self.accept("|"):
            options.append(self._path_sequence())
        return PathAlternative(tuple(options))

    def _path_sequence(self) -> Path:
        first = self._path_step()
        if self.tok[0] != "/":
            return first
        steps = [first]
        while self.accept("/"):
            steps.append(self._path_step())
        return PathSequence(tuple(steps))

    def _path_step(self) -> Path:
        inverse = self.accept("^")
        primary = self._path_primary()
        kind = self.tok[0]
        if kind == "*":
            self.advance()
            primary = PathRepeat(primary, 0, None)
        elif kind == "?":
            self.advance()
            primary = PathRepeat(primary, 0, 1)
        elif kind == "+":
            number = self.peek_kind()
            if number not in NUMBER_TYPES or self.toks[self.i + 1][2] != self.tok[3]:
                self.advance()
                primary = PathRepeat(primary, 1, None)
        return PathInverse(primary) if inverse else primary

    def _path_primary(self) -> Path:
        tok = self.tok
        kind = tok[0]
        if kind == "iri" or kind == "pname":
            self.advance()
            return PathLink(IRI(self.iri_of(tok)))
        if kind == "a":
            self.advance()
            return PathLink(RDF_TYPE_IRI)
        if kind == "(":
            self.advance()
            inner = self.path()
            self.expect(")")
            return inner
        if kind == "!":
            self.advance()
            forward: list[IRI] = []
            inverse: list[IRI] = []
            if self.accept("("):
                if not self.accept(")"):
                    self._negated_member(forward, inverse)
                    while self.accept("|"):
                        self._negated_member(forward, inverse)
                    self.expect(")", "'|' or ')'")
            else:
                self._negated_member(forward, inverse)
            return PathNegated(tuple(forward), tuple(inverse))
        raise self.unexpected("a property path")

    def _negated_member(self, forward: list[IRI], inverse: list[IRI]) -> None:
        target = inverse if self.accept("^") else forward
        if self.accept("a"):
            target.append(RDF_TYPE_IRI)
        else:
            target.append(self.iri())

    def add_path(self, subject: Term | Variable, path: Path, obj: Term | Variable, out: list[Triple]) -> None:
        """Translate ``subject path obj`` per 18.2.2.4 into ``out``."""
        cls = path.__class__
        if cls is PathLink:
            out.append(TriplePattern(subject, path.iri, obj))  # type: ignore[union-attr]
        elif cls is PathInverse:
            self.add_path(obj, path.path, subject, out)  # type: ignore[union-attr]
        elif cls is PathSequence:
            steps = path.steps  # type: ignore[union-attr]
            current = subject
            for step in steps[:-1]:
                joint = self.fresh_var()
                self.add_path(current, step, joint, out)
                current = joint
            self.add_path(current, steps[-1], obj, out)
        else:
            out.append(PathPattern(subject, path, obj))
