"""SimulateGames: each game sent once as it finishes, then the report, byte for byte the one
``hortus balance`` writes; bad requests refused naming the field before any game; the caps;
the deadline ends the call after the games finished by then."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

from hortus.balance.report import balance_report, report_json
from hortus.server import ServerConfig, create_server
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc


@pytest.fixture(scope="module")
def stub() -> Iterator[advisor_pb2_grpc.AdvisorStub]:
    config = ServerConfig(max_concurrent_searches=2, max_batch_size=12, max_iterations=300, default_iterations=100)
    server, port = create_server("127.0.0.1:0", config)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield advisor_pb2_grpc.AdvisorStub(channel)
    server.stop(0)


def _field(error: grpc.RpcError) -> str:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            return str(bad.field_violations[0].field)
    raise AssertionError("no BadRequest")


def test_each_game_once_then_the_cli_report(stub: advisor_pb2_grpc.AdvisorStub) -> None:
    request = pb.SimulateGamesRequest(game="botanists", players=[2, 3], level=1, games=3, seed=9)
    answers = list(stub.SimulateGames(request, timeout=300))
    games, last = answers[:-1], answers[-1]
    assert all(a.WhichOneof("item") == "game" for a in games)
    ids = [a.game.game_id for a in games]
    assert sorted(ids) == sorted(f"{p}:{i}" for p in (2, 3) for i in range(3))  # each exactly once
    assert [a.game.games_done for a in games] == list(range(1, 7)) and {a.game.games_total for a in games} == {6}
    assert last.WhichOneof("item") == "report_json"
    expected = report_json(balance_report("botanists", [2, 3], "level:1", 3, seed=9))
    assert last.report_json == expected


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"game": "chess", "games": 1}, "game"),
        ({"game": "botanik", "players": [3], "games": 1}, "players[0]"),
        ({"game": "botanists", "players": [2, 2], "games": 1}, "players[1]"),
        ({"game": "botanik", "level": 9, "games": 1}, "level"),
        ({"game": "botanik", "level": 5, "games": 1}, "level"),  # 512 iterations > max_iterations 300
        ({"game": "botanik", "games": 0}, "games"),
        ({"game": "botanists", "players": [2, 3], "games": 7}, "games"),  # 14 > max_batch_size 12
        ({"game": "botanik", "games": 1, "options": {"first_player": "7"}}, "options"),
        ({"game": "botanik", "games": 1, "options": {"nonsense": "1"}}, "options"),
    ],
)
def test_bad_requests_name_the_field(stub: advisor_pb2_grpc.AdvisorStub, request_fields: dict[str, object], field: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        list(stub.SimulateGames(pb.SimulateGamesRequest(**request_fields), timeout=30))  # type: ignore[arg-type]
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _field(caught.value) == field


def test_the_deadline_ends_the_call_after_the_games_done(stub: advisor_pb2_grpc.AdvisorStub) -> None:
    request = pb.SimulateGamesRequest(game="war_of_the_posies", players=[2], level=4, games=12, seed=1)
    seen: list[str] = []
    with pytest.raises(grpc.RpcError) as caught:
        for answer in stub.SimulateGames(request, timeout=1.5):
            assert answer.WhichOneof("item") == "game"  # never a report
            seen.append(answer.game.game_id)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert len(seen) == len(set(seen)) < 12
