"""SimulateGames on the web port: over Connect (JSON, binary) and gRPC-Web the same answers as
the gRPC port, as NDJSON one ``result`` line per game then the report then ``{"end": ok}``; a
bad field ends the stream INVALID_ARGUMENT naming it; the OpenAPI document lists it."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

pytest.importorskip("connectrpc", reason="the web front door needs the web extra: pip install 'hortus[web]'")

from connectrpc.code import Code  # noqa: E402
from connectrpc.compat import google_protobuf_binary_codec  # noqa: E402
from connectrpc.compat._codec import ProtoJSONCodec  # noqa: E402
from connectrpc.errors import ConnectError  # noqa: E402
from connectrpc.protocol import ProtocolType  # noqa: E402
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]  # noqa: E402

from hortus.server import RunningServer, ServerConfig  # noqa: E402
from hortus.server.openapi import openapi_document  # noqa: E402
from hortus.server.web import WebOptions  # noqa: E402
from hortus.v1 import advisor_pb2 as pb  # noqa: E402
from hortus.v1 import advisor_pb2_grpc  # noqa: E402
from hortus.v1.advisor_connect import AdvisorClientSync  # noqa: E402
from servers import Servers  # noqa: E402

CONFIG = ServerConfig(max_concurrent_searches=2, max_threads=1, max_batch_size=8)
REQUEST = {"game": "botanik", "games": 4, "level": 1, "seed": 5}
PATH = "/hortus.v1.Advisor/SimulateGames"


@pytest.fixture(scope="module")
def running(serve_module: Servers) -> RunningServer:
    return serve_module(CONFIG, web=WebOptions("127.0.0.1:0"))


@pytest.fixture(scope="module")
def url(running: RunningServer) -> str:
    assert running.web is not None
    return f"http://127.0.0.1:{running.web.port}"


@pytest.fixture(scope="module")
def native(running: RunningServer) -> Iterator[list[pb.SimulateGamesResponse]]:
    """The gRPC port's answers to REQUEST."""
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
        yield list(stub.SimulateGames(pb.SimulateGamesRequest(**REQUEST), timeout=120))  # type: ignore[arg-type]


def _ndjson(url: str, body: dict[str, Any]) -> tuple[int, str, list[dict[str, Any]]]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    try:
        conn.request("POST", PATH, json.dumps(body), {"Content-Type": "application/x-ndjson"})
        response = conn.getresponse()
        lines = [json.loads(line) for line in response.read().decode().splitlines()]
        return response.status, response.getheader("content-type") or "", lines
    finally:
        conn.close()


def _client(url: str, protocol: ProtocolType, binary: bool) -> AdvisorClientSync:
    return AdvisorClientSync(url, protocol=protocol, codec=google_protobuf_binary_codec() if binary else ProtoJSONCodec())


def _games_then_report(answers: list[pb.SimulateGamesResponse]) -> tuple[list[str], str]:
    *games, last = answers
    assert all(a.WhichOneof("item") == "game" for a in games) and last.WhichOneof("item") == "report_json"
    return sorted(a.game.game_id for a in games), last.report_json


@pytest.mark.parametrize(
    ("protocol", "binary"), [(ProtocolType.CONNECT, False), (ProtocolType.CONNECT, True), (ProtocolType.GRPC_WEB, True)]
)
def test_connect_and_grpc_web_stream_what_the_grpc_port_does(
    url: str, native: list[pb.SimulateGamesResponse], protocol: ProtocolType, binary: bool
) -> None:
    with _client(url, protocol, binary) as client:
        answers = list(client.simulate_games(pb.SimulateGamesRequest(**REQUEST), timeout_ms=120_000))  # type: ignore[arg-type]
    ids, report = _games_then_report(answers)
    assert ids == [f"2:{i}" for i in range(4)]
    assert (ids, report) == _games_then_report(native)
    with _client(url, protocol, binary) as client:
        with pytest.raises(ConnectError) as caught:
            list(client.simulate_games(pb.SimulateGamesRequest(game="botanists", players=[2, 2], games=1)))
    assert caught.value.code == Code.INVALID_ARGUMENT
    (bad,) = [d for d in caught.value.details if d.type_name == "google.rpc.BadRequest"]
    assert error_details_pb2.BadRequest.FromString(bad.message_bytes).field_violations[0].field == "players[1]"


def test_ndjson_a_line_per_game_then_the_report_then_the_end(url: str, native: list[pb.SimulateGamesResponse]) -> None:
    status, kind, lines = _ndjson(url, REQUEST)
    assert status == 200 and kind.startswith("application/x-ndjson"), (status, kind)
    *results, end = lines
    assert end == {"end": {"code": "ok"}}
    *games, last = [line["result"] for line in results]
    assert sorted(g["game"]["gameId"] for g in games) == [f"2:{i}" for i in range(4)]
    assert [g["game"]["gamesDone"] for g in games] == [1, 2, 3, 4]
    assert last["reportJson"] == _games_then_report(native)[1]


def test_ndjson_a_bad_field_is_one_end_line_naming_it(url: str) -> None:
    status, _, lines = _ndjson(url, {"game": "botanik", "games": 0})
    assert status == 200 and len(lines) == 1, lines
    end = lines[0]["end"]
    assert end["code"] == "invalid_argument", end
    (bad,) = [d for d in end["details"] if d["type"] == "google.rpc.BadRequest"]
    assert bad["debug"]["fieldViolations"][0]["field"] == "games", bad


def test_the_openapi_document_lists_it_as_ndjson() -> None:
    operation = openapi_document()["paths"][PATH]["post"]
    assert operation["operationId"] == "SimulateGames"
    assert "application/x-ndjson" in operation["responses"]["200"]["content"]
    schema = openapi_document()["components"]["schemas"]["hortus.v1.SimulateGamesResponse"]
    assert {"game", "reportJson"} <= set(schema["properties"]), schema
