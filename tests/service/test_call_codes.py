"""The gRPC port's access log and metrics count a call with the code its client saw: a
stream the client cancelled is CANCELLED, never UNKNOWN (the servicer did not fail)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from hortus.server import RunningServer, ServerConfig
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers


class Seen:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, method: str, code: str, seconds: float, context: Any) -> None:
        with self.lock:
            self.calls.append((method, code))

    def of(self, method: str, timeout: float = 10.0) -> list[str]:
        limit = time.monotonic() + timeout
        while time.monotonic() < limit:
            with self.lock:
                codes = [c for m, c in self.calls if m == method]
            if codes:
                return codes
            time.sleep(0.02)
        return []


@pytest.fixture()
def served(serve: Servers) -> Iterator[tuple[RunningServer, Seen, Any]]:
    server = serve(ServerConfig(access_log=True, max_time_ms=60_000))
    seen = Seen()
    # the interceptor's own observer list: what the access log and the metrics are fed from
    observing = next(i for i in server.server._state.interceptor_pipeline.interceptors if hasattr(i, "observers"))
    observing.observers.append(seen)
    channel = grpc.insecure_channel(server.address)
    stub = advisor_pb2_grpc.AdvisorStub(channel)
    yield server, seen, stub
    channel.close()


def _position(stub: Any) -> pb.Position:
    return stub.NewGame(pb.NewGameRequest(game="botanik", seed=3), timeout=10).info.position  # type: ignore[no-any-return]


def test_a_stream_cancelled_by_its_client_is_cancelled(served: tuple[RunningServer, Seen, Any]) -> None:
    _, seen, stub = served
    call = stub.Analyze(
        pb.AnalyzeRequest(position=_position(stub), limits=pb.SearchLimits(time_ms=30_000), interval_ms=100), timeout=60
    )
    next(call)  # the search runs
    call.cancel()
    assert seen.of("Analyze") == ["CANCELLED"]
