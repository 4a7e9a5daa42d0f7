"""The SPARQL algebra: the contract between the parser and the executor.

The parser turns query text into these nodes following the translation of
SPARQL 1.1 section 18.2 (graph patterns ``{ ... }`` become Join/LeftJoin/Filter/...,
aggregates are lifted into a GroupBy node, the solution modifiers wrap the
pattern in the order ToList, OrderBy, Project, Distinct/Reduced, Slice). The
executor evaluates them; the planner may reorder what it is allowed to.

Conventions:
- Terms are :mod:`engine.rdf.terms` objects; variables are ``Variable``.
- Aggregates in SELECT/HAVING/ORDER BY are replaced by fresh variables named
  ``.aggN`` bound by the ``GroupBy`` node (a dot cannot start a user variable).
- Blank nodes in query patterns are turned into variables named ``.bN``
  (they are non-distinguished variables); blank nodes in CONSTRUCT templates
  and INSERT templates stay ``BNode`` (fresh per solution).
- Expressions are ``Expr`` nodes; a constant is ``TermExpr``, a variable
  ``VarExpr``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.rdf import IRI, BNode, Literal, Term, Variable

TermOrVar = IRI | BNode | Literal | Variable


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class TermExpr:
    """A constant RDF term."""

    term: Term


@dataclass(frozen=True, slots=True)
class VarExpr:
    """The value of a variable (unbound raises an expression error)."""

    var: Variable


@dataclass(frozen=True, slots=True)
class BinaryExpr:
    """``op`` is one of ``|| && = != < > <= >= + - * /``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class UnaryExpr:
    """``op`` is one of ``! + -``."""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class InExpr:
    """``expr IN (list)`` or ``expr NOT IN (list)``."""

    expr: Expr
    options: tuple[Expr, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class CallExpr:
    """A built-in call; ``name`` is the upper-case keyword (``STR``, ``REGEX``,
    ``BOUND``, ``IF``, ``COALESCE``, ``CONCAT``, ``BNODE``, ``NOW``, ...)."""

    name: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class FunctionExpr:
    """A call by IRI: XSD casts (``xsd:integer(?x)``) or extension functions."""

    iri: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class ExistsExpr:
    """``EXISTS { pattern }`` / ``NOT EXISTS { pattern }``."""

    pattern: Pattern
    negated: bool = False


Expr = TermExpr | VarExpr | BinaryExpr | UnaryExpr | InExpr | CallExpr | FunctionExpr | ExistsExpr


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``name`` is COUNT, SUM, MIN, MAX, AVG, SAMPLE or GROUP_CONCAT.

    ``expr`` is None for ``COUNT(*)``. ``separator`` only for GROUP_CONCAT
    (default a single space).
    """

    name: str
    expr: Expr | None
    distinct: bool = False
    separator: str = " "


# --------------------------------------------------------------- property paths


@dataclass(frozen=True, slots=True)
class PathLink:
    iri: IRI


@dataclass(frozen=True, slots=True)
class PathInverse:
    path: Path


@dataclass(frozen=True, slots=True)
class PathSequence:
    steps: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class PathAlternative:
    options: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class PathRepeat:
    """``min`` is 0 or 1; ``max`` is 1 or None (unbounded): ``?`` ``*`` ``+``."""

    path: Path
    min: int
    max: int | None


@dataclass(frozen=True, slots=True)
class PathNegated:
    """``!(a|^b)``: forward IRIs and inverse IRIs that must not be used."""

    forward: tuple[IRI, ...]
    inverse: tuple[IRI, ...]


Path = PathLink | PathInverse | PathSequence | PathAlternative | PathRepeat | PathNegated


# ------------------------------------------------------------------- patterns


@dataclass(frozen=True, slots=True)
class TripleTermPattern:
    """An RDF 1.2 triple term ``<<( s p o )>>`` with variables in it, as the
    subject or object of a triple pattern, a path pattern or a template.
    A triple term without variables is a :class:`engine.rdf.TripleTerm`
    constant instead. In a WHERE pattern the parser replaces it by a fresh
    variable whose components are taken apart after the BGP
    (:mod:`engine.sparql.syntax.triple_terms`); a template builds it per solution."""

    subject: TermOrVar | TripleTermPattern
    predicate: TermOrVar
    object: TermOrVar | TripleTermPattern


@dataclass(frozen=True, slots=True)
class TriplePattern:
    subject: TermOrVar
    predicate: TermOrVar
    object: TermOrVar


@dataclass(frozen=True, slots=True)
class BGP:
    """A basic graph pattern (possibly empty: the one solution that binds nothing)."""

    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True, slots=True)
class PathPattern:
    """``subject path object`` for a path that is not a plain IRI (the parser
    expands sequences and inverses of plain IRIs into triples where 18.2.2.4
    says so; what is left is evaluated by the executor)."""

    subject: TermOrVar
    path: Path
    object: TermOrVar


@dataclass(frozen=True, slots=True)
class Join:
    left: Pattern
    right: Pattern


@dataclass(frozen=True, slots=True)
class LeftJoin:
    """OPTIONAL; ``condition`` is the FILTER inside the optional graph pattern, if any."""

    left: Pattern
    right: Pattern
    condition: Expr | None = None


@dataclass(frozen=True, slots=True)
class Filter:
    condition: Expr
    pattern: Pattern


@dataclass(frozen=True, slots=True)
class Union_:
    left: Pattern
    right: Pattern


@dataclass(frozen=True, slots=True)
class Minus:
    left: Pattern
    right: Pattern


@dataclass(frozen=True, slots=True)
class Graph:
    """``GRAPH name { pattern }``; name is an IRI or a Variable."""

    name: IRI | Variable
    pattern: Pattern


@dataclass(frozen=True, slots=True)
class Extend:
    """BIND(expr AS var), and SELECT expressions."""

    pattern: Pattern
    var: Variable
    expr: Expr


@dataclass(frozen=True, slots=True)
class Window:
    """RSP-QL ``WINDOW <name> { pattern }``: the pattern matches the content of
    the named window of a continuous query."""

    name: IRI
    pattern: Pattern


@dataclass(frozen=True, slots=True)
class Values:
    """Inline data. ``rows`` hold a term or None (UNDEF) per variable."""

    vars: tuple[Variable, ...]
    rows: tuple[tuple[Term | None, ...], ...]


@dataclass(frozen=True, slots=True)
class Service:
    """``SERVICE [SILENT] endpoint { pattern }``; ``query_text`` is the text
    of a SELECT query equivalent to the inner graph pattern, to send to the endpoint
    (the parser builds it from the original text, prefixes included)."""

    endpoint: IRI | Variable
    pattern: Pattern
    silent: bool
    query_text: str


@dataclass(frozen=True, slots=True)
class GroupBy:
    """GROUP BY plus aggregation. ``keys`` are (expr, var-or-None); a key
    ``GROUP BY (expr AS ?v)`` binds ``?v``, a plain ``GROUP BY ?v`` is
    ``(VarExpr(v), v)``. ``aggregates`` bind the ``.aggN`` variables. With no
    GROUP BY but aggregates, ``keys`` is empty (one group, also when the input
    is empty)."""

    pattern: Pattern
    keys: tuple[tuple[Expr, Variable | None], ...]
    aggregates: tuple[tuple[Variable, Aggregate], ...]


@dataclass(frozen=True, slots=True)
class OrderBy:
    """``conditions`` are (expr, ascending)."""

    pattern: Pattern
    conditions: tuple[tuple[Expr, bool], ...]


@dataclass(frozen=True, slots=True)
class Project:
    pattern: Pattern
    vars: tuple[Variable, ...]


@dataclass(frozen=True, slots=True)
class Distinct:
    pattern: Pattern


@dataclass(frozen=True, slots=True)
class Reduced:
    pattern: Pattern


@dataclass(frozen=True, slots=True)
class Slice:
    pattern: Pattern
    offset: int = 0
    limit: int | None = None


Pattern = (
    BGP | PathPattern | Join | LeftJoin | Filter | Union_ | Minus | Graph | Window | Extend | Values
    | Service | GroupBy | OrderBy | Project | Distinct | Reduced | Slice
)


# -------------------------------------------------------------------- queries


@dataclass(frozen=True, slots=True)
class Dataset:
    """FROM / FROM NAMED (query) or USING / USING NAMED (update)."""

    default: tuple[IRI, ...] = ()
    named: tuple[IRI, ...] = ()


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query.

    ``form`` is SELECT, CONSTRUCT, ASK or DESCRIBE. ``pattern`` is the full
    algebra including solution modifiers (for SELECT it ends in Project).
    ``variables`` are the result variables of a SELECT (in order).
    ``template`` is the CONSTRUCT template; ``describe`` the DESCRIBE targets
    (IRIs or variables; empty for ``DESCRIBE *`` means all in-scope vars,
    which the parser expands).
    """

    form: str
    pattern: Pattern
    variables: tuple[Variable, ...] = ()
    template: tuple[TriplePattern, ...] = ()
    describe: tuple[IRI | Variable, ...] = ()
    dataset: Dataset | None = None
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


# -------------------------------------------------------------------- updates


@dataclass(frozen=True, slots=True)
class Quad:
    """A triple (pattern) in a graph; ``graph`` None is the default graph."""

    subject: TermOrVar
    predicate: TermOrVar
    object: TermOrVar
    graph: IRI | Variable | None = None


@dataclass(frozen=True, slots=True)
class InsertData:
    quads: tuple[Quad, ...]


@dataclass(frozen=True, slots=True)
class DeleteData:
    quads: tuple[Quad, ...]


@dataclass(frozen=True, slots=True)
class DeleteWhere:
    quads: tuple[Quad, ...]


@dataclass(frozen=True, slots=True)
class Modify:
    """DELETE/INSERT ... WHERE, with optional WITH and USING clauses."""

    delete: tuple[Quad, ...]
    insert: tuple[Quad, ...]
    where: Pattern
    with_graph: IRI | None = None
    using: Dataset | None = None


@dataclass(frozen=True, slots=True)
class Load:
    source: IRI
    graph: IRI | None
    silent: bool = False


#: graph target of CLEAR / DROP: an IRI, or "DEFAULT", "NAMED", "ALL"
GraphTarget = IRI | str


@dataclass(frozen=True, slots=True)
class Clear:
    target: GraphTarget
    silent: bool = False


@dataclass(frozen=True, slots=True)
class Drop:
    target: GraphTarget
    silent: bool = False


@dataclass(frozen=True, slots=True)
class Create:
    graph: IRI
    silent: bool = False


@dataclass(frozen=True, slots=True)
class Transfer:
    """ADD, COPY or MOVE (``op``); ``source``/``target`` IRI or "DEFAULT"."""

    op: str
    source: GraphTarget
    target: GraphTarget
    silent: bool = False


UpdateOperation = InsertData | DeleteData | DeleteWhere | Modify | Load | Clear | Drop | Create | Transfer


@dataclass(frozen=True, slots=True)
class Update:
    """A request of one or more operations, applied atomically in order."""

    operations: tuple[UpdateOperation, ...]
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
