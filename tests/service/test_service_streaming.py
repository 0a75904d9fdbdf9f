"""Analyze (server streaming), EvaluatePositions (bidirectional streaming), difficulty levels,
the batch caps, RetryInfo on RESOURCE_EXHAUSTED and bounded buffering, against in-process
servers on free ports."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

from hortus.search import Analysis
from hortus.server import RunningServer, ServerConfig, build_server
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"
CONFIG = ServerConfig(
    default_iterations=200,
    max_iterations=10**9,
    max_time_ms=20_000,
    max_threads=2,
    max_concurrent_searches=2,
    max_batch_size=40,
    deadline_margin_ms=100,
)


@pytest.fixture(scope="module")
def running(serve_module: Servers) -> RunningServer:
    return serve_module(CONFIG)


@pytest.fixture(scope="module")
def stub(running: RunningServer) -> Iterator[Any]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
        yield advisor_pb2_grpc.AdvisorStub(ch)  # type: ignore[no-untyped-call, unused-ignore]


def new_position(stub: Any, seed: int = 1) -> pb.Position:
    position: pb.Position = stub.NewGame(pb.NewGameRequest(game=GAME, seed=seed), timeout=10).info.position
    return position


def settled(server: RunningServer) -> bool:
    """No search left running (cancelled searches stop within moments; give them time)."""
    limit = time.monotonic() + 10
    while server.servicer.searches_in_flight and time.monotonic() < limit:
        time.sleep(0.01)
    return server.servicer.searches_in_flight == 0


def field_of(error: grpc.RpcError) -> str:
    status = rpc_status.from_call(error)  # type: ignore[arg-type, unused-ignore]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            return str(bad.field_violations[0].field)
    raise AssertionError("no BadRequest detail")


# --- Analyze -----------------------------------------------------------------------------------
def test_analyze_partials_then_one_final(stub: Any) -> None:
    position = new_position(stub)
    # enough iterations that the search outlasts several 10 ms intervals even on a fast kernel
    request = pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(iterations=40000, seed=3), interval_ms=10, max_moves=3)
    responses = list(stub.Analyze(request, timeout=30))
    assert len(responses) >= 2
    assert [r.final for r in responses].count(True) == 1 and responses[-1].final
    for r in responses[:-1]:
        assert r.analysis.partial and len(r.analysis.moves) <= 3
    iterations = [r.analysis.iterations for r in responses]
    assert iterations == sorted(iterations)
    final = responses[-1].analysis
    assert final.iterations == 40000 and not final.partial
    assert final.moves[0].principal_variation[0].id == final.moves[0].action.id


def test_analyze_interval_zero_gives_only_the_final(stub: Any) -> None:
    request = pb.AnalyzeRequest(position=new_position(stub), limits=pb.SearchLimits(iterations=300))
    responses = list(stub.Analyze(request, timeout=30))
    assert len(responses) == 1 and responses[0].final and responses[0].analysis.iterations == 300


def test_analyze_time_budget_is_complete(stub: Any) -> None:
    request = pb.AnalyzeRequest(position=new_position(stub), limits=pb.SearchLimits(time_ms=150), interval_ms=40)
    responses = list(stub.Analyze(request, timeout=30))
    assert responses[-1].final and not responses[-1].analysis.partial


def test_analyze_errors(stub: Any) -> None:
    position = new_position(stub)
    with pytest.raises(grpc.RpcError) as info:
        list(stub.Analyze(pb.AnalyzeRequest(position=position, interval_ms=1), timeout=10))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field_of(info.value) == "interval_ms" and "min_interval_ms" in (info.value.details() or "")
    bad = pb.Position(game=GAME, encoded=b"\x00" * 10)
    with pytest.raises(grpc.RpcError) as info:
        list(stub.Analyze(pb.AnalyzeRequest(position=bad), timeout=10))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field_of(info.value).startswith("position")
    with pytest.raises(grpc.RpcError) as info:
        list(stub.Analyze(pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(threads=99)), timeout=10))
    assert field_of(info.value) == "limits.threads"


def test_analyze_cancel_stops_the_search_within_50_ms(running: RunningServer, stub: Any) -> None:
    """Measured from the client's cancel to the moment the server-side search stopped."""
    stopped: list[tuple[float, bool]] = []

    def listener(method: str, analysis: Analysis, cancelled: bool) -> None:
        if method == "Analyze":
            stopped.append((time.monotonic(), cancelled))

    running.servicer.listeners.append(listener)
    try:
        # no partial results: the search runs without pause until the cancel reaches it
        request = pb.AnalyzeRequest(
            position=new_position(stub), limits=pb.SearchLimits(iterations=10**9, time_ms=15_000), interval_ms=0
        )
        call = stub.Analyze(request, timeout=30)
        limit = time.monotonic() + 10
        while running.servicer.searches_in_flight == 0 and time.monotonic() < limit:
            time.sleep(0.005)
        time.sleep(0.1)  # well inside the search
        cancelled_at = time.monotonic()
        call.cancel()
        limit = time.monotonic() + 10
        while not stopped and time.monotonic() < limit:
            time.sleep(0.005)
        assert stopped, "the search never stopped"
        stop_time, was_cancelled = stopped[0]
        assert was_cancelled
        # the bound is on the search: the cancel reaches the server through gRPC's own
        # callback; generous slack for a loaded 2-core machine is added on top of 50 ms
        assert stop_time - cancelled_at < 0.05 + 0.45
    finally:
        running.servicer.listeners.remove(listener)
    assert settled(running)


