"""The demo dataset that ``make run`` serves (``rivulet serve --demo``).

``rivers.trig`` holds European rivers, and gauge readings in the named graph
``<http://example.org/rivers/readings>``. It is package data, installed with
the wheel, so the demo runs the same from a checkout and from an installation.
"""

from __future__ import annotations

from pathlib import Path

RIVERS = Path(__file__).resolve().parent / "rivers.trig"
