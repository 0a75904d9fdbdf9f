"""The web port's access log and metrics tell the truth: every request on the RPC path is
observed exactly once, those refused by connectrpc or the front door before any handler ran
too, with the code the client got; a call ended by its deadline is DEADLINE_EXCEEDED and one
whose client went away CANCELLED; a client's envelope framing mistakes are INVALID_ARGUMENT."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.server import ServerConfig  # noqa: E402
from hortus.server.service import AdvisorServicer  # noqa: E402
from hortus.server.web import WebOptions, WebServer, start_web  # noqa: E402

SLOW_S = 3.0


class _SlowServicer(AdvisorServicer):
    """ListGames takes SLOW_S seconds (or until the call ends): a handler still running when
    the client leaves or the deadline passes."""

    def ListGames(self, request: Any, context: Any) -> Any:  # noqa: N802 - the RPC's name
        ended = threading.Event()
        context.add_callback(ended.set)
        ended.wait(SLOW_S)
        return super().ListGames(request, context)


class Seen:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, method: str, code: str, seconds: float, context: Any) -> None:
        assert context.peer().startswith("web:")
        with self._lock:
            self.calls.append((method, code))

    def wait(self, count: int, timeout: float = 10.0) -> list[tuple[str, str]]:
        limit = time.monotonic() + timeout
        while time.monotonic() < limit:
            with self._lock:
                if len(self.calls) >= count:
                    break
            time.sleep(0.02)
        time.sleep(0.1)  # a second report of the same call would arrive now
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[WebServer, Seen]]:
    seen = Seen()
    servicer = _SlowServicer(ServerConfig(default_iterations=50))
    server = start_web(servicer, WebOptions("127.0.0.1:0", observers=[seen]))
    yield server, seen
    server.stop(0)
    servicer.close()


def _post(server: WebServer, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def _envelope(data: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + struct.pack(">I", len(data)) + data


ANALYZE = "/hortus.v1.Advisor/Analyze"
VERSION = "/hortus.v1.Advisor/GetVersion"


def _error_code(content_type: str, body: bytes, headers: dict[str, str]) -> str:
    """The code of an enveloped error answer: Connect's end-of-stream JSON, gRPC-Web's trailers."""
    if content_type.startswith("application/connect"):
        assert body[0] == 2, body  # the end-of-stream envelope
        return str(json.loads(body[5:])["error"]["code"])
    if "grpc-status" in headers:
        return {"3": "invalid_argument"}.get(headers["grpc-status"], headers["grpc-status"])
    trailers = body[5:].decode()
    status = next(line.split(":", 1)[1].strip() for line in trailers.split("\r\n") if line.startswith("grpc-status"))
    return {"3": "invalid_argument", "12": "unimplemented", "13": "internal"}.get(status, status)


@pytest.mark.parametrize("content_type", ["application/connect+proto", "application/grpc-web+proto"])
@pytest.mark.parametrize(
    ("path", "body"),
    [
        (ANALYZE, _envelope(b"", flags=1)),
        (ANALYZE, b""),
        (ANALYZE, _envelope(b"") + _envelope(b"")),
        (VERSION, _envelope(b"", flags=1)),
    ],
    ids=["compressed-without-encoding", "zero-envelopes", "two-envelopes", "unary-compressed"],
)
def test_envelope_framing_mistakes_are_invalid_argument(
    web: tuple[WebServer, Seen], content_type: str, path: str, body: bytes
) -> None:
    server, seen = web
    if path == VERSION and content_type.startswith("application/connect"):
        content_type = "application/connect+proto"  # a Connect unary call has no envelope: a stream
        path = "/hortus.v1.Advisor/EvaluateBatch"
    status, answer, headers = _post(server, path, body, {"Content-Type": content_type})
    assert status == 200, answer
    assert _error_code(content_type, answer, headers) == "invalid_argument", answer
    assert [code for _, code in seen.wait(1)] == ["INVALID_ARGUMENT"]


@pytest.mark.parametrize(
    ("headers", "body", "code"),
    [
        ({"Content-Type": "text/plain"}, b"{}", "INVALID_ARGUMENT"),  # connectrpc: 415
        ({"Content-Type": "application/json"}, b"{not json", "INVALID_ARGUMENT"),
        ({"Content-Type": "application/json"}, b'{"seeed": 1}', "INVALID_ARGUMENT"),
        ({"Content-Type": "application/grpc"}, b"\0\0\0\0\0", "INVALID_ARGUMENT"),  # the front door: 415
        ({"Content-Type": "application/grpc-web-text"}, b"AAAAAAA=", "INVALID_ARGUMENT"),
        ({"Content-Type": "application/json", "Content-Encoding": "br0"}, b"{}", "UNIMPLEMENTED"),
        ({"Content-Type": "application/json"}, b"{}", "OK"),
    ],
    ids=["content-type", "bad-json", "unknown-field", "native-grpc", "grpc-web-text", "unknown-encoding", "fine"],
)
def test_every_request_reaches_the_observers_once(
    web: tuple[WebServer, Seen], headers: dict[str, str], body: bytes, code: str
) -> None:
    server, seen = web
    status, answer, _ = _post(server, VERSION, body, headers)
    assert (status == 200) == (code == "OK"), (status, answer)
    assert seen.wait(1) == [("GetVersion", code)]


def test_an_invented_method_is_one_label(web: tuple[WebServer, Seen]) -> None:
    server, seen = web
    for name in ("Nope1", "Nope2"):
        assert _post(server, f"/hortus.v1.Advisor/{name}", b"{}", {"Content-Type": "application/json"})[0] == 404
    assert seen.wait(2) == [("(unknown)", "UNIMPLEMENTED")] * 2


def test_a_plain_http_stream_refused_for_bad_json_is_observed(web: tuple[WebServer, Seen]) -> None:
    server, seen = web
    status, answer, _ = _post(server, ANALYZE, b"{nope", {"Content-Type": "application/x-ndjson"})
    assert status == 200 and b'"end"' in answer
    assert seen.wait(1) == [("Analyze", "INVALID_ARGUMENT")]


def test_a_call_ended_by_its_deadline_is_deadline_exceeded(web: tuple[WebServer, Seen]) -> None:
    server, seen = web
    status, answer, _ = _post(
        server, "/hortus.v1.Advisor/ListGames", b"{}", {"Content-Type": "application/json", "Connect-Timeout-Ms": "300"}
    )
    assert json.loads(answer)["code"] == "deadline_exceeded", (status, answer)
    assert seen.wait(1) == [("ListGames", "DEADLINE_EXCEEDED")]


def test_a_deadline_passed_while_reading_the_request_is_deadline_exceeded(web: tuple[WebServer, Seen]) -> None:
    server, seen = web
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /hortus.v1.Advisor/GetVersion HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Connect-Timeout-Ms: 200\r\nContent-Length: 2\r\n\r\n{"
        )
        answer = b""
        while b"deadline_exceeded" not in answer and (chunk := sock.recv(65536)):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 504") and b"deadline_exceeded" in answer, answer
    assert seen.wait(1) == [("GetVersion", "DEADLINE_EXCEEDED")]


def test_a_call_its_client_left_is_cancelled(web: tuple[WebServer, Seen]) -> None:
    server, seen = web
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /hortus.v1.Advisor/ListGames HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Connect-Timeout-Ms: 20000\r\nContent-Length: 2\r\n\r\n{}"
        )
        time.sleep(0.3)  # the handler runs
    assert seen.wait(1) == [("ListGames", "CANCELLED")]
