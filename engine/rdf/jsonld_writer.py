"""JSON-LD, written a chunk at a time: a flat list of node objects.

With prefixes the document is ``{"@context": {...}, "@graph": [...]}`` and
IRIs are compact IRIs (``ex:name``) where a prefix covers them; without,
it is a top-level array of node objects with full IRIs. Each run of consecutive triples
with one subject becomes one node object, its values grouped by predicate
(JSON allows a key once per object); a subject met again later, or across
two batches, gets another node object with the same ``@id``, which JSON-LD
merges. Literals are strings, or value objects with ``@language`` or
``@type``: never JSON numbers, whose conversion back to RDF would change
the lexical form.

Only prefixes JSON-LD 1.1 treats as such go in the context: a simple term
whose IRI ends in a gen-delim (``/``, ``#``, ``:``, ``?``, ``[``, ``]``,
``@``); others are not used. A context term may clash with an IRI's scheme:
with ``urn`` in the context, ``"urn:isbn:1"`` would be read as a compact
IRI. Such an IRI cannot be written under that context, so the (rare) node
that holds one is written with ``"@context": null`` and full IRIs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping

from engine.rdf.names import PN_PREFIX, portable_label
from engine.rdf.spellings import Spellings
from engine.rdf.terms import IRI, RDF_TYPE, BNode, Term, TripleTerm
from engine.rdf.xml_text import NotXmlText


class NotJsonLd(NotXmlText):
    """A graph JSON-LD 1.1 cannot hold (an RDF 1.2 triple term); like a
    character XML cannot carry, an answer the server refuses with 406 when
    it is met in the first chunk."""


Triple = tuple[Term, Term, Term]

#: the spelling of a term that cannot be written under the context
AMBIGUOUS = "\0"
#: the key of rdf:type when its value is an IRI
TYPE_KEY = '"@type"'
_GEN_DELIMS = frozenset(":/?#[]@")

#: a string as JSON (an encoder made once: json.dumps with options makes one per call)
_js = json.JSONEncoder(ensure_ascii=False).encode


class JsonLdSpeller:
    """Turns terms into JSON-LD under one context, each distinct term once per use."""

    def __init__(self, context: Mapping[str, str]) -> None:
        self.context = dict(context)
        self.prefixes = sorted(self.context.items(), key=lambda item: -len(item[1]))
        #: has any term been AMBIGUOUS? (until then no node needs checking)
        self.ambiguous = False
        self.ids = Spellings(self.subject)
        self.keys = Spellings(self.key)
        self.values = Spellings(self.value)
        self.types = Spellings(self.type_value)

    def iri(self, value: str) -> str:
        """An IRI as a JSON string, compacted when a prefix covers it;
        AMBIGUOUS when the context would misread it."""
        for prefix, namespace in self.prefixes:
            if value.startswith(namespace):
                local = value[len(namespace):]
                if not local.startswith("//"):
                    return _js(f"{prefix}:{local}")
        scheme, _, rest = value.partition(":")
        if scheme in self.context and not rest.startswith("//"):
            self.ambiguous = True
            return AMBIGUOUS
        return _js(value)

    def subject(self, term: Term) -> str:
        """The ``@id`` of a subject; for one the context would misread, a
        string starting with AMBIGUOUS that still tells subjects apart."""
        if term.__class__ is BNode:
            return _js("_:" + portable_label(term.id))
        text = self.iri(term.value)
        return AMBIGUOUS + term.value if text is AMBIGUOUS else text

    def key(self, term: Term) -> str:
        """A predicate's key; TYPE_KEY for rdf:type."""
        return TYPE_KEY if term.value == RDF_TYPE else self.iri(term.value)

    def type_value(self, term: Term) -> str:
        """An IRI in the ``@type`` list."""
        return self.iri(term.value)

    def value(self, term: Term) -> str:
        """An object as a JSON-LD value."""
        cls = term.__class__
        if cls is IRI:
            iri = self.iri(term.value)
            return iri if iri is AMBIGUOUS else '{"@id": ' + iri + "}"
        if cls is BNode:
            return '{"@id": ' + _js("_:" + portable_label(term.id)) + "}"
        if cls is TripleTerm:
            raise NotJsonLd(f"JSON-LD 1.1 cannot hold the RDF 1.2 triple term {term!r}; "
                            "ask for Turtle or N-Triples instead")
        if term.lang:
            if term.direction:  # RDF 1.2's directional string
                return ('{"@value": ' + _js(term.lexical) + ', "@language": ' + _js(term.language)
                        + ', "@direction": ' + _js(term.direction) + "}")
            return '{"@value": ' + _js(term.lexical) + ', "@language": ' + _js(term.lang) + "}"
        if term.datatype:
            datatype = self.iri(term.datatype)
            typed = '{"@value": ' + _js(term.lexical) + ', "@type": ' + datatype + "}"
            return AMBIGUOUS if datatype is AMBIGUOUS else typed
        return _js(term.lexical)

    def node(self, subject: str, run: list[tuple[Term, Term]]) -> str:
        """The node object of one subject's run of (predicate, object) pairs;
        its keys in the order first met. Empty if something in it is AMBIGUOUS."""
        keys, values, types = self.keys, self.values, self.types
        known_keys, known_values, known_types = keys.by_id, values.by_id, types.by_id
        if len(run) == 1:  # the common case when the triples are not sorted by subject
            p, o = run[0]
            key = known_keys.get(id(p)) or keys.miss(p)
            if key is not TYPE_KEY:
                value = known_values.get(id(o)) or values.miss(o)
                if value is not AMBIGUOUS and key is not AMBIGUOUS and subject[0] != AMBIGUOUS:
                    return '{"@id": ' + subject + ", " + key + ": " + value + "}"
        grouped: dict[str, list[str]] = {}
        for p, o in run:
            key = known_keys.get(id(p)) or keys.miss(p)
            if key is TYPE_KEY:
                if o.__class__ is IRI:
                    value = known_types.get(id(o)) or types.miss(o)
                else:
                    key = self.iri(RDF_TYPE)
                    value = known_values.get(id(o)) or values.miss(o)
            else:
                value = known_values.get(id(o)) or values.miss(o)
            found = grouped.get(key)
            if found is None:
                grouped[key] = [value]
            else:
                found.append(value)
        if self.ambiguous and (subject[0] == AMBIGUOUS or AMBIGUOUS in grouped
                               or any(AMBIGUOUS in found for found in grouped.values())):
            return ""
        parts = ['{"@id": ', subject]
        for key, found in grouped.items():
            parts.append(", " + key + ": ")
            if len(found) == 1 and key is not TYPE_KEY:
                parts.append(found[0])
            else:
                parts.append("[" + ", ".join(found) + "]")
        parts.append("}")
        return "".join(parts)


