"""Strength by rating: ``SuggestMove.target_elo`` on each game's measured Elo
scale (level 1 = 0), the budget interpolated log-linearly between adjacent levels."""

from __future__ import annotations

import json
import math

import grpc
import pytest

from hortus import games
from hortus.clients import AdvisorClient, InvalidArgumentError, Position
from hortus.cli import main
from hortus.search.levels import LEVELS, elo_level, elo_table
from hortus.server import ServerConfig
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"


@pytest.mark.parametrize("name", games.names())
def test_each_level_elo_gives_that_level(name: str) -> None:
    chain = elo_table()[name]
    assert chain["1"] == 0.0  # the scale: level 1 = 0 in each game
    for n, level in LEVELS.items():
        at = elo_level(name, chain[str(n)])
        assert (at.iterations, at.temperature) == (level.iterations, level.temperature)


def test_between_levels_the_log_budget_is_linear_in_elo() -> None:
    table = {"g": {"1": 0.0, "2": 100.0, "3": 300.0, "4": 400.0, "5": 500.0, "6": 600.0, "7": 700.0, "8": 800.0}}
    half = elo_level("g", 50.0, table)
    assert half.iterations == round(math.sqrt(32 * 64)) and half.temperature == pytest.approx(0.75)
    assert half.level == 1
    quarter = elo_level("g", 150.0, table)  # a quarter of the way from level 2 (64) to 3 (128)
    assert quarter.iterations == round(64 * 2**0.25) and quarter.temperature == pytest.approx(0.4375)
    assert elo_level("g", -500.0, table).iterations == 32 and elo_level("g", -500.0, table).temperature == 1.0
    assert elo_level("g", 1e6, table).iterations == 8192
    budgets = [elo_level(GAME, float(e)).iterations for e in range(-100, 1100, 10)]
    assert budgets == sorted(budgets)
    with pytest.raises(ValueError, match="no measured Elo scale"):
        elo_level("chess", 100.0)
    with pytest.raises(ValueError, match="finite"):
        elo_level(GAME, math.nan)


@pytest.fixture(scope="module")
def target(serve_module: Servers) -> str:
    return f"127.0.0.1:{serve_module(ServerConfig(default_iterations=100)).port}"


def test_grpc_target_elo(target: str) -> None:
    position = pb.Position(game=GAME, encoded=games.get(GAME).new_game(seed=3).encode())
    with grpc.insecure_channel(target) as channel:
        stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
        limits = pb.SearchLimits(seed=9)
        by_elo = stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=limits, target_elo=0.0), timeout=30)
        by_level = stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=limits, level=1), timeout=30)
        assert by_elo.analysis.iterations == 32
        assert by_elo.action == by_level.action and by_elo.analysis.moves == by_level.analysis.moves
        chain = elo_table()[GAME]
        middle = (chain["4"] + chain["5"]) / 2
        answer = stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=limits, target_elo=middle), timeout=30)
        assert answer.analysis.iterations == round(math.sqrt(256 * 512))
        for request, field in (
            (pb.SuggestMoveRequest(position=position, target_elo=100.0, level=2), "target_elo"),
            (pb.SuggestMoveRequest(position=position, target_elo=math.inf), "target_elo"),
            (pb.SuggestMoveRequest(position=position, target_elo=100.0, limits=pb.SearchLimits(iterations=5)), "limits"),
        ):
            with pytest.raises(grpc.RpcError) as caught:
                stub.SuggestMove(request, timeout=30)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
            assert field in caught.value.details()


def test_client_and_cli_elo(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    state = games.get(GAME).new_game(seed=4)
    with AdvisorClient(target, timeout=30) as client:
        suggestion = client.suggest_elo(Position(GAME, state.encode()), 10_000.0, seed=1)
        assert suggestion.analysis.iterations == 8192 or suggestion.analysis.partial
        with pytest.raises(InvalidArgumentError) as caught:
            client.suggest_elo(Position(GAME, state.encode()), math.nan)
        assert caught.value.fields == ("target_elo",)
    common = ["suggest", "--game", GAME, "--seed", "4", "--json", "--target", target]
    assert main([*common, "--elo", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["analysis"]["iterations"] == 32
    assert main([*common, "--elo", "0", "--iterations", "10"]) == 2
