"""Structured positions (a seat's view as a protobuf message): exact round trip structured ⇄
encoded over random Botanik positions (through the JSON mapping too), the service accepting
and producing them, their errors, and the README's JSON example executed."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from hortus import games
from hortus.clients import AdvisorClient, InvalidArgumentError, Position
from hortus.clients.views import ViewError, structured_games, structured_to_view, view_to_structured
from hortus.server import RunningServer, ServerConfig, build_server
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import positions_pb2

README = Path(__file__).resolve().parent.parent / "README.md"
GAME = "botanik"


def random_state(seed: int) -> games.State:
    rng = random.Random(seed)
    state = games.get(GAME).new_game(seed=rng.getrandbits(32))
    for _ in range(rng.randrange(0, 250)):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
    return state


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=0, max_value=1), st.integers(0, 2**64 - 1))
def test_round_trip_is_exact(seed: int, seat: int, view_seed: int) -> None:
    state = random_state(seed)
    structured = view_to_structured(GAME, state.view(seat), seed=view_seed)
    # through the wire and through the JSON mapping
    wire = positions_pb2.StructuredPosition.FromString(structured.SerializeToString())
    parsed = json_format.Parse(json_format.MessageToJson(wire), positions_pb2.StructuredPosition())
    assert parsed == structured
    name, view = structured_to_view(parsed)
    assert name == GAME
    again = games.get(GAME).from_view(view, seed=parsed.seed)
    assert again.encode() == state.encode()
    # and back: the view of the rebuilt state gives the same message
    assert view_to_structured(GAME, again.view(seat), seed=view_seed) == structured


def test_every_structured_game_is_registered() -> None:
    assert set(structured_games()) <= set(games.names())
    assert GAME in structured_games()


def test_view_errors() -> None:
    with pytest.raises(ViewError) as info:
        view_to_structured(GAME, {"top": "not a list"})
    assert info.value.field == "top"
    with pytest.raises(ViewError) as info:
        view_to_structured(GAME, {"machines": [[[65, 0, 0]]]})
    assert info.value.field == "machines[0][0]"
    with pytest.raises(ViewError) as info:
        view_to_structured(GAME, {"phase": 2**40})
    assert info.value.field == "phase"
    with pytest.raises(ViewError):
        view_to_structured("no such game", {})
    with pytest.raises(ViewError):
        structured_to_view(positions_pb2.StructuredPosition())


@pytest.fixture(scope="module")
def running() -> Iterator[RunningServer]:
    server = build_server("127.0.0.1:0", ServerConfig(default_iterations=100))
    yield server
    server.stop(0)


@pytest.fixture(scope="module")
def client(running: RunningServer) -> Iterator[AdvisorClient]:
    with AdvisorClient(f"127.0.0.1:{running.port}", timeout=30) as c:
        yield c


def test_service_accepts_and_gives_structured_positions(client: AdvisorClient) -> None:
    state = random_state(7)
    while state.is_terminal() or state.is_chance():
        state = random_state(random.randrange(10**6))
    encoded = Position(GAME, state.encode())
    seat = state.current_player
    viewed = client.view_position(encoded, seat)
    assert viewed.view is not None and viewed.view["stage"] == state.view(seat)["stage"]
    # the server completes the view into exactly the same position
    info = client.apply_actions(viewed, [])
    assert info.position.encoded == state.encode()
    # and searches it exactly as the encoded bytes
    a = client.rank_moves(encoded, iterations=150, seed=3)
    b = client.rank_moves(Position.from_view(GAME, state.view(seat)), iterations=150, seed=3)
    assert (a.moves, a.iterations) == (b.moves, b.iterations)


def test_structured_errors(client: AdvisorClient) -> None:
    view = games.get(GAME).new_game(seed=1).view(0)
    with pytest.raises(InvalidArgumentError) as info:
        client.legal_actions(Position.from_view(GAME, dict(view, stage="nonsense")))
    assert info.value.fields == ("position.structured.botanik.stage",)
    with pytest.raises(InvalidArgumentError) as info:
        client.legal_actions(Position.from_view(GAME, dict(view, top=[1, 1, 1, 1, 1])))
    assert info.value.fields[0].startswith("position.structured.botanik")
    both = pb.Position(game=GAME, encoded=b"x", structured=view_to_structured(GAME, view))
    channel = grpc.insecure_channel(client.target)
    try:
        call = channel.unary_unary(
            "/hortus.v1.Advisor/LegalActions",
            pb.LegalActionsRequest.SerializeToString,
            pb.LegalActionsResponse.FromString,
        )
        with pytest.raises(grpc.RpcError) as rpc:
            call(pb.LegalActionsRequest(position=both), timeout=10)
        assert rpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        wrong = pb.Position(game="botanists", structured=view_to_structured(GAME, view))
        with pytest.raises(grpc.RpcError) as rpc:
            call(pb.LegalActionsRequest(position=wrong), timeout=10)
        assert rpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        channel.close()
    with pytest.raises(InvalidArgumentError) as info:
        client.view_position(Position(GAME, games.get(GAME).new_game(seed=1).encode()), 5)
    assert info.value.fields == ("seat",)


def readme_json_example() -> str:
    text = README.read_text()
    match = re.search(r"<!-- service-json-example -->\s*```json\n(.*?)```", text, re.S)
    assert match, "the README's JSON example is missing"
    return match.group(1)


def test_readme_json_example_runs(running: RunningServer) -> None:
    request = json_format.Parse(readme_json_example(), pb.SuggestMoveRequest())
    assert json.loads(readme_json_example())["position"]["game"] == GAME
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        call = channel.unary_unary(
            "/hortus.v1.Advisor/SuggestMove",
            pb.SuggestMoveRequest.SerializeToString,
            pb.SuggestMoveResponse.FromString,
        )
        response = call(request, timeout=30)
    assert response.analysis.iterations == 500 and response.action.notation
    # it is the dealt position of seed 1, seat 0 to move
    expected = games.get(GAME).new_game(seed=1)
    name, view = structured_to_view(request.position.structured)
    assert games.get(name).from_view(view).encode() == expected.encode()
    # the JSON mapping of the answer is plain JSON too
    assert json.loads(json_format.MessageToJson(response))["action"]["notation"] == response.action.notation
