"""Comparing engine answers with the expected answers of the W3C tests.

Solutions are compared as multisets (or, for ORDER BY queries, also by the
order of the sort keys) up to a bijective renaming of blank nodes; graphs by
RDF graph isomorphism. Terms compare as RDF 1.1 terms, except that numbers
compare by value within one datatype (see :func:`normalise`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

import rdflib
from rdflib.compare import isomorphic

from engine.rdf import IRI, NUMERIC_DATATYPES, XSD, BNode, Literal, Term, TripleTerm, format_term
from tests.harness.w3c.expected import Triple, exact_rdflib, to_rdflib, triples_of

Row = Sequence[Term | None]

#: rows shown in a diff
DIFF_ROWS = 20


_FLOATING = {XSD + "double", XSD + "float"}


def _number_key(lexical: str, datatype: str) -> str | None:
    """A canonical spelling of a numeric literal's value, None when invalid."""
    try:
        if datatype in _FLOATING:
            return repr(float(lexical))
        value = Decimal(lexical.strip())
    except (ValueError, InvalidOperation):
        return None
    if not value.is_finite():
        return None
    return format(value.normalize(), "f") if value != 0 else "0"


def normalise(term: Term | None) -> Term | None:
    """The form in which two answers' terms are compared.

    Language tags compare case-insensitively (RDF 1.1). A numeric literal
    stands for its value (RDF 1.1's lexical-to-value mapping) within its own
    datatype: "2.1E3"^^xsd:double equals "2100"^^xsd:double, but "1"^^xsd:integer
    still differs from "1.0"^^xsd:decimal. The suite's expected files spell
    numbers freely (e.g. "0"^^xsd:float for a cast result), so comparing
    lexical forms would fail correct answers.
    """
    if term.__class__ is TripleTerm:
        return TripleTerm(normalise(term.subject), normalise(term.predicate),  # type: ignore[arg-type]
                          normalise(term.object))  # type: ignore[union-attr, arg-type]
    if term.__class__ is not Literal:
        return term
    if term.lang:  # type: ignore[union-attr]
        return Literal(term.lexical, lang=term.lang.lower())  # type: ignore[union-attr]
    datatype = term.datatype  # type: ignore[union-attr]
    if datatype in NUMERIC_DATATYPES:
        key = _number_key(term.lexical, datatype)  # type: ignore[union-attr]
        if key is not None:
            return Literal(key, datatype)
    return term


#: the brackets of a triple term in a flattened row (see :func:`_flat`)
_OPEN, _CLOSE = IRI("urn:x-harness:<<("), IRI("urn:x-harness:)>>")


def _flat(row: tuple) -> tuple:
    """The row with each triple term spelled out as its components between
    brackets, so that blank nodes inside triple terms are renamed like the
    others (rows of one shape have one length)."""
    if not any(t.__class__ is TripleTerm for t in row):
        return row
    out: list = []

    def add(term: object) -> None:
        if term.__class__ is TripleTerm:
            out.append(_OPEN)
            for part in (term.subject, term.predicate, term.object):  # type: ignore[attr-defined]
                add(part)
            out.append(_CLOSE)
        else:
            out.append(term)

    for term in row:
        add(term)
    return tuple(out)


def _bnodes(row: Row) -> list[BNode]:
    return [t for t in row if t.__class__ is BNode]  # type: ignore[misc]


def _shape(row: Row) -> tuple:
    """The row with blank nodes blanked out: rows that may match share it."""
    return tuple(None if t.__class__ is BNode else (t,) for t in row)


def _colours(rows: list[tuple]) -> dict[BNode, Counter]:
    """Each blank node's occurrences as (shape, column); a cheap invariant
    that any isomorphism must preserve, used to prune the search."""
    colours: dict[BNode, Counter] = {}
    for row in rows:
        shape = _shape(row)
        for column, term in enumerate(row):
            if term.__class__ is BNode:
                colours.setdefault(term, Counter())[(shape, column)] += 1
    return colours


def _extend(mapping: dict, reverse: dict, left: Row, right: Row) -> list[BNode] | None:
    """Bind the blank nodes of ``left`` to those of ``right``; None on conflict."""
    added: list[BNode] = []
    for a, b in zip(left, right, strict=True):
        if a.__class__ is not BNode:
            continue
        if mapping.get(a, b) != b or reverse.get(b, a) != a:
            for undo in added:
                del reverse[mapping.pop(undo)]
            return None
        if a not in mapping:
            mapping[a] = b
            reverse[b] = a
            added.append(a)
    return added


