"""SuggestMove continue_from (tree reuse in the service): an AI opponent that makes
several decisions in a row continues its own turn. A SuggestMove whose move leads straight to
the same seat's next decision answers a `continuation` token; the next SuggestMove of exactly
that position with `continue_from` = the token goes on with the move's subtree (deterministic,
more visits than a fresh search of the same budget), bypassing the answer cache. Tokens follow
Analyze's rules: used / unknown NOT_FOUND naming continue_from, another position or other
settings INVALID_ARGUMENT naming the field (the token stays usable)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from rpc_details import error_info

from hortus import games
from hortus.clients import AdvisorClient, AsyncAdvisorClient, InvalidArgumentError, NotFoundError, Position
from hortus.games import CHANCE, TERMINAL
from hortus.search import Limits, analyze
from hortus.server import RunningServer, ServerConfig, build_server
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanical_lab"  # a turn of several decisions by one seat (play, acquire, end...)


@pytest.fixture(scope="module")
def server(serve_module: Servers) -> RunningServer:
    return serve_module(ServerConfig(default_iterations=200, max_threads=2))


@pytest.fixture()
def stub(server: RunningServer) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]


def where(state: games.State) -> pb.Position:
    return pb.Position(game=state.game.name, encoded=state.encode())


def suggest(stub: Any, state: games.State, iterations: int = 300, seed: int = 1, continue_from: str = "", **limits: Any) -> Any:
    request = pb.SuggestMoveRequest(
        position=where(state),
        limits=pb.SearchLimits(iterations=iterations, seed=seed, **limits),
        continue_from=continue_from,
    )
    return stub.SuggestMove(request, timeout=60)


def positions(seed: int = 5, game: str = GAME) -> Iterator[games.State]:
    """The decisions of a seeded random game of two seats."""
    state = games.get(game).new_game(players=2, seed=seed)
    rng = random.Random(seed)
    while state.current_player != TERMINAL:
        if state.current_player == CHANCE:
            state.resolve_chance(rng)
            continue
        yield state.clone()
        state.apply(rng.choice(state.legal_actions()))


def mid_turn(stub: Any, ask: Callable[[games.State], Any] | None = None) -> tuple[games.State, Any, games.State]:
    """The first position whose suggestion (by default seeded, 300 iterations) leads straight
    to the same seat's next decision: (position, answer, the position after its move)."""
    for state in positions():
        answer = ask(state) if ask is not None else suggest(stub, state)
        if answer.continuation:
            after = state.clone()
            after.apply(answer.action.id)
            return state, answer, after
    raise AssertionError("no suggestion in this game continues the seat's turn")


def ends_turn(state: games.State) -> tuple[int | None, int | None]:
    """A move of `state` after which another seat decides, and one after which chance acts."""
    other = chance = None
    for action in state.legal_actions():
        after = state.clone()
        after.apply(action)
        if after.current_player == CHANCE and chance is None:
            chance = action
        elif after.current_player not in (CHANCE, state.current_player) and other is None:
            other = action
    return other, chance


def timeless(answer: Any) -> Any:
    """The answer without what differs between equal searches: its time and its token."""
    copy = pb.SuggestMoveResponse()
    copy.CopyFrom(answer)
    copy.analysis.elapsed_ms = 0.0
    copy.continuation = ""
    return copy


def test_a_continued_turn_is_deterministic_and_deeper(stub: Any) -> None:
    before, first, after = mid_turn(stub)
    assert first.analysis.seat == before.current_player == after.current_player
    # the first answer is today's answer: the library's analyze(), the same every time
    today = analyze(before, Limits(iterations=300, seed=1, max_nodes=ServerConfig().max_nodes))
    assert [(m.action.id, m.visits) for m in first.analysis.moves] == [(m.action, m.visits) for m in today.moves]
    assert first.action.id == today.best.action
    again = suggest(stub, before)
    assert again.continuation not in ("", first.continuation)
    assert timeless(again) == timeless(first)
    continued = suggest(stub, after, iterations=200, seed=2, continue_from=first.continuation)
    repeated = suggest(stub, after, iterations=200, seed=2, continue_from=again.continuation)
    assert timeless(continued) == timeless(repeated)  # the chain is deterministic
    fresh = suggest(stub, after, iterations=200, seed=2)
    assert continued.analysis.iterations == fresh.analysis.iterations == 200  # this call's own
    kept = next(m.visits for m in first.analysis.moves if m.action.id == first.action.id)
    visits = sum(m.visits for m in continued.analysis.moves)
    assert visits >= kept - 1 + 200 - 1 > sum(m.visits for m in fresh.analysis.moves)
    assert continued.action.id in after.legal_actions()
    # the seed does not steer a continued search: the kept trees go on with their own stream
    other_seed = suggest(stub, after, iterations=200, seed=99, continue_from=suggest(stub, before).continuation)
    assert timeless(other_seed) == timeless(continued)


