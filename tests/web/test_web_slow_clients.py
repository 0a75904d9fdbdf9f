"""Slow clients cannot hold the web port (or the process's descriptors): connections that
send a request head one line at a time are closed after the request timeout, connections over
the cap are closed at accept, and meanwhile gRPC GetVersion and a web call still answer."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time

import grpc
import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.guard import RateLimitedLog, default_max_connections  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc  # noqa: E402
from servers import Servers  # noqa: E402

CAP = 20
TIMEOUT_S = 1.0


@pytest.fixture
def running(serve: Servers) -> RunningServer:
    return serve(ServerConfig(), web=WebOptions("127.0.0.1:0", max_connections=CAP, request_timeout=TIMEOUT_S))


def _closed(sock: socket.socket, wait: float) -> bool:
    """Whether the server closed `sock` within `wait` seconds (EOF or reset)."""
    sock.settimeout(wait)
    try:
        sock.recv(65536)  # EOF (b""): nothing is ever answered to a request that never ends
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def _web_call(server: RunningServer) -> str:
    assert server.web is not None
    conn = http.client.HTTPConnection("127.0.0.1", server.web.port, timeout=10)
    try:
        conn.request("POST", "/hortus.v1.Advisor/GetVersion", body=b"{}", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200
        protocol: str = json.loads(response.read())["protocol"]
        return protocol
    finally:
        conn.close()


def test_slow_heads_are_closed_and_both_ports_keep_answering(running: RunningServer) -> None:
    assert running.web is not None
    slow = [socket.create_connection(("127.0.0.1", running.web.port), timeout=5) for _ in range(CAP * 2)]
    try:
        for sock in slow:
            with contextlib.suppress(OSError):
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
        # over the cap: closed at accept, at once
        assert sum(_closed(s, 0.2) for s in slow[CAP:]) >= CAP - 2
        # a few keep sending a header line now and then: still closed by the request timeout
        for _ in range(3):
            time.sleep(TIMEOUT_S / 3)
            for sock in slow[:CAP]:
                with contextlib.suppress(OSError):
                    sock.sendall(b"X-Slow: 1\r\n")
        assert all(_closed(s, TIMEOUT_S * 5) for s in slow[:CAP])
        # both ports answer
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call]
            assert stub.GetVersion(pb.GetVersionRequest(), timeout=10).protocol == "hortus.v1"
        assert _web_call(running) == "hortus.v1"
    finally:
        for sock in slow:
            sock.close()


def test_an_idle_keep_alive_connection_is_closed(running: RunningServer) -> None:
    assert running.web is not None
    with socket.create_connection(("127.0.0.1", running.web.port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.2)
        sock.recv(65536)  # the answer
        sock.settimeout(TIMEOUT_S * 10)
        data = b"x"
        while data:  # EOF once the server closes the idle connection
            data = sock.recv(65536)


def test_the_default_cap_leaves_most_descriptors() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert default_max_connections() <= max(8, soft // 4)


def test_rate_limited_log_logs_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    limited = RateLimitedLog(logging.getLogger("hortus.test.ratelimit"), interval=3600)
    with caplog.at_level(logging.WARNING, logger="hortus.test.ratelimit"):
        logged = [limited.warning("kind", "event %d", i) for i in range(100)]
    assert logged.count(True) == 1
    assert len([r for r in caplog.records if r.name == "hortus.test.ratelimit"]) == 1
