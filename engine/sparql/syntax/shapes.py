"""Queries by shape: one parse per query with its constants lifted out.

Clients send the same few queries with other constants (this user's
friends, that post's likes). A query's *shape* is its token list with the
constants that may vary (IRIs, prefixed names, strings, numbers) replaced
by their kind: one tokenizer pass computes it, and a cached shape turns a
new query into its algebra by putting the new constants into the shape's
*template* (a parse with a sentinel in each lifted place), with no parse.

Lifting must be exact, so it is decided twice:

- by the tokens: a constant stays in the shape (its value is part of the
  key) where its value steers the parser rather than fills a place: the
  BASE and PREFIX IRIs, a datatype after ``^^``, LIMIT and OFFSET (checked
  against a bound), a function's IRI (``xsd:integer(...)``), a number glued
  to its sign, any constant inside a SPARQL 1.2 triple term ``<<( ... )>>``
  or reified triple ``<< ... >>`` (the term is built whole); a query with
  SERVICE (whose text is sent on) lifts nothing;
- by the template: a slot whose sentinel shows up anywhere but as a whole
  IRI or literal term (in a variable name, inside a longer string, or not
  at all) is kept in the key too, and a template that does not give back
  the query it was built from, instantiated with that query's constants,
  lifts nothing.

The shape holds no token positions: a query that tokenizes has the same
tokenizer errors (message and position) on either path, and a query whose
shape parsed once parses again, so a hit never hides a syntax error.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from engine.rdf import IRI, BNode, Literal, TripleTerm, Variable, resolve_iri
from engine.sparql.algebra import Query
from engine.sparql.syntax.tokenizer import Token, tokenize
from engine.sparql.syntax.update_parser import UpdateParser

#: token kinds whose value may be lifted out of the shape
LIFTED = frozenset(("iri", "pname", "str", "int", "dec", "dbl"))
#: a constant right after one of these stays in the shape
_STEERING = frozenset(("BASE", "PREFIX", "VERSION", "^^", "LIMIT", "OFFSET"))
#: SPARQL 1.2's triple terms and reified triples: nothing inside them is lifted
_OPEN_TRIPLE = frozenset(("<<(", "<<"))
_CLOSE_TRIPLE = frozenset((")>>", ">>"))
_MARK = "x-rivulet-slot:"
_MARKED = re.compile(re.escape(_MARK) + r"(\d+)")

#: a term built from a lifted token's value (see :meth:`Template.instantiate`)
Maker = Callable[[Any], object]


def shape_of(text: str, base: str | None) -> tuple[Hashable, list[Token], list[int]]:
    """The shape key of ``text``, its tokens and the indexes of the lifted
    tokens (in order). Raises the tokenizer's :class:`SparqlSyntaxError`.

    The key is the text between the lifted tokens and each one's kind (and a
    prefixed name's prefix): the tokenizer reads on from a token's end, so
    equal text around equal kinds means equal tokens around the constants."""
    tokens = tokenize(text)
    lifted: list[int] = []
    if any(t[0] == "SERVICE" for t in tokens):
        return (base, text), tokens, lifted
    kinds: list[object] = []
    between: list[str] = []
    cut = 0
    previous: Token = ("", None, -1, -1)
    before: str = ""
    inside = 0  # depth in triple terms and reified triples, whose constants stay
    for index, tok in enumerate(tokens):
        kind = tok[0]
        if kind in _OPEN_TRIPLE:
            inside += 1
        elif kind in _CLOSE_TRIPLE:
            inside -= 1
        elif not inside and kind in LIFTED and _liftable(tok, previous, before, tokens[index + 1]):
            lifted.append(index)
            kinds.append(tok[1][0] if kind == "pname" else kind)  # type: ignore[index]
            between.append(text[cut:tok[2]])
            cut = tok[3]
        before = previous[0]
        previous = tok
    between.append(text[cut:])
    return (base, tuple(kinds), tuple(between)), tokens, lifted


def _liftable(tok: Token, previous: Token, before: str, following: Token) -> bool:
    """May this constant token's value vary within one shape?"""
    kind = previous[0]
    if kind in _STEERING or before == "PREFIX":
        return False
    if (kind == "-" or kind == "+") and previous[3] == tok[2]:
        return False  # a signed number is one literal
    return following[0] != "("  # a function's IRI picks the function


