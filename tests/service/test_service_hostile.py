"""What a hostile audit of ``hortus serve`` found, each case as a test.

1. every batch position accepted is answered before the call's deadline, whatever the load;
2. malformed protobuf bytes are INVALID_ARGUMENT with a BadRequest on every RPC, logged at
   most once per interval;
3. health checks, reflection and GetVersion are answered even when the call limit is reached;
4. calls racing a shutdown end UNAVAILABLE (never CANCELLED);
6. error fields name real proto paths;
9. (tests/test_tls.py) TLS errors say what is wrong.

Timing appears only as deadlines the server must meet, with generous margins (this runs on a
loaded 2-core machine).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

from hortus.server import RunningServer, ServerConfig, build_server
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"


def make_stub(channel: grpc.Channel) -> Any:
    return advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]


def new_position(stub: Any, seed: int = 1) -> pb.Position:
    position: pb.Position = stub.NewGame(pb.NewGameRequest(game=GAME, seed=seed), timeout=10).info.position
    return position


def bad_request_fields(error: grpc.RpcError) -> list[str]:
    """The fields of the BadRequest detail of a failed call."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, f"no rich status: {error}"
    fields = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    return fields


# --- 1. batch positions answered by their deadline ---------------------------------------------
@pytest.fixture()
def one_slot(serve: Servers) -> RunningServer:
    """One search slot (so one batch pool thread before the fix) and a generous margin."""
    config = ServerConfig(
        max_iterations=10**9, max_time_ms=30_000, max_threads=1, max_concurrent_searches=1, deadline_margin_ms=300
    )
    return serve(config)


def _batch(stub: Any, ids: list[str], position: pb.Position, deadline_s: float) -> tuple[list[Any], str]:
    """EvaluatePositions of `ids` (one long search each) under a deadline: the answers and the
    call's final code."""
    requests = [pb.EvaluateRequest(id=i, position=position, limits=pb.SearchLimits(time_ms=2500)) for i in ids]
    answers: list[Any] = []
    try:
        for answer in stub.EvaluatePositions(iter(requests), timeout=deadline_s):
            answers.append(answer)
    except grpc.RpcError as exc:
        return answers, exc.code().name
    return answers, "OK"


def test_every_batch_position_is_answered_by_the_deadline_whatever_the_load(one_slot: RunningServer) -> None:
    """Eight one-position calls and one eight-position call compete for one search slot with
    budgets far over their deadline: every call ends OK, every position answered exactly once
    (a search, partial, or DEADLINE_EXCEEDED in its answer) — none is left to the deadline."""
    with grpc.insecure_channel(f"127.0.0.1:{one_slot.port}") as channel:
        stub = make_stub(channel)
        position = new_position(stub)
        results: dict[str, tuple[list[Any], str]] = {}

        def run(name: str, ids: list[str]) -> None:
            results[name] = _batch(stub, ids, position, deadline_s=4.0)

        calls = [threading.Thread(target=run, args=(f"single{i}", [f"s{i}"])) for i in range(8)]
        calls.append(threading.Thread(target=run, args=("many", [f"m{i}" for i in range(8)])))
        for thread in calls:
            thread.start()
        for thread in calls:
            thread.join(30)
    assert len(results) == 9
    codes = {name: code for name, (_, code) in results.items()}
    assert set(codes.values()) == {"OK"}, codes
    for name, (answers, _) in results.items():
        expected = [f"s{name[6:]}"] if name.startswith("single") else [f"m{i}" for i in range(8)]
        assert sorted(a.id for a in answers) == sorted(expected), name
        for answer in answers:
            if answer.WhichOneof("result") == "error":
                assert answer.error.code == "DEADLINE_EXCEEDED", answer
            else:
                assert answer.analysis.moves and answer.analysis.iterations > 0
    searched = sum(a.WhichOneof("result") == "analysis" for answers, _ in results.values() for a in answers)
    assert searched >= 1


# --- 2. malformed protobuf ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(serve_module: Servers) -> RunningServer:
    return serve_module(ServerConfig(max_concurrent_searches=2, default_iterations=50))


MALFORMED = {
    "invalid UTF-8 in a string field": b"\x0a\x02\xff\xfe",
    "truncated": b"\x0a\x10hortus",  # field 1 announces 16 bytes, 6 follow
    "random bytes": random.Random(15).randbytes(64),
}


