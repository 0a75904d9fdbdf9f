"""The gRPC service in-process on a free port: every RPC, the rich error model, caps, deadlines,
capacity, cancellation, health, reflection and a real ``hortus serve`` process."""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_status import rpc_status

import hortus
from hortus import games
from hortus.server import RunningServer, ServerConfig, build_server, serve, status_for
from hortus.server import positions as positions_module
from hortus.server import requests as requests_module
from hortus.server.errors import CapacityError, RequestError
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"
CONFIG = ServerConfig(
    default_iterations=200,
    max_iterations=10**9,
    max_time_ms=20_000,
    max_threads=2,
    max_concurrent_searches=4,
    max_actions_per_request=50,
    deadline_margin_ms=100,  # a little more room than the default for a loaded test machine
)


@pytest.fixture(scope="module")
def running(serve_module: Servers) -> RunningServer:
    return serve_module(CONFIG)


@pytest.fixture(scope="module")
def channel(running: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
        yield ch


def make_stub(channel: grpc.Channel) -> Any:
    """The generated (untyped) Advisor stub."""
    return advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]


def health_status(channel: grpc.Channel, service: str = "") -> int:
    """grpc.health.v1.Health/Check of `service`."""
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        health_pb2.HealthCheckRequest.SerializeToString,
        health_pb2.HealthCheckResponse.FromString,
    )
    status: int = check(health_pb2.HealthCheckRequest(service=service), timeout=10).status
    return status


@pytest.fixture(scope="module")
def stub(channel: grpc.Channel) -> Any:
    return make_stub(channel)


def new_position(stub: Any, seed: int | None = 1) -> pb.Position:
    request = pb.NewGameRequest(game=GAME)
    if seed is not None:
        request.seed = seed
    position: pb.Position = stub.NewGame(request, timeout=10).info.position
    return position


