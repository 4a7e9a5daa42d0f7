"""The characters XML 1.0 cannot carry, for the writers of XML formats.

RDF literals may hold any Unicode scalar value, but an XML 1.0 document
cannot contain U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+FFFE or
U+FFFF, not even as character references. An XML answer holding one would
be rejected by every XML parser, so the writers refuse it instead, naming
the character; JSON, CSV/TSV, N-Triples and Turtle carry every character.
"""

from __future__ import annotations

import re

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class NotXmlText(ValueError):
    """A value holds a character an XML 1.0 document cannot carry."""


def check_xml_text(text: str) -> str:
    """``text`` itself if XML 1.0 can carry it; :class:`NotXmlText` otherwise."""
    bad = _NOT_XML.search(text)
    if bad is not None:
        raise NotXmlText(f"the answer holds U+{ord(bad.group()):04X}, a character XML 1.0 "
                         "cannot carry; ask for JSON, CSV, TSV, N-Triples or Turtle instead")
    return text
