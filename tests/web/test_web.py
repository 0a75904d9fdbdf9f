"""The web front door: Connect (JSON, binary) and gRPC-Web around the same servicer
as the gRPC port, in-process on free ports: the same answers, codes and google.rpc details,
deadlines, cancellation, the server-streaming batch, CORS, static files and the CLI."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import replace
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from connectrpc.code import Code  # noqa: E402
from connectrpc.errors import ConnectError  # noqa: E402
from connectrpc.protocol import ProtocolType  # noqa: E402
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]  # noqa: E402

from hortus.search import Analysis  # noqa: E402
from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc  # noqa: E402
from hortus.v1.advisor_connect import AdvisorClientSync  # noqa: E402
from servers import Servers  # noqa: E402

GAME = "botanik"
PAGE_ORIGIN = "http://page.test:9000"
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
def running(tmp_path_factory: pytest.TempPathFactory, serve_module: Servers) -> RunningServer:
    static = tmp_path_factory.mktemp("static")
    (static / "index.html").write_text("<!doctype html><title>hortus</title>")
    (static / "app.js").write_text("export const x = 1;")
    return serve_module(CONFIG, web=WebOptions("127.0.0.1:0", cors_origins=(PAGE_ORIGIN,), static_dir=static))


@pytest.fixture(scope="module")
def url(running: RunningServer) -> str:
    assert running.web is not None
    return f"http://127.0.0.1:{running.web.port}"


@pytest.fixture(scope="module")
def stub(running: RunningServer) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        yield advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]


def web_client(url: str, protocol: ProtocolType = ProtocolType.CONNECT, **kw: Any) -> AdvisorClientSync:
    return AdvisorClientSync(url, protocol=protocol, **kw)


def post_json(
    url: str, method: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """A Connect JSON unary call as a page's fetch (or curl) makes it."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(
            "POST", f"/hortus.v1.Advisor/{method}", json.dumps(body), {"Content-Type": "application/json", **(headers or {})}
        )
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(data) if data else None
    finally:
        conn.close()


def new_position(stub: Any, seed: int = 1) -> pb.Position:
    return stub.NewGame(pb.NewGameRequest(game=GAME, seed=seed), timeout=10).info.position  # type: ignore[no-any-return]


def bad_request_field(error: ConnectError) -> str:
    for detail in error.details:
        if detail.type_name == "google.rpc.BadRequest":
            return error_details_pb2.BadRequest.FromString(detail.message_bytes).field_violations[0].field  # type: ignore[no-any-return]
    raise AssertionError(f"no BadRequest detail in {error!r}")


def settled(running: RunningServer) -> bool:
    limit = time.monotonic() + 10
    while running.servicer.searches_in_flight and time.monotonic() < limit:
        time.sleep(0.01)
    return running.servicer.searches_in_flight == 0


# --- every protocol, one servicer ---------------------------------------------------------------
@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
def test_same_move_as_grpc_for_the_same_seed(url: str, stub: Any, protocol: ProtocolType) -> None:
    position = new_position(stub, seed=3)
    request = pb.SuggestMoveRequest(position=position, limits=pb.SearchLimits(iterations=300, seed=7, threads=1))
    native = stub.SuggestMove(request, timeout=30)
    with web_client(url, protocol) as client:
        answer = client.suggest_move(request)
    assert answer.action == native.action
    assert list(answer.turn) == list(native.turn)
    assert answer.analysis.iterations == native.analysis.iterations


def test_connect_json_unary_and_error_json(url: str) -> None:
    status, _, body = post_json(url, "ListGames", {})
    assert status == 200 and GAME in [g["name"] for g in body["games"]]
    status, _, body = post_json(url, "NewGame", {"game": "nope"})
    assert status == 400 and body["code"] == "invalid_argument"
    (detail,) = body["details"]
    assert detail["type"] == "google.rpc.BadRequest"
    bad = error_details_pb2.BadRequest.FromString(base64.b64decode(detail["value"] + "=="))
    assert bad.field_violations[0].field == "game"


