"""Analyze continue_from: a second Analyze with the first one's continuation
token goes on with its search trees (more iterations, the same tree), in the server process
that kept them; unknown, used, expired or foreign tokens are NOT_FOUND naming the field; a
token for another position or other search settings is INVALID_ARGUMENT."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from rpc_details import error_info

from hortus import games
from hortus.clients import AdvisorClient, AsyncAdvisorClient, InvalidArgumentError, NotFoundError, Position
from hortus.search import Limits, SearchTrees, analyze, analyze_stream
from hortus.server import RunningServer, ServerConfig, build_server
from hortus.server.continuation import KeptAnalyses, TokenError
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"


def state(seed: int = 3) -> games.State:
    return games.get(GAME).new_game(seed=seed)


def without_time(analysis: Any) -> Any:
    from dataclasses import replace

    return replace(analysis, elapsed_ms=0.0)


# --- the search: continuing is one longer run ---------------------------------------------------
@pytest.mark.parametrize("threads", [1, 2])
def test_n_then_m_iterations_equal_one_run_of_n_plus_m(threads: int) -> None:
    s = state()
    trees = SearchTrees.start(s, Limits(iterations=300, seed=9, threads=threads))
    first = [a for a, final in analyze_stream(s, Limits(iterations=300, seed=9, threads=threads), interval_ms=0, trees=trees)]
    assert first[-1].iterations == 300 * threads
    more = [a for a, _ in analyze_stream(s, Limits(iterations=200, seed=9, threads=threads), interval_ms=0, trees=trees)]
    once = analyze(s, Limits(iterations=500, seed=9, threads=threads))
    assert more[-1].iterations == 500 * threads == once.iterations
    assert without_time(more[-1]) == without_time(once)


def test_a_stream_in_slices_gives_what_one_run_gives() -> None:
    """The slices of a stream go on with the same RNG: its final analysis is analyze()'s."""
    s = state(4)
    limits = Limits(iterations=2000, seed=5)
    sliced = [a for a, _ in analyze_stream(s, limits, interval_ms=1)]
    assert without_time(sliced[-1]) == without_time(analyze(s, limits))


def test_trees_refuse_another_position_or_seed() -> None:
    s = state()
    trees = SearchTrees.start(s, Limits(iterations=50, seed=1))
    list(analyze_stream(s, Limits(iterations=50, seed=1), interval_ms=0, trees=trees))
    assert trees.continues(s, Limits(iterations=10, time_ms=5.0, seed=1))
    assert not trees.continues(s, Limits(iterations=10, seed=2))
    assert not trees.continues(state(8), Limits(iterations=10, seed=1))
    with pytest.raises(ValueError):
        next(analyze_stream(state(8), Limits(iterations=10, seed=1), interval_ms=0, trees=trees))


# --- the kept trees: bounded, expiring, used once ------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def grown(iterations: int = 20) -> SearchTrees:
    s = state()
    trees = SearchTrees.start(s, Limits(iterations=iterations, seed=1))
    list(analyze_stream(s, Limits(iterations=iterations, seed=1), interval_ms=0, trees=trees))
    return trees


def test_kept_trees_are_bounded_expire_and_continue_once() -> None:
    clock = Clock()
    one = grown().memory_bytes
    kept = KeptAnalyses(max_trees=2, max_bytes=10 * one, idle_s=60, clock=clock)
    tokens = [kept.issue() for _ in range(3)]
    assert len(set(tokens)) == 3 and all(len(t) <= 64 for t in tokens)
    for token in tokens:
        kept.keep(token, grown())
    assert len(kept) == 2 and kept.bytes == 2 * one  # max_trees: the oldest was dropped
    with pytest.raises(TokenError) as caught:
        kept.take(tokens[0], 0)
    assert caught.value.reason == "unknown"
    trees = kept.take(tokens[1], 0)
    assert trees.iterations == 20 and len(kept) == 1 and kept.bytes == one
    with pytest.raises(TokenError):  # a token continues once
        kept.take(tokens[1], 0)
    clock.now = 61.0  # idle expiry
    kept.sweep()
    assert len(kept) == 0 and kept.bytes == 0
    with pytest.raises(TokenError):
        kept.take(tokens[2], 0)
    small = KeptAnalyses(max_trees=8, max_bytes=one + one // 2, idle_s=60, clock=clock)
    a, b = small.issue(), small.issue()
    small.keep(a, grown())
    small.keep(b, grown())
    assert len(small) == 1 and small.bytes <= small.max_bytes  # max_bytes: the oldest went
    busy = small.issue()  # its call still runs: a continuation waits, then says so
    with pytest.raises(TokenError) as caught:
        small.take(busy, 0)
    assert caught.value.reason == "in_use"
    other = KeptAnalyses(max_trees=8, max_bytes=10 * one, idle_s=60)
    with pytest.raises(TokenError) as caught:
        other.take(b, 0)
    assert caught.value.reason == "other_process"


# --- through gRPC ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(serve_module: Servers) -> RunningServer:
    return serve_module(ServerConfig(default_iterations=200, max_threads=2))


@pytest.fixture()
def stub(server: RunningServer) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]


