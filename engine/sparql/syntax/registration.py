"""Continuous-query registrations (C-SPARQL and RSP-QL) as :class:`ContinuousQuery`.

A registration is a head (``REGISTER QUERY q AS``, ``REGISTER STREAM s AS``,
``REGISTER RSTREAM|ISTREAM|DSTREAM <s> AS``) followed by an ordinary query
whose dataset clause may also declare stream windows. The query is parsed by
the SPARQL parser itself: :class:`RegistrationParser` subclasses it to accept
``FROM STREAM``, ``FROM NAMED WINDOW`` and ``WINDOW <w> { }``, so
``parse_query`` never sees these extensions and keeps rejecting them.

The head decides the language, and with it how windows are declared: C-SPARQL
windows (``FROM STREAM``) are merged into the default graph, RSP-QL windows
(``FROM NAMED WINDOW``) are only seen by ``WINDOW`` patterns (SEMANTICS.md).
Mixing the two would leave it open what a pattern outside ``WINDOW`` matches,
so each is an error in the other language. Durations may be written either
way (``10s`` or ``PT10S``) in both languages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from engine.rdf import IRI
from engine.sparql.algebra import Dataset, Pattern, Query, Window
from engine.sparql.syntax.graph_pattern_parser import Scope, join
from engine.sparql.syntax.query_parser import QueryParser
from engine.sparql.syntax.tokenizer import Token

__all__ = [
    "BARE_NAME_NAMESPACE",
    "ContinuousQuery",
    "WindowSpec",
    "is_registration",
    "parse_registration",
]

#: a bare output-stream name (``REGISTER STREAM out AS``) becomes an IRI by
#: resolving it against the base; without a base it is appended to this
BARE_NAME_NAMESPACE = "urn:rivulet:stream:"

_RSPQL_REPORTS = frozenset(("RSTREAM", "ISTREAM", "DSTREAM"))
_UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_CSPARQL_SPAN = re.compile(r"([0-9]+(?:\.[0-9]*)?)[ \t]*(ms|s|m|h|d)", re.I)
_ISO_SPAN = re.compile(
    r"P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?", re.I
)
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_DURATION = "a duration like 10s or PT10S"
#: the prologue, then the REGISTER keyword; each alternative starts with a
#: different character, so a failed match never backtracks far
_REGISTRATION = re.compile(
    r"(?:[ \t\r\n]|#[^\r\n]*+"
    r"|PREFIX[ \t\r\n]*[^ \t\r\n<>:]*:[ \t\r\n]*<[^<>]*>"
    r"|BASE[ \t\r\n]*<[^<>]*>)*"
    r"REGISTER(?![A-Za-z0-9_])",
    re.I,
)


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """One stream window: a time window (``range_ms``/``step_ms``) or a count
    window (``triples``); exactly one of the two kinds is set."""

    stream: IRI
    name: IRI | None
    range_ms: int | None
    step_ms: int | None
    triples: int | None


@dataclass(frozen=True, slots=True)
class ContinuousQuery:
    """A parsed registration.

    ``query`` is the inner query; its ``dataset`` holds only stored graphs
    (``FROM <g>`` / ``FROM NAMED <g>``), the windows are in ``windows`` in the
    order written. RSP-QL ``WINDOW <w> { P }`` is ``algebra.Window(w, P)`` in
    ``query.pattern``.
    """

    name: str
    language: str
    report: str
    output_stream: IRI | None
    windows: tuple[WindowSpec, ...]
    query: Query
    text: str


def is_registration(text: str) -> bool:
    """Whether ``text`` starts, after comments and BASE/PREFIX, with REGISTER.

    Meant for routing every request, so it never tokenizes the text."""
    return _REGISTRATION.match(text) is not None


def parse_registration(text: str, base: str | None = None) -> ContinuousQuery:
    """Parse a registration; raises ``SparqlSyntaxError`` with line and column."""
    return RegistrationParser(text, base).registration(text)


class RegistrationParser(QueryParser):
    """The query parser plus the registration head and the window clauses."""

    def __init__(self, text: str, base: str | None) -> None:
        super().__init__(text, base)
        self.language = ""
        self.windows: list[WindowSpec] = []
        self.window_names: set[IRI] = set()
        self.in_window = False

    def registration(self, original: str) -> ContinuousQuery:
        self.prologue()
        self.expect("REGISTER")
        head = self.tok[0]
        if head == "QUERY" or head == "STREAM":
            self.language, report = "csparql", "RSTREAM"
        elif head in _RSPQL_REPORTS:
            self.language, report = "rspql", head
        else:
            raise self.unexpected("QUERY, STREAM, RSTREAM, ISTREAM or DSTREAM")
        self.advance()
        name, name_iri = self._name()
        self.expect("AS")
        self.prologue()
        form_tok = self.tok
        form = form_tok[0]
        if form == "DESCRIBE":
            raise self.error("DESCRIBE cannot be registered: use SELECT, ASK or CONSTRUCT", form_tok)
        if head == "STREAM" and form != "CONSTRUCT":
            raise self.error("REGISTER STREAM needs a CONSTRUCT query (its triples are the stream)", form_tok)
        query = self.query()
        if not self.windows:
            raise self.error(
                "a continuous query needs at least one FROM STREAM / FROM NAMED WINDOW", form_tok
            )
        output = name_iri if form == "CONSTRUCT" and head != "QUERY" else None
        return ContinuousQuery(name, self.language, report, output, tuple(self.windows), query, original)

    # ------------------------------------------------------------------ head

    def _name(self) -> tuple[str, IRI]:
        """The name as written (an IRI's value, or a bare name) and as an IRI."""
        if self.tok[0] == "iri" or self.tok[0] == "pname":
            iri = self.iri()
            return iri.value, iri
        name = self._span(_BARE_NAME, "a query name (an IRI or a name like q1)").group()
        if self.base is None:
            return name, IRI(BARE_NAME_NAMESPACE + name)
        return name, IRI(self.resolve(name))

    # --------------------------------------------------- dataset and windows

    def _dataset(self) -> Dataset | None:
        """FROM clauses: stored graphs go to the Dataset, windows to ``self.windows``."""
        default: list[IRI] = []
        named: list[IRI] = []
        while self.accept("FROM"):
            if self.tok[0] == "STREAM":
                self._from_stream()
            elif self.accept("NAMED"):
                if self.tok[0] == "WINDOW":
                    self._from_named_window()
                else:
                    named.append(self.iri())
            else:
                default.append(self.iri())
        if not default and not named:
            return None
        return Dataset(tuple(default), tuple(named))

    def _from_stream(self) -> None:
        if self.language != "csparql":
            raise self.error(
                "FROM STREAM is C-SPARQL; RSP-QL declares FROM NAMED WINDOW <w> ON <stream> [...]"
            )
        self.advance()
        stream = self.iri()
        self.windows.append(self._window(stream, None))

    def _from_named_window(self) -> None:
        if self.language != "rspql":
            raise self.error(
                "FROM NAMED WINDOW is RSP-QL (REGISTER RSTREAM|ISTREAM|DSTREAM); "
                "C-SPARQL declares FROM STREAM <stream> [...]"
            )
        self.advance()
        name_tok = self.tok
        name = self.iri()
        if name in self.window_names:
            raise self.error(f"window <{name.value}> is declared twice", name_tok)
        self.expect("ON")
        stream = self.iri()
        self.window_names.add(name)
        self.windows.append(self._window(stream, name))

    def _window(self, stream: IRI, name: IRI | None) -> WindowSpec:
        """``[RANGE d STEP d]``, ``[RANGE d TUMBLING]``, ``[TRIPLES n]``, ``[RANGE TRIPLES n]``."""
        self.expect("[", "a window like [RANGE 10s STEP 1s]")
        if self.tok[0] == "RANGE" and self.peek_kind() == "TRIPLES":
            self.advance()
        if self.accept("TRIPLES"):
            spec = WindowSpec(stream, name, None, None, self._count())
        else:
            self.expect("RANGE", "RANGE or TRIPLES")
            range_ms = self._duration()
            if self.accept("TUMBLING"):
                step_ms = range_ms
            else:
                self.expect("STEP", "STEP or TUMBLING")
                step_ms = self._duration()
            spec = WindowSpec(stream, name, range_ms, step_ms, None)
        self.expect("]")
        return spec

    def _count(self) -> int:
        tok = self.expect("int", "a number of triples")
        if len(str(tok[1])) > 12:
            raise self.error("a count window holds at most 10^12 triples", tok)
        count = int(tok[1])  # type: ignore[arg-type]
        if count <= 0:
            raise self.error("a count window needs at least one triple", tok)
        return count

    def _duration(self) -> int:
        """A positive whole number of milliseconds, in C-SPARQL or ISO-8601 form."""
        tok = self.tok
        if self.text.startswith(("P", "p"), tok[2]):
            ms = self._iso_duration(tok)
        else:
            number, unit = self._span(_CSPARQL_SPAN, _DURATION).groups()
            if "." in number:
                raise self.error(f"window sizes are whole numbers of a unit, not {number!r}", tok)
            if len(number) > 15:
                raise self.error("a window size or step is at most 10^15 of its unit", tok)
            ms = Decimal(int(number) * _UNIT_MS[unit.lower()])
        if ms <= 0:
            raise self.error("a window size or step must be greater than zero", tok)
        if ms != ms.to_integral_value():
            raise self.error("a window size or step must be a whole number of milliseconds", tok)
        return int(ms)

    def _iso_duration(self, tok: Token) -> Decimal:
        match = self._span(_ISO_SPAN, _DURATION)
        days, hours, minutes, seconds = match.groups()
        if match.group().upper().endswith(("P", "T")):
            raise self.error(f"invalid ISO-8601 duration {match.group()!r}", tok)
        if any(len(part or "") > 15 for part in match.groups()):  # before Python converts a long number
            raise self.error("a window size or step is at most 10^15 of its unit", tok)
        whole = (int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes or 0)
        return (whole * 60 + Decimal(seconds or 0)) * 1000

    def _span(self, pattern: re.Pattern[str], what: str) -> re.Match[str]:
        """Match ``pattern`` on the text at the current token and consume the
        tokens it covers. Durations and bare names do not follow the SPARQL
        token boundaries (``PT0.5S`` is three tokens), so they are read from
        the text; a match that ends inside a token (``10sec``) is an error."""
        tok = self.tok
        match = pattern.match(self.text, tok[2])
        if match is None:
            raise self.unexpected(what)
        end = match.end()
        while self.tok[2] < end:
            if self.tok[3] > end:
                raise self.error(f"expected {what} but found {self.text[tok[2]:self.tok[3]]!r}", tok)
            self.advance()
        return match

    # --------------------------------------------------------------- WINDOW

    def _element(self, kind: str, pattern: Pattern, scope: Scope) -> Pattern:
        """``WINDOW <w> { P }`` becomes ``Window(w, P)``, joined like GRAPH."""
        if kind != "WINDOW":
            return super()._element(kind, pattern, scope)
        if self.language != "rspql":
            raise self.error("WINDOW patterns are RSP-QL (REGISTER RSTREAM|ISTREAM|DSTREAM)")
        if self.in_window:
            raise self.error("a WINDOW pattern cannot be nested in another WINDOW")
        self.advance()
        name_tok = self.tok
        name = self.iri()
        if name not in self.window_names:
            raise self.error(f"no window <{name.value}> is declared with FROM NAMED WINDOW", name_tok)
        self.in_window = True
        inner, inner_scope = self.graph_pattern()
        self.in_window = False
        scope.update(inner_scope)
        return join(pattern, Window(name, inner))