def _match_rows(actual: list[tuple], expected: list[tuple], ordered: bool) -> bool:
    """Whether a blank node bijection makes ``actual`` equal ``expected``."""
    if len(actual) != len(expected):
        return False
    a_colours, e_colours = _colours(actual), _colours(expected)
    if ordered:
        candidates_of = [[i] for i in range(len(expected))]
    else:
        by_shape: dict[tuple, list[int]] = {}
        for index, row in enumerate(expected):
            by_shape.setdefault(_shape(row), []).append(index)
        candidates_of = [by_shape.get(_shape(row), []) for row in actual]
    used = [False] * len(expected)
    mapping: dict[BNode, BNode] = {}
    reverse: dict[BNode, BNode] = {}
    # iterative depth-first search: position -> index into its candidate list
    choice = [0] * len(actual)
    added_at: list[list[BNode]] = [[] for _ in actual]
    position = 0
    while 0 <= position < len(actual):
        row = actual[position]
        candidates = candidates_of[position]
        placed = False
        while choice[position] < len(candidates):
            index = candidates[choice[position]]
            choice[position] += 1
            if used[index] or _shape(expected[index]) != _shape(row):
                continue
            other = expected[index]
            if any(a_colours[a] != e_colours[b] for a, b in zip(_bnodes(row), _bnodes(other), strict=True)):
                continue
            added = _extend(mapping, reverse, row, other)
            if added is None:
                continue
            used[index] = True
            added_at[position] = added
            placed = True
            break
        if placed:
            position += 1
            continue
        choice[position] = 0
        position -= 1
        if position >= 0:  # undo the previous row's choice and try its next candidate
            used[candidates_of[position][choice[position] - 1]] = False
            for undo in added_at[position]:
                del reverse[mapping.pop(undo)]
    return position == len(actual)


def _ground_split(rows: list[tuple]) -> tuple[Counter, list[tuple]]:
    ground: Counter = Counter()
    with_bnodes: list[tuple] = []
    for row in rows:
        if any(t.__class__ is BNode for t in row):
            with_bnodes.append(row)
        else:
            ground[row] += 1
    return ground, with_bnodes


def solutions_match(actual: list[tuple], expected: list[tuple]) -> bool:
    """Multiset equality up to blank node renaming."""
    a_ground, a_rest = _ground_split(actual)
    e_ground, e_rest = _ground_split(expected)
    return a_ground == e_ground and _match_rows(a_rest, e_rest, ordered=False)


def _format_rows(rows: Iterable[tuple]) -> str:
    lines = [" ".join("UNDEF" if t is None else format_term(t) for t in row) for row in rows]
    shown = "\n".join("    " + line for line in lines[:DIFF_ROWS])
    more = f"\n    ... {len(lines) - DIFF_ROWS} more" if len(lines) > DIFF_ROWS else ""
    return shown + more


def _diff(actual: list[tuple], expected: list[tuple]) -> str:
    a_count, e_count = Counter(actual), Counter(expected)
    missing = list((e_count - a_count).elements())
    extra = list((a_count - e_count).elements())
    return (
        f"expected {len(expected)} solutions, got {len(actual)}\n"
        f"  missing ({len(missing)}):\n{_format_rows(missing)}\n"
        f"  unexpected ({len(extra)}):\n{_format_rows(extra)}"
    )


def compare_solutions(
    actual_vars: list[str],
    actual_rows: Iterable[Row],
    expected_vars: list[str],
    expected_rows: Iterable[Row],
    order_columns: Sequence[str] | None = None,
) -> str | None:
    """None when the answers agree, else a description of the difference.

    ``order_columns`` (for ORDER BY queries) names the columns whose values
    must also appear in the same sequence; rows that tie on them may come
    in any order, as SPARQL allows.
    """
    if set(actual_vars) != set(expected_vars):
        return f"variables differ: expected {sorted(expected_vars)}, got {sorted(actual_vars)}"
    positions = [actual_vars.index(var) for var in expected_vars]
    actual = [tuple(normalise(row[i]) for i in positions) for row in actual_rows]
    expected = [tuple(normalise(term) for term in row) for row in expected_rows]
    if not solutions_match([_flat(r) for r in actual], [_flat(r) for r in expected]):
        return _diff(actual, expected)
    if order_columns:
        keys = [expected_vars.index(var) for var in order_columns if var in expected_vars]
        a_keys = [_flat(tuple(row[i] for i in keys)) for row in actual]
        e_keys = [_flat(tuple(row[i] for i in keys)) for row in expected]
        if not _match_rows(a_keys, e_keys, ordered=True):
            return "right solutions in the wrong order:\n" + _diff_order(a_keys, e_keys)
    return None


