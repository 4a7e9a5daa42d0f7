"""Reading the W3C SPARQL 1.1 test manifests into plain test descriptions.

Manifests are Turtle with relative IRIs; parsing each one with its own
``file://`` URL as base makes every referenced file an absolute file URL,
which is also the graph name the tests expect for ``qt:graphData``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from rdflib import RDF, RDFS, Graph, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
DAWGT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")

REPO_ROOT = Path(__file__).resolve().parents[3]
SUITE_ROOT = REPO_ROOT.parent / "shared" / "conformance" / "w3c" / "sparql11"
#: the SPARQL 1.2 suite (triple terms, directional strings, VERSION, ...): same manifests
SUITE_12_ROOT = SUITE_ROOT.parent / "sparql12"

HTTP_LEVEL = (
    "run over HTTP against live servers (tests/endpoint); see [conformance-http.md](conformance-http.md)"
)

#: folders not evaluated here, with the reason printed in the report
SKIPPED_FOLDERS = {
    "entailment": "needs RDFS/OWL entailment regimes, which the engine does not implement",
    "service": HTTP_LEVEL,
    "protocol": HTTP_LEVEL,
    "graph-store-protocol": HTTP_LEVEL,
    "service-description": HTTP_LEVEL,
}

#: approval states whose tests the working group took back
EXCLUDED_APPROVALS = {"Rejected", "Withdrawn", "Obsoleted"}

#: folders whose evaluation tests exist to check a result serialisation
RESULT_FORMAT_FOLDERS = {"csv-tsv-res", "json-res"}

#: the 1.1 suite's kinds end in 11; the 1.2 suite's have no number
QUERY_SYNTAX = {"PositiveSyntaxTest11", "NegativeSyntaxTest11", "PositiveSyntaxTest", "NegativeSyntaxTest"}
UPDATE_SYNTAX = {"PositiveUpdateSyntaxTest11", "NegativeUpdateSyntaxTest11",
                 "PositiveUpdateSyntaxTest", "NegativeUpdateSyntaxTest"}
RUNNABLE_KINDS = QUERY_SYNTAX | UPDATE_SYNTAX | {
    "QueryEvaluationTest",
    "UpdateEvaluationTest",
    "CSVResultFormatTest",
}

CATEGORIES = ("query evaluation", "update evaluation", "syntax", "result formats")


@dataclass(frozen=True, order=True)
class GraphFile:
    """A data file loaded as the named graph ``name``."""

    name: str
    path: Path


@dataclass(frozen=True)
class TestCase:
    """One manifest entry, reduced to what the runner needs."""

    uri: str
    name: str
    folder: str
    kind: str
    approval: str | None
    query: Path | None = None
    data: tuple[Path, ...] = ()
    graph_data: tuple[GraphFile, ...] = ()
    result: Path | None = None
    result_data: tuple[Path, ...] = ()
    result_graph_data: tuple[GraphFile, ...] = ()

    __test__ = False  # not a pytest test class

    @property
    def category(self) -> str:
        if self.folder in RESULT_FORMAT_FOLDERS or self.kind == "CSVResultFormatTest":
            return "result formats"
        if self.kind == "QueryEvaluationTest":
            return "query evaluation"
        if self.kind == "UpdateEvaluationTest":
            return "update evaluation"
        return "syntax"


@dataclass(frozen=True)
class Exclusion:
    """Tests left out of the run and why."""

    folder: str
    count: int
    reason: str


def url_to_path(url: str) -> Path:
    return Path(unquote(urlparse(url).path))


def _local_name(node: Node | None) -> str | None:
    if node is None:
        return None
    text = str(node)
    return text.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _paths(graph: Graph, subject: Node, predicate: URIRef) -> tuple[Path, ...]:
    return tuple(sorted(url_to_path(str(o)) for o in graph.objects(subject, predicate)))


def _query_graph_data(graph: Graph, action: Node) -> tuple[GraphFile, ...]:
    return tuple(sorted(GraphFile(str(o), url_to_path(str(o))) for o in graph.objects(action, QT.graphData)))


def _update_graph_data(graph: Graph, node: Node) -> tuple[GraphFile, ...]:
    files = []
    for entry in graph.objects(node, UT.graphData):
        file_url = graph.value(entry, UT.graph)
        if file_url is None:  # a bare file reference names the graph by its URL
            file_url = entry
        label = graph.value(entry, RDFS.label)
        name = str(label) if label is not None else str(file_url)
        files.append(GraphFile(name, url_to_path(str(file_url))))
    return tuple(sorted(files, key=lambda g: g.name))


def _test_case(graph: Graph, entry: Node, folder: str, kind: str) -> TestCase:
    name = str(graph.value(entry, MF.name) or _local_name(entry))
    approval = _local_name(graph.value(entry, DAWGT.approval))
    action = graph.value(entry, MF.action)
    result = graph.value(entry, MF.result)
    common = {"uri": str(entry), "name": name, "folder": folder, "kind": kind, "approval": approval}
    if kind in QUERY_SYNTAX or kind in UPDATE_SYNTAX:
        return TestCase(**common, query=url_to_path(str(action)))
    if kind == "UpdateEvaluationTest":
        return TestCase(
            **common,
            query=url_to_path(str(graph.value(action, UT.request))),
            data=_paths(graph, action, UT.data),
            graph_data=_update_graph_data(graph, action),
            result_data=_paths(graph, result, UT.data) if result is not None else (),
            result_graph_data=_update_graph_data(graph, result) if result is not None else (),
        )
    return TestCase(
        **common,
        query=url_to_path(str(graph.value(action, QT.query))),
        data=_paths(graph, action, QT.data),
        graph_data=_query_graph_data(graph, action),
        result=url_to_path(str(result)) if result is not None else None,
    )


def _parse(path: Path) -> Graph:
    graph = Graph()
    graph.parse(path, format="turtle", publicID=path.as_uri())
    return graph


def _entries(graph: Graph) -> list[Node]:
    entries: list[Node] = []
    for manifest in graph.subjects(RDF.type, MF.Manifest):
        for head in graph.objects(manifest, MF.entries):
            entries.extend(Collection(graph, head))
    return entries


def _included(graph: Graph) -> list[Path]:
    paths: list[Path] = []
    for manifest in graph.subjects(RDF.type, MF.Manifest):
        for head in graph.objects(manifest, MF.include):
            paths.extend(url_to_path(str(item)) for item in Collection(graph, head))
    return paths


def _count_entries(graph: Graph) -> int:
    """Entries of a manifest including those of the manifests it includes."""
    return len(_entries(graph)) + sum(_count_entries(_parse(path)) for path in _included(graph))


def top_manifest(root: Path) -> Path:
    """The manifest that includes every folder's (1.1: manifest-all.ttl, 1.2: manifest.ttl)."""
    every = root / "manifest-all.ttl"
    return every if every.is_file() else root / "manifest.ttl"