@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
def test_invalid_argument_names_the_field(url: str, stub: Any, protocol: ProtocolType) -> None:
    position = new_position(stub)
    with web_client(url, protocol) as client:
        with pytest.raises(ConnectError) as info:
            client.rank_moves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=10**10)))
        assert info.value.code == Code.INVALID_ARGUMENT
        assert bad_request_field(info.value) == "limits.iterations"
        with pytest.raises(ConnectError) as info:
            client.legal_actions(pb.LegalActionsRequest(position=pb.Position(game=GAME, encoded=b"\x00garbage")))
        assert info.value.code == Code.INVALID_ARGUMENT
        assert bad_request_field(info.value).startswith("position")


@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
def test_resource_exhausted_carries_quota_and_retry_info(
    running: RunningServer, url: str, stub: Any, protocol: ProtocolType
) -> None:
    """The slots are the servicer's: gRPC searches fill them, the web call is refused."""
    position = new_position(stub)
    long = pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(time_ms=15_000, threads=1), interval_ms=0)
    calls = [stub.Analyze(long, timeout=30) for _ in range(CONFIG.max_concurrent_searches)]
    try:
        limit = time.monotonic() + 10
        while running.servicer.searches_in_flight < CONFIG.max_concurrent_searches and time.monotonic() < limit:
            time.sleep(0.01)
        with web_client(url, protocol) as client:
            with pytest.raises(ConnectError) as info:
                client.rank_moves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=100)))
        assert info.value.code == Code.RESOURCE_EXHAUSTED
        kinds = {d.type_name for d in info.value.details}
        assert kinds == {"google.rpc.QuotaFailure", "google.rpc.RetryInfo"}
    finally:
        for call in calls:
            call.cancel()
    assert settled(running)


def test_deadline_gives_a_partial_answer_in_time(url: str, stub: Any) -> None:
    position = new_position(stub)
    with web_client(url, timeout_ms=800) as client:
        answer = client.rank_moves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(time_ms=15_000)))
    assert answer.analysis.partial  # and in time: the client's 800 ms deadline did not expire


# --- streams: Analyze and the batch -----------------------------------------------------------
@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
def test_analyze_streams_partials_then_one_final(url: str, stub: Any, protocol: ProtocolType) -> None:
    position = new_position(stub)
    request = pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(time_ms=400), interval_ms=50, max_moves=3)
    with web_client(url, protocol) as client:
        answers = list(client.analyze(request))
    assert [a.final for a in answers].count(True) == 1 and answers[-1].final
    assert len(answers) >= 2
    assert all(len(a.analysis.moves) <= 3 for a in answers)


def _enveloped(message: dict[str, Any]) -> bytes:
    data = json.dumps(message).encode()
    return struct.pack(">BI", 0, len(data)) + data


