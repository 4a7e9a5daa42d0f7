"""HTTP/1.1 over a raw socket, for the tests that need bytes no client
library sends: header values that are not UTF-8, pipelined requests, a body
sent a byte at a time or cut off, a client that never reads."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


class RawConnection:
    """One connection; every read is bounded by ``timeout`` seconds."""

    def __init__(self, url: str, timeout: float = 20.0, receive_buffer: int | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:  # set before connecting, so the window stays small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(timeout)
        self.sock.connect(address(url))
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def response(self) -> Response:
        """The next response (Content-Length, chunked, or up to the close)."""
        status, headers = self.head()
        if status in (204, 304) or status < 200:  # never a body (RFC 9112, section 6.3)
            return Response(status, headers, b"")
        return Response(status, headers, self.body(headers))

    def head(self) -> tuple[int, dict[str, str]]:
        """The next response's status and headers (names in lower case)."""
        lines = self._until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        return int(lines[0].split()[1]), dict(line.lower().split(": ", 1) for line in lines[1:])

    def body(self, headers: dict[str, str]) -> bytes:
        """The body of the response whose ``headers`` were just read."""
        if "content-length" in headers:
            return self._exactly(int(headers["content-length"]))
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while size := int(self._until(b"\r\n"), 16):
                body += self._exactly(size)
                self._until(b"\r\n")
            self._until(b"\r\n")
            return body
        return self.rest()

    def rest(self) -> bytes:
        """Everything up to the server's close."""
        while self._read():
            pass
        data, self.buffer = self.buffer, b""
        return data

    def closed_by_server(self) -> bool:
        """Whether the server closes the connection within the timeout
        (what it sends first is read and dropped)."""
        try:
            self.rest()
        except TimeoutError:
            return False
        except ConnectionResetError:
            pass
        return True

    def _read(self) -> bool:
        data = self.sock.recv(65536)
        self.buffer += data
        return bool(data)

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            if not self._read():
                raise ConnectionError(f"the server closed the connection; unread: {self.buffer[:200]!r}")
        found, self.buffer = self.buffer.split(marker, 1)
        return found

    def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self._read():
                raise ConnectionError("the server closed the connection inside a body")
        found, self.buffer = self.buffer[:size], self.buffer[size:]
        return found

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def request_bytes(method: str, target: bytes | str, headers: list[tuple[bytes, bytes]] = (),
                  body: bytes = b"", length: bool = True) -> bytes:
    """A request's bytes, header values as given (any bytes at all)."""
    if isinstance(target, str):
        target = target.encode()
    head = method.encode() + b" " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for name, value in headers:
        head += name + b": " + value + b"\r\n"
    if length and body:
        head += b"Content-Length: " + str(len(body)).encode() + b"\r\n"
    return head + b"\r\n" + body


def exchange(url: str, method: str, target: bytes | str, headers: list[tuple[bytes, bytes]] = (),
             body: bytes = b"") -> Response:
    """One request on its own connection, which it closes."""
    with RawConnection(url) as connection:
        connection.send(request_bytes(method, target, [*headers, (b"Connection", b"close")], body))
        return connection.response()


def send_slowly(connection: RawConnection, data: bytes, pause: float, limit: float) -> int:
    """Send ``data`` a byte every ``pause`` seconds for at most ``limit``
    seconds; the bytes sent before the server closed the connection."""
    deadline = time.monotonic() + limit
    for sent in range(len(data)):
        if time.monotonic() > deadline:
            return sent
        try:
            connection.send(data[sent:sent + 1])
        except (BrokenPipeError, ConnectionResetError):
            return sent
        time.sleep(pause)
    return len(data)
