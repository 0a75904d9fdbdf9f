"""What-if constraints (KataGo's allowMoves/avoidMoves): the root searches and
ranks only the allowed moves, minus the avoided ones, through every layer: the search, the gRPC
service, the Python client and the CLI."""

from __future__ import annotations

import json
import random

import grpc
import pytest

from hortus import games
from hortus.clients import AdvisorClient, InvalidArgumentError, Position
from hortus.cli import main
from hortus.search import ConstraintError, Limits, analyze
from hortus.search.analysis import analyze_stream
from hortus.server import ServerConfig
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"


def decision(name: str, seed: int, minimum: int = 4) -> games.State:
    """A decision node with at least `minimum` legal moves, reached by random play."""
    game = games.get(name)
    rng = random.Random(seed)
    state = game.new_game(players=game.min_players, seed=seed)
    for _ in range(200):
        state.resolve_chance(rng)
        if state.is_terminal():
            break
        if len(state.legal_actions()) >= minimum:
            return state
        state.apply(rng.choice(state.legal_actions()))
    pytest.fail(f"{name}: seeded play reached no decision with {minimum} moves (the scenario this test needs)")


def comparable(a: object) -> tuple[object, ...]:
    return (a.seat, a.moves, a.iterations, a.partial, a.nodes)  # type: ignore[attr-defined]


# --- the search ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", games.names())
def test_allow_searches_and_ranks_only_the_allowed_moves(name: str) -> None:
    state = decision(name, 5)
    legal = state.legal_actions()
    allowed = (legal[-1], legal[1])
    for threads in (1, 2):
        analysis = analyze(state, Limits(iterations=300, seed=3, threads=threads, allow_actions=allowed))
        assert {m.action for m in analysis.moves} == set(allowed)
        assert sum(m.visits for m in analysis.moves) == analysis.iterations == 300 * threads
    # Determinism holds under constraints (one thread, an iteration budget).
    first = analyze(state, Limits(iterations=300, seed=3, allow_actions=allowed))
    again = analyze(state.clone(), Limits(iterations=300, seed=3, allow_actions=list(allowed)))
    assert comparable(first) == comparable(again)


@pytest.mark.parametrize("name", games.names())
def test_avoid_never_considers_the_avoided_moves(name: str) -> None:
    state = decision(name, 7)
    free = analyze(state, Limits(iterations=300, seed=1))
    avoided = (free.best.action, free.moves[-1].action)
    analysis = analyze(state, Limits(iterations=300, seed=1, avoid_actions=avoided))
    assert analysis.moves and not {m.action for m in analysis.moves} & set(avoided)
    assert analysis.iterations == 300
    # Allow and avoid together: the allowed moves minus the avoided ones.
    legal = state.legal_actions()
    both = analyze(state, Limits(iterations=100, seed=1, allow_actions=legal[:3], avoid_actions=legal[:1]))
    assert {m.action for m in both.moves} == set(legal[1:3])


def test_the_stream_respects_the_constraints_in_every_snapshot() -> None:
    state = decision(GAME, 5)
    allowed = tuple(state.legal_actions()[:2])
    for analysis, _ in analyze_stream(state, Limits(iterations=400, seed=2, allow_actions=allowed), interval_ms=1):
        assert {m.action for m in analysis.moves} <= set(allowed)


def test_illegal_or_empty_constraints_name_the_entry() -> None:
    state = decision(GAME, 5)
    legal = state.legal_actions()
    illegal = max(legal) + 1
    with pytest.raises(ConstraintError) as caught:
        analyze(state, Limits(iterations=10, allow_actions=(legal[0], illegal)))
    assert caught.value.field == "allow_actions[1]" and str(illegal) in str(caught.value)
    with pytest.raises(ConstraintError) as caught:
        analyze(state, Limits(iterations=10, avoid_actions=(-1,)))
    assert caught.value.field == "avoid_actions[0]"
    with pytest.raises(ConstraintError) as caught:
        analyze(state, Limits(iterations=10, avoid_actions=legal))
    assert caught.value.field == "avoid_actions"
    with pytest.raises(ValueError):  # a ConstraintError is a ValueError, as other bad limits
        analyze(state, Limits(iterations=10, allow_actions=legal[:1], avoid_actions=legal[:1]))