# --- SuggestMove with a level --------------------------------------------------------------------
def test_suggest_move_at_a_level(stub: Any) -> None:
    position = new_position(stub, seed=4)
    request = pb.SuggestMoveRequest(position=position, level=3, limits=pb.SearchLimits(seed=11))
    first = stub.SuggestMove(request, timeout=30)
    again = stub.SuggestMove(request, timeout=30)
    assert first.analysis.iterations == 128  # the level's budget
    assert first.action == again.action and list(first.turn) == list(again.turn)  # seeded
    assert first.turn[0] == first.action
    legal = {a.id for a in stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10).actions}
    assert first.action.id in legal
    with pytest.raises(grpc.RpcError) as info:
        stub.SuggestMove(pb.SuggestMoveRequest(position=position, level=9), timeout=10)
    assert field_of(info.value) == "level"
    with pytest.raises(grpc.RpcError) as info:
        stub.SuggestMove(pb.SuggestMoveRequest(position=position, level=2, limits=pb.SearchLimits(iterations=5)), timeout=10)
    assert field_of(info.value) == "limits"


# --- EvaluatePositions -----------------------------------------------------------------------------
def test_evaluate_answers_every_position_exactly_once(stub: Any) -> None:
    positions = [new_position(stub, seed=s) for s in range(1, 6)]
    requests = [
        pb.EvaluateRequest(id=f"p{i}", position=positions[i % 5], limits=pb.SearchLimits(iterations=50 + i, seed=i))
        for i in range(20)
    ]
    requests.append(pb.EvaluateRequest(id="bad", position=pb.Position(game=GAME, encoded=b"xx")))
    requests.append(pb.EvaluateRequest(id="cap", position=positions[0], limits=pb.SearchLimits(threads=50)))
    requests.append(pb.EvaluateRequest(id="nogame", position=pb.Position(game="chess", encoded=b"")))
    answers = list(stub.EvaluatePositions(iter(requests), timeout=60))
    ids = [a.id for a in answers]
    assert sorted(ids) == sorted(r.id for r in requests)  # each exactly once
    by_id = {a.id: a for a in answers}
    for i in range(20):
        answer = by_id[f"p{i}"]
        assert answer.WhichOneof("result") == "analysis"
        assert answer.analysis.iterations == 50 + i
    assert by_id["bad"].error.code == "INVALID_ARGUMENT" and by_id["bad"].error.field.startswith("position")
    assert by_id["cap"].error.field == "limits.threads" and "max_threads" in by_id["cap"].error.message
    assert by_id["nogame"].error.field == "position.game"


