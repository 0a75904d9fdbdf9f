"""Plain HTTP + JSON on the web port (hortus.server.http_json): NDJSON and SSE streams of the
server-streaming RPCs, unknown JSON fields rejected by name, error details with their debug
form, and the probes /healthz and /readyz; in-process on free ports."""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers  # noqa: E402

GAME = "botanik"
CONFIG = ServerConfig(
    default_iterations=200,
    max_iterations=10**9,
    max_time_ms=20_000,
    max_threads=2,
    max_concurrent_searches=3,
    max_batch_size=6,
    deadline_margin_ms=100,
)


@pytest.fixture(scope="module")
def running(serve_module: Servers) -> RunningServer:
    return serve_module(CONFIG, web=WebOptions("127.0.0.1:0"))


@pytest.fixture(scope="module")
def port(running: RunningServer) -> int:
    assert running.web is not None
    return running.web.port


def request(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body, headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def position(port: int, seed: int = 7) -> dict[str, Any]:
    status, _, body = request(
        port,
        "POST",
        "/hortus.v1.Advisor/NewGame",
        json.dumps({"game": GAME, "seed": seed}).encode(),
        {"Content-Type": "application/json"},
    )
    assert status == 200, body
    return json.loads(body)["info"]["position"]  # type: ignore[no-any-return]


def ndjson(port: int, method: str, message: dict[str, Any]) -> list[dict[str, Any]]:
    status, headers, body = request(
        port, "POST", f"/hortus.v1.Advisor/{method}", json.dumps(message).encode(), {"Content-Type": "application/x-ndjson"}
    )
    assert status == 200
    assert headers["content-type"] == "application/x-ndjson"
    assert body.endswith(b"\n")
    return [json.loads(line) for line in body.decode().splitlines()]


def test_analyze_streams_ndjson_and_ends_ok(port: int) -> None:
    lines = ndjson(
        port, "Analyze", {"position": position(port), "limits": {"iterations": 400, "seed": 3, "threads": 1}, "intervalMs": 10}
    )
    assert lines[-1] == {"end": {"code": "ok"}}
    results = [line["result"] for line in lines[:-1]]
    assert results and all(set(line) == {"result"} for line in lines[:-1])
    assert results[-1]["final"] is True and not any(r.get("final") for r in results[:-1])


def test_ndjson_final_result_is_deterministic_for_a_seed(port: int) -> None:
    pos = position(port, seed=11)
    message = {"position": pos, "limits": {"iterations": 300, "seed": 5, "threads": 1}}
    first, second = ndjson(port, "Analyze", message), ndjson(port, "Analyze", message)
    assert first[-1] == second[-1] == {"end": {"code": "ok"}}
    assert first[-2]["result"]["final"] is True
    timing = ("elapsedMs",)  # wall-clock time is the one thing a seed does not fix
    one, two = ({k: v for k, v in lines[-2]["result"]["analysis"].items() if k not in timing} for lines in (first, second))
    assert one == two


def test_unknown_field_is_invalid_argument_naming_it(port: int) -> None:
    # unary Connect JSON
    status, _, body = request(
        port, "POST", "/hortus.v1.Advisor/NewGame", b'{"game": "botanik", "seeed": 1}', {"Content-Type": "application/json"}
    )
    assert status == 400
    error = json.loads(body)
    assert error["code"] == "invalid_argument" and "seeed" in error["message"]
    detail = error["details"][0]
    assert detail["type"] == "google.rpc.BadRequest"
    assert detail["debug"]["fieldViolations"][0]["field"] == "seeed"
    # NDJSON: the only line is the end, with the same error
    lines = ndjson(port, "Analyze", {"position": position(port), "limitz": {}})
    assert len(lines) == 1
    assert lines[0]["end"]["code"] == "invalid_argument"
    assert lines[0]["end"]["details"][0]["debug"]["fieldViolations"][0]["field"] == "limitz"


@pytest.mark.parametrize(
    "body,field",
    [
        ({"limits": {"iterationz": 1}}, "limits.iterationz"),  # unknown, nested
        ({"limits": {"iterations": -5}}, "limits.iterations"),  # out of range
        ({"maxMoves": "abc"}, "maxMoves"),  # not a number
    ],
)
def test_a_malformed_field_is_named_by_its_json_path(port: int, body: dict[str, Any], field: str) -> None:
    """Unary and NDJSON alike: the BadRequest violation names the field by its path in the
    request's JSON, and the stream's end line is the same error JSON (RankMoves and Analyze
    share these fields)."""
    message = json.dumps({"position": position(port), **body}).encode()
    status, _, answer = request(port, "POST", "/hortus.v1.Advisor/RankMoves", message, {"Content-Type": "application/json"})
    assert status == 400, answer
    error = json.loads(answer)
    assert error["code"] == "invalid_argument" and field in error["message"], error
    assert error["details"][0]["debug"]["fieldViolations"][0]["field"] == field, error
    (end,) = ndjson(port, "Analyze", json.loads(message))
    assert end["end"]["code"] == error["code"]
    assert end["end"]["details"][0]["debug"]["fieldViolations"][0]["field"] == field, end


def test_servicer_error_details_are_decoded(port: int) -> None:
    status, _, body = request(
        port, "POST", "/hortus.v1.Advisor/NewGame", b'{"game": "no-such-game"}', {"Content-Type": "application/json"}
    )
    assert 400 <= status < 500
    error = json.loads(body)
    assert error["details"], error
    assert all("debug" in detail and "value" in detail for detail in error["details"])
    # the stream ends with the servicer's error and its decoded details
    lines = ndjson(port, "Analyze", {"position": position(port), "intervalMs": 1})
    assert lines[-1]["end"]["code"] == "invalid_argument"
    assert any("debug" in d for d in lines[-1]["end"].get("details", []))


def test_sse_get_with_message_query(port: int) -> None:
    message = json.dumps({"position": position(port), "limits": {"iterations": 200, "seed": 1, "threads": 1}})
    status, headers, body = request(
        port, "GET", "/hortus.v1.Advisor/Analyze?message=" + quote(message), headers={"Accept": "text/event-stream"}
    )
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = [block for block in body.decode().split("\n\n") if block]
    kinds = [block.splitlines()[0] for block in events]
    assert kinds[-1] == "event: end" and set(kinds[:-1]) == {"event: result"}
    assert json.loads(events[-1].splitlines()[1].removeprefix("data: ")) == {"code": "ok"}


def test_closing_the_connection_stops_the_search(running: RunningServer, port: int) -> None:
    message = json.dumps({"position": position(port), "limits": {"timeMs": 15_000, "threads": 1}, "intervalMs": 50}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(
        b"POST /hortus.v1.Advisor/Analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n"
        + f"Content-Length: {len(message)}\r\n\r\n".encode()
        + message
    )
    first = sock.recv(65536)
    assert b"200" in first.split(b"\r\n")[0]
    while b'{"result"' not in first:
        first += sock.recv(65536)
    assert running.servicer.searches_in_flight == 1
    sock.close()
    limit = time.monotonic() + 10
    while running.servicer.searches_in_flight and time.monotonic() < limit:
        time.sleep(0.02)
    assert running.servicer.searches_in_flight == 0


def test_health_and_readiness(running: RunningServer, port: int) -> None:
    assert request(port, "GET", "/healthz")[0] == 200
    assert request(port, "GET", "/readyz")[:1] == (200,)
    running.servicer.draining.set()
    try:
        assert request(port, "GET", "/readyz")[0] == 503
        assert request(port, "GET", "/healthz")[0] == 200
    finally:
        running.servicer.draining.clear()


def test_openapi_document_is_served_and_valid(port: int) -> None:
    status, headers, body = request(port, "GET", "/openapi.json")
    assert status == 200 and headers["content-type"] == "application/json"
    document = json.loads(body)
    assert document["openapi"] == "3.1.0"
    assert "/hortus.v1.Advisor/Analyze" in document["paths"]
    assert "get" in document["paths"]["/hortus.v1.Advisor/ListGames"]
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)


def test_connect_get_of_every_read_only_rpc_and_no_other(port: int) -> None:
    """Every unary RPC marked NO_SIDE_EFFECTS in advisor.proto answers Connect GET, which an
    HTTP cache may keep; the others refuse GET with the error JSON."""
    from google.protobuf import descriptor_pb2

    from hortus.v1 import advisor_pb2 as pb

    pos = position(port)
    messages = {"LegalActions": {"position": pos}, "ViewPosition": {"position": pos, "seat": 1}}
    read_only = []
    for method in pb.DESCRIPTOR.services_by_name["Advisor"].methods:
        if method.client_streaming or method.server_streaming:
            continue
        query = "?connect=v1&encoding=json&message=" + quote(json.dumps(messages.get(method.name, {})))
        status, headers, body = request(port, "GET", f"/hortus.v1.Advisor/{method.name}{query}")
        if method.GetOptions().idempotency_level == descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS:
            read_only.append(method.name)
            assert status == 200, (method.name, body)
            assert headers["cache-control"] == "public, max-age=300", (method.name, headers)
        else:
            assert status == 405 and json.loads(body)["code"] == "unimplemented", (method.name, status, body)
    assert sorted(read_only) == ["GetVersion", "LegalActions", "ListGames", "ViewPosition"]
    status, _, body = request(port, "GET", "/hortus.v1.Advisor/ListGames?connect=v1&encoding=json&message=" + quote("{}"))
    assert any(game["name"] == GAME for game in json.loads(body)["games"])
    status, headers, body = request(
        port, "GET", "/hortus.v1.Advisor/ListGames?connect=v1&encoding=json&message=" + quote('{"bogus": 1}')
    )
    assert status == 400 and "bogus" in json.loads(body)["message"]
    assert headers["cache-control"] == "no-store"


def test_overload_error_json_carries_the_retry_delay_decoded(serve: Servers) -> None:
    """A refusal for overload (every search slot busy) is resource_exhausted with the retry
    delay readable as JSON (details[].debug.retryDelay), unary and as a stream's end line."""
    server = serve(ServerConfig(max_concurrent_searches=1, max_threads=1), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    web = server.web.port
    pos = position(web)
    message = json.dumps({"position": pos, "limits": {"timeMs": 20_000, "threads": 1}, "intervalMs": 50}).encode()
    sock = socket.create_connection(("127.0.0.1", web), timeout=30)
    sock.sendall(
        b"POST /hortus.v1.Advisor/Analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n"
        + f"Content-Length: {len(message)}\r\n\r\n".encode()
        + message
    )
    seen = b""
    while b'{"result"' not in seen:
        seen += sock.recv(65536)
    try:
        ask = json.dumps({"position": pos, "limits": {"iterations": 100}}).encode()
        # a short deadline: the fair queue does not hold a call with under 2 s left
        short = {"Content-Type": "application/json", "Connect-Timeout-Ms": "1000"}
        status, _, body = request(web, "POST", "/hortus.v1.Advisor/RankMoves", ask, short)
        assert status == 429, body
        error = json.loads(body)
        assert error["code"] == "resource_exhausted"
        delays = [d["debug"]["retryDelay"] for d in error["details"] if d["type"] == "google.rpc.RetryInfo"]
        assert delays and delays[0].endswith("s"), error
        status, _, body = request(
            web, "POST", "/hortus.v1.Advisor/Analyze", ask, {**short, "Content-Type": "application/x-ndjson"}
        )
        end = json.loads(body.decode().splitlines()[-1])["end"]
        assert end["code"] == "resource_exhausted", end
        assert any("retryDelay" in d.get("debug", {}) for d in end["details"]), end
    finally:
        sock.close()