class Template:
    """A query parsed with a sentinel in each lifted slot, and how to put
    other constants in: only the nodes above a slot are rebuilt."""

    def __init__(self, query: Query, makers: dict[int, Maker], build: Callable[[list], Query] | None,
                 placeholders: dict[int, IRI | Literal] | None = None) -> None:
        self.query = query
        self._makers = makers
        self._build = build
        #: the sentinel term of each slot in ``query``, by slot
        self.placeholders = placeholders or {}
        #: the values the template was built from and their query: a query
        #: sent again word for word gets the very same object
        self.origin: tuple[list, Query] | None = None
        #: what the executor's layer prepared for this shape, kept as long as
        #: the template is (``engine.api``'s row-by-row plan); None until then
        self.prepared: object = None

    def terms(self, values: list) -> list:
        """The terms the lifted ``values`` stand for, by slot (None in a
        slot whose value is part of the key)."""
        terms = [None] * len(values)
        for slot, make in self._makers.items():
            terms[slot] = make(values[slot])
        return terms

    def instantiate(self, values: list) -> Query:
        """The query with ``values`` (the lifted tokens' values, by slot) in its slots."""
        if self._build is None:
            return self.query
        origin = self.origin
        if origin is not None and origin[0] == values:
            return origin[1]
        return self._build(self.terms(values))


class ShapeCache:
    """Templates by shape key and the values of the slots kept in it (LRU, thread-safe)."""

    def __init__(self, size: int) -> None:
        self.size = size
        #: shape key -> the lifted slots whose values are part of the key
        self._kept: dict[Hashable, tuple[int, ...]] = {}
        self._templates: OrderedDict[tuple, Template] = OrderedDict()
        self._lock = threading.Lock()

    def lookup(self, text: str, base: str | None) -> tuple[Query, Template] | None:
        """The query built from a cached template, or None (nothing parsed)."""
        found = self.find(text, base)
        return None if found is None else (found[0].instantiate(found[1]), found[0])

    def find(self, text: str, base: str | None) -> tuple[Template, list] | None:
        """The cached template of ``text``'s shape and the values of its
        lifted constants, or None (nothing parsed, no query built)."""
        key, tokens, lifted = shape_of(text, base)
        values = [tokens[i][1] for i in lifted]
        with self._lock:
            kept = self._kept.get(key)
            if kept is None:
                return None
            full = (key, tuple(values[s] for s in kept))
            template = self._templates.get(full)
            if template is None:
                return None
            self._templates.move_to_end(full)
        return template, values

    def prepare(self, text: str, base: str | None, parse: Callable[[str, str | None], Query]
                ) -> tuple[Query, Template]:
        """The query, from a cached template or parsed (``parse``) and its template cached."""
        found = self.lookup(text, base)
        if found is not None:
            return found
        query = parse(text, base)  # raises the parser's errors before anything is cached
        key, tokens, lifted = shape_of(text, base)
        values = [tokens[i][1] for i in lifted]
        with self._lock:
            known = self._kept.get(key)
        template, kept = build_template(text, base, tokens, lifted, query, known)
        if known is not None and kept != known:
            return query, template  # such a shape keeps other slots: used once, not cached
        full = (key, tuple(values[s] for s in kept))
        with self._lock:
            self._kept[key] = kept
            self._templates[full] = template
            if len(self._templates) > self.size:
                old, _ = self._templates.popitem(last=False)
                if not any(k[0] == old[0] for k in self._templates):
                    self._kept.pop(old[0], None)
        return query, template


def build_template(text: str, base: str | None, tokens: list[Token], lifted: list[int], query: Query,
                   kept: tuple[int, ...] | None = None) -> tuple[Template, tuple[int, ...]]:
    """The template of ``query`` (parsed from ``tokens``) and the slots kept
    in its key; every slot is kept when the template cannot be trusted."""
    everything = tuple(range(len(lifted)))
    keep = set(kept or ())
    for _ in range(len(lifted) + 1):
        parser = UpdateParser(text, base)
        marked = list(tokens)
        for slot, index in enumerate(lifted):
            if slot not in keep:
                kind, _, start, end = tokens[index]
                marked[index] = (("iri", f"urn:{_MARK}{slot}", start, end) if kind in ("iri", "pname")
                                 else (kind, f"{_MARK}{slot}", start, end))
        parser.toks, parser.tok = marked, marked[0]
        try:
            sentinel_query = parser.query()
        except Exception:  # a sentinel the parser refuses: nothing is lifted
            return Template(query, {}, None), everything
        scan = _Scan(len(lifted))
        if not scan.walk(sentinel_query):
            return Template(query, {}, None), everything
        misplaced = (scan.misplaced | {s for s in range(len(lifted)) if s not in scan.terms}) - keep
        if not misplaced:
            break
        keep |= misplaced
    else:  # pragma: no cover - each round keeps at least one more slot
        return Template(query, {}, None), everything
    makers = {slot: _maker(tokens[lifted[slot]][0], term, parser)
              for slot, term in scan.terms.items() if slot not in keep}
    build = _builder(sentinel_query, scan.terms, keep)
    if build is None:  # no slot left to fill: the query itself
        return Template(query, {}, None), tuple(sorted(keep))
    template = Template(sentinel_query, makers, build,
                        {slot: term for slot, term in scan.terms.items() if slot not in keep})
    values = [tokens[i][1] for i in lifted]
    if template.instantiate(values) != query:
        return Template(query, {}, None), everything
    template.origin = (values, query)
    return template, tuple(sorted(keep))


