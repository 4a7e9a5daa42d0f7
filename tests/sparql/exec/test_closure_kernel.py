"""The compiled kernel of the property-path search (engine/sparql/exec/closure_kernel.pyx)
is built by the install step and is the one a deep search uses: on both kinds of
stored graph (in memory below 4,096 triples, compact above), for a link and for a
sequence of links. Its answers are checked against pyoxigraph, and against the
same search in Python, in test_property_paths.py (the "interpreted" regime)."""

from __future__ import annotations

import importlib.machinery

import numpy as np
import pytest

from engine.sparql.exec import closure_kernel, path_closure
from engine.store.neighbour_lists import KeyedLists
from tests.sparql.exec.test_property_paths import chain, loaded, our_answer


def test_the_kernel_is_compiled_code():
    suffix = closure_kernel.__file__[closure_kernel.__file__.index("."):]
    assert suffix in importlib.machinery.EXTENSION_SUFFIXES, closure_kernel.__file__


@pytest.mark.parametrize("links", [100, 5_000])  # a MemoryGraph, then a CompactGraph
@pytest.mark.parametrize("path, predicates", [("ex:p*", "p"), ("(ex:p/ex:q)*", "pq")])
def test_a_deep_search_runs_in_the_kernel(monkeypatch, links, path, predicates):
    store = loaded(chain(links, np.random.default_rng(0), predicates))
    query = f"SELECT ?b WHERE {{ ex:n0 {path} ?b }}"
    with monkeypatch.context() as interpreted:
        interpreted.setattr(path_closure, "kernel_layouts", lambda one: None)
        expected = our_answer(store, query)
    calls = []

    def counted(*args):
        calls.append(args)
        return closure_kernel.narrow_levels(*args)

    monkeypatch.setattr(path_closure, "narrow_levels", counted)
    assert our_answer(store, query) == expected
    assert calls, "the search stepped node by node in Python"


def test_an_id_beyond_the_marks_stops_before_its_level():
    """The caller grows the marks and goes on from the last level kept."""
    # a chain 1 -> 2 -> 3 -> 4 through predicate 7, as a MemoryGraph's PSO order
    keys = np.array([(7 << 32) | v for v in (1, 2, 3)], dtype=np.int64)
    third = np.array([2, 3, 4], dtype=np.int64)
    layout = (KeyedLists(keys, third, 7).kernel_layout(),)
    marks = np.zeros(4, dtype=np.uint8)
    reached, last, need = closure_kernel.narrow_levels(layout, marks, np.array([1]), 0, 32, 1024)
    assert (reached.tolist(), last, need) == ([2, 3], 1, 4)
    grown = np.zeros(8, dtype=np.uint8)
    grown[:4] = marks
    reached, last, need = closure_kernel.narrow_levels(layout, grown, reached[last:], 0, 32, 1024)
    assert (reached.tolist(), need) == ([4], 0)
