"""Sort keys for ORDER BY (and MIN/MAX), total across all kinds of terms.

SPARQL fixes only part of the order (unbound < blank nodes < IRIs <
literals, and the ``<`` operator where it is defined); the rest is up to the
engine. The key here never raises, so sorting mixed data is always possible
and deterministic: numbers by value, dateTimes by instant, then booleans,
plain strings, language-tagged strings and other datatypes, each group by
value or lexical form, with the exact term as the final tie-break.

ORDER BY itself must not use that tie-break: two terms whose values are
equal (``1`` and ``1.0``, one instant written in two time zones) are a tie
that the next condition decides (SPARQL 1.1 section 15.1), which
:func:`order_ties` tells; MIN and MAX use the total key to pick one term.
"""

from __future__ import annotations

from functools import lru_cache

from engine.rdf import IRI, BNode, Literal, Term, TripleTerm
from engine.sparql.expr.operators import BOOLEAN, DATE, DATETIME, LANG_STRING, NUMBER, STRING, literal_value

_UNBOUND_KEY = (0,)
_GROUP = {NUMBER: 0, DATETIME: 1, DATE: 2, BOOLEAN: 3, STRING: 4, LANG_STRING: 5}
_OTHER = 6


def order_key(term: Term | None) -> tuple:
    """A key such that sorting by it gives the ORDER BY order of terms."""
    if term is None:
        return _UNBOUND_KEY
    cls = term.__class__
    if cls is BNode:
        return (1, term.id)  # type: ignore[union-attr]
    if cls is IRI:
        return (2, term.value)  # type: ignore[union-attr]
    if cls is TripleTerm:  # after every literal, by components (SPARQL 1.2)
        return (4, order_key(term.subject), order_key(term.predicate), order_key(term.object))  # type: ignore[union-attr]
    return _literal_key(term)  # type: ignore[arg-type]


@lru_cache(maxsize=1 << 16)
def _literal_key(term: Literal) -> tuple:
    found = literal_value(term)
    if found is None:
        return (3, _OTHER, term.datatype or "", term.lexical)
    category, value = found
    group = _GROUP[category]
    if category == NUMBER:
        rank, number = value  # type: ignore[misc]
        is_nan = number != number
        return (3, group, int(is_nan), 0 if is_nan else number, rank, term.lexical)
    if category == DATETIME or category == DATE:
        return (3, group, value.instant, value.tz_minutes is None, term.lexical)  # type: ignore[attr-defined]
    if category == LANG_STRING:
        return (3, group, term.lexical, term.lang)
    return (3, group, value, term.lexical)


def order_ties(term: Term | None) -> tuple:
    """The part of :func:`order_key` that ORDER BY compares: the key without
    its final tie-break where values compare with ``=`` (numbers: group, NaN
    flag and value; dateTimes and dates: instant and whether a time zone is
    missing; booleans and strings: the value), so equal values tie here;
    other terms tie only with themselves."""
    key = order_key(term)
    if key[0] != 3 or key[1] == _OTHER:
        return key
    group = key[1]
    if group == _GROUP[NUMBER] or group == _GROUP[DATETIME] or group == _GROUP[DATE]:
        return key[:4]
    if group == _GROUP[BOOLEAN] or group == _GROUP[STRING]:
        return key[:3]
    return key
