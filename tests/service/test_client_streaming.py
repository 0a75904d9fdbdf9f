"""The clients' streaming analysis, batch evaluation, levels, round robin over a list of
targets and RetryInfo, against in-process servers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from hortus.clients import (
    AdvisorClient,
    AnalysisUpdate,
    AsyncAdvisorClient,
    EvaluationItem,
    EvaluationResult,
    Position,
    ResourceExhaustedError,
    channel_target,
    service_config,
)
from hortus.server import RunningServer, ServerConfig
from servers import Servers

GAME = "botanik"
CONFIG = ServerConfig(default_iterations=50, max_iterations=10**9, max_concurrent_searches=2, max_threads=2)


@pytest.fixture(scope="module")
def servers(serve_module: Servers) -> list[RunningServer]:
    return [serve_module(CONFIG) for _ in range(2)]


@pytest.fixture(scope="module")
def client(servers: list[RunningServer]) -> Iterator[AdvisorClient]:
    with AdvisorClient([f"127.0.0.1:{s.port}" for s in servers], timeout=30) as c:
        yield c


def test_targets_and_service_config() -> None:
    assert channel_target("dns:///hortus:50051") == "dns:///hortus:50051"
    assert channel_target(["127.0.0.1:1", "127.0.0.2:2"]) == "ipv4:///127.0.0.1:1,127.0.0.2:2"
    assert channel_target(["[::1]:5"]) == "ipv6:///[::1]:5"
    assert channel_target(["localhost:7"]).endswith(":7")
    config = json.loads(service_config(4, wait_for_ready=True))
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    method = config["methodConfig"][0]
    assert method["waitForReady"] is True
    assert method["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]


def test_round_robin_spreads_calls(servers: list[RunningServer], client: AdvisorClient) -> None:
    seen: dict[int, int] = {0: 0, 1: 0}
    for i, server in enumerate(servers):
        server.servicer.listeners.append(lambda m, a, c, i=i: seen.__setitem__(i, seen[i] + 1))
    try:
        position = client.new_game(GAME, seed=1).position
        for _ in range(6):
            client.rank_moves(position, iterations=10)
    finally:
        for server in servers:
            server.servicer.listeners.clear()
    assert seen[0] > 0 and seen[1] > 0, seen


def test_analyze_iterator(client: AdvisorClient) -> None:
    position = client.new_game(GAME, seed=2).position
    updates = list(client.analyze(position, iterations=3000, seed=1, interval_ms=10, max_moves=2))
    assert all(isinstance(u, AnalysisUpdate) for u in updates)
    assert [u.final for u in updates].count(True) == 1 and updates[-1].final
    assert updates[-1].analysis.iterations == 3000
    # breaking out early cancels the call
    for update in client.analyze(position, time_ms=10_000, interval_ms=20):
        assert not update.final
        break


def test_suggest_level(client: AdvisorClient) -> None:
    position = client.new_game(GAME, seed=3).position
    first = client.suggest_level(position, 2, seed=5)
    assert first.analysis.iterations == 64 and first.turn[0] == first.action
    assert client.suggest_level(position, 2, seed=5).action == first.action


def test_evaluate_any_iterable(client: AdvisorClient) -> None:
    positions = [client.new_game(GAME, seed=s).position for s in range(1, 4)]

    def items() -> Iterator[EvaluationItem | tuple[str, Position] | Position]:
        for i in range(12):
            yield EvaluationItem(f"item{i}", positions[i % 3], iterations=20 + i, seed=i)
        yield ("pair", positions[0])
        yield positions[1]  # id = its index
        yield EvaluationItem("broken", Position(GAME, b"\x01\x02"))

    results = list(client.evaluate(items(), iterations=30, streams=2, window=3))
    by_id = {r.id: r for r in results}
    assert len(results) == len(by_id) == 15
    for i in range(12):
        result = by_id[f"item{i}"]
        assert result.ok and result.analysis is not None and result.analysis.iterations == 20 + i
    pair = by_id["pair"].analysis
    assert pair is not None and pair.iterations == 30
    assert by_id["13"].ok
    broken = by_id["broken"]
    assert not broken.ok and broken.error is not None and broken.error.code == "INVALID_ARGUMENT"
    assert broken.to_dict()["error"]["field"].startswith("position")


def test_async_analyze_and_evaluate(servers: list[RunningServer]) -> None:
    targets = [f"127.0.0.1:{s.port}" for s in servers]

    async def scenario() -> tuple[list[AnalysisUpdate], list[EvaluationResult]]:
        async with AsyncAdvisorClient(targets, timeout=30) as client:
            position = (await client.new_game(GAME, seed=4)).position
            updates = [u async for u in client.analyze(position, iterations=2000, interval_ms=10)]
            results = [r async for r in client.evaluate([(str(i), position) for i in range(7)], iterations=15, window=2)]
            return updates, results

    updates, results = asyncio.run(scenario())
    assert updates[-1].final and updates[-1].analysis.iterations == 2000
    assert sorted(r.id for r in results) == [str(i) for i in range(7)]
    assert all(r.analysis is not None and r.analysis.iterations == 15 for r in results)


def test_resource_exhausted_retry_delay(serve: Servers) -> None:
    server = serve(ServerConfig(max_concurrent_searches=1, max_threads=1, retry_after_ms=300))
    with AdvisorClient(f"127.0.0.1:{server.port}", timeout=30) as client:
        position = client.new_game(GAME, seed=1).position
        stream = client.analyze(position, time_ms=10_000, interval_ms=50)
        next(stream)
        with pytest.raises(ResourceExhaustedError) as info:
            client.rank_moves(position, iterations=5)
        assert info.value.retry_delay == pytest.approx(0.3)
        assert info.value.violations[0].subject == "max_concurrent_searches"
        stream.close()


def test_batch_survives_a_draining_server(serve: Servers) -> None:
    """One of two servers shuts down gracefully mid-batch: it answers what it accepted, ends
    the call UNAVAILABLE, and the client sends the rest to the other; each id exactly once."""
    import threading

    servers = [serve(CONFIG) for _ in range(2)]
    stopper = None
    try:
        with AdvisorClient([f"127.0.0.1:{s.port}" for s in servers], timeout=60, wait_for_ready=True) as client:
            position = client.new_game(GAME, seed=1).position
            items = [EvaluationItem(f"i{i}", position, iterations=400, seed=i) for i in range(40)]
            answered: list[str] = []
            for result in client.evaluate(items, streams=2, window=2, retries=5):
                assert result.ok, result.error
                answered.append(result.id)
                if len(answered) == 6:
                    stopper = threading.Thread(target=servers[1].stop, args=(10.0,))
                    stopper.start()
            assert sorted(answered) == sorted(item.id for item in items)
    finally:
        if stopper is not None:
            stopper.join(30)


def test_batch_longer_than_the_server_cap_continues_on_new_calls(serve: Servers) -> None:
    server = serve(ServerConfig(max_batch_size=5, default_iterations=10))
    with AdvisorClient(f"127.0.0.1:{server.port}", timeout=30) as client:
        position = client.new_game(GAME, seed=1).position
        results = list(client.evaluate(((str(i), position) for i in range(13)), window=3))
    assert sorted(int(r.id) for r in results) == list(range(13))
    assert all(r.ok for r in results)


def test_async_evaluate_continues_past_the_server_cap(serve: Servers) -> None:
    server = serve(ServerConfig(max_batch_size=4, default_iterations=10))

    async def scenario() -> list[EvaluationResult]:
        async with AsyncAdvisorClient(f"127.0.0.1:{server.port}", timeout=30) as client:
            position = (await client.new_game(GAME, seed=1)).position
            return [r async for r in client.evaluate([(str(i), position) for i in range(11)], window=3, timeout=30)]

    results = asyncio.run(scenario())
    assert sorted(int(r.id) for r in results) == list(range(11)) and all(r.ok for r in results)


# --- one description, two shells --------------------------------------------------------------
def test_both_clients_have_every_described_method_with_its_arguments() -> None:
    """Every method of AdvisorMethods is a method of both clients, with the same parameters;
    the asyncio client's unary methods are coroutines, its streams async iterators."""
    import inspect

    from hortus.clients import AdvisorMethods

    described = [name for name in vars(AdvisorMethods) if not name.startswith("_")]
    assert {"suggest_move", "analyze", "review", "evaluate", "simulate_games", "view_position"} <= set(described)
    streams: set[str] = set()
    for name in described:
        parameters = list(inspect.signature(getattr(AdvisorMethods, name)).parameters.values())
        for client in (AdvisorClient, AsyncAdvisorClient):
            method = getattr(client, name)
            assert method.__name__ == name and method.__doc__ == getattr(AdvisorMethods, name).__doc__
            signature = inspect.signature(method)
            assert list(signature.parameters.values())[1:] == parameters, (client, name)
        described_as = str(inspect.signature(getattr(AdvisorMethods, name)).return_annotation)
        streaming = described_as.startswith(("Stream[", "Batch"))
        assert inspect.iscoroutinefunction(getattr(AsyncAdvisorClient, name)) is not streaming
        if streaming:
            streams.add(name)
    assert streams == {"analyze", "review", "evaluate", "simulate_games"}


