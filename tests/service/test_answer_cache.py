"""Cached answers: identical deterministic requests are answered from a
bounded LRU of serialized responses; a cached answer equals a recomputed one byte for byte."""

from __future__ import annotations

import dataclasses
import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from hortus import games
from hortus.server import RunningServer, ServerConfig
from hortus.server.cache import AnswerCache
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from servers import Servers

GAME = "botanik"


def test_lru_is_bounded_in_bytes() -> None:
    one = AnswerCache.size(b"k" * 32, b"v" * 100)
    cache = AnswerCache(3 * one)
    keys = [bytes([i]) * 32 for i in range(4)]
    for k in keys[:3]:
        cache.put(k, b"v" * 100)
    assert len(cache) == 3 and cache.bytes == 3 * one
    assert cache.get(keys[0]) == b"v" * 100  # keys[0] is now the most recently used
    cache.put(keys[3], b"v" * 100)  # drops keys[1], the least recently used
    assert cache.get(keys[1]) is None and cache.get(keys[0]) is not None and cache.get(keys[3]) is not None
    assert cache.bytes == 3 * one and (cache.hits, cache.misses) == (3, 1)
    cache.put(keys[1], b"w" * 250)  # a bigger answer drops as many old ones as it takes
    assert cache.bytes <= cache.max_bytes and cache.get(keys[1]) == b"w" * 250
    assert len(cache) == 2 and cache.get(keys[0]) is None  # keys[0] was the least recent then
    cache.put(b"x" * 32, b"v" * (4 * one))  # larger than the whole cache: not stored
    assert len(cache) == 2 and cache.bytes <= cache.max_bytes
    off = AnswerCache(0)
    off.put(keys[0], b"v")
    assert off.get(keys[0]) is None and len(off) == 0 and (off.hits, off.misses) == (0, 0)
    with pytest.raises(ValueError):
        AnswerCache(-1)
    with pytest.raises(ValueError):
        ServerConfig(cache_bytes=-1)


def test_keys_do_not_collide_by_moving_a_boundary() -> None:
    assert AnswerCache.key("ab", b"c") != AnswerCache.key("a", b"bc")


def cache_config(cache_bytes: int) -> ServerConfig:
    return ServerConfig(default_iterations=100, cache_bytes=cache_bytes, draw_worlds=8)


@pytest.fixture(scope="module")
def cached(serve_module: Servers) -> RunningServer:
    pytest.importorskip("prometheus_client")
    return serve_module(cache_config(1 << 20), metrics_port=0)


@pytest.fixture(scope="module")
def uncached(serve_module: Servers) -> RunningServer:
    return serve_module(cache_config(0))


@pytest.fixture()
def stubs(cached: RunningServer, uncached: RunningServer) -> Iterator[tuple[Any, Any]]:
    with grpc.insecure_channel(f"127.0.0.1:{cached.port}") as a, grpc.insecure_channel(f"127.0.0.1:{uncached.port}") as b:
        yield advisor_pb2_grpc.AdvisorStub(a), advisor_pb2_grpc.AdvisorStub(b)  # type: ignore[no-untyped-call, unused-ignore]


def wire(response: Any) -> bytes:
    """The response's bytes without its one measurement of the machine (``elapsed_ms``)."""
    copy = type(response)()
    copy.CopyFrom(response)
    copy.analysis.elapsed_ms = 0.0
    return bytes(copy.SerializeToString(deterministic=True))


def position(seed: int = 5) -> pb.Position:
    return pb.Position(game=GAME, encoded=games.get(GAME).new_game(seed=seed).encode())


def counts(server: RunningServer) -> tuple[int, int, int]:
    cache = server.servicer.cache
    return cache.hits, cache.misses, len(cache)


def test_a_cached_answer_equals_a_recomputed_one(cached: RunningServer, stubs: tuple[Any, Any]) -> None:
    s, fresh = stubs
    state = games.get(GAME).new_game(seed=5)
    legal = state.legal_actions()
    requests: list[tuple[str, Any]] = [
        ("RankMoves", pb.RankMovesRequest(position=position(), limits=pb.SearchLimits(iterations=300, seed=4), max_moves=3)),
        ("RankMoves", pb.RankMovesRequest(position=position(), limits=pb.SearchLimits(iterations=150, seed=4, threads=2))),
        # what-if constraints and strength settings are part of the request, hence of the key
        (
            "RankMoves",
            pb.RankMovesRequest(
                position=position(), limits=pb.SearchLimits(iterations=300, seed=4, avoid_actions=[pb.ActionRef(id=legal[0])])
            ),
        ),
        (
            "RankMoves",
            pb.RankMovesRequest(
                position=position(),
                limits=pb.SearchLimits(iterations=300, seed=4, allow_actions=[pb.ActionRef(id=a) for a in legal[1:3]]),
            ),
        ),
        ("SuggestMove", pb.SuggestMoveRequest(position=position(), limits=pb.SearchLimits(seed=4), level=2)),
        ("SuggestMove", pb.SuggestMoveRequest(position=position(), limits=pb.SearchLimits(seed=4), target_elo=150)),
        ("SuggestMove", pb.SuggestMoveRequest(position=position(), limits=pb.SearchLimits(seed=4))),  # default budget
    ]
    before = counts(cached)
    answers = []
    for method, request in requests:
        first = getattr(s, method)(request, timeout=60)
        again = getattr(s, method)(request, timeout=60)
        recomputed = getattr(fresh, method)(request, timeout=60)
        assert again.SerializeToString(deterministic=True) == first.SerializeToString(deterministic=True)
        assert wire(recomputed) == wire(first), (method, request)  # all but elapsed_ms
        answers.append(wire(first))
    assert len(set(answers)) == len(answers)  # each request its own answer: no key collides
    hits, misses, stored = counts(cached)
    n = len(requests)
    assert (hits - before[0], misses - before[1], stored - before[2]) == (n, n, n)


