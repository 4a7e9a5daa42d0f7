"""Resolution of relative IRI references against a base (RFC 3986 5.2).

``urllib.parse.urljoin`` only resolves for a fixed list of schemes and
normalises in ways RFC 3986 does not, so the algorithm is written out here.
Absolute references are returned unchanged (the common case, kept cheap).
"""

from __future__ import annotations

import re

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4, on whole segments rather than character by character."""
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == ".":
            if index == last:
                output.append("")
        elif segment == "..":
            if len(output) > 1 or (output and output[0] != ""):
                output.pop()
            if index == last:
                output.append("")
        else:
            output.append(segment)
    result = "/".join(output)
    if path.startswith("/") and not result.startswith("/"):
        result = "/" + result
    return result


def _components(iri: str) -> tuple[str | None, str | None, str, str | None, str | None]:
    """(scheme, authority, path, query, fragment) of RFC 3986 appendix B; the
    path is always present, possibly empty."""
    match = _PARTS.fullmatch(iri)
    if match is None:  # every part of the pattern is optional, so it matches any text
        raise ValueError(f"not an IRI reference: {iri!r}")
    scheme, authority, path, query, fragment = match.groups()
    return scheme, authority, path, query, fragment


def resolve_iri(reference: str, base: str | None) -> str:
    """The target IRI of ``reference`` resolved against ``base``.

    Without a base a relative reference is returned as written: there is
    nothing better to do and the query may still make sense to the caller.
    """
    if base is None or _SCHEME.match(reference):
        return reference
    b_scheme, b_auth, b_path, b_query, _ = _components(base)
    _, r_auth, r_path, r_query, r_frag = _components(reference)
    if r_auth is not None:
        auth, path, query = r_auth, remove_dot_segments(r_path), r_query
    else:
        auth = b_auth
        if r_path == "":
            path = b_path
            query = r_query if r_query is not None else b_query
        else:
            if r_path.startswith("/"):
                path = remove_dot_segments(r_path)
            elif b_auth is not None and b_path == "":
                path = remove_dot_segments("/" + r_path)
            else:
                path = remove_dot_segments(b_path[: b_path.rfind("/") + 1] + r_path)
            query = r_query
    parts = [b_scheme + ":" if b_scheme is not None else ""]
    if auth is not None:
        parts.append("//" + auth)
    parts.append(path)
    if query is not None:
        parts.append("?" + query)
    if r_frag is not None:
        parts.append("#" + r_frag)
    return "".join(parts)
