"""Structured positions (a seat's view as a protobuf message): exact round trip structured ⇄
encoded over random positions of every registered game (all seat counts, chance and terminal
positions; through the JSON mapping too), every game having a message, the service accepting
and producing them, and their errors (the README's JSON examples: test_readme_examples.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from hortus import games
from hortus.clients import AdvisorClient, InvalidArgumentError, Position
from hortus.views import ViewError, structured_games, structured_to_view, view_to_structured
from hortus.server import RunningServer, ServerConfig
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import positions_pb2
from servers import Servers

GAME = "botanik"  # the error cases
GAMES = games.names()
TO_THE_END = 10**6  # moves: play until the game is over
WHOLE_VIEW = {"botanik"}  # games whose view hides nothing stored (the view is the position)


def random_state(seed: int, game: str = GAME, players: int | None = None, moves: int | None = None) -> games.State:
    """A random position: `moves` random decisions and chance outcomes from a dealt game
    (random length if None; TO_THE_END reaches a terminal position)."""
    rng = random.Random(seed)
    g = games.get(game)
    if players is None:
        players = rng.randint(g.min_players, g.max_players)
    state = g.new_game(players=players, seed=rng.getrandbits(32))
    for _ in range(rng.randrange(0, 250) if moves is None else moves):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
    return state


def check_round_trip(game: str, state: games.State, seat: int, view_seed: int) -> None:
    """view -> StructuredPosition (wire and JSON) -> view -> from_view: nothing is lost."""
    g = games.get(game)
    view = state.view(seat)
    structured = view_to_structured(game, view, seed=view_seed)
    # through the wire and through the JSON mapping
    wire = positions_pb2.StructuredPosition.FromString(structured.SerializeToString())
    parsed = json_format.Parse(json_format.MessageToJson(wire), positions_pb2.StructuredPosition())
    assert parsed == structured
    name, again_view = structured_to_view(parsed)
    assert name == game
    again = g.from_view(again_view, seed=parsed.seed)
    # exactly the position the view dictionary itself completes to (same sampled hidden parts)
    expected = g.from_view(view, seed=view_seed)
    assert again.encode() == expected.encode()
    # which shows the seat exactly the view it was given
    assert again.view(seat) == view
    if game in WHOLE_VIEW:  # nothing hidden: the view is the position
        assert again.encode() == state.encode()
    # and back: the view of the rebuilt state gives the same message
    assert view_to_structured(game, again.view(seat), seed=view_seed) == structured


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    players=st.integers(min_value=0, max_value=3),
    moves=st.sampled_from([0, 1, 6, 40, 250, TO_THE_END]),
    seat=st.integers(min_value=0, max_value=3),
    view_seed=st.integers(0, 2**64 - 1),
)
def test_round_trip_is_exact(game: str, seed: int, players: int, moves: int, seat: int, view_seed: int) -> None:
    g = games.get(game)
    n = g.min_players + players % (g.max_players - g.min_players + 1)
    state = random_state(seed, game, n, moves)
    check_round_trip(game, state, seat % n, view_seed)


@pytest.mark.parametrize("game", GAMES)
def test_round_trip_covers_every_kind_of_position(game: str) -> None:
    """Deterministic companion of the property: every seat count and seat, dealt, chance,
    decision and terminal positions are all met (and round-trip)."""
    g = games.get(game)
    kinds: set[tuple[int, str]] = set()
    for seed in range(12):
        for players in range(g.min_players, g.max_players + 1):
            for moves in (0, 3, 30, 200, TO_THE_END):
                state = random_state(seed, game, players, moves)
                kind = "terminal" if state.is_terminal() else "chance" if state.is_chance() else "decision"
                kinds.add((players, kind))
                for seat in range(players):
                    check_round_trip(game, state, seat, seed)
    for players in range(g.min_players, g.max_players + 1):
        assert {(players, k) for k in ("terminal", "chance", "decision")} <= kinds, (players, kinds)


def _view_message_name(game: str) -> str:
    return "".join(part.capitalize() for part in game.split("_")) + "View"


def test_every_registered_game_has_a_structured_view() -> None:
    """A game registered without a `<Game>View` in the StructuredPosition oneof fails here."""
    assert set(structured_games()) <= set(GAMES)
    oneof = positions_pb2.StructuredPosition.DESCRIPTOR.oneofs_by_name["view"]
    fields = {f.name: f for f in oneof.fields}
    missing = [game for game in GAMES if game not in fields]
    assert not missing, f"no StructuredPosition.view field for {missing} (see proto/hortus/v1/positions.proto)"
    for game in GAMES:
        assert fields[game].message_type.name == _view_message_name(game)


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
    # card piles are maps name -> copies; nullable values are `optional` fields
    with pytest.raises(ViewError) as info:
        view_to_structured("war_of_the_posies", {"play_area": {"Rose": "two"}})
    assert info.value.field == "play_area['Rose']"
    nulls = view_to_structured("war_of_the_posies", {"first_player": None, "basic_top": None, "round": 3})
    assert not nulls.war_of_the_posies.HasField("first_player")
    _, view = structured_to_view(nulls)
    assert view["first_player"] is None and view["basic_top"] is None and view["end_trigger"] is None
    assert view["round"] == 3 and view["play_area"] == {}
    set_zero = view_to_structured("war_of_the_posies", {"first_player": 0, "last_coin_only_play": "Rose"})
    _, view = structured_to_view(set_zero)
    assert view["first_player"] == 0 and view["last_coin_only_play"] == "Rose"
    garden = {"seats": [{"garden": [{"label": "Birdbath #2", "slots": [None, "Red Starter"]}]}]}
    _, view = structured_to_view(view_to_structured("war_of_the_posies", garden))
    assert view["seats"][0]["garden"][0]["slots"] == [None, "Red Starter"]


@pytest.fixture(scope="module")
def running(serve_module: Servers) -> RunningServer:
    return serve_module(ServerConfig(default_iterations=100))


@pytest.fixture(scope="module")
def client(running: RunningServer) -> Iterator[AdvisorClient]:
    with AdvisorClient(f"127.0.0.1:{running.port}", timeout=30) as c:
        yield c


@pytest.mark.parametrize("game", GAMES)
def test_service_accepts_and_gives_structured_positions(client: AdvisorClient, game: str) -> None:
    g = games.get(game)
    rng = random.Random(7)
    state = random_state(7, game)
    while state.is_terminal() or state.is_chance():
        state = random_state(rng.randrange(10**6), game)
    encoded = Position(game, state.encode())
    seat = state.current_player
    view = state.view(seat)
    viewed = client.view_position(encoded, seat)
    assert viewed.view is not None
    assert view_to_structured(game, viewed.view) == view_to_structured(game, view)
    # the server completes the view into exactly the position from_view gives (the same
    # position for Botanik, which hides nothing), showing the seat the same view
    info = client.apply_actions(Position.from_view(game, viewed.view, seed=11), [])
    assert info.position.encoded == g.from_view(view, seed=11).encode()
    assert g.decode(info.position.encoded).view(seat) == view
    if game in WHOLE_VIEW:
        assert info.position.encoded == state.encode()
    # and searches it exactly as those encoded bytes
    a = client.rank_moves(Position(game, g.from_view(view, seed=11).encode()), iterations=150, seed=3)
    b = client.rank_moves(Position.from_view(game, view, seed=11), iterations=150, seed=3)
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