def position(seed: int = 3) -> pb.Position:
    return pb.Position(game=GAME, encoded=state(seed).encode())


def analyse(
    stub: Any, iterations: int, seed: int = 7, continue_from: str = "", pos: pb.Position | None = None, threads: int = 1
) -> list[Any]:
    request = pb.AnalyzeRequest(
        position=pos or position(),
        limits=pb.SearchLimits(iterations=iterations, seed=seed, threads=threads),
        interval_ms=0,
        continue_from=continue_from,
    )
    return list(stub.Analyze(request, timeout=60))


def test_a_second_analyze_goes_deeper(stub: Any) -> None:
    first = analyse(stub, 300)
    token = first[-1].continuation
    assert token and {u.continuation for u in first} == {token}
    assert first[-1].analysis.iterations == 300
    second = analyse(stub, 200, continue_from=token)
    final = second[-1].analysis
    assert final.iterations == 500 and second[-1].continuation not in ("", token)
    assert sum(m.visits for m in final.moves) == 500  # the root's children hold every iteration
    assert final.nodes > first[-1].analysis.nodes
    once = analyse(stub, 500)[-1].analysis  # one run of N + M: the same analysis
    final.elapsed_ms = once.elapsed_ms = 0.0
    assert final == once
    third = analyse(stub, 100, continue_from=second[-1].continuation)
    assert third[-1].analysis.iterations == 600


def test_a_continuation_after_leaving_a_stream_early(stub: Any) -> None:
    """A hint window closed early (the stream cancelled) continues from where it stopped."""
    request = pb.AnalyzeRequest(position=position(5), limits=pb.SearchLimits(iterations=10**6, seed=1), interval_ms=20)
    call = stub.Analyze(request, timeout=60)
    update = next(call)
    call.cancel()
    token = update.continuation
    more = analyse(stub, 100, seed=1, continue_from=token, pos=position(5))
    assert more[-1].analysis.iterations > update.analysis.iterations >= 1
    assert sum(m.visits for m in more[-1].analysis.moves) == more[-1].analysis.iterations