def test_two_threads_continue_their_two_trees(stub: Any) -> None:
    def two_threads(state: games.State) -> Any:
        return suggest(stub, state, threads=2)

    before, first, after = mid_turn(stub, two_threads)
    chains = [
        suggest(stub, after, iterations=150, threads=2, continue_from=token)
        for token in (first.continuation, two_threads(before).continuation)
    ]
    assert timeless(chains[0]) == timeless(chains[1])
    fresh = suggest(stub, after, iterations=150, threads=2)
    assert chains[0].analysis.iterations == fresh.analysis.iterations == 300
    assert sum(m.visits for m in chains[0].analysis.moves) > sum(m.visits for m in fresh.analysis.moves)


def test_a_turn_continues_over_several_decisions(stub: Any) -> None:
    """Each continued answer carries the next token while the turn goes on."""
    state, answer, after = mid_turn(stub)
    chain = 0
    while answer.continuation and chain < 6:
        token = answer.continuation
        answer = suggest(stub, after, iterations=100, continue_from=token)
        state, after = after, after.clone()
        after.apply(answer.action.id)
        chain += 1
        assert (after.current_player == state.current_player) or not answer.continuation
    assert chain >= 1


def test_moves_that_end_the_seats_turn_carry_no_token(stub: Any) -> None:
    # Botanical Lab's turns end with a draw (chance); Botanik hands over to the next seat
    chance = next((s, c) for s in positions() if (c := ends_turn(s)[1]) is not None)
    other = next((s, o) for s in positions(game="botanik") if (o := ends_turn(s)[0]) is not None)
    for state, action in (other, chance):
        answer = suggest(stub, state, allow_actions=[pb.ActionRef(id=action)])
        assert answer.action.id == action and answer.continuation == ""