def _failing_source(position: Position, good: int) -> Iterator[Position]:
    for _ in range(good):
        yield position
    raise LookupError("the caller's iterable broke")


def test_a_broken_iterable_is_raised_after_the_answers_of_what_it_gave(client: AdvisorClient) -> None:
    position = client.new_game(GAME, seed=5).position
    answered: list[str] = []
    with pytest.raises(LookupError, match="iterable broke"):
        for result in client.evaluate(_failing_source(position, 3), iterations=10, streams=2, window=2):
            answered.append(result.id)
    assert sorted(answered) == ["0", "1", "2"]

    async def scenario() -> list[str]:
        ids: list[str] = []
        async with AsyncAdvisorClient(client.target, timeout=30) as aio:
            with pytest.raises(LookupError, match="iterable broke"):
                async for result in aio.evaluate(_failing_source(position, 4), iterations=10, streams=2, window=1):
                    ids.append(result.id)
        return ids

    assert sorted(asyncio.run(scenario())) == ["0", "1", "2", "3"]


def test_async_evaluate_over_several_streams_answers_each_position_once(servers: list[RunningServer]) -> None:
    targets = [f"127.0.0.1:{s.port}" for s in servers]

    async def scenario() -> list[EvaluationResult]:
        async with AsyncAdvisorClient(targets, timeout=30) as client:
            position = (await client.new_game(GAME, seed=6)).position
            items: list[EvaluationItem | tuple[str, Position] | Position] = [
                EvaluationItem(f"i{i}", position, iterations=10 + i, seed=i) for i in range(9)
            ]
            items.append(EvaluationItem("broken", Position(GAME, b"\x01\x02")))
            return [r async for r in client.evaluate(items, streams=3, window=2)]

    results = asyncio.run(scenario())
    by_id = {r.id: r for r in results}
    assert len(results) == len(by_id) == 10
    assert all(by_id[f"i{i}"].analysis is not None and by_id[f"i{i}"].analysis.iterations == 10 + i for i in range(9))  # type: ignore[union-attr]
    broken = by_id["broken"].error
    assert broken is not None and broken.code == "INVALID_ARGUMENT"


def test_leaving_an_async_analysis_early_frees_the_search(serve: Servers) -> None:
    """Breaking out of the async iterator cancels the call, which stops the search: the
    server's only search slot is free again for the next call."""
    server = serve(ServerConfig(max_concurrent_searches=1, max_threads=1, retry_after_ms=20))

    async def scenario() -> int:
        async with AsyncAdvisorClient(f"127.0.0.1:{server.port}", timeout=30) as client:
            position = (await client.new_game(GAME, seed=1)).position
            stream = client.analyze(position, time_ms=60_000, interval_ms=20)
            async for update in stream:
                assert not update.final
                break
            await stream.aclose()  # type: ignore[attr-defined]
            while True:  # the cancellation reaches the server soon after; never the 60 s search
                try:
                    return (await client.rank_moves(position, iterations=5)).iterations
                except ResourceExhaustedError as busy:
                    await asyncio.sleep(busy.retry_delay or 0.02)

    assert asyncio.run(asyncio.wait_for(scenario(), 45)) == 5
