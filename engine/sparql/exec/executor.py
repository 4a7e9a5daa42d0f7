"""Evaluation of the SPARQL algebra over one snapshot of the store.

Each algebra node becomes a :class:`Solutions` of ID columns. Basic graph patterns
are answered by graph exploration: patterns are taken in the planner's
order and each one extends every current row through the store's sorted
neighbour lists in one vectorised step. Expressions (FILTER, BIND, ORDER BY
keys, aggregates) are evaluated on decoded terms, row by row, through
:mod:`engine.sparql.expr.evaluate`; the columns they need are decoded once per
operator, not once per row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from engine.rdf.terms import IRI, BNode, Literal, Term, Variable
from engine.sparql import algebra as A
from engine.sparql.exec.group_by import count_literals, fast_count, fast_numeric, group_ids
from engine.sparql.exec.paths import evaluate_path
from engine.sparql.exec.query_terms import QueryTerms
from engine.sparql.exec.solutions import (
    Solutions,
    concat,
    cross,
    distinct,
    join,
    join_pairs,
    left_outer,
    merge,
    minus,
)
from engine.sparql.expr.aggregates import compute_aggregate
from engine.sparql.expr.evaluate import EvalContext, ExprError, effective_boolean_value, evaluate, order_key
from engine.sparql.expr.variables import expression_variables
from engine.sparql.plan.bgp_order import order_patterns
from engine.store.memory_graph import MemoryGraph


class QueryDataset:
    """The RDF dataset a query runs against: one default graph and named graphs;
    for an RSP-QL continuous query also its windows, by window IRI."""

    def __init__(
        self,
        default: MemoryGraph,
        named: dict[int, MemoryGraph],
        windows: dict[IRI, MemoryGraph] | None = None,
    ) -> None:
        self.default = default
        self.named = named
        self.windows = windows or {}


class QueryCancelled(Exception):
    """The query was stopped from outside (time limit, client gone)."""


class Executor:
    """Evaluates algebra nodes; one instance per query execution.

    ``should_stop`` is polled before every operator: a query over its time
    limit or whose client went away stops within one operator's work.
    """

    def __init__(
        self,
        terms: QueryTerms,
        dataset: QueryDataset,
        ctx: EvalContext,
        service_client=None,
        should_stop: Callable[[], bool] | None = None,
    ):
        self.should_stop = should_stop
        self._stats_cache: dict[tuple[int, int], tuple[int, int, int]] = {}
        self.terms = terms
        self.dataset = dataset
        self.active = dataset.default
        self.ctx = ctx
        self.ctx.exists = self._exists
        self.service_client = service_client
        self._dispatch = {
            A.BGP: self._bgp,
            A.PathPattern: self._path,
            A.Join: self._join,
            A.LeftJoin: self._left_join,
            A.Filter: self._filter,
            A.Union_: self._union,
            A.Minus: self._minus,
            A.Graph: self._graph,
            A.Window: self._window,
            A.Extend: self._extend,
            A.Values: self._values,
            A.Service: self._service,
            A.Group: self._group,
            A.OrderBy: self._order_by,
            A.Project: self._project,
            A.Distinct: lambda node: distinct(self.run(node.pattern)),
            A.Reduced: lambda node: distinct(self.run(node.pattern)),
            A.Slice: self._slice,
        }

    def run(self, node: A.Pattern) -> Solutions:
        if self.should_stop is not None and self.should_stop():
            raise QueryCancelled("query cancelled")
        return self._dispatch[node.__class__](node)

    # ---------------------------------------------------------------- leaves
    def _constant_id(self, term) -> int:
        return self.terms.encode(term)

    def _estimate(self, pattern: A.TriplePattern, bound: set[str], rows: float) -> float:
        """Rows after extending ``rows`` rows through ``pattern`` (Strider: exact
        counts of the pattern's constants from the store, then the average
        fan-out of the predicate for each position already bound)."""
        positions = (pattern.subject, pattern.predicate, pattern.object)
        matches, subjects, objects = self._pattern_stats(pattern)
        if matches == 0:
            return 0.0
        is_bound = [isinstance(t, Variable) and t.name in bound for t in positions]
        if not any(is_bound):
            return rows * matches
        estimate = float(matches)
        if is_bound[0]:
            estimate /= max(subjects, 1)
        if is_bound[2]:
            estimate /= max(objects, 1)
        if is_bound[1]:
            estimate /= max(len(self.active) ** 0.5, 1.0)
        return rows * estimate

    def _pattern_stats(self, pattern: A.TriplePattern) -> tuple[int, int, int]:
        """(matches of the pattern's constants, distinct subjects and objects of its
        predicate) in the active graph; asked again at every greedy step, so kept."""
        key = (id(pattern), id(self.active))  # both live as long as this executor
        found = self._stats_cache.get(key)
        if found is None:
            positions = (pattern.subject, pattern.predicate, pattern.object)
            constants = [None if isinstance(t, Variable) else self._constant_id(t) for t in positions]
            matches = self.active.count(*constants)
            stats = getattr(self.active, "degree_stats", None)
            _, subjects, objects = stats(constants[1]) if stats and matches else (matches, 1, 1)
            found = self._stats_cache[key] = (matches, subjects, objects)
        return found

    def _bgp(self, node: A.BGP, table: Solutions | None = None) -> Solutions:
        if table is None:
            table = Solutions.unit()
        graph = self.active
        patterns = node.triples
        if len(patterns) > 1:
            patterns = order_patterns(patterns, self._estimate, set(table.columns))
        for pattern in patterns:
            table = self._extend_with_pattern(table, pattern, graph)
            if not table.length:
                break
        return table if table.length else _no_solutions(node, table)

    def _extend_with_pattern(
        self, table: Solutions, pattern: A.TriplePattern, graph: MemoryGraph
    ) -> Solutions:
        positions = (pattern.subject, pattern.predicate, pattern.object)
        bound_vars = [isinstance(t, Variable) and t.name in table.columns for t in positions]
        if not any(bound_vars):
            # independent of the rows so far: match once, then combine
            args = [
                None if isinstance(t, Variable) else np.array([self._constant_id(t)], dtype=np.int64)
                for t in positions
            ]
            rows, s, p, o = graph.match(*args, n_rows=1)
            matched = self._pattern_table(positions, (s, p, o), len(rows), {})
            return cross(table, matched) if table.columns else matched
        n = table.length
        args = []
        for t, is_bound in zip(positions, bound_vars, strict=True):
            if isinstance(t, Variable):
                args.append(table.columns[t.name] if is_bound else None)
            else:
                args.append(np.full(n, self._constant_id(t), dtype=np.int64))
        rows, s, p, o = graph.match(*args, n_rows=n)
        base = table.take(rows)
        return self._pattern_table(positions, (s, p, o), len(rows), base.columns)

    @staticmethod
    def _pattern_table(positions, values, length: int, columns: dict[str, np.ndarray]) -> Solutions:
        """Add the columns of the free variables of a matched pattern; a variable
        that occurs twice in the pattern must have the same value in both places."""
        columns = dict(columns)
        keep = None
        for t, col in zip(positions, values, strict=True):
            if not isinstance(t, Variable):
                continue
            if t.name in columns:
                same = columns[t.name] == col
                keep = same if keep is None else keep & same
            else:
                columns[t.name] = col
        result = Solutions(columns, length)
        return result.mask(keep) if keep is not None else result

    def _path(self, node: A.PathPattern) -> Solutions:
        return evaluate_path(node, self.active, self.terms)

    # -------------------------------------------------------------- combining
    def _join(self, node: A.Join) -> Solutions:
        left = self.run(node.left)
        if not left.length:
            return left
        if isinstance(node.right, A.BGP) and _fully_bound(left, node.right):
            # graph exploration continues from the rows found so far (bind join)
            return self._bgp(node.right, left)
        right = node.right
        if isinstance(right, A.Service) and isinstance(right.endpoint, Variable):
            return join(left, self._services_of(right, left))
        return join(left, self.run(right))

    def _services_of(self, node: A.Service, left: Solutions) -> Solutions:
        """``SERVICE ?endpoint``: call each endpoint IRI the rows so far bind
        (SPARQL 1.1 Federated Query leaves an unbound endpoint an error)."""
        var = node.endpoint.name
        endpoints = np.unique(left.column(var))
        parts = []
        decoded = self.terms.decode_column(endpoints)
        for endpoint_id, endpoint in zip(endpoints.tolist(), decoded, strict=True):
            if not isinstance(endpoint, IRI):
                if node.silent:
                    continue
                raise ExprError(f"SERVICE ?{var}: the endpoint is {endpoint!r}, not an IRI")
            part = self._service(A.Service(endpoint, node.pattern, node.silent, node.query_text))
            parts.append(part.with_column(var, np.full(part.length, endpoint_id, dtype=np.int64)))
        return concat(parts) if parts else Solutions.empty([var])

    def _left_join(self, node: A.LeftJoin) -> Solutions:
        left = self.run(node.left)
        if not left.length:
            return Solutions.empty(list(dict.fromkeys([*left.columns, *_pattern_vars(node.right)])))
        if isinstance(node.right, A.BGP) and _fully_bound(left, node.right):
            # explore the optional part from each left row instead of matching it everywhere
            tagged = self._bgp(node.right, left.with_column(_ROW, np.arange(left.length, dtype=np.int64)))
            lidx = tagged.columns.pop(_ROW)
            joined = tagged
        else:
            right = self.run(node.right)
            lidx, ridx = join_pairs(left, right)
            joined = merge(left, right, lidx, ridx)
        if node.condition is not None and joined.length:
            keep = self._truth_mask(node.condition, joined)
            joined, lidx = joined.mask(keep), lidx[keep]
        if not joined.length:
            joined = Solutions.empty(list(dict.fromkeys([*left.columns, *_pattern_vars(node.right)])))
        return left_outer(left, joined, lidx)

    def _filter(self, node: A.Filter) -> Solutions:
        table = self.run(node.pattern)
        if not table.length:
            return table
        return table.mask(self._truth_mask(node.condition, table))

    def _union(self, node: A.Union_) -> Solutions:
        return concat([self.run(node.left), self.run(node.right)])

    def _minus(self, node: A.Minus) -> Solutions:
        left = self.run(node.left)
        if not left.length:
            return left
        return minus(left, self.run(node.right))

    def _graph(self, node: A.Graph) -> Solutions:
        saved = self.active
        try:
            if isinstance(node.name, IRI):
                graph = self.dataset.named.get(self.terms.encode(node.name))
                if graph is None:
                    return Solutions.empty()
                self.active = graph
                return self.run(node.pattern)
            var = node.name.name
            parts = []
            for graph_id, graph in self.dataset.named.items():
                self.active = graph
                part = self.run(node.pattern)
                if var in part.columns:
                    # rows that bind the graph variable must agree with the graph
                    column = part.columns[var]
                    part = part.mask((column == graph_id) | (column == 0))
                part = part.with_column(var, np.full(part.length, graph_id, dtype=np.int64))
                parts.append(part)
            return concat(parts) if parts else Solutions.empty([var])
        finally:
            self.active = saved

    def _window(self, node: A.Window) -> Solutions:
        graph = self.dataset.windows.get(node.name)
        if graph is None:
            raise ExprError(f"unknown window <{node.name.value}>")
        saved = self.active
        self.active = graph
        try:
            return self.run(node.pattern)
        finally:
            self.active = saved

    def _values(self, node: A.Values) -> Solutions:
        columns = {}
        for i, var in enumerate(node.vars):
            columns[var.name] = self.terms.encode_column([row[i] for row in node.rows])
        return Solutions(columns, len(node.rows))

    def _service(self, node: A.Service) -> Solutions:
        if self.service_client is None:
            raise ExprError("SERVICE is not available in this context")
        return self.service_client(node, self.terms)

    # ------------------------------------------------------------ expressions
    def _rows(self, table: Solutions, variables: list[str] | None = None) -> list[dict[Variable, Term]]:
        """Decode the table into per-row mappings (only ``variables`` if given)."""
        names = table.variables if variables is None else [v for v in variables if v in table.columns]
        decoded = [(Variable(v), self.terms.decode_column(table.columns[v])) for v in names]
        rows = []
        for i in range(table.length):
            row = {}
            for var, values in decoded:
                term = values[i]
                if term is not None:
                    row[var] = term
            rows.append(row)
        return rows

    def _distinct_inputs(self, expr: A.Expr, table: Solutions):
        """``(rows, inverse)``: one decoded row per distinct combination of the
        values ``expr`` reads, and for each table row the index of its
        combination; None when the expression must see every row (EXISTS,
        RAND, BNODE, ...). A FILTER over a million rows with ten thousand
        distinct names evaluates ten thousand times."""
        needed = expression_variables(expr)
        if needed is None:
            return None
        names = sorted(v for v in needed if v in table.columns)
        if not names:
            return [{}], np.zeros(table.length, dtype=np.int64)
        if len(names) == 1:
            distinct, inverse = np.unique(table.columns[names[0]], return_inverse=True)
            distinct = distinct.reshape(-1, 1)
        else:
            stacked = np.stack([table.columns[n] for n in names], axis=1)
            distinct, inverse = np.unique(stacked, axis=0, return_inverse=True)
        decoded = Solutions({n: distinct[:, i] for i, n in enumerate(names)}, len(distinct))
        return self._rows(decoded), inverse.reshape(-1)

    def _evaluations(self, expr: A.Expr, table: Solutions) -> tuple[list[Term | None], np.ndarray]:
        """Values of ``expr`` (None for an error) and, per table row, the index
        of its value."""
        inputs = self._distinct_inputs(expr, table)
        if inputs is None:
            rows, inverse = self._rows(table), np.arange(table.length)
        else:
            rows, inverse = inputs
        ctx = self.ctx
        out: list[Term | None] = []
        for row in rows:
            ctx.new_row()
            try:
                out.append(evaluate(expr, row, ctx))
            except ExprError:
                out.append(None)
        return out, inverse

    def _encoded_values(self, expr: A.Expr, table: Solutions) -> np.ndarray:
        """The IDs of ``expr``'s value on every row (0 where it is an error)."""
        values, inverse = self._evaluations(expr, table)
        return self.terms.encode_column(values)[inverse]

    def _truth_mask(self, expr: A.Expr, table: Solutions) -> np.ndarray:
        """Rows where ``expr`` is true (an error counts as not true, as FILTER
        wants). ``&&`` / ``||`` split, so each side can take the vectorised
        path and the second side is only evaluated on the rows still open:
        ``A && B`` is true exactly where both are, ``A || B`` where either is,
        whatever errors the other side raises."""
        if isinstance(expr, A.BinaryExpr) and expr.op in ("&&", "||"):
            first = self._truth_mask(expr.left, table)
            open_rows = first if expr.op == "&&" else ~first
            if not open_rows.any():
                return first
            result = first.copy()
            result[open_rows] = self._truth_mask(expr.right, table.mask(open_rows))
            return result
        fast = self._fast_mask(expr, table)
        if fast is not None:
            return fast
        values, inverse = self._evaluations(expr, table)
        truth = np.zeros(len(values), dtype=bool)
        for i, value in enumerate(values):
            if value is not None:
                try:
                    truth[i] = effective_boolean_value(value)
                except ExprError:
                    pass
        return truth[inverse]

    def _fast_mask(self, expr: A.Expr, table: Solutions) -> np.ndarray | None:
        """Vectorised FILTER for ``?x op number`` and ``?x = <iri>`` / ``?x != <iri>``
        over columns whose terms allow it; None when the general path is needed."""
        if not isinstance(expr, A.BinaryExpr) or expr.op not in _COMPARE:
            return None
        left, right = expr.left, expr.right
        if isinstance(left, A.TermExpr) and isinstance(right, A.VarExpr):
            left, right = right, left
            op = _FLIP[expr.op]
        else:
            op = expr.op
        if not isinstance(left, A.VarExpr) or left.var.name not in table.columns:
            return None
        column = table.columns[left.var.name]
        if isinstance(right, A.TermExpr) and isinstance(right.term, Literal):
            number = self.terms.numbers(np.array([self.terms.encode(right.term)]))[0]
            if np.isnan(number):
                return None
            values = self.terms.numbers(column)
            if np.isnan(values).any():
                return None
            return _COMPARE[op](values, number)
        if isinstance(right, A.TermExpr) and isinstance(right.term, IRI) and op in ("=", "!="):
            if (column == 0).any():
                return None
            return _COMPARE[op](column, self.terms.encode(right.term))
        return None

    def _extend(self, node: A.Extend) -> Solutions:
        """BIND / SELECT expressions. Row-scoped ones (BNODE, RAND, ...) in a
        chain of Extends are evaluated row by row, all expressions of one
        solution together: ``BNODE("x")`` must give the same blank node in every
        expression of the same solution. Others once per distinct input."""
        chain: list[A.Extend] = []
        inner: A.Pattern = node
        while isinstance(inner, A.Extend):
            chain.append(inner)
            inner = inner.pattern
        chain.reverse()
        table = self.run(inner)
        if not table.length:
            for ext in chain:
                table = table.with_column(ext.var.name, np.zeros(0, dtype=np.int64))
            return table
        if all(expression_variables(ext.expr) is not None for ext in chain):
            # nothing row-scoped: one expression at a time, once per distinct input
            for ext in chain:
                if isinstance(ext.expr, A.VarExpr):
                    values = table.column(ext.expr.var.name).copy()
                else:
                    values = self._encoded_values(ext.expr, table)
                table = table.with_column(ext.var.name, values)
            return table
        outputs: list[list[Term | None]] = [[] for _ in chain]
        ctx = self.ctx
        for row in self._rows(table):
            ctx.new_row()
            for ext, out in zip(chain, outputs, strict=True):
                try:
                    value = evaluate(ext.expr, row, ctx)
                    row[ext.var] = value
                except ExprError:
                    value = None
                out.append(value)
        for ext, out in zip(chain, outputs, strict=True):
            table = table.with_column(ext.var.name, self.terms.encode_column(out))
        return table

    def _exists(self, pattern: A.Pattern, row: Mapping[Variable, Term]) -> bool:
        """EXISTS: substitute the row's bindings into the pattern, as 18.6 defines it."""
        saved_ctx_exists = self.ctx.exists
        try:
            bound = Solutions(
                {v.name: np.array([self.terms.encode(t)], dtype=np.int64) for v, t in row.items()}, 1
            )
            result = self.run(_substitute(pattern, row))
            if not result.length:
                return False
            return join(bound, result).length > 0 if bound.columns else True
        finally:
            self.ctx.exists = saved_ctx_exists

    # -------------------------------------------------------- aggregation, modifiers
    def _group(self, node: A.Group) -> Solutions:
        table = self.run(node.pattern)
        key_names: list[str] = []
        key_columns: list[np.ndarray] = []
        for i, (expr, var) in enumerate(node.keys):
            key_names.append(var.name if var is not None else f".key{i}")
            if isinstance(expr, A.VarExpr):
                key_columns.append(table.column(expr.var.name))
            else:
                key_columns.append(self._encoded_values(expr, table))
        visible = [k for k in key_names if not k.startswith(".key")]
        if key_names and not table.length:
            return Solutions.empty([*visible, *(v.name for v, _ in node.aggregates)])
        first, group_of = group_ids(key_columns, table.length)
        n_groups = len(first)
        out = {k: c[first] for k, c in zip(key_names, key_columns, strict=True) if not k.startswith(".key")}
        members: list[list[dict]] | None = None
        for var, agg in node.aggregates:
            counts = fast_count(agg, table, group_of, n_groups)
            if counts is not None:
                out[var.name] = count_literals(counts, self.terms.encode_column)
                continue
            numbers = fast_numeric(agg, table, group_of, n_groups, self.terms)
            if numbers is not None:
                out[var.name] = self.terms.encode_column(numbers)
                continue
            if members is None:
                members = self._group_members(node, table, group_of, n_groups)
            values = []
            for group_rows in members:
                self.ctx.new_row()
                try:
                    values.append(compute_aggregate(agg, group_rows, self.ctx))
                except ExprError:
                    values.append(None)
            out[var.name] = self.terms.encode_column(values)
        return Solutions(out, n_groups)

    def _group_members(self, node: A.Group, table: Solutions, group_of: np.ndarray, n_groups: int):
        """Decoded rows per group, with only the variables the aggregates read."""
        needed: set[str] | None = set()
        for _, agg in node.aggregates:
            names = expression_variables(agg.expr) if agg.expr is not None else set(table.columns)
            needed = None if (names is None or needed is None) else needed | names
        rows = self._rows(table, None if needed is None else sorted(needed))
        members: list[list[dict]] = [[] for _ in range(n_groups)]
        for row, g in zip(rows, group_of.tolist(), strict=True):
            members[g].append(row)
        return members

    def _order_by(self, node: A.OrderBy) -> Solutions:
        table = self.run(node.pattern)
        if table.length <= 1:
            return table
        sort_keys = []
        for expr, ascending in node.conditions:
            if isinstance(expr, A.VarExpr):
                ids = table.column(expr.var.name)
            else:
                ids = self._encoded_values(expr, table)
            ranks = self._ranks(ids)
            sort_keys.append(ranks if ascending else -ranks)
        # np.lexsort is stable and takes its primary key last
        return table.take(np.lexsort(sort_keys[::-1]))

    def _ranks(self, ids: np.ndarray) -> np.ndarray:
        """A number per row that sorts like ORDER BY's order of the row's term.

        All-numeric columns sort by value directly; otherwise each distinct
        term is ranked once (Python over distinct terms, not rows)."""
        numbers = self.terms.numbers(ids)
        if not np.isnan(numbers).any():
            return numbers
        distinct_ids, inverse = np.unique(ids, return_inverse=True)
        keys = [order_key(t) for t in self.terms.decode_column(distinct_ids)]
        ranked = sorted(range(len(keys)), key=keys.__getitem__)
        rank_of = np.empty(len(keys), dtype=np.int64)
        rank = 0
        for position, i in enumerate(ranked):
            if position and keys[i] != keys[ranked[position - 1]]:
                rank += 1
            rank_of[i] = rank
        return rank_of[inverse.reshape(-1)]

    def _project(self, node: A.Project) -> Solutions:
        return self.run(node.pattern).project([v.name for v in node.vars])

    def _slice(self, node: A.Slice) -> Solutions:
        end = None if node.limit is None else node.offset + node.limit
        table = self._first_rows(node.pattern, end) if end is not None else None
        if table is None:
            table = self.run(node.pattern)
        return table.take(np.arange(table.length)[node.offset : end])

    def _first_rows(self, node: A.Pattern, needed: int) -> Solutions | None:
        """LIMIT without ORDER BY: for ``[Project] Filter* BGP``, explore the
        BGP's first pattern a chunk at a time and stop once ``needed`` rows
        passed the filters, instead of answering the whole pattern first.
        None when the pattern has another shape (the caller runs it whole)."""
        project = node if isinstance(node, A.Project) else None
        inner = node.pattern if project else node
        conditions = []
        while isinstance(inner, A.Filter):
            conditions.append(inner.condition)
            inner = inner.pattern
        if not isinstance(inner, A.BGP) or not inner.triples:
            return None
        parts, found = [], 0
        for chunk in self._bgp_chunks(inner):
            for condition in reversed(conditions):  # innermost FILTER first
                if chunk.length:
                    chunk = chunk.mask(self._truth_mask(condition, chunk))
            parts.append(chunk)
            found += chunk.length
            if found >= needed:
                break
        table = concat(parts) if found else _no_solutions(inner, Solutions.unit())
        return table.project([v.name for v in project.vars]) if project else table

    def _bgp_chunks(self, node: A.BGP):
        """The BGP's solutions in chunks: the first pattern's matches, FIRST_CHUNK
        at first and four times more each time, extended through the others."""
        graph = self.active
        first, *rest = order_patterns(node.triples, self._estimate, set())
        seeds = self._extend_with_pattern(Solutions.unit(), first, graph)
        start, size = 0, FIRST_CHUNK
        while start < seeds.length:
            chunk = seeds.take(np.arange(start, min(start + size, seeds.length)))
            for pattern in rest:
                chunk = self._extend_with_pattern(chunk, pattern, graph)
                if not chunk.length:
                    break
            if chunk.length:
                yield chunk
            start, size = start + size, size * 4