def folders(root: Path = SUITE_ROOT) -> list[str]:
    """Folder names in the order the top manifest includes them."""
    return [path.parent.name for path in _included(_parse(top_manifest(root)))]


def load_folder(root: Path, folder: str) -> tuple[list[TestCase], list[Exclusion]]:
    """The runnable tests of one folder, plus what was left out and why."""
    graph = _parse(root / folder / "manifest.ttl")
    if folder in SKIPPED_FOLDERS:
        return [], [Exclusion(folder, _count_entries(graph), SKIPPED_FOLDERS[folder])]
    tests: list[TestCase] = []
    skipped: dict[str, int] = {}
    for entry in _entries(graph):
        kind = _local_name(graph.value(entry, RDF.type)) or "?"
        approval = _local_name(graph.value(entry, DAWGT.approval))
        if approval in EXCLUDED_APPROVALS:
            reason = f"approval status dawgt:{approval}"
        elif kind not in RUNNABLE_KINDS:
            reason = f"test type mf:{kind} is not run here"
        else:
            tests.append(_test_case(graph, entry, folder, kind))
            continue
        skipped[reason] = skipped.get(reason, 0) + 1
    return tests, [Exclusion(folder, count, reason) for reason, count in skipped.items()]


def load_suite(
    root: Path = SUITE_ROOT, only: list[str] | None = None
) -> tuple[list[TestCase], list[Exclusion]]:
    """All runnable tests (of the ``only`` folders when given) and the exclusions."""
    tests: list[TestCase] = []
    exclusions: list[Exclusion] = []
    for folder in folders(root):
        if only and folder not in only:
            continue
        found, left_out = load_folder(root, folder)
        tests.extend(found)
        exclusions.extend(left_out)
    return tests, exclusions


def suite_missing_reason(root: Path = SUITE_ROOT) -> str | None:
    """Why the suite cannot run, or None when it is present."""
    if not top_manifest(root).is_file():
        return f"W3C SPARQL test suite not found at {root} (expected <repo>/../shared/...)"
    return None
