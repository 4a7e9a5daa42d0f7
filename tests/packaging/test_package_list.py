"""pyproject.toml lists the packages by hand (a mapped ``endpoint.static`` rules
out setuptools' discovery), so a new package must be added there: this test
names any package of the checkout that a wheel would leave out."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def _code_packages() -> set[str]:
    """Every folder of engine/ and endpoint/ that holds Python modules, as a dotted name."""
    return {
        ".".join(module.parent.relative_to(REPO).parts)
        for root in ("engine", "endpoint")
        for module in (REPO / root).rglob("*.py")
        if "__pycache__" not in module.parts
    }


def test_every_package_of_the_checkout_goes_into_the_wheel():
    assert sorted(_code_packages() - set(SETUPTOOLS["packages"])) == []


def test_the_console_and_the_demo_dataset_go_into_the_wheel():
    assert SETUPTOOLS["package-dir"]["endpoint.static"] == "static"
    assert {"endpoint.static", "endpoint.demo"} <= set(SETUPTOOLS["packages"])
    assert (REPO / "endpoint" / "demo" / "rivers.trig").is_file()
    assert not (REPO / "endpoint" / "static").exists(), "the console stays in the top-level static/"