def _raw_call(channel: grpc.Channel, path: str, client_streaming: bool, server_streaming: bool, data: bytes) -> None:
    """Send `data` as the request (for a client stream: as its only message) and read every
    answer; raises the call's RpcError."""
    if client_streaming and server_streaming:
        list(channel.stream_stream(path)(iter([data]), timeout=10))
    elif client_streaming:
        channel.stream_unary(path)(iter([data]), timeout=10)
    elif server_streaming:
        list(channel.unary_stream(path)(data, timeout=10))
    else:
        channel.unary_unary(path)(data, timeout=10)


def _every_method() -> list[tuple[str, bool, bool, Any]]:
    """(path, client streaming, server streaming, request class) of every RPC the server hosts."""
    from google.protobuf import message_factory
    from grpc_health.v1 import health_pb2
    from grpc_reflection.v1alpha import reflection_pb2

    methods = []
    for descriptor in (
        pb.DESCRIPTOR.services_by_name["Advisor"],
        health_pb2.DESCRIPTOR.services_by_name["Health"],
        reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"],
    ):
        for method in descriptor.methods:
            path = f"/{descriptor.full_name}/{method.name}"
            request_class = message_factory.GetMessageClass(method.input_type)
            methods.append((path, method.client_streaming, method.server_streaming, request_class))
    return methods


def _parses(request_class: Any, data: bytes) -> bool:
    try:
        request_class.FromString(data)
    except Exception:  # noqa: BLE001 - DecodeError
        return False
    return True


def test_malformed_requests_are_invalid_argument_on_every_rpc(server: RunningServer, caplog: pytest.LogCaptureFixture) -> None:
    """Bytes the request's message type cannot parse (which depends on the type: field 1 is not
    a string everywhere) are INVALID_ARGUMENT naming ``request`` on every RPC, with no ERROR
    in the log and far fewer warnings than calls."""
    caplog.set_level(logging.WARNING)
    methods = _every_method()
    assert len(methods) >= 12
    refused = 0
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        for path, client_streaming, server_streaming, request_class in methods:
            for what, data in MALFORMED.items():
                if _parses(request_class, data):
                    continue
                with pytest.raises(grpc.RpcError) as info:
                    _raw_call(channel, path, client_streaming, server_streaming, data)
                error = info.value
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (path, what, error.details())
                assert bad_request_fields(error) == ["request"], (path, what)
                refused += 1
        # the server still works
        assert make_stub(channel).GetVersion(pb.GetVersionRequest(), timeout=10).protocol == "hortus.v1"
    assert refused >= 2 * len(methods)  # truncated and random bytes fail everywhere
    assert not _parses(pb.NewGameRequest, MALFORMED["invalid UTF-8 in a string field"])  # the audit's case
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    warnings = [r for r in caplog.records if "malformed request" in r.getMessage()]
    assert 1 <= len(warnings) < refused / 4  # rate-limited: not one per call


def test_a_malformed_message_in_a_batch_ends_it_after_the_accepted_positions(server: RunningServer) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        position = new_position(make_stub(channel))
        good = [
            pb.EvaluateRequest(id=f"p{i}", position=position, limits=pb.SearchLimits(iterations=20)).SerializeToString()
            for i in range(3)
        ]
        call = channel.stream_stream("/hortus.v1.Advisor/EvaluatePositions", response_deserializer=pb.EvaluateResponse.FromString)
        answers = []
        with pytest.raises(grpc.RpcError) as info:
            for answer in call(iter(good + [MALFORMED["truncated"]] + good), timeout=30):
                answers.append(answer.id)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_request_fields(info.value) == ["request"]
    assert sorted(answers) == ["p0", "p1", "p2"]


# --- 3. probes answered when busy ---------------------------------------------------------------
def _health_check(channel: grpc.Channel) -> int:
    from grpc_health.v1 import health_pb2

    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    status: int = check(health_pb2.HealthCheckRequest(), timeout=10).status
    return status