def _diff_order(actual: list[tuple], expected: list[tuple]) -> str:
    return f"  expected sort keys:\n{_format_rows(expected)}\n  got:\n{_format_rows(actual)}"


# ------------------------------------------------------------------ graphs


def _graph(triples: Iterable[Triple]) -> rdflib.Graph:
    graph = rdflib.Graph()
    for s, p, o in triples:
        graph.add((to_rdflib(s), to_rdflib(p), to_rdflib(normalise(o))))
    return graph


def _rdf12(triples: list[Triple]) -> bool:
    """Whether the triples hold what rdflib cannot: triple terms, directional strings."""
    return any(t.__class__ is TripleTerm or (t.__class__ is Literal and t.direction)  # type: ignore[union-attr]
               for triple in triples for t in triple)


def to_oxigraph(term: Term):  # -> a pyoxigraph term
    import pyoxigraph as ox

    cls = term.__class__
    if cls is IRI:
        return ox.NamedNode(term.value)  # type: ignore[union-attr]
    if cls is BNode:
        return ox.BlankNode(term.id)  # type: ignore[union-attr]
    if cls is TripleTerm:
        return ox.Triple(to_oxigraph(term.subject), to_oxigraph(term.predicate),  # type: ignore[union-attr]
                         to_oxigraph(term.object))  # type: ignore[union-attr]
    if term.direction:  # type: ignore[union-attr]
        way = ox.BaseDirection.LTR if term.direction == "ltr" else ox.BaseDirection.RTL  # type: ignore[union-attr]
        return ox.Literal(term.lexical, language=term.language, direction=way)  # type: ignore[union-attr]
    if term.lang:  # type: ignore[union-attr]
        return ox.Literal(term.lexical, language=term.lang)  # type: ignore[union-attr]
    return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype_iri))  # type: ignore[union-attr]


def _canonical_set(triples: list[Triple]) -> set:
    """The triples with blank nodes renamed canonically (RDFC-1.0 by Oxigraph,
    which handles triple terms), as a set of quads."""
    import pyoxigraph as ox

    dataset = ox.Dataset([ox.Quad(*(to_oxigraph(normalise(t)) for t in triple))  # type: ignore[arg-type]
                          for triple in triples])
    dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
    return set(dataset)


def compare_graphs(actual: Iterable[Triple], expected: Iterable[Triple]) -> str | None:
    """None when the graphs are isomorphic, else a description of the difference."""
    actual, expected = list(actual), list(expected)
    if _rdf12(actual) or _rdf12(expected):
        a_set, e_set = _canonical_set(actual), _canonical_set(expected)
        if a_set == e_set:
            return None
        return (f"graphs differ: expected {len(e_set)} triples, got {len(a_set)}\n"
                f"  missing (blank nodes renamed canonically):\n"
                + "\n".join(f"    {q}" for q in sorted(map(str, e_set - a_set))[:DIFF_ROWS])
                + "\n  unexpected:\n"
                + "\n".join(f"    {q}" for q in sorted(map(str, a_set - e_set))[:DIFF_ROWS]))
    with exact_rdflib():
        a_graph, e_graph = _graph(actual), _graph(expected)
    if isomorphic(a_graph, e_graph):
        return None
    a_set = {tuple(map(normalise, t)) for t in triples_of(a_graph)}
    e_set = {tuple(map(normalise, t)) for t in triples_of(e_graph)}
    return (
        f"graphs differ: expected {len(e_graph)} triples, got {len(a_graph)}\n"
        f"  missing (blank nodes may only be renamed):\n{_format_rows(sorted(e_set - a_set, key=str))}\n"
        f"  unexpected:\n{_format_rows(sorted(a_set - e_set, key=str))}"
    )

