"""An RDF 1.2 triple term in the console's result table, in headless Chromium:
drawn as ``<<( s p o )>>`` with each component a term of its own."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import EX

pytest.importorskip("playwright", reason="browser tests skipped: Playwright is not installed")

from playwright.sync_api import expect  # noqa: E402

from tests.browser.test_console import type_query  # noqa: E402


def test_a_triple_term_shows_as_its_components(page, shot):
    claim = "<<( ex:Rhine ex:lengthKm 1230 )>>"
    type_query(page, f"PREFIX ex: <{EX}> INSERT DATA {{ ex:alice ex:says {claim} }}")
    # the update is done before the query runs (the console runs one request at a time)
    expect(page.locator("#status")).to_contain_text("Update applied")
    type_query(page, f"PREFIX ex: <{EX}> SELECT ?who ?claim WHERE {{ ?who ex:says ?claim }}")
    cells = page.locator("#results table.results tbody tr").first.locator("td")
    # (how a number reads is the literal view's business: with or without its datatype)
    shown = re.compile(r"^<<\( ex:Rhine ex:lengthKm 1230(\^\^xsd:integer)? \)>>$")
    expect(cells.nth(2)).to_have_text(shown, use_inner_text=True)
    expect(cells.nth(2).locator(".term-iri")).to_have_count(2)
    shot(page, "triple-term")