def test_probes_are_answered_when_the_call_limit_is_reached() -> None:
    """The audit's case: --max-concurrent-rpcs 24 and 40 open batch streams. Work calls over
    the cap are refused RESOURCE_EXHAUSTED with a RetryInfo; health checks, reflection and
    GetVersion are answered."""
    from grpc_health.v1 import health_pb2
    from grpc_reflection.v1alpha import reflection_pb2

    config = ServerConfig(max_concurrent_searches=1, max_concurrent_rpcs=24, max_time_ms=20_000)
    running = build_server("127.0.0.1:0", config)
    gate = threading.Event()

    def idle() -> Iterator[pb.EvaluateRequest]:
        gate.wait(30)
        return
        yield  # a stream that sends nothing until released

    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = make_stub(channel)
            position = new_position(stub)
            streams = [stub.EvaluatePositions(idle(), timeout=60) for _ in range(40)]
            admission = getattr(running, "admission", None)
            assert _wait_for(lambda: admission is None or admission.in_flight >= 24)
            time.sleep(0.3)  # (the streams the cap refused are settled too)
            refused = 0
            for _ in range(3):
                try:
                    stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10)
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                    refused += 1
            assert refused == 3
            for _ in range(5):
                assert _health_check(channel) == health_pb2.HealthCheckResponse.SERVING
                assert stub.GetVersion(pb.GetVersionRequest(), timeout=10).protocol == "hortus.v1"
                reflect = channel.stream_stream(
                    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                    request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                    response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
                )
                answer = list(reflect(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10))
                assert any(s.name == "hortus.v1.Advisor" for s in answer[0].list_services_response.service)
            gate.set()
            codes = []
            for stream in streams:
                try:
                    list(stream)
                    codes.append("OK")
                except grpc.RpcError as exc:
                    codes.append(exc.code().name)
            assert codes.count("OK") >= 24 and set(codes) <= {"OK", "RESOURCE_EXHAUSTED"}, codes
    finally:
        gate.set()
        running.stop(0)


def _wait_for(predicate: Any, seconds: float = 20.0) -> bool:
    limit = time.monotonic() + seconds
    while not predicate() and time.monotonic() < limit:
        time.sleep(0.02)
    return bool(predicate())


# --- 4. no CANCELLED during shutdown -----------------------------------------------------------------
def test_calls_racing_a_shutdown_are_answered_unavailable_not_cancelled() -> None:
    """A search in flight keeps the server in its grace period; calls arriving meanwhile (and
    health checks) end OK or UNAVAILABLE, never CANCELLED, and the search finishes. (Before,
    gRPC stopped 0.5 s into the grace period, and calls arriving later were cancelled.)"""
    config = ServerConfig(max_concurrent_searches=2, max_iterations=10**9, max_time_ms=20_000, grace_seconds=6)
    running = build_server("127.0.0.1:0", config)
    codes: list[str] = []
    stopped = threading.Event()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = make_stub(channel)
            position = new_position(stub)
            search = stub.RankMoves.future(
                pb.RankMovesRequest(position=position, limits=pb.SearchLimits(time_ms=2000)), timeout=30
            )
            assert _wait_for(lambda: running.servicer.searches_in_flight == 1)
            stopper = threading.Thread(target=lambda: (running.stop(), stopped.set()))
            stopper.start()
            # a client calling while the server drains (as long as a call is in flight there);
            # after its last answer it would go elsewhere
            while not search.done():
                for call in (
                    lambda: stub.RankMoves(
                        pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=10)), timeout=15
                    ),
                    lambda: _health_check(channel),
                ):
                    try:
                        call()
                        codes.append("OK")
                    except grpc.RpcError as exc:
                        codes.append(exc.code().name)
            stopper.join(30)
            assert search.result().analysis.moves  # the call in flight finished
    finally:
        stopped.wait(30)
    assert len(codes) >= 4
    assert set(codes) <= {"OK", "UNAVAILABLE"}, sorted(set(codes))


# --- 6. error fields are real proto paths ------------------------------------------------------------
def _is_proto_path(descriptor: Any, path: str) -> bool:
    """Whether `path` (``a.b[2].c``, ``options[name]``) names a field of the message `descriptor`."""
    import re

    for part in path.split("."):
        name = re.sub(r"\[[^\]]*\]$", "", part)
        field = descriptor.fields_by_name.get(name) if descriptor is not None else None
        if field is None:
            return False
        descriptor = field.message_type
        if descriptor is not None and descriptor.GetOptions().map_entry:
            descriptor = descriptor.fields_by_name["value"].message_type
    return True