def test_disconnect_stops_the_analysis_at_once(running: RunningServer, url: str, stub: Any) -> None:
    """No partial result is ever due (interval 0, 15 s budget): only watching the connection
    can stop this search; the servicer's listener says when it stopped."""
    stopped: list[tuple[float, bool]] = []

    def listener(method: str, analysis: Analysis, cancelled: bool) -> None:
        if method == "Analyze":
            stopped.append((time.monotonic(), cancelled))

    running.servicer.listeners.append(listener)
    try:
        position = new_position(stub)
        body = {
            "position": {"game": GAME, "encoded": base64.b64encode(position.encoded).decode()},
            "limits": {"time_ms": 15_000, "iterations": 10**9},
            "interval_ms": 0,
        }
        host, port = url.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)))
        payload = _enveloped(body)
        sock.sendall(
            b"POST /hortus.v1.Advisor/Analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/connect+json\r\n"
            + f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        limit = time.monotonic() + 10
        while running.servicer.searches_in_flight == 0 and time.monotonic() < limit:
            time.sleep(0.005)
        assert running.servicer.searches_in_flight == 1
        time.sleep(0.1)
        closed_at = time.monotonic()
        sock.close()
        limit = time.monotonic() + 10
        while not stopped and time.monotonic() < limit:
            time.sleep(0.005)
        assert stopped, "the search never stopped"
        when, cancelled = stopped[0]
        assert cancelled
        assert when - closed_at < 5.0  # of a 15 s budget: stopped by the disconnect, not its end
    finally:
        running.servicer.listeners.remove(listener)
    assert settled(running)


@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
def test_evaluate_batch_answers_each_position_once(url: str, stub: Any, protocol: ProtocolType) -> None:
    positions = [new_position(stub, seed=s) for s in range(4)]
    request = pb.EvaluateBatchRequest(
        positions=[
            *(
                pb.EvaluateRequest(id=f"p{i}", position=p, limits=pb.SearchLimits(iterations=50 + 40 * i))
                for i, p in enumerate(positions)
            ),
            pb.EvaluateRequest(id="bad", position=pb.Position(game="nope")),
        ]
    )
    with web_client(url, protocol) as client:
        answers = list(client.evaluate_batch(request))
    assert sorted(a.id for a in answers) == ["bad", "p0", "p1", "p2", "p3"]
    errors = {a.id: a.error for a in answers if a.HasField("error")}
    assert set(errors) == {"bad"} and errors["bad"].code == "INVALID_ARGUMENT" and errors["bad"].field == "position.game"
    # the same RPC on the gRPC port
    native = list(stub.EvaluateBatch(request, timeout=60))
    assert sorted(a.id for a in native) == sorted(a.id for a in answers)


def test_evaluate_batch_cap_is_checked_before_any_search(running: RunningServer, url: str, stub: Any) -> None:
    position = new_position(stub)
    request = pb.EvaluateBatchRequest(
        positions=[pb.EvaluateRequest(id=str(i), position=position) for i in range(CONFIG.max_batch_size + 1)]
    )
    with web_client(url) as client:
        with pytest.raises(ConnectError) as info:
            list(client.evaluate_batch(request))
    assert info.value.code == Code.INVALID_ARGUMENT and bad_request_field(info.value) == "positions"
    with pytest.raises(grpc.RpcError) as native:
        list(stub.EvaluateBatch(request, timeout=30))
    assert native.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_evaluate_positions_is_unimplemented_over_http1(url: str) -> None:
    status, _, _ = post_json(url, "EvaluatePositions", {})
    assert status in (400, 404, 415, 501)  # a bidi stream has no unary JSON form
    with web_client(url) as client:
        with pytest.raises(ConnectError) as info:
            list(client.evaluate_positions(iter([pb.EvaluateRequest(id="a")])))
    assert info.value.code == Code.UNIMPLEMENTED


# --- CORS and static files ----------------------------------------------------------------------
def _request(url: str, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_cors_only_for_the_allowed_origins(url: str) -> None:
    preflight = {"Origin": PAGE_ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    status, headers, _ = _request(url, "OPTIONS", "/hortus.v1.Advisor/RankMoves", preflight)
    assert status == 204 and headers["access-control-allow-origin"] == PAGE_ORIGIN
    assert "connect-timeout-ms" in headers["access-control-allow-headers"].lower()
    status, headers, _ = _request(url, "OPTIONS", "/hortus.v1.Advisor/RankMoves", {**preflight, "Origin": "http://evil.test"})
    assert "access-control-allow-origin" not in headers
    _, headers, _ = post_json(url, "ListGames", {}, {"Origin": PAGE_ORIGIN})
    assert headers["access-control-allow-origin"] == PAGE_ORIGIN
    assert "grpc-status-details-bin" in headers["access-control-expose-headers"].lower()
    _, headers, _ = post_json(url, "ListGames", {}, {"Origin": "http://evil.test"})
    assert "access-control-allow-origin" not in headers


def test_static_files_never_outside_their_folder(url: str) -> None:
    status, headers, body = _request(url, "GET", "/", {})
    assert status == 200 and body.startswith(b"<!doctype html>") and headers["content-type"].startswith("text/html")
    status, headers, body = _request(url, "GET", "/app.js", {})
    assert status == 200 and "javascript" in headers["content-type"]
    for path in ("/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/missing.js"):
        status, _, _ = _request(url, "GET", path, {})
        assert status == 404, path


# --- life cycle and the CLI ---------------------------------------------------------------------
def _quota_subject(details: Any) -> tuple[str, float]:
    """(QuotaFailure subject, RetryInfo delay in s) of a refusal's ``google.rpc`` details,
    given as (type name, serialized message) pairs."""
    subject, delay = "", -1.0
    for name, data in details:
        if name == "google.rpc.QuotaFailure":
            subject = error_details_pb2.QuotaFailure.FromString(data).violations[0].subject
        elif name == "google.rpc.RetryInfo":
            delay = error_details_pb2.RetryInfo.FromString(data).retry_delay.ToNanoseconds() / 1e9
    return subject, delay


def _grpc_details(error: grpc.RpcError) -> list[tuple[str, bytes]]:
    from google.rpc import status_pb2  # type: ignore[import-untyped, unused-ignore]

    for key, value in error.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            return [(d.type_url.rsplit("/", 1)[1], d.value) for d in status_pb2.Status.FromString(value).details]
    return []


def test_both_ports_share_one_admission_control(serve: Servers) -> None:
    """max_concurrent_rpcs=2 over both ports together: a gRPC Analyze and a web Analyze
    in flight fill it, so a third work call is RESOURCE_EXHAUSTED (QuotaFailure subject
    max_concurrent_rpcs, RetryInfo) on either port, a probe (GetVersion) is still answered on
    both, and the budget is back once the two calls end. (With a count of its own, the web
    port admitted 2 calls beside gRPC's 2.)"""
    config = replace(CONFIG, max_concurrent_rpcs=2, max_concurrent_searches=4, retry_after_ms=250)
    server = serve(config, web=WebOptions("127.0.0.1:0"))
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    sock: socket.socket | None = None
    held: Any = None
    try:
        assert server.web is not None and server.admission is not None
        url = f"http://127.0.0.1:{server.web.port}"
        grpc_stub: Any = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
        position = new_position(grpc_stub)
        long = pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(time_ms=15_000, threads=1), interval_ms=0)
        held = grpc_stub.Analyze(long, timeout=30)
        sock = socket.create_connection(("127.0.0.1", server.web.port))
        payload = _enveloped(
            {
                "position": {"game": GAME, "encoded": base64.b64encode(position.encoded).decode()},
                "limits": {"time_ms": 15_000, "threads": 1},
                "interval_ms": 0,
            }
        )
        sock.sendall(
            b"POST /hortus.v1.Advisor/Analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/connect+json\r\n"
            + f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        limit = time.monotonic() + 10
        while server.servicer.searches_in_flight < 2 and time.monotonic() < limit:
            time.sleep(0.005)
        assert server.servicer.searches_in_flight == 2
        assert server.admission.in_flight == 2

        with pytest.raises(grpc.RpcError) as refused:
            grpc_stub.ListGames(pb.ListGamesRequest(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
        assert _quota_subject(_grpc_details(refused.value)) == ("max_concurrent_rpcs", 0.25)
        for protocol in (ProtocolType.CONNECT, ProtocolType.GRPC_WEB):
            with web_client(url, protocol) as client:
                with pytest.raises(ConnectError) as info:
                    client.list_games(pb.ListGamesRequest())
                assert info.value.code == Code.RESOURCE_EXHAUSTED
                pairs = [(d.type_name, d.message_bytes) for d in info.value.details]
                assert _quota_subject(pairs) == ("max_concurrent_rpcs", 0.25)
                assert client.get_version(pb.GetVersionRequest()).version  # a probe: never refused for load
        status, _, body = post_json(url, "ListGames", {})
        assert (status, body["code"]) == (429, "resource_exhausted")  # Connect JSON, as a page sees it
        assert grpc_stub.GetVersion(pb.GetVersionRequest(), timeout=10).version
    finally:
        if held is not None:
            held.cancel()
        if sock is not None:
            sock.close()
    try:
        limit = time.monotonic() + 10
        while server.admission.in_flight and time.monotonic() < limit:
            time.sleep(0.005)
        assert server.admission.in_flight == 0
        assert grpc_stub.ListGames(pb.ListGamesRequest(), timeout=10).games
        with web_client(url) as client:
            assert client.list_games(pb.ListGamesRequest()).games
    finally:
        channel.close()


def test_stop_closes_the_web_port(serve: Servers) -> None:
    server = serve(ServerConfig(default_iterations=20), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    port = server.web.port
    assert post_json(f"http://127.0.0.1:{port}", "ListGames", {})[0] == 200
    server.stop(0.2)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_web_calls_reach_the_access_log(serve: Servers, caplog: pytest.LogCaptureFixture) -> None:
    server = serve(ServerConfig(access_log=True), web=WebOptions("127.0.0.1:0"))
    assert server.web is not None
    with caplog.at_level("INFO", logger="hortus.access"):
        post_json(f"http://127.0.0.1:{server.web.port}", "NewGame", {"game": "nope"})
    records = [r for r in caplog.records if r.name == "hortus.access"]
    assert any(getattr(r, "method", "") == "NewGame" and getattr(r, "code", "") == "INVALID_ARGUMENT" for r in records)
    assert any(str(getattr(r, "peer", "")).startswith("web:") for r in records)


def test_hortus_serve_starts_the_web_port_by_default() -> None:
    """`hortus serve --address HOST:0` puts the web port on a free port too (tests never
    collide on 8080), shared by the worker processes like the gRPC port; SIGTERM stops both."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hortus.cli",
            "serve",
            "--address",
            "127.0.0.1:0",
            "--workers",
            "2",
            "--grace-seconds",
            "1",
            "--cors-origin",
            PAGE_ORIGIN,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in first, first
        proc.stdout.readline()  # the worker pids
        second = proc.stdout.readline()
        assert "hortus web" in second, second
        web = second.rsplit(" ", 1)[1].strip()
        status, headers, body = post_json(web, "ListGames", {}, {"Origin": PAGE_ORIGIN})
        assert status == 200 and headers["access-control-allow-origin"] == PAGE_ORIGIN
    finally:
        proc.terminate()
        assert proc.wait(30) == 0


def test_explicit_web_address_that_is_taken_fails_clearly() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "hortus.cli",
                "serve",
                "--address",
                "127.0.0.1:0",
                "--workers",
                "1",
                "--web-address",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert f"127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr


def test_static_dir_default_is_the_package_folder() -> None:
    from hortus.server import web

    folder = web.default_static_dir()
    assert folder is None or (folder / "index.html").is_file()
    assert Path(str(__import__("importlib").resources.files("hortus"))).is_dir()


def test_threads_left_behind_are_daemon() -> None:
    assert all(t.daemon for t in threading.enumerate() if t.name.startswith("hortus-web"))


@pytest.mark.parametrize("protocol", [ProtocolType.CONNECT, ProtocolType.GRPC_WEB])
def test_review_game_streams_the_same_review(url: str, stub: Any, protocol: ProtocolType) -> None:
    """ReviewGame (a server stream) over the web port: the same answers as the gRPC port, and
    a bad move named by its index."""
    from hortus import games

    state = games.get(GAME).new_game(seed=2)
    moves = []
    while not state.is_terminal() and len(moves) < 30:
        action = state.chance_outcomes()[0][0] if state.is_chance() else state.legal_actions()[-1]
        moves.append(pb.RecordedMove(action=pb.ActionRef(id=action)))
        state.apply(action)
    request = pb.ReviewGameRequest(game=GAME, seed=2, moves=moves, limits=pb.SearchLimits(iterations=100, seed=3))
    with web_client(url, protocol) as client:
        answers = list(client.review_game(request))
    native = list(stub.ReviewGame(request, timeout=60))
    assert answers[-1].HasField("summary") and all(a.HasField("move") for a in answers[:-1])
    assert [a.move for a in answers[:-1]] == [a.move for a in native[:-1]]
    assert answers[-1].summary.seats == native[-1].summary.seats
    bad = pb.ReviewGameRequest()
    bad.CopyFrom(request)
    bad.moves[7].action.id = 9999
    with web_client(url, protocol) as client:
        with pytest.raises(ConnectError) as info:
            list(client.review_game(bad))
    assert info.value.code == Code.INVALID_ARGUMENT and bad_request_field(info.value) == "moves[7].action"
