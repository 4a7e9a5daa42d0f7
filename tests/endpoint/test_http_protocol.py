"""Requests that offer an upgrade to HTTP/2 (``Upgrade: h2c``, as Java's HTTP
client sends) are answered whole in HTTP/1.1, without a warning in the log
(endpoint/http_protocol.py), over a raw socket so the bytes are exactly
those a Java client writes: its head, then its body in a second write."""

from __future__ import annotations

import json
import logging
import socket
import time
from urllib.parse import quote

EX = "http://example.org/rivers/"
H2C_OFFER = (b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
             b"HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n")


class Connection:
    """One keep-alive connection, read one response at a time (bounded by a 10 s timeout)."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.buffer = b""

    def send(self, *writes: bytes) -> None:
        for i, data in enumerate(writes):
            if i:
                time.sleep(0.05)  # the body arrives apart from the head, as Java writes it
            self.sock.sendall(data)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._read()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._read()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(lines[0].split()[1]), headers, body

    def _read(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def close(self) -> None:
        self.sock.close()


def post(path: str, content_type: str, body: bytes, offer: bytes = H2C_OFFER) -> tuple[bytes, bytes]:
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n").encode() + offer + b"\r\n"
    return head, body


def test_an_h2c_offer_is_declined_and_answered_in_http_1_1(serve, demo_store, caplog):
    caplog.set_level(logging.WARNING)
    url = serve(demo_store)
    connection = Connection(url)
    ask = quote(f"ASK {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}")
    connection.send(f"GET /sparql?query={ask} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Accept: application/sparql-results+json\r\n".encode() + H2C_OFFER + b"\r\n")
    status, _, body = connection.response()
    assert (status, json.loads(body)["boolean"]) == (200, False)

    # an update whose body comes in a second write, on the same connection
    update = f"INSERT DATA {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}".encode()
    connection.send(*post("/sparql", "application/sparql-update", update))
    status, _, body = connection.response()
    assert status == 204, body

    # a form-encoded query, then a plain request: the connection still works
    connection.send(*post("/sparql", "application/x-www-form-urlencoded", b"query=" + ask.encode()))
    status, _, body = connection.response()
    assert (status, json.loads(body)["boolean"]) == (200, True)
    connection.send(b"GET /streams HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert connection.response()[0] == 200
    connection.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == []



def test_a_small_answer_leaves_in_one_write(serve, demo_store):
    """Head and body of a small answer leave together (endpoint/head_holding.py):
    the first read after each request holds the whole response, on the short
    path (a repeated query) and on the whole path (the first one, a POST)."""
    url = serve(demo_store)
    host, port = url.removeprefix("http://").split(":")
    ask = quote("ASK { ?river ?p ?o }")
    requests = [f"GET /sparql?query={ask} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Accept: application/sparql-results+json\r\n\r\n".encode()] * 20
    requests.insert(0, b"".join(post("/sparql", "application/x-www-form-urlencoded",
                                     b"query=" + ask.encode(), offer=b"")))
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for request in requests:
            sock.sendall(request)
            first = sock.recv(65536)
            head, _, body = first.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = dict(line.lower().split(": ", 1) for line in lines[1:])
            assert lines[0] == "HTTP/1.1 200 OK", first
            assert len(body) == int(headers["content-length"]), first
            assert json.loads(body)["boolean"] is True
