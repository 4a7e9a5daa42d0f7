"""The name grammars the graph writers must obey: Turtle's prefixes, XML's
names, and blank-node labels every syntax accepts.

A writer may only write a prefixed name, an XML element name or a blank
node label that its readers will take back as the same thing, so these are
the grammars of the W3C texts (Turtle's PN_PREFIX, XML 1.0's NCName),
written once as regex character classes.
"""

from __future__ import annotations

import re

#: Turtle's PN_CHARS_BASE; XML's NameStartChar is the same set plus "_" (and ":")
CHARS_BASE = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
              "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
#: Turtle's PN_CHARS_U: a name may start with one
CHARS_U = CHARS_BASE + "_"
#: Turtle's PN_CHARS: inside a name; XML's NameChar is this plus "."
CHARS = CHARS_U + r"\-0-9\u00b7\u0300-\u036f\u203f-\u2040"

#: a prefix Turtle and SPARQL accept (empty is allowed: ``:name``)
PN_PREFIX = re.compile(f"(?:[{CHARS_BASE}](?:[{CHARS}.]*[{CHARS}])?)?")
#: an XML name without a colon (an element's local part, a namespace prefix)
NCNAME = re.compile(f"[{CHARS_U}][{CHARS}.]*")
#: the longest XML name without a colon at the end of a string (search, not match)
NCNAME_TAIL = re.compile(f"[{CHARS_U}][{CHARS}.]*\\Z")

# A label both a Turtle BLANK_NODE_LABEL and an XML NCName: kept as it is.
# It never holds "_", so the renamed forms below, which do, cannot meet one.
_PLAIN_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# Labels of hex digits and dashes (Oxigraph names blank nodes in hex, which
# may start with a digit: fine in Turtle, not in XML): "b_" in front is enough.
_WORD_LABEL = re.compile(r"[A-Za-z0-9_-]+")


def portable_label(label: str) -> str:
    """A blank-node label Turtle, N-Triples, JSON-LD and RDF/XML all accept,
    different for different labels (a store's labels come from any source)."""
    if _PLAIN_LABEL.fullmatch(label):
        return label
    if _WORD_LABEL.fullmatch(label):
        return "b_" + label
    return "x_" + label.encode().hex()
