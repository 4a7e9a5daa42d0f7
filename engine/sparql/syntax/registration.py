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

Between the name and ``AS`` a registration may choose when its windows are
reported (RSP-QL's report strategies, :class:`ReportStrategy`):
``REPORT ON WINDOW CLOSE`` (the default), ``REPORT ON NON-EMPTY CONTENT``,
``REPORT ON CONTENT CHANGE`` or ``REPORT EVERY 5s`` (periodic). The clause is
part of the text, so it is kept wherever the registration is (the journal,
a checkpoint); :func:`with_report_clause` writes it into a text for an HTTP
``report`` parameter.
"""

from __future__ import annotations

import math
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
    "REPORT_STRATEGIES",
    "ContinuousQuery",
    "ReportStrategy",
    "WindowSpec",
    "is_registration",
    "parse_registration",
    "with_report_clause",
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


#: the report strategies, by the name the HTTP ``report`` parameter gives them
REPORT_STRATEGIES = ("window-close", "non-empty", "content-change", "periodic")
#: what the HTTP ``period`` parameter may be: one duration, checked by the parser
_PERIOD = re.compile(r"[0-9]+(?:ms|s|m|h|d)|P[0-9A-Za-z.]+", re.I)
#: the head clause of each strategy but the periodic one (``REPORT EVERY d``)
_REPORT_CLAUSES = {"window-close": "REPORT ON WINDOW CLOSE", "non-empty": "REPORT ON NON-EMPTY CONTENT",
                   "content-change": "REPORT ON CONTENT CHANGE"}


@dataclass(frozen=True, slots=True)
class ReportStrategy:
    """When a window's result is reported (RSP4J's report strategies):
    ``window-close`` every window; ``non-empty`` only a window whose content
    (the items of its stream windows) is not empty; ``content-change`` only
    a window whose content differs from the last reported one's;
    ``periodic`` only the windows closing at a multiple of ``period_ms``."""

    name: str = "window-close"
    period_ms: int | None = None


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
    report_strategy: ReportStrategy = ReportStrategy()


def is_registration(text: str) -> bool:
    """Whether ``text`` starts, after comments and BASE/PREFIX, with REGISTER.

    Meant for routing every request, so it never tokenizes the text."""
    return _REGISTRATION.match(text) is not None


def parse_registration(text: str, base: str | None = None) -> ContinuousQuery:
    """Parse a registration; raises ``SparqlSyntaxError`` with line and column."""
    return RegistrationParser(text, base).registration(text)


def with_report_clause(text: str, name: str, period: str | None = None) -> str:
    """``text`` with the head clause choosing the strategy ``name`` (one of
    :data:`REPORT_STRATEGIES`; ``periodic`` with a ``period`` like ``5s`` or
    ``PT5S``) written before its ``AS``. ValueError for another name, a
    period that is not one duration, or one given to another strategy; a
    SparqlSyntaxError if the head is malformed or has a REPORT clause
    already (the two would disagree, or say it twice)."""
    if name not in REPORT_STRATEGIES:
        raise ValueError(f"unknown report strategy {name!r}: one of {', '.join(REPORT_STRATEGIES)}")
    if name == "periodic":
        if period is None or not _PERIOD.fullmatch(period):
            raise ValueError(f"the periodic report strategy needs a period like 5s or PT5S, not {period!r}")
        clause = f"REPORT EVERY {period}"
    elif period is not None:
        raise ValueError("a period is only for the periodic report strategy")
    else:
        clause = _REPORT_CLAUSES[name]
    parser = RegistrationParser(text, None)
    parser.head()
    if parser.tok[0] == "REPORT":
        raise parser.error("the registration chooses its report strategy already (REPORT ...): "
                           "leave out the 'report' parameter or the clause")
    at = parser.tok[2]
    # the parser reads the text with \u escapes resolved: the clause goes into that text
    return f"{parser.text[:at]}{clause} {parser.text[at:]}"


class RegistrationParser(QueryParser):
    """The query parser plus the registration head and the window clauses."""

    def __init__(self, text: str, base: str | None) -> None:
        super().__init__(text, base)
        self.language = ""
        self.windows: list[WindowSpec] = []
        self.window_names: set[IRI] = set()
        self.in_window = False

    def head(self) -> tuple[str, str, str, IRI]:
        """``REGISTER kind name``: (kind, report, name, name as an IRI)."""
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
        return (head, report, *self._name())

    def registration(self, original: str) -> ContinuousQuery:
        head, report, name, name_iri = self.head()
        strategy_tok = self.tok
        strategy = self._report_strategy()
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
        if strategy.period_ms is not None:
            self._check_period(strategy.period_ms, strategy_tok)
        return ContinuousQuery(name, self.language, report, output, tuple(self.windows), query, original,
                               strategy)

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

    def _report_strategy(self) -> ReportStrategy:
        """``REPORT ON WINDOW CLOSE | ON NON-EMPTY CONTENT | ON CONTENT CHANGE | EVERY d``, if written."""
        if not self.accept("REPORT"):
            return ReportStrategy()
        if self.accept("EVERY"):
            return ReportStrategy("periodic", self._duration())
        self.expect("ON", "ON ... or EVERY after REPORT")
        if self.accept("WINDOW"):
            self.expect("CLOSE", "CLOSE")
            return ReportStrategy("window-close")
        if self.accept("NON"):
            self.accept("-")
            self.expect("EMPTY", "EMPTY")
            self.expect("CONTENT", "CONTENT")
            return ReportStrategy("non-empty")
        if self.accept("CONTENT"):
            self.expect("CHANGE", "CHANGE")
            return ReportStrategy("content-change")
        raise self.unexpected("WINDOW CLOSE, NON-EMPTY CONTENT or CONTENT CHANGE")

    def _check_period(self, period_ms: int, tok: Token) -> None:
        """A period is a whole number of the query's clock unit (the STEPs'
        greatest common divisor), so that windows close on it; count windows
        have no clock in time."""
        steps = [w.step_ms for w in self.windows]
        if any(step is None for step in steps):
            raise self.error("REPORT EVERY needs time windows (a count window closes by triples, not time)",
                             tok)
        unit = math.gcd(*steps)  # type: ignore[arg-type]
        if period_ms % unit:
            raise self.error(f"the report period ({period_ms} ms) must be a multiple of the windows' "
                             f"STEP ({unit} ms), so that windows close at its multiples", tok)

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
