"""SPARQL 1.1 Query Results JSON Format (application/sparql-results+json).

The writers emit the document in batches of solutions so that an HTTP
response can start before the last solution is computed; orjson does the
string escaping. :func:`write_select_columns` writes from the executor's ID
columns: each distinct term of a batch is encoded to JSON once (result rows
repeat terms: the predicate of every row, the user in every friend's row),
and the rows are assembled from those pieces in compiled code.
:func:`write_json_indexed` writes rows given as positions in a list of
distinct terms (a continuous query's window report) the same way, with the
rows assembled by NumPy rather than a Python step per row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import orjson

from engine.rdf import IRI, XSD_STRING, BNode, Literal, Term, TripleTerm
from engine.sparql.results.json_rows_kernel import join_bindings

#: solutions serialised per yielded chunk
BATCH = 1000


def _term_json(term: Term) -> dict:
    cls = term.__class__
    if cls is IRI:
        return {"type": "uri", "value": term.value}
    if cls is BNode:
        return {"type": "bnode", "value": term.id}
    if cls is TripleTerm:  # SPARQL 1.2: the components as terms
        return {"type": "triple", "value": {"subject": _term_json(term.subject),
                                            "predicate": _term_json(term.predicate),
                                            "object": _term_json(term.object)}}
    if term.lang:
        if term.direction:  # SPARQL 1.2: a directional string
            return {"type": "literal", "value": term.lexical, "xml:lang": term.language,
                    "its:dir": term.direction}
        return {"type": "literal", "value": term.lexical, "xml:lang": term.lang}
    if term.datatype:
        return {"type": "literal", "value": term.lexical, "datatype": term.datatype}
    return {"type": "literal", "value": term.lexical}


def write_select(variables: list[str], rows: Iterable[Sequence[Term | None]]) -> Iterator[bytes]:
    """Yield the JSON document for a SELECT result in chunks."""
    yield b'{"head":{"vars":' + orjson.dumps(variables) + b'},"results":{"bindings":['
    batch: list[dict[str, dict[str, str]]] = []
    separator = b""
    for row in rows:
        pairs = zip(variables, row, strict=True)
        batch.append({var: _term_json(term) for var, term in pairs if term is not None})
        if len(batch) >= BATCH:
            yield separator + orjson.dumps(batch)[1:-1]
            separator = b","
            batch = []
    if batch:
        yield separator + orjson.dumps(batch)[1:-1]
    yield b"]}}\n"


def write_select_columns(variables: list[str], chunks: Iterable[tuple[int, list[np.ndarray]]],
                         decode: Callable[[np.ndarray], list[Term | None]],
                         spell: Callable[[np.ndarray], list[bytes | None]] | None = None) -> Iterator[bytes]:
    """Yield the JSON document of a SELECT result given as batches of
    ``(rows, ID columns)`` (a column per variable; ID 0 is unbound),
    decoding with ``decode``: per batch, the distinct IDs of all its columns
    found at once, each written once (from its stored N-Triples spelling
    when ``spell`` gives one and :func:`cell_of_spelling` can read it, else
    decoded), and the rows assembled by
    :func:`~engine.sparql.results.json_rows_kernel.join_bindings`."""
    yield b'{"head":{"vars":' + orjson.dumps(variables) + b'},"results":{"bindings":['
    keys = [orjson.dumps(v) + b":" for v in variables]
    separator = b""
    for length, columns in chunks:
        if not length:
            continue
        if keys:
            distinct, codes = _distinct_cells(columns, length)
            bindings = join_bindings(keys, codes, _cells(distinct, decode, spell))
        else:
            bindings = b",".join([b"{}"] * length)
        yield separator + bindings
        separator = b","
    yield b"]}}\n"


def _cells(distinct: np.ndarray, decode: Callable[[np.ndarray], list[Term | None]],
           spell: Callable[[np.ndarray], list[bytes | None]] | None) -> list[bytes | None]:
    """The JSON of each distinct ID's term (None: unbound): from its
    spelling where there is one to read, the others decoded (all of them
    for a few IDs: there the spellings' fixed cost is more than they save)."""
    if spell is None or len(distinct) <= FEW_SPELLINGS:
        return [None if term is None else _spelled(term) for term in decode(distinct)]
    cells = [None if spelling is None else cell_of_spelling(spelling) for spelling in spell(distinct)]
    missing = [i for i, cell in enumerate(cells) if cell is None]
    if missing:
        for i, term in zip(missing, decode(distinct[missing]), strict=True):
            cells[i] = None if term is None else _spelled(term)
    return cells


#: answers with at most this many distinct terms decode them all
FEW_SPELLINGS = 4
#: text a JSON string holds as it is: no quote, backslash or control character
_VERBATIM = re.compile(rb'[^\x00-\x1f"\\]*')
_XSD_STRING = XSD_STRING.encode()


def cell_of_spelling(spelling: bytes) -> bytes | None:
    """The JSON of the term a canonical N-Triples ``spelling`` names, as
    :func:`_spelled` writes it, for IRIs and literals whose text needs no
    escape (most terms; the bytes are copied); None for anything else
    (escapes, blank nodes, triple terms, a directional or upper-case
    language tag, an ``xsd:string`` datatype): decode those."""
    first = spelling[:1]
    if first == b"<":
        inner = spelling[1:-1]
        if spelling[-1:] != b">" or not _VERBATIM.fullmatch(inner):
            return None
        return b'{"type":"uri","value":"' + inner + b'"}'
    if first != b'"':
        return None
    end = spelling.rfind(b'"')
    inner = spelling[1:end]
    if end < 1 or not _VERBATIM.fullmatch(inner):
        return None
    rest = spelling[end + 1:]
    if not rest:
        return b'{"type":"literal","value":"' + inner + b'"}'
    if rest[:1] == b"@":
        tag = rest[1:]
        if not tag or b"--" in tag or tag != tag.lower() or not _VERBATIM.fullmatch(tag):
            return None
        return b'{"type":"literal","value":"' + inner + b'","xml:lang":"' + tag + b'"}'
    if rest[:3] == b"^^<" and rest[-1:] == b">":
        datatype = rest[3:-1]
        if datatype == _XSD_STRING or not _VERBATIM.fullmatch(datatype):
            return None
        return b'{"type":"literal","value":"' + inner + b'","datatype":"' + datatype + b'"}'
    return None


#: answers of up to this many cells find their distinct IDs with a dict (NumPy's
#: calls cost more than the cells of a one-row answer)
FEW_CELLS = 16


def _distinct_cells(columns: list[np.ndarray], length: int) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, codes)`` of a batch's cells taken row by row: its distinct
    IDs and, per cell, the index of its ID among them."""
    if length * len(columns) <= FEW_CELLS:
        positions: dict[int, int] = {}
        codes = [positions.setdefault(i, len(positions))
                 for row in zip(*(c.tolist() for c in columns), strict=True) for i in row]
        return np.fromiter(positions, dtype=np.int64, count=len(positions)), np.array(codes, dtype=np.intp)
    cells = np.empty((length, len(columns)), dtype=np.int64)  # row-major: a row's cells together
    for j, column in enumerate(columns):
        cells[:, j] = column
    distinct, codes = np.unique(cells.ravel(), return_inverse=True)
    return distinct, np.ascontiguousarray(codes.reshape(-1), dtype=np.intp)


def write_json_indexed(variables: list[str], terms: np.ndarray, index: np.ndarray) -> bytes:
    """The JSON document of a SELECT result whose row ``i`` binds variable
    ``j`` to ``terms[index[i, j]]`` (``terms``: an object array, None for
    unbound). The bytes are those :func:`write_select` gives for the same
    rows: each term is spelled once per column it appears in, and the
    document is one join of those pieces, laid out row by row."""
    head = b'{"head":{"vars":' + orjson.dumps(variables) + b'},"results":{"bindings":['
    return head + _indexed_bindings(variables, terms, index) + b"]}}\n"


def _indexed_bindings(variables: list[str], terms: np.ndarray, index: np.ndarray) -> bytes:
    """The comma-separated binding objects of :func:`write_json_indexed`."""
    n, width = index.shape
    if not n:
        return b""
    if not width:
        return b",".join([b"{}"] * n)
    unbound = np.array([term is None for term in terms.tolist()], dtype=bool)
    spelled = np.empty(len(terms), dtype=object)  # each term's JSON, once
    wanted = np.bincount(index.ravel(), minlength=len(terms)).astype(bool) & ~unbound
    spelled[wanted] = np.fromiter(map(_spelled, terms[wanted].tolist()), dtype=object,
                                  count=int(wanted.sum()))
    # per row, a piece per column ('{"v":term' in the first, ',"v":term' after) and its end
    parts = np.empty((n, width + 1), dtype=object)
    for j, variable in enumerate(variables):
        column = index[:, j]
        used = np.bincount(column, minlength=len(terms)).astype(bool)
        lead = np.array([(b"{" if j == 0 else b",") + orjson.dumps(variable) + b":"], dtype=object)
        pieces = np.empty(len(terms), dtype=object)
        pieces[used & ~unbound] = lead + spelled[used & ~unbound]
        pieces[used & unbound] = b"{" if j == 0 else b""
        parts[:, j] = pieces[column]
    parts[:, width] = b"},"
    parts[-1, width] = b"}"
    if unbound.any():  # a row whose first column is unbound opens with its first bound one
        for row in np.flatnonzero(unbound[index[:, 0]]).tolist():
            pieces = [piece for piece in parts[row, 1:width].tolist() if piece]
            if pieces:
                pieces[0] = b"{" + pieces[0][1:]
                for j, piece in enumerate(pieces + [b""] * (width - len(pieces))):
                    parts[row, j] = piece
    return b"".join(parts.ravel().tolist())


def _spelled(term: Term) -> bytes:
    """A term's JSON; an IRI's (most terms of a report) without making its dict."""
    if term.__class__ is IRI:
        return b'{"type":"uri","value":' + orjson.dumps(term.value) + b"}"
    return orjson.dumps(_term_json(term))


def write_boolean(value: bool) -> bytes:
    """The JSON document for an ASK result."""
    return b'{"head":{},"boolean":' + (b"true" if value else b"false") + b"}\n"


def _parse_term(node: dict) -> Term:
    kind = node.get("type")
    value = node["value"]
    if kind == "uri":
        return IRI(value)
    if kind == "bnode":
        return BNode(value)
    if kind in ("literal", "typed-literal"):  # "typed-literal" is the pre-1.1 spelling
        lang = node.get("xml:lang")
        if lang and node.get("its:dir"):
            lang = f"{lang}--{node['its:dir']}"
        return Literal(value, datatype=node.get("datatype"), lang=lang)
    if kind == "triple":
        return TripleTerm(_parse_term(value["subject"]), _parse_term(value["predicate"]),
                          _parse_term(value["object"]))
    raise ValueError(f"unknown RDF term type in JSON results: {kind!r}")


def read(data: bytes) -> tuple[list[str], list[list[Term | None]]] | bool:
    """Parse a JSON results document: (variables, rows), or the ASK boolean."""
    document = orjson.loads(data)
    if "boolean" in document:
        return bool(document["boolean"])
    variables = list(document.get("head", {}).get("vars", []))
    bindings = document.get("results", {}).get("bindings", [])
    known = set(variables)
    for binding in bindings:  # tolerate producers that omit head.vars
        for var in binding:
            if var not in known:
                known.add(var)
                variables.append(var)
    rows = [
        [_parse_term(binding[var]) if var in binding else None for var in variables] for binding in bindings
    ]
    return variables, rows