def test_evaluate_empty_stream(stub: Any) -> None:
    assert list(stub.EvaluatePositions(iter(()), timeout=10)) == []


def test_evaluate_batch_size_cap(stub: Any) -> None:
    position = new_position(stub)
    requests = [
        pb.EvaluateRequest(id=str(i), position=position, limits=pb.SearchLimits(iterations=10))
        for i in range(CONFIG.max_batch_size + 5)
    ]
    call = stub.EvaluatePositions(iter(requests), timeout=60)
    answered = []
    with pytest.raises(grpc.RpcError) as info:
        for answer in call:
            answered.append(answer.id)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "max_batch_size" in (info.value.details() or "")
    assert sorted(answered, key=int) == [str(i) for i in range(CONFIG.max_batch_size)]  # every accepted one


def test_evaluate_uses_the_callers_budget_and_deadline(stub: Any) -> None:
    position = new_position(stub)
    requests = [
        pb.EvaluateRequest(id="long", position=position, limits=pb.SearchLimits(iterations=10**9)),
        pb.EvaluateRequest(id="short", position=position, limits=pb.SearchLimits(iterations=20)),
    ]
    answers = {a.id: a for a in stub.EvaluatePositions(iter(requests), timeout=1.5)}
    assert answers["long"].analysis.partial  # cut by the call's deadline, still answered
    assert answers["short"].analysis.iterations == 20


def test_evaluate_bounded_buffering_when_the_client_never_reads() -> None:
    """A client that sends many positions and never reads: the server accepts at most its
    window (plus what gRPC's flow control buffers) and stops reading the stream."""
    config = ServerConfig(max_concurrent_searches=1, batch_window=3, max_iterations=10**6, default_iterations=10)
    server = build_server("127.0.0.1:0", config)
    sent = 0
    try:
        # the client's own receive window stays fixed (no BDP probing), so the answers it does
        # not read fill it, the server's sends block, and the server must stop reading
        options = [("grpc.http2.bdp_probe", 0)]
        with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as ch:
            stub = advisor_pb2_grpc.AdvisorStub(ch)  # type: ignore[no-untyped-call, unused-ignore]
            position = new_position(stub)
            done = threading.Event()

            def requests() -> Iterator[pb.EvaluateRequest]:
                nonlocal sent
                while not done.is_set() and sent < 200_000:
                    sent += 1
                    yield pb.EvaluateRequest(id="x" * 200, position=position, limits=pb.SearchLimits(iterations=10))

            call = stub.EvaluatePositions(requests(), timeout=60)
            history = [-1]
            limit = time.monotonic() + 20
            while time.monotonic() < limit:
                time.sleep(0.5)
                history.append(sent)
                if len(history) >= 4 and history[-1] == history[-2] == history[-3]:
                    break
            assert history[-1] == history[-2] == history[-3], f"the server kept reading: {history}"
            assert sent < 200_000
            done.set()
            call.cancel()
    finally:
        server.stop(0)
    assert settled(server)


def test_resource_exhausted_carries_retry_info() -> None:
    config = ServerConfig(max_concurrent_searches=1, max_threads=1, max_iterations=10**9, retry_after_ms=250)
    server = build_server("127.0.0.1:0", config)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
            stub = advisor_pb2_grpc.AdvisorStub(ch)  # type: ignore[no-untyped-call, unused-ignore]
            position = new_position(stub)
            long = stub.Analyze(
                pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(time_ms=10_000), interval_ms=100),
                timeout=30,
            )
            next(long)  # holds the only slot
            with pytest.raises(grpc.RpcError) as info:
                stub.RankMoves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=5)), timeout=10)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            status = rpc_status.from_call(info.value)  # type: ignore[arg-type, unused-ignore]
            assert status is not None
            delays = []
            for detail in status.details:
                if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    retry = error_details_pb2.RetryInfo()
                    detail.Unpack(retry)
                    delays.append(retry.retry_delay.ToNanoseconds() / 1e9)
            assert delays == [0.25]
            long.cancel()
    finally:
        server.stop(0)