def test_error_fields_name_real_proto_paths(server: RunningServer) -> None:
    """Every way of breaking a position's bytes names ``position.encoded`` (the part of the
    bytes goes into the description), and every field named is a real path of the request."""
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = make_stub(channel)
        good = new_position(stub).encoded
        broken = {
            "checksum": bytearray(good),
            "game_id": bytearray(good),
            "length": bytearray(good[:-5]),
            "magic": bytearray(good),
        }
        broken["checksum"][len(good) // 2] ^= 0xFF
        broken["game_id"][5] ^= 0x7F
        broken["magic"][0] ^= 0xFF
        requests: list[tuple[str, Any, str]] = [
            (part, pb.RankMovesRequest(position=pb.Position(game=GAME, encoded=bytes(data))), "RankMoves")
            for part, data in broken.items()
        ]
        requests += [
            ("", pb.LegalActionsRequest(position=pb.Position(game=GAME, encoded=b"xx")), "LegalActions"),
            (
                "",
                pb.RankMovesRequest(position=pb.Position(game=GAME, encoded=good), limits=pb.SearchLimits(threads=999)),
                "RankMoves",
            ),
            (
                "",
                pb.ApplyActionsRequest(position=pb.Position(game=GAME, encoded=good), actions=[pb.ActionRef(id=10**6)]),
                "ApplyActions",
            ),
            ("", pb.NewGameRequest(game=GAME, options={"no_such_rule": "x"}), "NewGame"),
            ("", pb.ViewPositionRequest(position=pb.Position(game=GAME, encoded=good), seat=9), "ViewPosition"),
        ]
        for part, request, method in requests:
            with pytest.raises(grpc.RpcError) as info:
                getattr(stub, method)(request, timeout=10)
            status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
            assert status is not None
            for detail in status.details:
                bad = error_details_pb2.BadRequest()
                assert detail.Unpack(bad)
                for violation in bad.field_violations:
                    assert _is_proto_path(request.DESCRIPTOR, violation.field), (method, violation.field)
                    if part:
                        assert violation.field == "position.encoded"
                        assert violation.description.startswith(f"{part}: "), violation.description


# --- 8. search limits visible -------------------------------------------------------------------------
def test_max_nodes_is_checked_when_limits_are_made() -> None:
    from hortus.search import Limits
    from hortus.search.analysis import MAX_NODES

    for bad in (0, 2**31, MAX_NODES + 1, 2**64):
        with pytest.raises(ValueError, match="max_nodes"):
            Limits(max_nodes=bad)
        with pytest.raises(ValueError, match="max_nodes"):
            ServerConfig(max_nodes=bad)
    assert Limits(max_nodes=MAX_NODES).max_nodes == MAX_NODES


def test_a_full_tree_is_flagged_and_every_root_move_kept() -> None:
    from hortus import games
    from hortus.search import Limits, analyze

    state = games.get(GAME).new_game(players=2, seed=3)
    while state.current_player < 0:
        state.apply(state.chance_outcomes()[0][0])
    considered = sorted(state.search_actions())
    assert len(considered) > 16
    for max_nodes in (1, 16):
        analysis = analyze(state, Limits(iterations=300, seed=1, max_nodes=max_nodes))
        assert analysis.tree_full, max_nodes
        assert sorted(m.action for m in analysis.moves) == considered, max_nodes
        assert analysis.iterations == 300
        unvisited = [m for m in analysis.moves if m.visits == 0]
        assert all("max_nodes" in m.reason for m in unvisited)
        if max_nodes == 1:
            assert len(unvisited) == len(considered)
    roomy = analyze(state, Limits(iterations=300, seed=1))
    assert not roomy.tree_full
    assert sorted(m.action for m in roomy.moves) == considered


def test_tree_full_through_the_service() -> None:
    from hortus.clients import AdvisorClient

    running = build_server("127.0.0.1:0", ServerConfig(max_nodes=16, max_concurrent_searches=2))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = make_stub(channel)
            position = new_position(stub, seed=3)
            answer = stub.RankMoves(
                pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=200)), timeout=30
            ).analysis
            assert answer.tree_full and answer.nodes <= 16
            legal = {a.id for a in stub.LegalActions(pb.LegalActionsRequest(position=position), timeout=10).actions}
            assert {m.action.id for m in answer.moves} <= legal
            assert len(answer.moves) > 16  # every move considered, not only the 15 the tree held
        with AdvisorClient(f"127.0.0.1:{running.port}") as client:
            from hortus.clients.types import Position

            ranked = client.rank_moves(Position(GAME, position.encoded), iterations=200)
            assert ranked.tree_full and ranked.to_dict()["tree_full"] is True
    finally:
        running.stop(0)
