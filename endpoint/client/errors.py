"""The one exception the client raises: what went wrong, as the server said it.

The server answers every error with one line of ``text/plain`` (see
docs/http-api.md); the client keeps that line as the message, so a program
shows the user the same words ``curl`` would. Where the message names a
position (``line 3:`` of a batch, the ``timestamp ... ms`` of a late item),
it is also parsed into attributes, so a program can act on it without
parsing text itself.
"""

from __future__ import annotations

import re

import httpx

_LINE = re.compile(r"\bline ([0-9]{1,18})\b")
_TIMESTAMP = re.compile(r"\btimestamp (-?[0-9]{1,18}) ms\b")


class RivuletError(Exception):
    """An error answer of the server, or no answer at all.

    ``status`` is the HTTP status (None when the server could not be reached
    or the connection was lost), ``message`` the server's text. ``line`` is
    the 1-based line of a refused batch body when the server named one, and
    ``timestamp_ms`` the timestamp of the offending item when known (a late
    item, or the line of a malformed batch)."""

    def __init__(self, status: int | None, message: str, *, method: str = "", url: str = "",
                 line: int | None = None, timestamp_ms: int | None = None) -> None:
        self.status = status
        self.message = message
        self.method = method
        self.url = url
        self.line = line
        self.timestamp_ms = timestamp_ms
        where = f"{method} {url}: " if method else ""
        code = f"{status} " if status is not None else ""
        super().__init__(f"{where}{code}{message}".strip())

    @classmethod
    def from_response(cls, response: httpx.Response) -> RivuletError:
        """The error of an answer with a 4xx or 5xx status (its body must have been read)."""
        message = response.text.strip() or response.reason_phrase
        line = _LINE.search(message)
        timestamp = _TIMESTAMP.search(message)
        return cls(response.status_code, message, method=response.request.method,
                   url=str(response.request.url), line=int(line.group(1)) if line else None,
                   timestamp_ms=int(timestamp.group(1)) if timestamp else None)

    @classmethod
    def unreachable(cls, request: httpx.Request | None, exc: Exception) -> RivuletError:
        """No answer: the connection failed or broke."""
        method = request.method if request is not None else ""
        url = str(request.url) if request is not None else ""
        return cls(None, f"no answer from the server: {exc}", method=method, url=url)
