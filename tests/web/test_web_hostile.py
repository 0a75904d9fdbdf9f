"""A client's mistakes on the web port are 4xx answers, never a 500 with a traceback: a null
byte in the path, a name too long for the file system, a symlink loop under the static folder;
native gRPC and gRPC-Web's text mode get a 415 saying what the port serves."""

from __future__ import annotations

import http.client
import logging
import os

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, serve_module: Servers) -> RunningServer:
    static = tmp_path_factory.mktemp("static")
    (static / "index.html").write_text("<!doctype html><title>hortus</title>")
    os.symlink(static / "loop-b", static / "loop-a")
    os.symlink(static / "loop-a", static / "loop-b")
    return serve_module(ServerConfig(access_log=True), web=WebOptions("127.0.0.1:0", static_dir=static))


def _request(
    server: RunningServer, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    assert server.web is not None
    conn = http.client.HTTPConnection("127.0.0.1", server.web.port, timeout=10)
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "path",
    ["/a%00b", "/" + "n" * 300, "/" + "/".join(["d" * 250] * 80), "/" + "d" * 20_000, "/loop-a", "/loop-a/index.html"],
    ids=["null-byte", "name-over-255", "20kb-url", "20kb-name", "symlink-loop", "under-a-loop"],
)
def test_static_paths_that_cannot_be_files_are_4xx(running: RunningServer, path: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            status, body = _request(running, "GET", path)
            assert 400 <= status < 500, (status, body[:200])
            assert b"Traceback" not in body
    # nothing at WARNING or above: a client's mistake, not the server's
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text[:2000]
    # the port still serves afterwards
    assert _request(running, "GET", "/")[0] == 200


def _raw(server: RunningServer, data: bytes) -> bytes:
    assert server.web is not None
    import socket

    with socket.create_connection(("127.0.0.1", server.web.port), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(65536)):
            answer += chunk
    return answer


def test_bytes_that_are_not_http_are_400_logged_once_per_interval(
    running: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    """uvicorn logs "Invalid HTTP request received." for each: rate-limited to one line per
    interval (``hortus.server.guard.RateLimitedRecords``), the port serving on."""
    hostile = [b"GARBAGE\x00\x01 \r\n\r\n", b"GET /" + b"d" * 200_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"]
    with caplog.at_level(logging.INFO):
        for i in range(20):
            assert _raw(running, hostile[i % 2]).startswith(b"HTTP/1.1 400"), i
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) <= 1, caplog.text[:2000]
    assert _request(running, "GET", "/")[0] == 200


def test_native_grpc_on_the_web_port_is_415_naming_the_grpc_port(running: RunningServer) -> None:
    status, body = _request(running, "POST", "/hortus.v1.Advisor/GetVersion", b"\0\0\0\0\0", {"Content-Type": "application/grpc"})
    assert status == 415, body
    assert b"gRPC port" in body


def test_grpc_web_text_is_415_saying_what_is_served(running: RunningServer) -> None:
    status, body = _request(
        running, "POST", "/hortus.v1.Advisor/GetVersion", b"AAAAAAA=", {"Content-Type": "application/grpc-web-text"}
    )
    assert status == 415, body
    assert b"application/grpc-web+proto" in body


def _peers_logged(server: RunningServer, caplog: pytest.LogCaptureFixture) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="hortus.access"):
        status, body = _request(
            server,
            "POST",
            "/hortus.v1.Advisor/GetVersion",
            b"{}",
            {"Content-Type": "application/json", "X-Forwarded-For": "6.6.6.6"},
        )
    assert status == 200, body
    return [str(getattr(r, "peer", "")) for r in caplog.records if r.name == "hortus.access"]


def test_x_forwarded_for_is_believed_only_from_a_trusted_proxy(
    serve: Servers, running: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    peers = _peers_logged(running, caplog)
    assert peers and all("127.0.0.1" in p and "6.6.6.6" not in p for p in peers), peers
    trusting = serve(ServerConfig(access_log=True), web=WebOptions("127.0.0.1:0", trusted_proxies=("127.0.0.1",)))
    peers = _peers_logged(trusting, caplog)
    assert peers and all("6.6.6.6" in p for p in peers), peers


def test_content_length_with_transfer_encoding_is_400(running: RunningServer) -> None:
    assert running.web is not None
    import socket

    with socket.create_connection(("127.0.0.1", running.web.port), timeout=10) as sock:
        sock.sendall(
            b"POST /hortus.v1.Advisor/GetVersion HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\n\r\n"
        )
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "10.0.0.1"])
def test_a_loopback_server_refuses_foreign_host_names(running: RunningServer, host: str) -> None:
    status, body = _request(running, "GET", "/", headers={"Host": host})
    assert status == 421, body
    status, _ = _request(
        running, "POST", "/hortus.v1.Advisor/GetVersion", b"{}", {"Host": host, "Content-Type": "application/json"}
    )
    assert status == 421


@pytest.mark.parametrize("host", ["localhost", "localhost:1234", "127.0.0.1", "[::1]:8080"])
def test_a_loopback_server_serves_its_own_host_names(running: RunningServer, host: str) -> None:
    assert _request(running, "GET", "/", headers={"Host": host})[0] == 200
