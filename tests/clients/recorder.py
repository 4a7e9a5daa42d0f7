"""What a client sent: an ASGI wrapper that keeps every HTTP request's
method, path, query string, headers and body, so that a test can show the
exact request behind a failure (and assert on what a client sends)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote_plus


@dataclass
class Request:
    """One request as it reached the server."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    status: int | None = None

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        return next((value for key, value in self.headers if key == name.lower()), None)

    def __str__(self) -> str:
        target = self.path + ("?" + unquote_plus(self.query) if self.query else "")
        lines = [f"{self.method} {target} -> {self.status}"]
        lines += [f"  {name}: {value}" for name, value in self.headers]
        if self.body:
            lines.append("  body: " + unquote_plus(self.body.decode("utf-8", "replace")))
        return "\n".join(lines)


@dataclass
class Recorder:
    """ASGI middleware around ``app``; ``requests`` grows as requests arrive."""

    app: object
    requests: list[Request] = field(default_factory=list)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope["method"], scope["path"], scope["query_string"].decode("latin-1"),
                          [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]])
        self.requests.append(request)

        async def receiving():
            message = await receive()
            if message["type"] == "http.request":
                request.body += message.get("body", b"")
            return message

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                request.status = message["status"]
            await send(message)

        await self.app(scope, receiving, sending)

    def show(self, path: str | None = None) -> str:
        """The requests (to ``path`` only, if given), one block each, for an assertion message."""
        return "\n".join(str(r) for r in self.requests if path is None or r.path == path)
