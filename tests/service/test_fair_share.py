"""One client cannot starve the others: while one client holds every search slot with huge
searches, another client's small searches are still answered (one slot beyond the capacity
for a client that holds none, and a short queue served fewest-slots-first), and the first
client cannot take more."""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
from concurrent import futures

import grpc
import pytest

from hortus.server import RunningServer, ServerConfig
from hortus.server.slots import SearchSlots
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc

pytest.importorskip("connectrpc", reason="the second client calls the web port: pip install 'hortus[web]'")

from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers

HUGE = pb.SearchLimits(iterations=5_000_000, threads=2, time_ms=20_000)


@pytest.fixture()
def server(serve: Servers) -> RunningServer:
    config = ServerConfig(max_concurrent_searches=2, max_threads=2, max_iterations=5_000_000, max_time_ms=20_000, cache_bytes=0)
    return serve(config, web=WebOptions("127.0.0.1:0"))


def _suggest_from(server: RunningServer, source: str, position: pb.Position, seed: int) -> tuple[int, str]:
    """A small SuggestMove over Connect JSON from the local address `source` (another client)."""
    assert server.web is not None
    conn = http.client.HTTPConnection("127.0.0.1", server.web.port, timeout=30, source_address=(source, 0))
    body = {
        "position": {"game": position.game, "encoded": base64.b64encode(position.encoded).decode()},
        "limits": {"iterations": 200, "seed": seed},
    }
    try:
        conn.request(
            "POST",
            "/hortus.v1.Advisor/SuggestMove",
            json.dumps(body),
            {"Content-Type": "application/json", "Connect-Timeout-Ms": "15000"},
        )
        response = conn.getresponse()
        data = json.loads(response.read())
        return response.status, str(data.get("code", "ok"))
    finally:
        conn.close()


def test_a_client_holding_every_slot_does_not_starve_another(server: RunningServer) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
        position = stub.NewGame(pb.NewGameRequest(game="botanical_lab", seed=2), timeout=10).info.position
        # client A (127.0.0.1, gRPC) fills both slots of the worker for 20 s
        huge = [stub.RankMoves.future(pb.RankMovesRequest(position=position, limits=HUGE), timeout=40) for _ in range(2)]
        try:
            limit = time.monotonic() + 10
            while server.servicer.searches_in_flight < 2 and time.monotonic() < limit:
                time.sleep(0.01)
            assert server.servicer.searches_in_flight == 2
            # client B (127.0.0.2, web): 40 small SuggestMoves, 8 at a time
            with futures.ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(lambda seed: _suggest_from(server, "127.0.0.2", position, seed), range(1, 41)))
            assert answers == [(200, "ok")] * 40
            # A cannot take B's share: a third huge search waits briefly, then is refused
            with pytest.raises(grpc.RpcError) as info:
                stub.RankMoves(pb.RankMovesRequest(position=position, limits=HUGE), timeout=4)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert not any(call.done() for call in huge)  # A's searches ran all along
        finally:
            for call in huge:
                call.cancel()


def test_a_waiting_search_goes_to_the_client_with_fewer_slots() -> None:
    slots = SearchSlots(2)
    assert slots.try_interactive("a") and slots.try_interactive("a") and slots.try_interactive("b")
    assert slots.acquire("a", timeout=0) is None  # full for A
    order: list[str] = []

    def wait_for_slot(who: str) -> None:
        if slots.acquire(who, timeout=10) is not None:
            order.append(who)

    first = threading.Thread(target=wait_for_slot, args=("a",))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=wait_for_slot, args=("b",))
    second.start()
    time.sleep(0.1)
    slots.release(batch=False, who="b")  # B now holds none, A two: B's search goes, though it came later
    second.join(10)
    assert order == ["b"]
    slots.release(batch=False, who="b")  # full for A still: A holds two, and the extra slot is for a client holding none
    time.sleep(0.2)
    assert order == ["b"]
    slots.release(batch=False, who="a")  # under the capacity: A's waiting search goes
    first.join(10)
    assert order == ["b", "a"]
