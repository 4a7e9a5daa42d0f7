"""EXPLAIN: a query's plan as the executor runs it, with estimated rows per
step and, once the query has run with a :class:`~engine.sparql.exec.trace.Trace`,
the rows and time each step actually took.

The plan is the query's algebra, one entry per operator, in the shapes the
executor gives it: a basic graph pattern lists its triple patterns in the
order it explores them (the planner's, :func:`engine.sparql.plan.order_patterns`),
each with the rows the cost model expects after it; a join of groups that
are all basic graph patterns is one such list; a join whose right side is
a basic graph pattern continues from the left side's rows (a bind join).
The estimates of triple patterns are the planner's own (exact counts of a
pattern's constants, divided by fan-outs for what is bound already); those
of the other operators are rough rules, there to show where rows grow: a
FILTER keeps at most its input, a UNION the sum of its sides, a join on a
shared variable the larger side, a join on none the product. A property
path or SERVICE has no estimate (None).
"""

from __future__ import annotations

from collections.abc import Callable

from engine.rdf import IRI, Term, Variable, format_term
from engine.sparql import algebra as A
from engine.sparql.exec.context import ExecutionContext
from engine.sparql.exec.joins import named_graph_of
from engine.sparql.exec.mentioned import mentioned_variables
from engine.sparql.exec.trace import Record, Trace
from engine.sparql.plan import (
    connected_groups,
    limited_bgp,
    merged_bgp,
    order_patterns,
    pattern_variables,
)
from engine.store import MemoryGraph, UnionGraph

#: an entry of the plan: operator, estimated_rows, and as they apply detail, steps, children,
#: and (analysed) calls, actual_rows, time_ms
Entry = dict[str, object]
#: the fields of an entry in the order they are written: an operator's own figures before what is below it
FIELDS = ("operator", "estimated_rows", "calls", "actual_rows", "time_ms", "detail", "steps", "children")


def explain_plan(pattern: A.Pattern, cx: ExecutionContext, trace: Trace | None = None) -> Entry:
    """The plan of ``pattern`` over ``cx``'s dataset, with the actual counts
    of ``trace`` when the pattern has run with it."""
    return _Explainer(cx, trace).entry(pattern)


def spelled(term: Term | Variable) -> str:
    """A term of a triple pattern as written in SPARQL (N-Triples for constants)."""
    return f"?{term.name}" if isinstance(term, Variable) else format_term(term)


def _rounded(rows: float | None) -> float | None:
    return None if rows is None else round(rows, 1)