def test_concurrent_call_limit() -> None:
    """Streams hold a pool thread each; beyond max_concurrent_rpcs calls are refused, not queued."""
    config = ServerConfig(max_concurrent_searches=1, workers=2, max_concurrent_rpcs=2, max_time_ms=20_000)
    server = build_server("127.0.0.1:0", config)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
            stub = advisor_pb2_grpc.AdvisorStub(ch)  # type: ignore[no-untyped-call, unused-ignore]
            position = new_position(stub)
            gate = threading.Event()

            def idle() -> Iterator[pb.EvaluateRequest]:
                gate.wait(20)
                return
                yield  # a generator that sends nothing until released

            streams = [stub.EvaluatePositions(idle(), timeout=30) for _ in range(2)]
            time.sleep(0.3)
            with pytest.raises(grpc.RpcError) as info:
                stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            gate.set()
            for stream in streams:
                assert list(stream) == []
            assert stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10).actions
    finally:
        server.stop(0)


def test_analyze_stream_in_process() -> None:
    from hortus import games
    from hortus.search import Limits, SearchHandle, analyze_stream

    state = games.get(GAME).new_game(seed=3)
    updates = list(analyze_stream(state, Limits(iterations=3000, seed=1, threads=2), interval_ms=5))
    assert [final for _, final in updates].count(True) == 1 and updates[-1][1]
    assert all(a.partial for a, final in updates if not final)
    assert updates[-1][0].iterations == 6000 and not updates[-1][0].partial  # 2 threads x 3000
    handle = SearchHandle()
    stream = analyze_stream(state, Limits(iterations=None, time_ms=10_000), handle, interval_ms=10)
    first, final = next(stream)
    assert not final
    handle.cancel()
    rest = list(stream)
    assert len(rest) == 1 and rest[0][1] and rest[0][0].partial
    with pytest.raises(ValueError):
        next(analyze_stream(games.get(GAME).new_game(), Limits(iterations=10)))  # a chance node


def test_analyze_stream_details_only_the_moves_asked_for() -> None:
    """With `detail`, every snapshot explains only its first moves, as analyze() does; the
    statistics are unchanged."""
    from hortus import games
    from hortus.search import Limits, analyze_stream

    state = games.get(GAME).new_game(seed=3)
    limits = Limits(iterations=2000, seed=4)
    full = [a for a, _ in analyze_stream(state, limits, interval_ms=0)]
    short = [a for a, _ in analyze_stream(state, limits, interval_ms=0, detail=1)]
    assert len(full) == len(short) == 1 and len(full[0].moves) > 1
    assert [(m.action, m.visits) for m in full[0].moves] == [(m.action, m.visits) for m in short[0].moves]
    assert short[0].moves[0] == full[0].moves[0]
    assert all(m.reason for m in full[0].moves)
    assert not any(m.reason for m in short[0].moves[1:])


def test_batches_use_every_slot_and_interactive_calls_are_still_served(running: RunningServer, stub: Any) -> None:
    """A batch keeps every search slot busy (all cores), and a hint asked during a long batch
    is served at once, in the one slot over the cap kept for interactive calls."""
    position = new_position(stub, seed=31)
    requests = [
        pb.EvaluateRequest(id=str(i), position=position, limits=pb.SearchLimits(iterations=20_000, seed=i)) for i in range(12)
    ]
    call = stub.EvaluatePositions(iter(requests), timeout=120)
    slots = running.servicer.config.max_concurrent_searches
    most = 0
    limit = time.monotonic() + 10
    while most < slots and time.monotonic() < limit:
        most = max(most, running.servicer.searches_in_flight)
        time.sleep(0.002)
    assert most == slots  # the batch alone fills every slot
    hint = stub.RankMoves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=50)), timeout=30)
    assert hint.analysis.iterations == 50
    assert sorted(a.id for a in call) == sorted(str(i) for i in range(12))