def test_time_budgets_and_partial_answers_are_never_cached(cached: RunningServer, stubs: tuple[Any, Any]) -> None:
    s, _ = stubs
    before = counts(cached)
    timed = pb.RankMovesRequest(position=position(6), limits=pb.SearchLimits(time_ms=30, seed=4))
    both = pb.RankMovesRequest(position=position(6), limits=pb.SearchLimits(iterations=50, time_ms=500, seed=4))
    for request in (timed, timed, both, both):
        s.RankMoves(request, timeout=60)
    assert counts(cached) == before  # not even looked up
    # an iteration budget the deadline cuts short: partial, looked up but never stored
    # the cap's budget takes seconds on any machine; 2 s leaves a loaded machine room to answer
    huge = pb.SuggestMoveRequest(position=position(6), limits=pb.SearchLimits(iterations=5_000_000, seed=4))
    answer = s.SuggestMove(huge, timeout=2.0)
    assert answer.analysis.partial
    assert counts(cached)[2] == before[2]  # looked up (a miss), but not stored


def test_a_hit_is_validated_first(cached: RunningServer, stubs: tuple[Any, Any]) -> None:
    """A cache hit never skips validation: a request the server refuses now is refused
    INVALID_ARGUMENT naming the field even if the same bytes were answered before."""
    s, _ = stubs
    request = pb.RankMovesRequest(position=position(7), limits=pb.SearchLimits(iterations=200, seed=1))
    s.RankMoves(request, timeout=60)
    hits = counts(cached)[0]
    s.RankMoves(request, timeout=60)
    assert counts(cached)[0] == hits + 1
    servicer = cached.servicer
    config = servicer.config
    servicer.config = dataclasses.replace(config, max_iterations=100)  # the operator lowered a cap
    try:
        with pytest.raises(grpc.RpcError) as caught:
            s.RankMoves(request, timeout=60)
    finally:
        servicer.config = config
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "limits.iterations" in caught.value.details()
    assert counts(cached)[0] == hits + 1
    bad = pb.RankMovesRequest()
    bad.CopyFrom(request)
    bad.limits.avoid_actions.add(id=10**6)  # not legal: refused, never looked up
    misses = counts(cached)[1]
    with pytest.raises(grpc.RpcError) as caught:
        s.RankMoves(bad, timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "limits.avoid_actions[0]" in caught.value.details()
    assert counts(cached)[1] == misses


def test_a_hurried_hint_never_gets_a_stored_draw_measurement(cached: RunningServer, stubs: tuple[Any, Any]) -> None:
    """A hint whose deadline leaves no time for the draw measurement is answered without it,
    cached or not (the deadline is part of what the answer depends on)."""
    s, _ = stubs
    state = games.get("war_of_the_posies").new_game(players=2, seed=6)
    request = pb.RankMovesRequest(
        position=pb.Position(game=state.game.name, encoded=state.encode()), limits=pb.SearchLimits(iterations=300, seed=2)
    )
    full = s.RankMoves(request, timeout=60)
    assert full.analysis.moves[0].HasField("draw_share")
    assert s.RankMoves(request, timeout=60) == full
    hurried = s.RankMoves(request, timeout=0.2)
    assert not any(m.HasField("draw_share") for m in hurried.analysis.moves)


def test_metrics_count_the_cache(cached: RunningServer, stubs: tuple[Any, Any]) -> None:
    s, _ = stubs
    request = pb.RankMovesRequest(position=position(8), limits=pb.SearchLimits(iterations=100, seed=3))
    s.RankMoves(request, timeout=60)
    s.RankMoves(request, timeout=60)
    cache = cached.servicer.cache
    with urllib.request.urlopen(f"http://127.0.0.1:{cached.metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = dict(re.findall(r"^(hortus_answer_cache_\w+) (\S+)$", text, re.M))
    assert float(found["hortus_answer_cache_hits_total"]) == cache.hits >= 1
    assert float(found["hortus_answer_cache_misses_total"]) == cache.misses >= 1
    assert float(found["hortus_answer_cache_bytes"]) == cache.bytes > 0
    assert float(found["hortus_answer_cache_entries"]) == len(cache) >= 1