def _maker(kind: str, term: object, parser: UpdateParser) -> Maker:
    """How a slot's token value becomes the term the parser would have made."""
    if kind == "iri":
        base = parser.base
        return lambda value: IRI(resolve_iri(value, base))
    if kind == "pname":
        prefixes = parser.prefixes
        return lambda value: IRI(prefixes[value[0]] + value[1])
    datatype, lang = term.datatype, term.lang  # type: ignore[attr-defined]
    return lambda value: Literal(value, datatype, lang)


class _Scan:
    """Where the sentinels are in a sentinel parse: as whole terms (``terms``),
    elsewhere (``misplaced``); false from :meth:`walk` on an unknown object."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.terms: dict[int, IRI | Literal] = {}
        self.misplaced: set[int] = set()
        self._seen: set[int] = set()

    def walk(self, obj: object) -> bool:
        if id(obj) in self._seen:
            return True
        self._seen.add(id(obj))
        slot = _slot_of(obj)
        if slot is not None:
            other = self.terms.setdefault(slot, obj)  # type: ignore[arg-type]
            if other != obj:
                self.misplaced.add(slot)
            return True
        if isinstance(obj, str):
            self.misplaced.update(int(m) for m in _MARKED.findall(obj))
            return True
        if obj is None or isinstance(obj, (bool, int, float)):
            return True
        if isinstance(obj, IRI):
            return self.walk(obj.value)
        if isinstance(obj, Literal):
            return all(self.walk(x) for x in (obj.lexical, obj.datatype, obj.lang))
        if isinstance(obj, TripleTerm):
            return all(self.walk(x) for x in (obj.subject, obj.predicate, obj.object))
        if isinstance(obj, (Variable, BNode)):
            return self.walk(obj.name if isinstance(obj, Variable) else obj.id)
        if isinstance(obj, (tuple, list, frozenset)):
            return all(self.walk(x) for x in obj)
        if isinstance(obj, dict):
            return all(self.walk(k) and self.walk(v) for k, v in obj.items())
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return all(self.walk(getattr(obj, f.name)) for f in dataclasses.fields(obj))
        return False


def _slot_of(obj: object) -> int | None:
    """The slot a sentinel term stands for, or None."""
    if isinstance(obj, IRI):
        value = obj.value
        prefix = "urn:" + _MARK
    elif isinstance(obj, Literal):
        value = obj.lexical
        prefix = _MARK
    else:
        return None
    if value.startswith(prefix) and value[len(prefix):].isdigit():
        return int(value[len(prefix):])
    return None


def _builder(query: Query, terms: dict[int, object], keep: set[int]) -> Callable[[list], Query] | None:
    """A function of the slots' terms rebuilding the nodes above a slot
    (through their constructor, so fields derived in ``__post_init__`` follow)."""
    compiled: dict[int, Callable[[list], object] | None] = {}

    def compile_(obj: object) -> Callable[[list], object] | None:
        if id(obj) not in compiled:
            compiled[id(obj)] = _rebuild(obj, compile_, keep)
        return compiled[id(obj)]

    return compile_(query)  # type: ignore[return-value]


Build = Callable[[list], object]


def _rebuild(obj: object, compile_: Callable[[object], Build | None], keep: set[int]) -> Build | None:
    """How to rebuild ``obj`` from the slots' terms; None if no slot is inside."""
    slot = _slot_of(obj)
    if slot is not None:
        return None if slot in keep else _slot(slot)
    if isinstance(obj, dict):
        items = [(k, compile_(k), v, compile_(v)) for k, v in obj.items()]
        if all(fk is None and fv is None for _, fk, _, fv in items):
            return None
        return _mapping(items)
    if isinstance(obj, (tuple, list, frozenset)):
        parts = [(x, compile_(x)) for x in obj]
        kind: Callable = type(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = dataclasses.fields(obj)
        if not all(f.init and not f.kw_only for f in fields):
            return None  # the template check then finds the slot unfilled
        parts = [(v, compile_(v)) for v in (getattr(obj, f.name) for f in fields)]
        kind = type(obj)
        if any(f is not None for _, f in parts):
            return _construct(kind, parts)
        return None
    else:
        return None
    if all(f is None for _, f in parts):
        return None
    return _collection(kind, parts)


def _slot(slot: int) -> Build:
    return lambda terms: terms[slot]


def _mapping(items: list) -> Build:
    return lambda terms: {(k if fk is None else fk(terms)): (v if fv is None else fv(terms))
                          for k, fk, v, fv in items}


def _collection(kind: Callable, parts: list) -> Build:
    return lambda terms: kind(x if f is None else f(terms) for x, f in parts)


def _construct(kind: Callable, parts: list) -> Build:
    return lambda terms: kind(*[x if f is None else f(terms) for x, f in parts])
