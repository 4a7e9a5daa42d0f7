"""The raw-socket client of benchmarks.serving against a tiny real HTTP/1.1 server:
chunked and Content-Length bodies on one keep-alive connection, then an answer
that closes the connection and a reconnect. Not a timing test."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchmarks.serving import RawClient, get_request, result_rows

CHUNKED_BODY = b'{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"x"}},{}]}}'
ASK_BODY = b'{"head":{},"boolean":true}'


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless told otherwise

    def do_GET(self) -> None:  # the name http.server calls
        self.server.peers.append(self.client_address)
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for k in range(0, len(CHUNKED_BODY), 10):
                part = CHUNKED_BODY[k:k + 10]
                self.wfile.write(f"{len(part):x};ext=1\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\nX-Trailer: 1\r\n\r\n")
        elif self.path.startswith("/close"):
            self.send_response(404)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"gone")
            self.close_connection = True
        else:
            self.send_response(200)
            self.send_header("Content-Length", str(len(ASK_BODY)))
            self.end_headers()
            self.wfile.write(ASK_BODY)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.peers = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def test_chunked_and_content_length_on_one_connection_then_a_close(server):
    port = server.server_address[1]
    with RawClient("127.0.0.1", port, timeout=5) as client:
        status, body = client.request(get_request("/chunked", "SELECT * {}", port))
        assert (status, body, result_rows(body)) == (200, CHUNKED_BODY, 2)
        status, body = client.request(get_request("/length", "ASK {}", port))
        assert (status, body, result_rows(body)) == (200, ASK_BODY, "true")
        assert client.request(get_request("/close", "ASK {}", port)) == (404, b"gone")
        assert client.request(get_request("/length", "ASK {}", port)) == (200, ASK_BODY)
    peers = server.peers
    assert len(peers) == 4 and peers[0] == peers[1] == peers[2] != peers[3]  # kept alive, then reopened