# --- gRPC, client, CLI -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def target(serve_module: Servers) -> str:
    return f"127.0.0.1:{serve_module(ServerConfig(default_iterations=100, max_actions_per_request=50)).port}"


def test_grpc_constraints_by_id_and_notation(target: str) -> None:
    state = decision(GAME, 5)
    legal = state.legal_actions()
    position = pb.Position(game=GAME, encoded=state.encode())
    with grpc.insecure_channel(target) as channel:
        stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
        limits = pb.SearchLimits(
            iterations=200,
            allow_actions=[pb.ActionRef(id=legal[0]), pb.ActionRef(notation=state.action_to_string(legal[2]))],
        )
        ranked = stub.RankMoves(pb.RankMovesRequest(position=position, limits=limits), timeout=30).analysis
        assert {m.action.id for m in ranked.moves} == {legal[0], legal[2]}
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=limits), timeout=30)
        assert suggestion.action.id in (legal[0], legal[2])
        avoid = pb.SearchLimits(iterations=200, avoid_actions=[pb.ActionRef(id=suggestion.action.id)])
        other = stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=avoid), timeout=30)
        assert other.action.id != suggestion.action.id
        final = list(stub.Analyze(pb.AnalyzeRequest(position=position, limits=limits, interval_ms=50), timeout=30))[-1]
        assert {m.action.id for m in final.analysis.moves} == {legal[0], legal[2]}

        bad = pb.SearchLimits(iterations=50, allow_actions=[pb.ActionRef(id=legal[0]), pb.ActionRef(id=max(legal) + 1)])
        with pytest.raises(grpc.RpcError) as caught:
            stub.RankMoves(pb.RankMovesRequest(position=position, limits=bad), timeout=30)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "limits.allow_actions[1]" in caught.value.details()


def test_client_constraints_and_errors(target: str) -> None:
    state = decision(GAME, 5)
    legal = state.legal_actions()
    position = Position(GAME, state.encode())
    with AdvisorClient(target, timeout=30) as client:
        analysis = client.rank_moves(position, iterations=200, allow=[legal[1], state.action_to_string(legal[3])])
        assert {m.action for m in analysis.moves} == {legal[1], legal[3]}
        # Same request, same answer: the constraint does not break determinism through gRPC.
        again = client.rank_moves(position, iterations=200, allow=[legal[1], legal[3]])
        assert [(m.action, m.visits) for m in again.moves] == [(m.action, m.visits) for m in analysis.moves]
        suggestion = client.suggest_level(position, 1, avoid=[legal[0]])
        assert suggestion.action.id != legal[0]
        with pytest.raises(InvalidArgumentError) as caught:
            client.suggest_move(position, iterations=50, avoid=[legal[0], "no such move"])
        assert caught.value.fields == ("limits.avoid_actions[1]",)
        with pytest.raises(InvalidArgumentError) as caught:
            client.rank_moves(position, iterations=50, avoid=legal)
        assert caught.value.fields == ("limits.avoid_actions",)


def test_cli_only_and_avoid(capsys: pytest.CaptureFixture[str], target: str) -> None:
    state = decision(GAME, 5)
    legal = state.legal_actions()
    common = ["--game", GAME, "--position-hex", state.encode().hex(), "--iterations", "150", "--json", "--target", target]
    notation = state.action_to_string(legal[2])
    assert main(["hints", *common, "--only", str(legal[0]), "--only", notation]) == 0
    moves = json.loads(capsys.readouterr().out)["analysis"]["moves"]
    assert {m["action"] for m in moves} == {legal[0], legal[2]}
    assert main(["suggest", *common, "--avoid", str(legal[0]), "--avoid", notation]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["action"]["id"] not in (legal[0], legal[2])
    assert {m["action"] for m in data["analysis"]["moves"]}.isdisjoint({legal[0], legal[2]})
    assert main(["hints", *common, "--only", str(max(legal) + 1)]) == 1
    assert "limits.allow_actions[0]" in capsys.readouterr().err
