"""No TCP reset for a call that arrives while the server stops: it is answered (503,
UNAVAILABLE: send it elsewhere) or, once the port is closed, refused; never reset."""

from __future__ import annotations

import http.client
import socket

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.server import ServerConfig  # noqa: E402
from hortus.server.drain import BacklogRefuser  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

REQUEST = (
    b"POST /hortus.v1.Advisor/ListGames HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 2\r\n\r\n{}"
)


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):  # ConnectionResetError if reset
        data += chunk
    return data


def test_queued_connections_are_answered_not_reset() -> None:
    """Connections the kernel queued that nobody accepted: closing the listening socket reset
    them; the refuser answers each 503 and reads what it sent before closing."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    port = listener.getsockname()[1]
    clients = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(5)]
    for client in clients:
        client.sendall(REQUEST)
    BacklogRefuser(listener).close()
    for client in clients:
        answer = _answer(client)
        assert answer.startswith(b"HTTP/1.1 503 ") and b"connection: close" in answer.lower(), answer
        client.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_answers_while_draining_close_the_connection(serve: Servers) -> None:
    server = serve(ServerConfig(grace_seconds=2.0), web=WebOptions("127.0.0.1:0"))
    try:
        assert server.web is not None
        server.servicer.draining.set()
        conn = http.client.HTTPConnection("127.0.0.1", server.web.port, timeout=10)
        conn.request("POST", "/hortus.v1.Advisor/ListGames", b"{}", {"Content-Type": "application/json"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 503 and b"unavailable" in body, body
        assert response.getheader("connection") == "close"
        conn.close()
    finally:
        server.servicer.draining.clear()