def test_a_token_for_another_position_or_settings_is_refused_and_stays_usable(stub: Any) -> None:
    before, first, after = mid_turn(stub)
    token = first.continuation
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"state": before}, "continue_from"),  # the position the token came from, not the one it leads to
        ({"threads": 2}, "limits.threads"),
        ({"allow_actions": [pb.ActionRef(id=after.legal_actions()[0])]}, "limits.allow_actions"),
    ]
    for kwargs, field in refusals:
        state = kwargs.pop("state", after)
        with pytest.raises(grpc.RpcError) as caught:
            suggest(stub, state, iterations=100, continue_from=token, **kwargs)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.details().startswith(f"invalid {field}: ")
    # an Analyze token does not continue a turn, nor a turn's token an analysis
    analysis = list(
        stub.Analyze(pb.AnalyzeRequest(position=where(after), limits=pb.SearchLimits(iterations=50, seed=2)), timeout=60)
    )
    with pytest.raises(grpc.RpcError) as caught:
        suggest(stub, after, iterations=100, seed=2, continue_from=analysis[-1].continuation)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "continue_from" in caught.value.details()
    with pytest.raises(grpc.RpcError) as caught:
        list(
            stub.Analyze(
                pb.AnalyzeRequest(position=where(after), limits=pb.SearchLimits(iterations=50, seed=1), continue_from=token),
                timeout=60,
            )
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "continue_from" in caught.value.details()
    # every refusal left the token usable
    assert suggest(stub, after, iterations=100, continue_from=token).analysis.iterations == 100


def test_used_and_unknown_tokens_are_not_found(stub: Any, server: RunningServer) -> None:
    _, first, after = mid_turn(stub)
    suggest(stub, after, iterations=50, continue_from=first.continuation)
    instance = first.continuation.partition(".")[0]
    for bad, reason in (
        (first.continuation, "CONTINUATION_UNKNOWN"),
        (f"{instance}.nope", "CONTINUATION_UNKNOWN"),
        ("0000.x", "CONTINUATION_OTHER_PROCESS"),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            suggest(stub, after, iterations=50, continue_from=bad)
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        assert caught.value.details().startswith("continue_from: ")
        info = error_info(caught.value)
        assert info.reason == reason and info.metadata["field"] == "continue_from"
    assert server.servicer.searches_in_flight == 0


def test_levels_continue_their_turn_too(stub: Any) -> None:
    def level_2(state: games.State) -> Any:
        return stub.SuggestMove(pb.SuggestMoveRequest(position=where(state), level=2, limits=pb.SearchLimits(seed=4)), timeout=60)

    _, first, after = mid_turn(stub, level_2)
    continued = stub.SuggestMove(
        pb.SuggestMoveRequest(position=where(after), level=2, limits=pb.SearchLimits(seed=5), continue_from=first.continuation),
        timeout=60,
    )
    fresh = stub.SuggestMove(pb.SuggestMoveRequest(position=where(after), level=2, limits=pb.SearchLimits(seed=5)), timeout=60)
    assert continued.analysis.iterations == fresh.analysis.iterations  # the level's own budget
    assert sum(m.visits for m in continued.analysis.moves) > sum(m.visits for m in fresh.analysis.moves)


def test_the_answer_cache_is_bypassed() -> None:
    running = build_server("127.0.0.1:0", ServerConfig(default_iterations=200, cache_bytes=1 << 20))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
            cache = running.servicer.cache
            before, first, after = mid_turn(stub)
            # an answer with a token is not stored: asked again, it is searched again (a new token)
            stored = len(cache)
            again = suggest(stub, before)
            assert again.continuation not in ("", first.continuation) and len(cache) == stored
            # a fresh search of the next position is stored...
            fresh = suggest(stub, after, iterations=200, seed=2)
            hits, misses, stored = cache.hits, cache.misses, len(cache)
            # ...but a continuation of the same request bytes but for the token neither finds
            # it nor stores itself
            continued = suggest(stub, after, iterations=200, seed=2, continue_from=first.continuation)
            assert (cache.hits, cache.misses, len(cache)) == (hits, misses, stored)
            assert timeless(continued) != timeless(fresh)
            assert sum(m.visits for m in continued.analysis.moves) > sum(m.visits for m in fresh.analysis.moves)
            # answers without a token are cached as before
            if not fresh.continuation:
                assert timeless(suggest(stub, after, iterations=200, seed=2)) == timeless(fresh)
                assert cache.hits == hits + 1
    finally:
        running.stop(0)


def test_a_server_that_keeps_no_trees_gives_no_token() -> None:
    running = build_server("127.0.0.1:0", ServerConfig(default_iterations=200, continue_trees=0))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
            state = next(positions())
            assert all(suggest(stub, s).continuation == "" for s, _ in zip(positions(), range(8)))
            with pytest.raises(grpc.RpcError) as caught:
                suggest(stub, state, continue_from="abc.def")
            assert caught.value.code() == grpc.StatusCode.NOT_FOUND
            assert error_info(caught.value).reason == "CONTINUATION_OFF"
    finally:
        running.stop(0)


def test_the_python_clients_continue_a_turn(server: RunningServer, stub: Any) -> None:
    before, _, after = mid_turn(stub)
    start, following = Position(GAME, before.encode()), Position(GAME, after.encode())
    with AdvisorClient(f"127.0.0.1:{server.port}", timeout=60) as client:
        first = client.suggest_move(start, iterations=300, seed=1)
        assert first.continuation and first.to_dict()["continuation"] == first.continuation
        continued = client.suggest_move(following, iterations=200, seed=2, continue_from=first.continuation)
        assert sum(m.visits for m in continued.analysis.moves) > 200
        with pytest.raises(NotFoundError) as caught:
            client.suggest_move(following, iterations=200, seed=2, continue_from=first.continuation)
        assert caught.value.field == "continue_from" and caught.value.reason == "CONTINUATION_UNKNOWN"
        with pytest.raises(InvalidArgumentError) as refused:
            client.suggest_move(
                start, iterations=100, continue_from=client.suggest_move(start, iterations=300, seed=1).continuation
            )
        assert refused.value.fields == ("continue_from",)
        by_level = client.suggest_level(start, 2, seed=4)
        if by_level.continuation:
            after_level = before.clone()
            after_level.apply(by_level.action.id)
            assert (
                client.suggest_level(
                    Position(GAME, after_level.encode()), 2, seed=5, continue_from=by_level.continuation
                ).action.id
                in after_level.legal_actions()
            )

    async def go() -> tuple[int, int]:
        async with AsyncAdvisorClient(f"127.0.0.1:{server.port}", timeout=60) as client:
            first = await client.suggest_move(start, iterations=300, seed=1)
            continued = await client.suggest_move(following, iterations=200, seed=2, continue_from=first.continuation)
            with pytest.raises(NotFoundError):
                await client.suggest_move(following, iterations=200, seed=2, continue_from=first.continuation)
            return continued.analysis.iterations, sum(m.visits for m in continued.analysis.moves)

    iterations, visits = asyncio.run(go())
    assert iterations == 200 < visits
    assert visits == sum(m.visits for m in continued.analysis.moves)  # the same chain, the same answer