class _Explainer:
    def __init__(self, cx: ExecutionContext, trace: Trace | None) -> None:
        self.cx = cx
        self.trace = trace
        self._by_class: dict[type, Callable[..., tuple[float | None, Entry]]] = {
            A.BGP: self._bgp, A.Join: self._join, A.LeftJoin: self._left_join, A.Filter: self._filter,
            A.Union_: self._union, A.Minus: self._minus, A.Graph: self._graph, A.Window: self._window,
            A.Extend: self._extend, A.Values: self._values, A.GroupBy: self._group_by,
            A.Project: self._project, A.Slice: self._slice, A.PathPattern: self._path,
            A.Service: self._service,
        }

    def entry(self, node: A.Pattern) -> Entry:
        """The plan entry of ``node`` (and of everything under it)."""
        handler = self._by_class.get(node.__class__, self._passing)
        rows, fields = handler(node)
        entry: Entry = {"operator": node.__class__.__name__.rstrip("_"), "estimated_rows": _rounded(rows)}
        entry.update(fields)
        if self.trace is not None:
            self._actual(node, entry)
        return {key: entry[key] for key in FIELDS if key in entry}

    def estimate(self, node: A.Pattern) -> float | None:
        """The estimated rows of ``node`` alone."""
        return self.entry(node)["estimated_rows"]  # type: ignore[return-value]

    # ------------------------------------------------------------- analysed
    def _actual(self, node: A.Pattern, entry: Entry) -> None:
        """Add what the trace recorded for ``node``: calls, rows, time, and
        each explored pattern's rows (those without an estimated step of
        their own, a LIMIT's chunks for one, are listed after the others)."""
        record = self.trace.records.get(id(node)) if self.trace else None
        record = record or Record()
        entry["calls"] = record.calls
        entry["actual_rows"] = record.rows
        entry["time_ms"] = round(record.seconds * 1000, 3)
        steps: list[Entry] = entry.get("steps", [])  # type: ignore[assignment]
        listed = set()
        for step in steps:
            pattern = step.pop("_pattern")
            listed.add(pattern)
            step["actual_rows"] = record.steps.get(pattern, 0)
        unlisted = [{"pattern": _pattern_text(pattern), "estimated_rows": None, "actual_rows": rows}
                    for pattern, rows in record.steps.items() if pattern not in listed]
        if unlisted:
            entry["steps"] = steps + unlisted

    # ---------------------------------------------------- basic graph patterns
    def _steps(self, triples: tuple[A.TriplePattern, ...], bound: set[str],
               rows: float) -> tuple[float, list[Entry]]:
        """The patterns in the executor's order of exploration, extending
        ``rows`` rows that bind ``bound``: groups sharing no variable are
        explored apart and combined at the end (as :func:`engine.sparql.exec.bgp.extend_across_graphs`)."""
        graph = self.cx.active

        def estimate(pattern: A.TriplePattern, names: set[str], count: float) -> float:
            return self.cx.cost.estimate(graph, pattern, names, count)

        steps: list[Entry] = []
        total = 1.0
        for index, group in enumerate(connected_groups(triples, bound)):
            names, count = (set(bound), rows) if index == 0 else (set(), 1.0)
            order = order_patterns(tuple(group), estimate, names) if len(group) > 1 else group
            for pattern in order:
                count = estimate(pattern, names, count)
                names |= pattern_variables(pattern)
                step: Entry = {"pattern": _pattern_text(pattern), "estimated_rows": _rounded(count)}
                if self.trace is not None:
                    step["_pattern"] = pattern  # matched with the trace's steps, then dropped
                steps.append(step)
            total *= count
        return total, steps

    def _bgp(self, node: A.BGP) -> tuple[float, Entry]:
        rows, steps = self._steps(tuple(dict.fromkeys(node.triples)), set(), 1.0)
        return rows, {"steps": steps}

    # ---------------------------------------------------------------- joins
    def _join(self, node: A.Join) -> tuple[float | None, Entry]:
        merged = merged_bgp(node)
        if merged is not None:
            rows, steps = self._steps(merged.triples, set(), 1.0)
            return rows, {"detail": "groups of triple patterns matched as one basic graph pattern",
                          "steps": steps}
        left = self.entry(node.left)
        if self._bind_joined(node.right):
            return self._bind_join(left, node.left, node.right)  # type: ignore[arg-type]
        named = named_graph_of(node.right, self.cx)
        if named is not None and (self.trace is None or id(named[1]) not in self.trace.records):
            with self.cx.active_graph(named[0]):
                rows, fields = self._bind_join(left, node.left, named[1])
            fields["detail"] = (f"bind join into the graph {format_term(node.right.name)}: its triple "
                                "patterns extend the left side's rows")
            return rows, fields
        right = self.entry(node.right)
        return _joined(left, right, _shared(node.left, node.right)), {
            "children": [left, right]}

    def _bind_joined(self, right: A.Pattern) -> bool:
        """Is the right side a BGP continued from the left side's rows? It is
        unless the left side leaves a variable it shares unbound in some row;
        analysed, a right side that ran on its own says that it did not."""
        if not isinstance(right, A.BGP):
            return False
        return self.trace is None or id(right) not in self.trace.records

    def _bind_join(self, left: Entry, left_node: A.Pattern, right: A.BGP) -> tuple[float | None, Entry]:
        """A right-hand BGP continued from the left side's rows."""
        left_rows = left["estimated_rows"]
        rows, steps = self._steps(right.triples, set(mentioned_variables(left_node)),
                                  1.0 if left_rows is None else float(left_rows))  # type: ignore[arg-type]
        return (None if left_rows is None else rows), {
            "detail": "bind join: the right side's triple patterns extend the left side's rows",
            "children": [left], "steps": steps}

    def _left_join(self, node: A.LeftJoin) -> tuple[float | None, Entry]:
        left = self.entry(node.left)
        if self._bind_joined(node.right):
            joined, fields = self._bind_join(left, node.left, node.right)  # type: ignore[arg-type]
            fields["detail"] = ("OPTIONAL as a bind join: the optional triple patterns extend the left "
                                "side's rows")
        else:
            right = self.entry(node.right)
            joined = _joined(left, right, _shared(node.left, node.right))
            fields = {"children": [left, right]}
        left_rows = left["estimated_rows"]
        if joined is None or left_rows is None:
            return None, fields
        return max(joined, float(left_rows)), fields  # type: ignore[arg-type]

    def _minus(self, node: A.Minus) -> tuple[float | None, Entry]:
        left, right = self.entry(node.left), self.entry(node.right)
        return left["estimated_rows"], {"children": [left, right]}  # type: ignore[return-value]

    def _union(self, node: A.Union_) -> tuple[float | None, Entry]:
        left, right = self.entry(node.left), self.entry(node.right)
        a, b = left["estimated_rows"], right["estimated_rows"]
        return (None if a is None or b is None else a + b), {"children": [left, right]}  # type: ignore

    # --------------------------------------------------------------- graphs
    def _graph(self, node: A.Graph) -> tuple[float | None, Entry]:
        named = self.cx.dataset.named
        if isinstance(node.name, IRI):
            graph = named.get(self.cx.terms.encode(node.name)) or MemoryGraph.empty()
            detail = f"the pattern in the graph {format_term(node.name)}"
        else:
            # one run per named graph: counts add up over the graphs, as in a union of them
            graph = UnionGraph(list(named.values()))
            detail = f"the pattern once in each of the {len(named)} named graphs, binding ?{node.name.name}"
        return self._inside(graph, node.pattern, detail)

    def _window(self, node: A.Window) -> tuple[float | None, Entry]:
        graph = self.cx.dataset.windows.get(node.name) or MemoryGraph.empty()
        return self._inside(graph, node.pattern, f"the pattern in the window {format_term(node.name)}")

    def _inside(self, graph, pattern: A.Pattern, detail: str) -> tuple[float | None, Entry]:
        with self.cx.active_graph(graph):
            child = self.entry(pattern)
        return child["estimated_rows"], {"detail": detail, "children": [child]}  # type: ignore[return-value]

    # --------------------------------------------------- one child, modifiers
    def _passing(self, node: A.Pattern) -> tuple[float | None, Entry]:
        """Distinct, Reduced, OrderBy: at most the rows of the one pattern below."""
        child = self.entry(node.pattern)  # type: ignore[attr-defined]
        return child["estimated_rows"], {"children": [child]}  # type: ignore[return-value]

    def _filter(self, node: A.Filter) -> tuple[float | None, Entry]:
        rows, fields = self._passing(node)
        return rows, {"detail": "keeps at most the rows below", **fields}

    def _extend(self, node: A.Extend) -> tuple[float | None, Entry]:
        rows, fields = self._passing(node)
        return rows, {"detail": f"binds ?{node.var.name}", **fields}

    def _project(self, node: A.Project) -> tuple[float | None, Entry]:
        rows, fields = self._passing(node)
        return rows, {"detail": " ".join(f"?{v.name}" for v in node.vars), **fields}

    def _group_by(self, node: A.GroupBy) -> tuple[float | None, Entry]:
        rows, fields = self._passing(node)
        if not node.keys:
            return 1.0, {"detail": "one group", **fields}
        return rows, {"detail": f"{len(node.keys)} grouping key(s), {len(node.aggregates)} aggregate(s)",
                      **fields}

    def _slice(self, node: A.Slice) -> tuple[float | None, Entry]:
        rows, fields = self._passing(node)
        detail = f"OFFSET {node.offset}" + ("" if node.limit is None else f" LIMIT {node.limit}")
        if node.limit is not None and limited_bgp(node.pattern) is not None:
            detail += "; the triple patterns are explored a chunk at a time until enough rows are found"
        if rows is not None:
            rows = max(rows - node.offset, 0.0)
            rows = rows if node.limit is None else min(rows, float(node.limit))
        return rows, {"detail": detail, **fields}

    # ---------------------------------------------------------------- leaves
    def _values(self, node: A.Values) -> tuple[float, Entry]:
        return float(len(node.rows)), {"detail": " ".join(f"?{v.name}" for v in node.vars)}

    def _path(self, node: A.PathPattern) -> tuple[None, Entry]:
        return None, {"detail": f"property path from {spelled(node.subject)} to {spelled(node.object)}"}

    def _service(self, node: A.Service) -> tuple[None, Entry]:
        endpoint = spelled(node.endpoint)
        return None, {"detail": f"SERVICE {endpoint}" + (" SILENT" if node.silent else "")}


def _pattern_text(pattern: A.TriplePattern) -> str:
    return f"{spelled(pattern.subject)} {spelled(pattern.predicate)} {spelled(pattern.object)}"


def _joined(left: Entry, right: Entry, shared: set[str]) -> float | None:
    """The rough estimate of a join: the larger side on a shared variable, else the product."""
    a, b = left["estimated_rows"], right["estimated_rows"]
    if a is None or b is None:
        return None
    return max(a, b) if shared else a * b  # type: ignore[operator]


def _shared(left: object, right: object) -> set[str]:
    """The variables both sides of a join name (outside EXISTS)."""
    return mentioned_variables(left).keys() & mentioned_variables(right).keys()