def json_ld_context(prefixes: Mapping[str, str]) -> dict[str, str]:
    """The prefixes JSON-LD 1.1 reads as prefixes (see the module docstring)."""
    return {p: ns for p, ns in prefixes.items()
            if p and PN_PREFIX.fullmatch(p) and ns and ns[-1] in _GEN_DELIMS}


def write_jsonld(batches: Iterable[list[Triple]], prefixes: Mapping[str, str]) -> Iterator[bytes]:
    """A JSON-LD document, one chunk per batch (the opening goes out with
    the first): node objects as each subject's run of triples ends."""
    context = json_ld_context(prefixes)
    speller = JsonLdSpeller(context)
    plain = JsonLdSpeller({})  # for nodes the context would misread
    ids, known_ids, node = speller.ids, speller.ids.by_id, speller.node
    if context:
        head = '{"@context": ' + json.dumps(context, ensure_ascii=False) + ',\n "@graph": [\n'
        tail = "\n]}\n"
    else:
        head, tail = "[\n", "\n]\n"
    separator = ""
    for batch in batches:
        out = [head]
        head = ""
        subject: str | None = None
        start = None
        run: list[tuple[Term, Term]] = []
        for s, p, o in batch:
            key = known_ids.get(id(s)) or ids.miss(s)
            if key != subject:
                if run:
                    out.append(separator + (node(subject, run) or _plain_node(plain, start, run)))
                    separator = ",\n"
                subject, start, run = key, s, []
            run.append((p, o))
        if run:
            out.append(separator + (node(subject, run) or _plain_node(plain, start, run)))
            separator = ",\n"
        yield "".join(out).encode()
    yield (head + tail).encode()


def _plain_node(plain: JsonLdSpeller, subject: Term, run: list[tuple[Term, Term]]) -> str:
    """A node object the document's context would misread, under none."""
    return '{"@context": null, ' + plain.node(plain.ids.miss(subject), run)[1:]
