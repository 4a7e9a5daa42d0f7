"""Imports go down the layers only, read from the source with ``ast``.

The layers, lowest first: ``engine.rdf`` (terms and RDF syntax), then
``engine.store`` with ``engine.loader`` beside it (the loader writes the
store's format, so it imports the store; the store never imports the loader),
``engine.sparql``, ``engine.api``, ``engine.stream``, ``engine.durability``,
``engine.cluster`` (a coordinator's store over shards, whose logs are the
durability layer's) and ``endpoint``. The
stream engine runs continuous queries over an ``engine.api.Store``, so it sits
above ``engine.api``: the one-shot API never knows about streams. Inside
``engine.sparql`` the stages go one way too: the algebra knows only RDF terms,
the syntax builds algebra, result formats know only RDF terms, expressions
never reach into the planner or the executor, and the planner never into the
executor that calls it.

Every import counts, including those inside functions and under
``TYPE_CHECKING``: a deferred import is still a dependency. A failure names
each offending edge as ``module -> imported module``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("engine", "endpoint")

#: the packages, lowest first; a module may import its own layer and those below
LAYERS: dict[str, int] = {
    "engine.rdf": 0,
    "engine.store": 1,
    "engine.catalog": 1,
    "engine.loader": 1,
    "engine.sparql": 2,
    "engine.api": 3,
    "engine.stream": 4,
    "engine.durability": 5,
    "engine.cluster": 6,
    "endpoint": 7,
}

#: packages placed by their own name only, so that each package inside must be placed
ROOT_PACKAGES: dict[str, int] = {"engine": 0}

#: imports that the layer order allows but the design forbids: (importer, imported) prefixes
FORBIDDEN: tuple[tuple[str, str], ...] = (
    ("engine.store", "engine.loader"),
    ("engine.sparql.expr", "engine.sparql.syntax"),
    ("engine.sparql.expr", "engine.sparql.plan"),
    ("engine.sparql.expr", "engine.sparql.exec"),
    ("engine.sparql.plan", "engine.sparql.exec"),
)

#: SPARQL stages that may import nothing of the project but these prefixes
ONLY: dict[str, tuple[str, ...]] = {
    "engine.sparql.algebra": ("engine.rdf", "engine.sparql.algebra"),
    "engine.sparql.syntax": ("engine.rdf", "engine.sparql.algebra", "engine.sparql.syntax"),
    "engine.sparql.results": ("engine.rdf", "engine.sparql.results"),
}


@dataclass(frozen=True, order=True)
class Edge:
    """One module importing another, both dotted names of the project."""

    importer: str
    imported: str

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported}"


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer(module: str) -> int | None:
    """The layer of the longest matching package in :data:`LAYERS`, None when unplaced."""
    if module in ROOT_PACKAGES:
        return ROOT_PACKAGES[module]
    matches = [prefix for prefix in LAYERS if _within(module, prefix)]
    return LAYERS[max(matches, key=len)] if matches else None


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    """Every module under engine/ and endpoint/, by dotted name."""
    return {
        module_name(path): path
        for root in ROOTS
        for path in sorted((REPO / root).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module an ``import from`` names, with relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = importer.split(".")
    base = package if is_package else package[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(source: str, importer: str, is_package: bool, modules: Iterable[str]) -> set[str]:
    """The project modules one module imports, anywhere in its body.

    ``from package import name`` counts as importing ``package.name`` when that
    is a module, else as importing ``package``.
    """
    known = set(modules)
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            origin = _absolute(node, importer, is_package)
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                found.add(submodule if submodule in known else origin)
    return {name for name in found if name.split(".")[0] in ROOTS}


def import_map() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    modules = project_modules()
    return {
        name: imports_of(path.read_text(), name, path.name == "__init__.py", modules)
        for name, path in modules.items()
    }


def _breaks_a_rule(edge: Edge) -> bool:
    below = layer(edge.importer)
    above = layer(edge.imported)
    if below is None or above is None or above > below:
        return True
    if any(_within(edge.importer, low) and _within(edge.imported, high) for low, high in FORBIDDEN):
        return True
    return any(
        _within(edge.importer, stage) and not any(_within(edge.imported, ok) for ok in allowed)
        for stage, allowed in ONLY.items()
    )


def violations(imports: Mapping[str, Iterable[str]]) -> list[Edge]:
    """Every import that goes up a layer, breaks a forbidden pair or leaves a stage's allowance;
    an import from or to a module no layer places counts too, so a new package gets a place."""
    edges = (Edge(importer, imported) for importer, targets in imports.items() for imported in targets)
    return sorted(edge for edge in edges if _breaks_a_rule(edge))


def _report(edges: list[Edge]) -> str:
    return "imports against the layers:\n" + "\n".join(f"  {edge}" for edge in edges)


def test_every_module_imports_only_its_own_layer_or_lower_ones():
    edges = violations(import_map())
    assert not edges, _report(edges)


def test_every_module_belongs_to_a_layer():
    assert [name for name in project_modules() if layer(name) is None] == []


def test_the_store_never_imports_the_loader():
    store = {name: targets for name, targets in import_map().items() if _within(name, "engine.store")}
    assert store, "engine.store has no modules: the layer table is out of date"
    assert [Edge(name, target) for name, targets in store.items() for target in targets
            if _within(target, "engine.loader")] == []


def test_the_checker_names_each_edge_that_goes_up():
    synthetic = {
        "engine.store.quad_store": {"engine.rdf.terms", "engine.loader.writer"},
        "engine.loader.writer": {"engine.store.layout"},
        "engine.rdf.terms": {"engine.sparql.algebra"},
        "engine.api": {"engine.stream.stream_engine"},
        "engine.stream.stream_engine": {"engine.api", "endpoint.app"},
        "engine.sparql.syntax.tokenizer": {"engine.sparql.exec.executor", "engine.store.layout"},
        "engine.sparql.results.json_results": {"engine.sparql.algebra"},
        "engine.sparql.plan.bgp_order": {"engine.sparql.exec.solutions", "engine.sparql.algebra"},
        "endpoint.app": {"engine.api", "engine.stream.stream_engine"},
        "engine.cache": {"engine.rdf.terms"},
    }
    assert [str(edge) for edge in violations(synthetic)] == [
        "engine.api -> engine.stream.stream_engine",
        "engine.cache -> engine.rdf.terms",
        "engine.rdf.terms -> engine.sparql.algebra",
        "engine.sparql.plan.bgp_order -> engine.sparql.exec.solutions",
        "engine.sparql.results.json_results -> engine.sparql.algebra",
        "engine.sparql.syntax.tokenizer -> engine.sparql.exec.executor",
        "engine.sparql.syntax.tokenizer -> engine.store.layout",
        "engine.store.quad_store -> engine.loader.writer",
        "engine.stream.stream_engine -> endpoint.app",
    ]


def test_imports_inside_functions_and_relative_ones_are_read():
    source = (
        "from __future__ import annotations\n"
        "from . import windows\n"
        "from ..sparql import algebra\n"
        "def late():\n"
        "    import endpoint.app\n"
        "    from engine.store.layout import SHARD\n"
    )
    modules = ["engine.stream.windows", "engine.sparql.algebra", "endpoint.app", "engine.store.layout"]
    assert imports_of(source, "engine.stream.running_query", False, modules) == {
        "engine.stream.windows", "engine.sparql.algebra", "endpoint.app", "engine.store.layout",
    }
