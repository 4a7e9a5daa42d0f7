"""The version of Rivulet that is running, for ``rivulet --version``."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def rivulet_version() -> str:
    """The installed package's version (pyproject.toml's); a checkout run
    without installing it (``python -m endpoint.cli``) has no package
    metadata, and says so rather than guess."""
    try:
        return version("rivulet")
    except PackageNotFoundError:
        return "(not installed: run 'pip install .' for a version)"
