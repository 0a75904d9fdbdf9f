"""The answer cache is no timing oracle for what a seat cannot see: another client replaying
a seat's request once per completion of its own view gets a search for every completion (all
miss, the real one too), so their timing cannot tell the real one apart; the seat itself still
gets its repeated requests from the cache, and positions of a game that hides nothing are
shared by every client."""

from __future__ import annotations

import base64
import http.client
import json
import random
from typing import Any

import grpc
import pytest

from hortus import games
from hortus.games import State
from hortus.server import RunningServer, ServerConfig
from hortus.server.cache_scope import client_identity
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc

pytest.importorskip("connectrpc", reason="the second client calls the web port: pip install 'hortus[web]'")

from hortus.server.web import WebOptions  # noqa: E402
from servers import Servers

LIMITS = {"iterations": 150, "seed": 5}


@pytest.fixture(scope="module")
def server(serve_module: Servers) -> RunningServer:
    return serve_module(ServerConfig(cache_bytes=1 << 20, draw_worlds=0), web=WebOptions("127.0.0.1:0"))


def _midgame(name: str, seed: int, plies: int) -> State:
    game = games.get(name)
    state = game.new_game(players=game.min_players if game.min_players > 1 else 2, seed=seed)
    rng = random.Random(seed)
    for _ in range(plies):
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
    while state.is_chance():
        state.resolve_chance(rng)
    return state


def _grpc_rank(server: RunningServer, state: State) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = advisor_pb2_grpc.AdvisorStub(channel)  # type: ignore[no-untyped-call, unused-ignore]
        position = pb.Position(game=state.game.name, encoded=state.encode())
        stub.RankMoves(pb.RankMovesRequest(position=position, limits=pb.SearchLimits(**LIMITS)), timeout=60)


def _web_rank(server: RunningServer, state: State, source: str) -> None:
    """RankMoves over Connect JSON from the local address `source` (127.0.0.2: another client)."""
    assert server.web is not None
    conn = http.client.HTTPConnection("127.0.0.1", server.web.port, timeout=60, source_address=(source, 0))
    body = {"position": {"game": state.game.name, "encoded": base64.b64encode(state.encode()).decode()}, "limits": LIMITS}
    try:
        conn.request("POST", "/hortus.v1.Advisor/RankMoves", json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200, response.read()
        response.read()
    finally:
        conn.close()


def _counts(server: RunningServer) -> tuple[int, int]:
    cache = server.servicer.cache
    return cache.hits, cache.misses


def _completions(state: State, seat: int, count: int) -> list[State]:
    """What a seat can rebuild from its own view: re-deals of what it cannot see, and among
    them (as the attacker cannot know which) the real position."""
    seen: dict[bytes, State] = {state.encode(): state}
    for seed in range(1, 200):
        other = state.game.from_view(state.view(seat), seed=seed)
        seen.setdefault(other.encode(), other)
        if len(seen) >= count:
            break
    assert len(seen) >= 3, "the position hides something from the other seat"
    completions = list(seen.values())
    random.Random(1).shuffle(completions)
    return completions


def _hiding(name: str) -> State:
    """A decision of a seeded game where the next seat cannot see at least three things of
    the position (its view has three or more completions)."""
    for plies in range(4, 80, 3):
        state = _midgame(name, seed=11, plies=plies)
        if state.is_terminal():
            break
        other = (state.current_player + 1) % state.num_players
        redealt = {state.game.from_view(state.view(other), seed=s).encode() for s in range(1, 40)}
        if len(redealt | {state.encode()}) >= 3:
            return state
    raise AssertionError(f"no {name} position hides enough from a seat")


@pytest.mark.parametrize("name", ["botanical_lab", "botanists", "war_of_the_posies"])
def test_another_client_replaying_every_completion_misses_them_all(server: RunningServer, name: str) -> None:
    real = _hiding(name)
    mover = real.current_player
    other = (mover + 1) % real.num_players
    _grpc_rank(server, real)  # the seat to move asks (gRPC, from 127.0.0.1)
    hits, misses = _counts(server)
    completions = _completions(real, other, 6)
    for completion in completions:  # another client (127.0.0.2) replays each completion
        _web_rank(server, completion, "127.0.0.2")
    # every completion, the real one too, was searched: the same path, the same timing
    assert _counts(server) == (hits, misses + len(completions))
    # the seat itself (the same address, either port) is still answered from the cache
    _web_rank(server, real, "127.0.0.1")
    _grpc_rank(server, real)
    assert _counts(server) == (hits + 2, misses + len(completions))


def test_a_game_that_hides_nothing_shares_its_answers(server: RunningServer) -> None:
    real = _midgame("botanik", seed=4, plies=12)
    assert not real.game.hides_information
    _grpc_rank(server, real)
    hits, misses = _counts(server)
    _web_rank(server, real, "127.0.0.2")
    assert _counts(server) == (hits + 1, misses)


class _Context:
    def __init__(self, peer: str, cert: bytes | None = None) -> None:
        self._peer = peer
        self._cert = cert

    def peer(self) -> str:
        return self._peer

    def auth_context(self) -> dict[str, Any]:
        return {"x509_pem_cert": [self._cert]} if self._cert else {}


def test_client_identity_is_the_certificate_or_the_address_without_its_port() -> None:
    assert client_identity(_Context("ipv4:10.0.0.5:5001")) == client_identity(_Context("web:10.0.0.5:6002")) == "ip:10.0.0.5"
    assert client_identity(_Context("ipv6:%5B::1%5D:5001")) == client_identity(_Context("web:::1:80")) == "ip:[::1]"
    assert client_identity(_Context("ipv4:10.0.0.5:5001")) != client_identity(_Context("ipv4:10.0.0.6:5001"))
    a, b = client_identity(_Context("ipv4:10.0.0.5:1", b"A")), client_identity(_Context("ipv4:10.0.0.5:1", b"B"))
    assert a.startswith("cert:") and a != b