def violations(error: grpc.RpcError) -> list[tuple[str, str]]:
    """(field, description) of the BadRequest in a failed call's rich status."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type, unused-ignore]
    assert status is not None, "no rich status in the trailers"
    found: list[tuple[str, str]] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            found.extend((v.field, v.description) for v in bad.field_violations)
    return found


def invalid_field(call: object, *args: object, **kwargs: object) -> str:
    """Make a call that must fail INVALID_ARGUMENT with exactly one field violation; its field."""
    with pytest.raises(grpc.RpcError) as info:
        call(*args, timeout=10, **kwargs)  # type: ignore[operator]
    error = info.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    found = violations(error)
    assert len(found) == 1, found
    field, description = found[0]
    assert description
    return field


def played_to_end(seed: int) -> games.State:
    state = games.get(GAME).new_game(seed=seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
    return state


# --- happy paths ---------------------------------------------------------------------------
def test_list_games_and_version(stub: Any) -> None:
    listed = stub.ListGames(pb.ListGamesRequest(), timeout=10)
    names = [g.name for g in listed.games]
    assert names == games.names()
    info = next(g for g in listed.games if g.name == GAME)
    game = games.get(GAME)
    assert (info.min_players, info.max_players) == (game.min_players, game.max_players)
    assert info.num_distinct_actions == game.num_distinct_actions
    assert {o.name for o in info.options} == set(game.options)
    version = stub.GetVersion(pb.GetVersionRequest(), timeout=10)
    assert version.version == hortus.__version__
    assert version.protocol == "hortus.v1"
    assert [g.name for g in version.games] == names


def test_new_game(stub: Any) -> None:
    seeded = stub.NewGame(pb.NewGameRequest(game=GAME, seed=5), timeout=10).info
    assert seeded.current_player >= 0 and not seeded.terminal
    assert seeded.rendered
    assert seeded.position.game == GAME
    state = games.get(GAME).decode(seeded.position.encoded)
    assert state == games.get(GAME).new_game(seed=5)
    assert len(seeded.scores) == 2 and not seeded.returns
    # no seed: the position waits at the setup chance node
    unseeded = stub.NewGame(pb.NewGameRequest(game=GAME, players=2), timeout=10).info
    assert unseeded.current_player == games.CHANCE


def test_new_game_with_options(stub: Any) -> None:
    game = games.get(GAME)
    if not game.options:
        pytest.skip("the game has no rule options")
    name, option = next(iter(game.options.items()))
    value = option.choices[-1]
    info = stub.NewGame(pb.NewGameRequest(game=GAME, seed=2, options={name: value}), timeout=10).info
    assert game.decode(info.position.encoded) == game.new_game(seed=2, options={name: value})


def test_legal_actions(stub: Any) -> None:
    position = new_position(stub)
    state = games.get(GAME).decode(position.encoded)
    legal = stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10)
    assert legal.current_player == state.current_player
    assert [a.id for a in legal.actions] == state.legal_actions()
    assert [a.notation for a in legal.actions] == [state.action_to_string(a) for a in state.legal_actions()]
    assert not legal.chance_outcomes and not legal.terminal

    chance = stub.LegalActions(pb.LegalActionsRequest(position=new_position(stub, seed=None)), timeout=10)
    assert chance.current_player == games.CHANCE and not chance.actions
    assert chance.chance_outcomes
    assert sum(c.probability for c in chance.chance_outcomes) == pytest.approx(1.0)


def test_apply_actions_by_id_and_notation(stub: Any) -> None:
    position = new_position(stub, seed=3)
    state = games.get(GAME).decode(position.encoded)
    first = state.legal_actions()[0]
    notation = state.action_to_string(first)
    by_id = stub.ApplyActions(pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(id=first)]), timeout=10)
    by_text = stub.ApplyActions(
        pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(notation=notation.upper())]), timeout=10
    )
    assert by_id.info.position.encoded == by_text.info.position.encoded
    assert [(a.id, a.notation) for a in by_id.applied] == [(first, notation)]
    state.apply(first)
    assert by_id.info.position.encoded == state.encode()
    assert by_id.info.current_player == state.current_player
    # no actions: the same position, rendered
    same = stub.ApplyActions(pb.ApplyActionsRequest(position=position), timeout=10)
    assert same.info.position.encoded == position.encoded and same.info.rendered and not same.applied


def test_apply_actions_includes_chance(stub: Any) -> None:
    position = new_position(stub, seed=None)
    chance = stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10).chance_outcomes
    outcome = chance[0].action
    applied = stub.ApplyActions(pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(id=outcome.id)]), timeout=10)
    assert applied.applied[0].notation == outcome.notation


def test_apply_actions_to_the_end(stub: Any) -> None:
    final = played_to_end(seed=4)
    info = stub.ApplyActions(pb.ApplyActionsRequest(position=pb.Position(game=GAME, encoded=final.encode())), timeout=10).info
    assert info.terminal and info.current_player == games.TERMINAL
    assert list(info.returns) == final.returns() and list(info.scores) == final.scores()
    assert sum(info.returns) == pytest.approx(1.0)


def test_suggest_move(stub: Any) -> None:
    position = new_position(stub, seed=6)
    state = games.get(GAME).decode(position.encoded)
    response = stub.SuggestMove(
        pb.SuggestMoveRequest(position=position, limits=pb.SearchLimits(iterations=300, seed=9)), timeout=30
    )
    analysis = response.analysis
    assert response.action.id in state.legal_actions()
    assert response.action.notation == state.action_to_string(response.action.id)
    assert response.action == analysis.moves[0].action
    assert response.turn[0] == response.action
    assert list(response.turn) == list(analysis.moves[0].principal_variation)
    assert analysis.seat == state.current_player
    assert analysis.iterations == 300 and not analysis.partial
    assert analysis.nodes > 0 and analysis.elapsed_ms > 0
    # the whole turn is playable
    replay = state.clone()
    for action in response.turn:
        assert replay.current_player == analysis.seat
        replay.apply(action.id)


def test_default_iterations_and_determinism(stub: Any) -> None:
    position = new_position(stub, seed=7)
    request = pb.RankMovesRequest(position=position, limits=pb.SearchLimits(seed=5))
    first = stub.RankMoves(request, timeout=30).analysis
    second = stub.RankMoves(request, timeout=30).analysis
    assert first.iterations == CONFIG.default_iterations
    for a in (first, second):
        a.elapsed_ms = 0
    assert first == second


def test_rank_moves(stub: Any) -> None:
    position = new_position(stub, seed=8)
    state = games.get(GAME).decode(position.encoded)
    everything = stub.RankMoves(
        pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=400, seed=1)), timeout=30
    ).analysis
    visits = [m.visits for m in everything.moves]
    assert visits == sorted(visits, reverse=True)
    assert 0 < sum(visits) <= 400
    assert {m.action.id for m in everything.moves} <= set(state.legal_actions())
    for move in everything.moves:
        assert 0.0 <= move.win_probability <= 1.0
        assert len(move.expected_scores) == 2
        assert move.principal_variation[0] == move.action
    top = stub.RankMoves(
        pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=400, seed=1), max_moves=3),
        timeout=30,
    ).analysis
    assert len(top.moves) == min(3, len(everything.moves))
    assert list(top.moves) == list(everything.moves[:3])


def test_search_slots() -> None:
    """Batch positions may take every slot; while they hold some, one more interactive search
    than the capacity is admitted, and batches take no slot until the total is under it."""
    from hortus.server.service import SearchSlots

    slots = SearchSlots(2)
    assert slots.try_interactive() and slots.try_interactive()
    assert not slots.try_interactive()  # no batch running: the capacity is the cap
    assert not slots.acquire_batch(timeout=0)
    slots.release(batch=False)
    slots.release(batch=False)
    assert slots.acquire_batch(timeout=0) and slots.acquire_batch(timeout=0)  # a batch fills every slot
    assert not slots.acquire_batch(timeout=0)
    assert slots.try_interactive()  # a hint during the batch: the one slot over the cap
    assert not slots.try_interactive()
    slots.release(batch=True)
    assert not slots.acquire_batch(timeout=0)  # 2 searches still running: the batch waits
    slots.release(batch=False)
    assert slots.acquire_batch(timeout=0)
    results: list[bool] = []
    waiter = threading.Thread(target=lambda: results.append(slots.acquire_batch(timeout=30)))
    waiter.start()
    slots.release(batch=True)  # wakes the waiting batch position
    waiter.join(30)
    assert results == [True]


def test_ranking_details_only_the_moves_kept() -> None:
    """RankMoves and EvaluatePositions with max_moves have only the moves they send detailed
    (principal variation, reason): the same ranking, without the cost of the rest."""
    from hortus.search import Limits, analyze

    state = games.get(GAME).new_game(seed=8)
    rng = random.Random(8)
    while state.is_chance():
        state.resolve_chance(rng)
    whole = analyze(state, Limits(iterations=400, seed=1))
    top = analyze(state, Limits(iterations=400, seed=1), detail=2)
    assert len(whole.moves) > 2
    assert top.moves[:2] == whole.moves[:2]
    assert [(m.action, m.notation, m.visits, m.win_probability) for m in top.moves] == [
        (m.action, m.notation, m.visits, m.win_probability) for m in whole.moves
    ]
    assert all(m.principal_variation == (m.action,) and m.reason == "" for m in top.moves[2:])


def test_time_only_budget_is_complete(stub: Any) -> None:
    position = new_position(stub, seed=9)
    analysis = stub.RankMoves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(time_ms=100)), timeout=30).analysis
    assert not analysis.partial
    assert analysis.iterations > 0


def test_threads(stub: Any) -> None:
    position = new_position(stub, seed=10)
    analysis = stub.RankMoves(
        pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=200, threads=2)), timeout=30
    ).analysis
    assert analysis.iterations == 400


# --- errors --------------------------------------------------------------------------------
def test_bad_bytes(stub: Any) -> None:
    garbage = pb.Position(game=GAME, encoded=b"not a position at all")
    assert invalid_field(stub.LegalActions, pb.LegalActionsRequest(position=garbage)).startswith("position")
    empty = pb.Position(game=GAME, encoded=b"")
    assert invalid_field(stub.SuggestMove, pb.SuggestMoveRequest(position=empty)).startswith("position")
    good = bytearray(new_position(stub).encoded)
    good[len(good) // 2] ^= 0xFF
    corrupted = pb.Position(game=GAME, encoded=bytes(good))
    with pytest.raises(grpc.RpcError) as info:
        stub.ApplyActions(pb.ApplyActionsRequest(position=corrupted), timeout=10)
    [(field, description)] = violations(info.value)
    assert field == "position.encoded" and description.startswith("checksum: ")


def test_game_id_mismatch(stub: Any) -> None:
    data = bytearray(new_position(stub).encoded)
    data[5] ^= 0x7F  # header: magic (4), format version (1), game id (1)
    position = pb.Position(game=GAME, encoded=bytes(data))
    with pytest.raises(grpc.RpcError) as info:
        stub.RankMoves(pb.RankMovesRequest(position=position), timeout=10)
    [(field, description)] = violations(info.value)
    assert field == "position.encoded" and description.startswith("game_id: ")


def test_unknown_game(stub: Any) -> None:
    position = pb.Position(game="chess", encoded=new_position(stub).encoded)
    assert invalid_field(stub.LegalActions, pb.LegalActionsRequest(position=position)) == "position.game"
    assert invalid_field(stub.NewGame, pb.NewGameRequest(game="chess")) == "game"


def test_bad_new_game_requests(stub: Any) -> None:
    assert invalid_field(stub.NewGame, pb.NewGameRequest(game=GAME, players=9)) == "players"
    assert invalid_field(stub.NewGame, pb.NewGameRequest(game=GAME, variant="no-such-variant")) == "variant"
    field = invalid_field(stub.NewGame, pb.NewGameRequest(game=GAME, options={"no_such_option": "x"}))
    assert field == "options[no_such_option]"
    game = games.get(GAME)
    if game.options:
        name = next(iter(game.options))
        assert invalid_field(stub.NewGame, pb.NewGameRequest(game=GAME, options={name: "??"})) == f"options[{name}]"


def test_illegal_action(stub: Any) -> None:
    position = new_position(stub, seed=11)
    state = games.get(GAME).decode(position.encoded)
    legal = state.legal_actions()[0]
    illegal = next(a for a in range(games.get(GAME).num_distinct_actions) if a not in state.legal_actions())
    request = pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(id=legal), pb.ActionRef(id=illegal)])
    assert invalid_field(stub.ApplyActions, request) == "actions[1]"
    request = pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(notation="dance a jig")])
    assert invalid_field(stub.ApplyActions, request) == "actions[0]"
    request = pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(id=-5)])
    assert invalid_field(stub.ApplyActions, request) == "actions[0]"
    request = pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef()])
    assert invalid_field(stub.ApplyActions, request) == "actions[0]"
    final = pb.Position(game=GAME, encoded=played_to_end(seed=12).encode())
    request = pb.ApplyActionsRequest(position=final, actions=[pb.ActionRef(id=legal)])
    assert invalid_field(stub.ApplyActions, request) == "actions[0]"


def test_search_needs_a_decision(stub: Any) -> None:
    chance = new_position(stub, seed=None)
    assert invalid_field(stub.SuggestMove, pb.SuggestMoveRequest(position=chance)) == "position"
    final = pb.Position(game=GAME, encoded=played_to_end(seed=13).encode())
    assert invalid_field(stub.RankMoves, pb.RankMovesRequest(position=final)) == "position"


def test_caps(stub: Any) -> None:
    position = new_position(stub)
    cases = [
        (pb.SearchLimits(iterations=CONFIG.max_iterations + 1), "limits.iterations", "max_iterations"),
        (pb.SearchLimits(time_ms=CONFIG.max_time_ms + 1), "limits.time_ms", "max_time_ms"),
        (pb.SearchLimits(threads=CONFIG.max_threads + 1), "limits.threads", "max_threads"),
        (pb.SearchLimits(time_ms=-1), "limits.time_ms", ""),
        (pb.SearchLimits(time_ms=float("nan")), "limits.time_ms", ""),
    ]
    for limits, field, cap in cases:
        with pytest.raises(grpc.RpcError) as info:
            stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=limits), timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        [(got, description)] = violations(info.value)
        assert got == field and cap in description
    too_many = [pb.ActionRef(id=0)] * (CONFIG.max_actions_per_request + 1)
    with pytest.raises(grpc.RpcError) as info:
        stub.ApplyActions(pb.ApplyActionsRequest(position=position, actions=too_many), timeout=10)
    [(got, description)] = violations(info.value)
    assert got == "actions" and "max_actions_per_request" in description


def test_internal_errors_do_not_leak(stub: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(state: games.State) -> pb.PositionInfo:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(positions_module, "position_info", broken)
    with caplog.at_level(logging.ERROR, logger="hortus.server"):
        with pytest.raises(grpc.RpcError) as info:
            stub.NewGame(pb.NewGameRequest(game=GAME, seed=1), timeout=10)
    error = info.value
    assert error.code() == grpc.StatusCode.INTERNAL
    assert error.details() == "internal error"
    assert "secret" not in str(error.trailing_metadata())
    assert "secret internal detail" in caplog.text  # logged server side, with its traceback
    assert "Traceback" in caplog.text


def test_status_mapping() -> None:
    status = status_for(RequestError("limits.threads", "too many"))
    assert status.code == grpc.StatusCode.INVALID_ARGUMENT
    status = status_for(games.InvalidPositionError("tiles", "a tile twice"))
    assert status.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "position.tiles" in status.details
    assert status_for(CapacityError("max_concurrent_searches", "busy")).code == grpc.StatusCode.RESOURCE_EXHAUSTED
    # a bare ValueError is a bug, not the caller's fault
    leaked = status_for(ValueError("some internal thing"))
    assert leaked.code == grpc.StatusCode.INTERNAL and leaked.details == "internal error"
    proto_status = rpc_status.from_call(_FakeCall(leaked))  # type: ignore[arg-type]
    assert proto_status is not None and proto_status.code == code_pb2.INTERNAL


class _FakeCall:
    def __init__(self, status: grpc.Status) -> None:
        self._status = status

    def trailing_metadata(self) -> object:
        return self._status.trailing_metadata

    def code(self) -> grpc.StatusCode:
        return self._status.code

    def details(self) -> str:
        return self._status.details


# --- deadlines, capacity, cancellation --------------------------------------------------------
def test_deadline_gives_partial_answer(stub: Any) -> None:
    position = new_position(stub, seed=14)
    request = pb.SuggestMoveRequest(position=position, limits=pb.SearchLimits(iterations=CONFIG.max_iterations))
    response = stub.SuggestMove(request, timeout=1.0)  # in time: no DEADLINE_EXCEEDED
    assert response.analysis.partial
    assert 0 < response.analysis.iterations < CONFIG.max_iterations
    assert response.action.notation


def test_capacity_and_cancellation() -> None:
    config = ServerConfig(default_iterations=100, max_iterations=10**9, max_concurrent_searches=1, max_threads=1, workers=4)
    server = build_server("127.0.0.1:0", config)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
            stub = make_stub(ch)
            position = new_position(stub, seed=15)
            long = pb.SuggestMoveRequest(position=position, limits=pb.SearchLimits(iterations=10**9, time_ms=15_000))
            seeds = iter(range(1, 10**6))

            def short() -> pb.SuggestMoveRequest:
                """A short search never asked before: the answer cache cannot answer it."""
                return pb.SuggestMoveRequest(position=position, limits=pb.SearchLimits(iterations=50, seed=next(seeds)))

            future = stub.SuggestMove.future(long, timeout=30)
            # while the long search runs, another search is refused at once
            refused = None
            limit = time.monotonic() + 10
            while refused is None and time.monotonic() < limit:
                if future.done():  # a short search held the slot when the long one arrived
                    future = stub.SuggestMove.future(long, timeout=30)
                    time.sleep(0.05)
                try:
                    stub.SuggestMove(short(), timeout=10)
                except grpc.RpcError as exc:
                    refused = exc
                else:
                    time.sleep(0.02)
            assert refused is not None, "the second search was never refused"
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "max_concurrent_searches" in (refused.details() or "")
            # cheap calls are still served
            assert stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10).actions
            # cancelling the call stops its search: the slot frees long before 15 s
            cancelled_at = time.monotonic()
            assert future.cancel()
            answer = None
            while answer is None and time.monotonic() < cancelled_at + 10:
                try:
                    answer = stub.SuggestMove(short(), timeout=10)
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    time.sleep(0.02)
            assert answer is not None and answer.analysis.iterations == 50
    finally:
        server.stop(0)


# --- health, reflection, serving -------------------------------------------------------------
def test_health(channel: grpc.Channel) -> None:
    for service in ("", "hortus.v1.Advisor"):
        assert health_status(channel, service) == health_pb2.HealthCheckResponse.SERVING


def test_reflection(channel: grpc.Channel) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {"hortus.v1.Advisor", "grpc.health.v1.Health"} <= services
    descriptor = database.FindFileContainingSymbol("hortus.v1.Advisor")
    assert descriptor.package == "hortus.v1"


def test_busy_port_is_an_error(running: RunningServer) -> None:
    with pytest.raises(OSError):
        build_server(f"127.0.0.1:{running.port}", CONFIG)


def test_message_size_cap() -> None:
    """A request over max_message_bytes is INVALID_ARGUMENT naming the cap (the servicer checks
    it; gRPC's own receive limit is a little larger), on unary, server-streaming and batch
    calls alike; only a message over gRPC's receive limit is gRPC's RESOURCE_EXHAUSTED."""
    config = ServerConfig(max_message_bytes=4096)
    server = build_server("127.0.0.1:0", config)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
            stub = make_stub(ch)
            big = pb.Position(game=GAME, encoded=b"x" * 8192)
            with pytest.raises(grpc.RpcError) as info:
                stub.LegalActions(pb.LegalActionsRequest(position=big), timeout=10)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            [(field, description)] = violations(info.value)
            assert field == "request" and "max_message_bytes=4096" in description
            with pytest.raises(grpc.RpcError) as info:
                list(stub.Analyze(pb.AnalyzeRequest(position=big), timeout=10))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "max_message_bytes=4096" in (info.value.details() or "")
            small = new_position(stub)
            requests = [
                pb.EvaluateRequest(id="big", position=big),
                pb.EvaluateRequest(id="ok", position=small, limits=pb.SearchLimits(iterations=10), max_moves=1),
            ]
            answers = {a.id: a for a in stub.EvaluatePositions(iter(requests), timeout=30)}
            assert answers["big"].error.code == "INVALID_ARGUMENT"
            assert answers["big"].error.field == "request" and "max_message_bytes" in answers["big"].error.message
            assert answers["ok"].analysis.iterations == 10
            # beyond gRPC's receive limit the transport refuses before the servicer sees it
            huge = pb.Position(game=GAME, encoded=b"x" * (config.receive_limit + 1))
            with pytest.raises(grpc.RpcError) as info:
                stub.LegalActions(pb.LegalActionsRequest(position=huge), timeout=10)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        server.stop(0)


def test_size_caps_on_request_fields(stub: Any) -> None:
    """Every size a request controls is capped and named: names, option maps, notation,
    positions (encoded and structured), batch ids."""
    from hortus.views import view_to_structured

    S = requests_module
    position = new_position(stub)
    long_name = "g" * (S.MAX_NAME_BYTES + 1)
    cases: list[tuple[Any, Any, str, str]] = [
        (stub.NewGame, pb.NewGameRequest(game=long_name), "game", "MAX_NAME_BYTES"),
        (stub.NewGame, pb.NewGameRequest(game=GAME, variant=long_name), "variant", "MAX_NAME_BYTES"),
        (stub.NewGame, pb.NewGameRequest(game=GAME, options={long_name: "x"}), "options", "MAX_NAME_BYTES"),
        (
            stub.NewGame,
            pb.NewGameRequest(game=GAME, options={"closure_rule": long_name}),
            "options[closure_rule]",
            "MAX_NAME_BYTES",
        ),
        (
            stub.NewGame,
            pb.NewGameRequest(game=GAME, options={f"o{i}": "x" for i in range(S.MAX_OPTIONS + 1)}),
            "options",
            "MAX_OPTIONS",
        ),
        (
            stub.LegalActions,
            pb.LegalActionsRequest(position=pb.Position(game=long_name, encoded=position.encoded)),
            "position.game",
            "MAX_NAME_BYTES",
        ),
        (
            stub.LegalActions,
            pb.LegalActionsRequest(position=pb.Position(game=GAME, encoded=b"\0" * (S.MAX_POSITION_BYTES + 1))),
            "position.encoded",
            "MAX_POSITION_BYTES",
        ),
        (
            stub.ApplyActions,
            pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(notation="n" * (S.MAX_NOTATION_BYTES + 1))]),
            "actions[0].notation",
            "MAX_NOTATION_BYTES",
        ),
    ]
    view = games.get(GAME).decode(position.encoded).view(0)
    structured = view_to_structured(GAME, view)
    structured.botanik.buried.extend([0] * (S.MAX_POSITION_BYTES + 1))
    cases.append(
        (
            stub.LegalActions,
            pb.LegalActionsRequest(position=pb.Position(game=GAME, structured=structured)),
            "position.structured",
            "MAX_POSITION_BYTES",
        )
    )
    for call, request, field, cap in cases:
        with pytest.raises(grpc.RpcError) as info:
            call(request, timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (field, info.value.details())
        [(got, description)] = violations(info.value)
        assert got == field and cap in description, (got, description)
        assert len(info.value.details() or "") < 1000  # the offending value is never echoed whole
    requests = [pb.EvaluateRequest(id="i" * (S.MAX_ID_BYTES + 1), position=position)]
    [answer] = stub.EvaluatePositions(iter(requests), timeout=30)
    assert answer.error.field == "id" and "MAX_ID_BYTES" in answer.error.message


def test_serve_stops_on_event() -> None:
    stop = threading.Event()
    ports: list[int] = []
    out = _Lines()
    thread = threading.Thread(
        target=serve,
        args=("127.0.0.1:0", CONFIG),
        kwargs={"out": out, "ready": lambda r: ports.append(r.port), "stop_event": stop},
    )
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not ports and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ports
        with grpc.insecure_channel(f"127.0.0.1:{ports[0]}") as ch:
            assert make_stub(ch).GetVersion(pb.GetVersionRequest(), timeout=10).version
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    assert f"listening on 127.0.0.1:{ports[0]}" in out.text


class _Lines:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def test_hortus_serve_process_shuts_down_on_sigterm() -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hortus.cli", "serve", "--address", "127.0.0.1:0", "--grace-seconds", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line, line + (proc.stderr.read() if proc.stderr else "")
        port = int(line.rsplit(":", 1)[1])
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            assert health_status(ch) == health_pb2.HealthCheckResponse.SERVING
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert "shutting down" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        ServerConfig(max_iterations=0)
    with pytest.raises(ValueError):
        ServerConfig(default_iterations=10, max_iterations=5)
    with pytest.raises(ValueError):
        ServerConfig(max_time_ms=float("inf"))
    with pytest.raises(ValueError):
        ServerConfig(max_concurrent_searches=4, workers=4)
    config = ServerConfig(max_concurrent_searches=3, max_message_bytes=1000)
    assert config.pool_size == 35
    assert ("grpc.max_receive_message_length", config.receive_limit) in config.grpc_options()
    assert ("grpc.max_send_message_length", 1000) in config.grpc_options()
    assert 1000 < config.receive_limit <= 1000 + 64 * 1024