def _no_solutions(node: A.BGP, table: Solutions) -> Solutions:
    """The empty result of a BGP, with a column for each of its variables."""
    names = dict.fromkeys(table.columns)
    for p in node.triples:
        for term in (p.subject, p.predicate, p.object):
            if isinstance(term, Variable):
                names[term.name] = None
    return Solutions.empty(list(names))


#: first-pattern rows explored in the first chunk of a LIMIT query
FIRST_CHUNK = 64

#: hidden column that carries the left row number through a bind join
_ROW = ".row"


def _pattern_vars(node) -> list[str]:
    """Variables a pattern can bind (for the columns of an empty result)."""
    names: dict[str, None] = {}
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Variable):
            names[item.name] = None
        elif isinstance(item, tuple):
            stack.extend(item)
        elif hasattr(item, "__dataclass_fields__") and not isinstance(item, A.ExistsExpr):
            stack.extend(getattr(item, f) for f in item.__dataclass_fields__)
    return [n for n in names if not n.startswith(".")] + [n for n in names if n.startswith(".")]


_COMPARE = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    ">": np.greater,
    "<=": np.less_equal,
    ">=": np.greater_equal,
}
_FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def _fully_bound(table: Solutions, bgp: A.BGP) -> bool:
    """True when the table's columns used by the BGP have no unbound values, so
    the BGP can extend the table's rows directly."""
    for p in bgp.triples:
        for t in (p.subject, p.predicate, p.object):
            if isinstance(t, Variable) and t.name in table.columns and (table.columns[t.name] == 0).any():
                return False
    return True


def _substitute(node, row: Mapping[Variable, Term]):
    """A copy of an algebra subtree with the row's variables replaced by terms."""
    if isinstance(node, Variable):
        return row.get(node, node)
    if isinstance(node, A.VarExpr):
        term = row.get(node.var)
        return A.TermExpr(term) if term is not None else node
    if isinstance(node, (IRI, BNode, Literal, str, int, bool, float)) or node is None:
        return node
    if isinstance(node, tuple):
        return tuple(_substitute(x, row) for x in node)
    if isinstance(node, A.Values):
        return node
    if isinstance(node, A.Extend):
        return A.Extend(_substitute(node.pattern, row), node.var, _substitute(node.expr, row))
    if isinstance(node, A.Project):
        inner = {v: t for v, t in row.items() if v in node.vars}
        return A.Project(_substitute(node.pattern, inner), node.vars)
    if isinstance(node, A.Graph):
        return A.Graph(_substitute(node.name, row), _substitute(node.pattern, row))
    fields = node.__dataclass_fields__ if hasattr(node, "__dataclass_fields__") else None
    if fields is None:
        return node
    return node.__class__(*(_substitute(getattr(node, f), row) for f in fields))
