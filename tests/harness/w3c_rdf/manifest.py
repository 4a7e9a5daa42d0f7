"""Reading the W3C RDF 1.2 test manifests (``rdft:`` test types).

Each format's manifest includes its ``syntax``, ``eval`` or ``c14n``
folders' manifests (and the RDF 1.1 suite's, which is not shipped next to
this one: such an include is counted as left out). A test's documents are
parsed with the base IRI the suite assumes (``mf:assumedTestBase`` plus the
file name), the base its expected results were written with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rdflib import RDF, Graph, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from tests.harness.w3c.manifest import MF, SUITE_ROOT, url_to_path

RDFT = Namespace("http://www.w3.org/ns/rdftest#")
RDF12_ROOT = SUITE_ROOT.parent / "rdf12"
#: the four suites, in the order of the report, and the syntax each reads
SUITES = {"rdf-n-triples": "nt", "rdf-n-quads": "nquads", "rdf-turtle": "turtle", "rdf-trig": "trig"}


@dataclass(frozen=True)
class RdfTest:
    """One manifest entry: ``kind`` is the rdft: type without its format
    (PositiveSyntax, NegativeSyntax, Eval, PositiveC14N)."""

    name: str
    suite: str
    folder: str
    kind: str
    action: Path
    base: str
    result: Path | None = None

    __test__ = False

    @property
    def format(self) -> str:
        return SUITES[self.suite]


def _parse(path: Path) -> Graph:
    graph = Graph()
    graph.parse(path, format="turtle", publicID=path.as_uri())
    return graph


def _kind(node: Node | None) -> str:
    local = str(node).rsplit("#", 1)[-1]
    for prefix in ("TestNTriples", "TestNQuads", "TestTurtle", "TestTrig"):
        if local.startswith(prefix):
            return local[len(prefix):]
    return local


def _read(path: Path, suite: str, tests: list[RdfTest], missing: list[str]) -> None:
    graph = _parse(path)
    for manifest in graph.subjects(RDF.type, MF.Manifest):
        base = str(graph.value(manifest, MF.assumedTestBase) or path.parent.as_uri() + "/")
        for head in graph.objects(manifest, MF.entries):
            for entry in Collection(graph, head):
                action = url_to_path(str(graph.value(entry, MF.action)))
                result = graph.value(entry, MF.result)
                tests.append(RdfTest(
                    name=str(graph.value(entry, MF.name) or entry), suite=suite, folder=path.parent.name,
                    kind=_kind(graph.value(entry, RDF.type)), action=action, base=base + action.name,
                    result=url_to_path(str(result)) if isinstance(result, URIRef) else None))
        for head in graph.objects(manifest, MF.include):
            for item in Collection(graph, head):
                included = url_to_path(str(item))
                if included.is_file():
                    _read(included, suite, tests, missing)
                else:
                    missing.append(str(included))


def load_rdf_suites(root: Path = RDF12_ROOT) -> tuple[list[RdfTest], list[str]]:
    """Every test of the four suites, and the included manifests not found."""
    tests: list[RdfTest] = []
    missing: list[str] = []
    for suite in SUITES:
        _read(root / suite / "manifest.ttl", suite, tests, missing)
    return tests, missing