def test_unknown_used_and_foreign_tokens_are_not_found(stub: Any, server: RunningServer) -> None:
    token = analyse(stub, 50)[-1].continuation
    analyse(stub, 50, continue_from=token)
    instance = token.partition(".")[0]
    for bad, reason in (
        (token, "CONTINUATION_UNKNOWN"),
        (f"{instance}.nope", "CONTINUATION_UNKNOWN"),
        ("0000.x", "CONTINUATION_OTHER_PROCESS"),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            analyse(stub, 50, continue_from=bad)
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        assert caught.value.details().startswith("continue_from: ")
        info = error_info(caught.value)
        assert info.reason == reason and info.metadata["field"] == "continue_from"
    with pytest.raises(grpc.RpcError) as caught:
        analyse(stub, 50, continue_from="x" * 65)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "continue_from" in caught.value.details()
    assert server.servicer.searches_in_flight == 0


def test_a_token_for_another_position_or_seed_is_refused(stub: Any) -> None:
    token = analyse(stub, 100)[-1].continuation
    for kwargs, field in (
        ({"pos": position(11)}, "continue_from"),
        ({"seed": 8}, "limits.seed"),
        ({"threads": 2}, "limits.threads"),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            analyse(stub, 50, continue_from=token, **kwargs)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.details().startswith(f"invalid {field}: ")
    # refused requests leave the token usable
    assert analyse(stub, 50, continue_from=token)[-1].analysis.iterations == 150


def test_the_python_client_continues_and_names_the_field(server: RunningServer) -> None:
    with AdvisorClient(f"127.0.0.1:{server.port}", timeout=60) as client:
        where = Position(GAME, state(6).encode())
        first = list(client.analyze(where, iterations=200, seed=3, interval_ms=0))
        token = first[-1].continuation
        again = list(client.analyze(where, iterations=100, seed=3, interval_ms=0, continue_from=token))
        assert again[-1].analysis.iterations == 300 and again[-1].final
        with pytest.raises(NotFoundError) as caught:
            list(client.analyze(where, iterations=100, seed=3, interval_ms=0, continue_from=token))
        assert caught.value.field == "continue_from" and caught.value.reason == "CONTINUATION_UNKNOWN"
        with pytest.raises(InvalidArgumentError) as refused:
            list(
                client.analyze(
                    Position(GAME, state(9).encode()), iterations=100, seed=3, interval_ms=0, continue_from=again[-1].continuation
                )
            )
        assert refused.value.fields == ("continue_from",)


def test_a_server_that_keeps_nothing_says_so() -> None:
    running = build_server("127.0.0.1:0", ServerConfig(continue_trees=0))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
            answers = analyse(stub, 50)
            assert answers[-1].continuation == ""
            with pytest.raises(grpc.RpcError) as caught:
                analyse(stub, 50, continue_from="abc.def")
            assert caught.value.code() == grpc.StatusCode.NOT_FOUND
            assert error_info(caught.value).metadata["field"] == "continue_from"
    finally:
        running.stop(0)


def test_a_token_whose_call_still_runs_is_failed_precondition(stub: Any) -> None:
    request = pb.AnalyzeRequest(position=position(12), limits=pb.SearchLimits(iterations=10**6, seed=1), interval_ms=20)
    call = stub.Analyze(request, timeout=60)
    try:
        token = next(call).continuation
        with pytest.raises(grpc.RpcError) as caught:
            analyse(stub, 50, seed=1, continue_from=token, pos=position(12))
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        info = error_info(caught.value)
        assert info.reason == "CONTINUATION_IN_USE" and info.metadata["field"] == "continue_from"
    finally:
        call.cancel()
    assert analyse(stub, 50, seed=1, continue_from=token, pos=position(12))[-1].analysis.iterations > 50


def test_the_asyncio_client_continues_too(server: RunningServer) -> None:
    async def go() -> tuple[int, int]:
        async with AsyncAdvisorClient(f"127.0.0.1:{server.port}", timeout=60) as client:
            where = Position(GAME, state(13).encode())
            first = [u async for u in client.analyze(where, iterations=120, seed=2, interval_ms=0)]
            token = first[-1].continuation
            again = [u async for u in client.analyze(where, iterations=80, seed=2, interval_ms=0, continue_from=token)]
            with pytest.raises(NotFoundError):
                [u async for u in client.analyze(where, iterations=80, seed=2, interval_ms=0, continue_from=token)]
            return first[-1].analysis.iterations, again[-1].analysis.iterations

    assert asyncio.run(go()) == (120, 200)


def test_idle_trees_are_dropped_on_a_timer() -> None:
    """Kept trees unused for continue_idle_s are dropped by a timer, not at the next call: an
    idle server gives their memory back."""

    server = build_server("127.0.0.1:0", ServerConfig(continue_idle_s=0.3))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
            position = stub.NewGame(pb.NewGameRequest(game="botanik", seed=1), timeout=10).info.position
            updates = list(stub.Analyze(pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(iterations=100)), timeout=30))
            assert updates[-1].final and updates[-1].continuation
        kept = server.servicer.kept
        assert len(kept) == 1 and kept.bytes > 0
        limit = time.monotonic() + 10
        while len(kept) and time.monotonic() < limit:  # no call is made meanwhile
            time.sleep(0.05)
        assert len(kept) == 0 and kept.bytes == 0 and kept.dropped == 1
    finally:
        server.stop(0)
