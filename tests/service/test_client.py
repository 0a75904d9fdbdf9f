"""The thin clients: frozen dataclasses (not protobuf), typed exceptions from the rich status,
the sync client against an in-process server, the asyncio client, and a thin import."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from hortus import games
from hortus.clients import (
    CHANCE,
    Action,
    AdvisorClient,
    AdvisorError,
    Analysis,
    AsyncAdvisorClient,
    DeadlineExceededError,
    GameInfo,
    InvalidArgumentError,
    LegalActions,
    MoveHint,
    Position,
    PositionInfo,
    ResourceExhaustedError,
    Suggestion,
    UnavailableError,
    VersionInfo,
    error_from_rpc,
)
from hortus.clients.record import GameRecord, RecordedAction, ReviewedMove
from hortus.server import ServerConfig
from hortus.server.errors import CapacityError, NoAnswerError, RequestError, status_for
from hortus.v1 import advisor_pb2 as pb
from servers import Servers

GAME = "botanik"


@pytest.fixture(scope="module")
def target(serve_module: Servers) -> str:
    return f"127.0.0.1:{serve_module(ServerConfig(default_iterations=100, max_iterations=10**6)).port}"


@pytest.fixture
def client(target: str) -> Iterator[AdvisorClient]:
    with AdvisorClient(target, timeout=30) as c:
        yield c


# --- dataclasses -----------------------------------------------------------------------------
def test_dataclasses_from_proto() -> None:
    move = pb.MoveAnalysis(
        action=pb.Action(id=4, notation="a4"),
        visits=10,
        win_probability=0.25,
        expected_scores=[3.0, 5.0],
        principal_variation=[pb.Action(id=4, notation="a4"), pb.Action(id=7, notation="b7")],
    )
    hint = MoveHint.from_proto(move)
    assert hint == MoveHint(4, "a4", 10, 0.25, (3.0, 5.0), (Action(4, "a4"), Action(7, "b7")))
    analysis = Analysis.from_proto(pb.Analysis(seat=1, moves=[move], iterations=10, partial=True, elapsed_ms=2.5, nodes=11))
    assert analysis.best == hint and analysis.partial and analysis.seat == 1
    suggestion = Suggestion.from_proto(
        pb.SuggestMoveResponse(action=move.action, turn=list(move.principal_variation), analysis=analysis_msg(move))
    )
    assert suggestion.action == Action(4, "a4") and [a.id for a in suggestion.turn] == [4, 7]
    assert suggestion.to_dict()["turn"] == [{"id": 4, "notation": "a4"}, {"id": 7, "notation": "b7"}]
    for value in (hint, analysis, suggestion, Action(1, "x"), Position("g", b"\x01")):
        assert dataclasses.is_dataclass(value)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, None)
    # no protobuf message leaks into a result
    assert all(not hasattr(v, "SerializeToString") for v in dataclasses.astuple(hint))


def analysis_msg(move: pb.MoveAnalysis) -> pb.Analysis:
    return pb.Analysis(seat=0, moves=[move], iterations=1, partial=False, elapsed_ms=1.0, nodes=2)


def test_position_hex_round_trip() -> None:
    position = Position(GAME, bytes(range(20)))
    assert Position.from_hex(GAME, position.hex()) == position
    assert Position.from_hex(GAME, " 00 01\n02 ") == Position(GAME, b"\x00\x01\x02")
    assert Position.from_proto(position.to_proto()) == position


# --- typed exceptions from the rich status ---------------------------------------------------
class FakeCall(grpc.RpcError):
    """What a failed unary call looks like to the client: code, details, trailers."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__()
        self._status = status

    def code(self) -> grpc.StatusCode:
        return self._status.code

    def details(self) -> str:
        return self._status.details

    def trailing_metadata(self) -> Any:
        return self._status.trailing_metadata


def test_error_mapping() -> None:
    error = error_from_rpc(FakeCall(status_for(RequestError("actions[2]", "not legal here"))))
    assert isinstance(error, InvalidArgumentError)
    assert isinstance(error, ValueError) and isinstance(error, AdvisorError) and isinstance(error, RuntimeError)
    assert error.fields == ("actions[2]",)
    assert error.violations[0].description == "not legal here"
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT

    busy = error_from_rpc(FakeCall(status_for(CapacityError("max_concurrent_searches", "busy"))))
    assert isinstance(busy, ResourceExhaustedError)
    assert busy.violations[0].subject == "max_concurrent_searches"
    assert isinstance(error_from_rpc(FakeCall(status_for(NoAnswerError("late")))), DeadlineExceededError)
    internal = error_from_rpc(FakeCall(status_for(RuntimeError("boom"))))
    assert type(internal) is AdvisorError and internal.code == grpc.StatusCode.INTERNAL
    assert "boom" not in str(internal)


class _PlainStatus(grpc.Status):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = ()


def test_error_mapping_without_details() -> None:
    """A status without rich details still maps by its code."""
    for code, kind in (
        (grpc.StatusCode.UNAVAILABLE, UnavailableError),
        (grpc.StatusCode.DEADLINE_EXCEEDED, DeadlineExceededError),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, ResourceExhaustedError),
        (grpc.StatusCode.INVALID_ARGUMENT, InvalidArgumentError),
        (grpc.StatusCode.UNKNOWN, AdvisorError),
    ):
        error = error_from_rpc(FakeCall(_PlainStatus(code, "x")))
        assert type(error) is kind and error.message == "x"


# --- the sync client against a live server ---------------------------------------------------
def test_sync_client_round_trip(client: AdvisorClient) -> None:
    listed = client.list_games()
    assert all(isinstance(g, GameInfo) for g in listed)
    assert GAME in [g.name for g in listed]
    version = client.get_version()
    assert isinstance(version, VersionInfo) and version.protocol == "hortus.v1"

    info = client.new_game(GAME, seed=1)
    assert isinstance(info, PositionInfo) and isinstance(info.position, Position)
    assert info.current_player == 0 and not info.terminal and info.rendered and not info.applied
    assert len(info.seat_rendered) == len(info.scores) and all(info.seat_rendered)
    legal = client.legal_actions(info.position)
    assert isinstance(legal, LegalActions) and legal.actions and not legal.is_chance
    assert all(isinstance(a, Action) for a in legal.actions)

    first, second = legal.actions[0], legal.actions[1]
    by_id = client.apply_actions(info.position, [first.id])
    by_notation = client.apply_actions(info.position, [first.notation])
    by_action = client.apply_actions(info.position, [first])
    assert by_id.position == by_notation.position == by_action.position
    assert by_id.applied == (first,)
    assert client.apply_actions(info.position, [second]).position != by_id.position

    suggestion = client.suggest_move(info.position, iterations=200, seed=3)
    assert isinstance(suggestion, Suggestion)
    assert suggestion.action in legal.actions and suggestion.turn[0] == suggestion.action
    assert suggestion.analysis.iterations == 200 and not suggestion.analysis.partial

    ranked = client.rank_moves(info.position, iterations=200, seed=3, max_moves=2)
    assert isinstance(ranked, Analysis) and len(ranked.moves) == 2
    assert ranked.best.action == suggestion.action.id
    assert ranked.best.principal_variation[0].id == ranked.best.action
    # default iterations come from the server config
    assert client.rank_moves(info.position).iterations == 100


def test_hints_carry_reasons_and_the_draw(client: AdvisorClient) -> None:
    """RankMoves sends each move's reason and value spread, and for the top moves how much
    the draw decides; a deadline too tight for that measurement skips it (never late)."""
    state = games.get("war_of_the_posies").new_game(players=2, seed=6)
    position = Position("war_of_the_posies", state.encode())
    ranked = client.rank_moves(position, iterations=300, seed=2)
    assert all(m.reason for m in ranked.moves)
    assert all(m.value_spread > 0 for m in ranked.moves)
    top = ranked.moves[: min(3, len(ranked.moves))]
    assert all(m.draw_share is not None and 0.0 <= m.draw_share <= 1.0 for m in top)
    assert all(m.draw_spread is not None and m.draw_points_spread is not None for m in top)
    assert all(m.draw_share is None for m in ranked.moves[3:])
    assert ranked.to_dict()["moves"][0]["reason"] == ranked.best.reason
    hurried = client.rank_moves(position, iterations=300, seed=2, timeout=0.2)
    assert hurried.moves and all(m.draw_share is None for m in hurried.moves)


def test_sync_client_matches_the_engine(client: AdvisorClient) -> None:
    info = client.new_game(GAME, players=2, seed=4)
    state = games.get(GAME).new_game(players=2, seed=4)
    assert info.position.encoded == state.encode()
    chance = client.new_game(GAME)
    assert chance.current_player == CHANCE
    outcomes = client.legal_actions(chance.position).chance_outcomes
    assert sum(o.probability for o in outcomes) == pytest.approx(1.0)
    after = client.apply_actions(chance.position, [outcomes[0].action])
    assert after.applied == (outcomes[0].action,)


def test_invalid_argument(client: AdvisorClient) -> None:
    info = client.new_game(GAME, seed=2)
    data = bytearray(info.position.encoded)
    data[5] ^= 0x7F  # the game id byte of the header
    with pytest.raises(InvalidArgumentError) as caught:
        client.legal_actions(Position(GAME, bytes(data)))
    assert caught.value.fields == ("position.encoded",)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
        client.new_game("chess")
    with pytest.raises(InvalidArgumentError) as caught:
        client.apply_actions(info.position, ["no such move"])
    assert caught.value.fields == ("actions[0]",)
    with pytest.raises(InvalidArgumentError) as caught:
        client.suggest_move(info.position, iterations=10**7)
    assert caught.value.fields == ("limits.iterations",)
    assert "max_iterations" in caught.value.violations[0].description
    with pytest.raises(TypeError):
        client.apply_actions(info.position, [1.5])  # type: ignore[list-item]


def test_deadline_exceeded(client: AdvisorClient) -> None:
    info = client.new_game(GAME, seed=2)
    with pytest.raises(DeadlineExceededError):
        client.suggest_move(info.position, iterations=10**6, timeout=0.0001)


def test_partial_answer_before_deadline(client: AdvisorClient) -> None:
    info = client.new_game(GAME, seed=2)
    # 2 s, not less: the server keeps a margin before the deadline, and on a machine at load
    # average 19 a 0.5 s deadline left too little for the answer to travel back in time; a
    # million iterations still take far longer than 2 s, so the answer must be partial.
    suggestion = client.suggest_move(info.position, iterations=10**6, timeout=2.0)
    assert suggestion.analysis.partial


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_unavailable() -> None:
    with AdvisorClient(f"127.0.0.1:{_closed_port()}", timeout=5) as client:
        with pytest.raises(UnavailableError) as caught:
            client.list_games()
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


# --- the asyncio client ----------------------------------------------------------------------
def test_async_client(target: str) -> None:
    async def scenario() -> tuple[Suggestion, Analysis, list[str], tuple[str, ...]]:
        async with AsyncAdvisorClient(target, timeout=30) as client:
            names = [g.name for g in await client.list_games()]
            info = await client.new_game(GAME, seed=1)
            legal = await client.legal_actions(info.position)
            moved = await client.apply_actions(info.position, [legal.actions[0].notation])
            assert moved.applied == (legal.actions[0],)
            suggestion = await client.suggest_move(info.position, iterations=200, seed=3)
            ranked = await client.rank_moves(info.position, iterations=200, seed=3, max_moves=3)
            assert (await client.get_version()).protocol == "hortus.v1"
            try:
                await client.new_game(GAME, players=7)
            except InvalidArgumentError as exc:
                fields = exc.fields
            else:
                raise AssertionError("players=7 was accepted")
            return suggestion, ranked, names, fields

    suggestion, ranked, names, fields = asyncio.run(scenario())
    assert GAME in names
    assert ranked.best.action == suggestion.action.id and len(ranked.moves) == 3
    assert fields == ("players",)
    # the same search through the sync client gives the same answer
    with AdvisorClient(target, timeout=30) as sync:
        info = sync.new_game(GAME, seed=1)
        assert sync.suggest_move(info.position, iterations=200, seed=3).action == suggestion.action


def test_async_unavailable() -> None:
    async def scenario() -> None:
        async with AsyncAdvisorClient(f"127.0.0.1:{_closed_port()}", timeout=5) as client:
            await client.get_version()

    with pytest.raises(UnavailableError):
        asyncio.run(scenario())


def test_clients_import_stays_thin() -> None:
    code = (
        "import sys, hortus.clients, hortus.cli\n"
        "heavy = [m for m in sys.modules if m.startswith(('hortus.games', 'hortus.search', 'hortus.server', 'hortus._ext'))]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_the_client_package_loads_nothing_of_hortus_but_the_messages_and_views() -> None:
    """``hortus.clients`` imports grpc, protobuf, the ``hortus.v1`` messages and the neutral
    ``hortus.views`` (pure protobuf), nothing else of hortus."""
    code = "import json, sys, hortus.clients\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('hortus'))))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    loaded = json.loads(out.stdout)
    allowed = ("hortus.clients", "hortus.v1")
    others = [m for m in loaded if m not in ("hortus", "hortus.views") and not m.startswith(allowed)]
    assert others == [] and "hortus.clients.client" in loaded


def test_chance_outcomes_hidden_from_a_seat(client: AdvisorClient) -> None:
    """`for_seat` lists only what that seat may know: outcomes it cannot tell apart (a card
    drawn into another seat's hand) are not listed, only their total odds; the drawing seat
    sees its own draw with its odds. The server can draw the outcome itself (ChanceDraw)."""
    import random

    from hortus.clients import ChanceDraw

    state = games.get("war_of_the_posies").new_game(players=2, seed=2)
    rng = random.Random(2)
    while not (state.is_chance() and state.hidden_chance_outcomes(0)):
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
    position = Position("war_of_the_posies", state.encode())
    other = client.legal_actions(position, for_seat=0)
    assert other.chance_outcomes == () and other.hidden_probability == pytest.approx(1.0)
    drawer = client.legal_actions(position, for_seat=1)
    assert drawer.hidden_probability == 0.0
    assert {o.action.id for o in drawer.chance_outcomes} == {a for a, _ in state.chance_outcomes()}
    assert sum(o.probability for o in drawer.chance_outcomes) == pytest.approx(1.0)
    everything = client.legal_actions(position)
    assert dict((o.action.id, o.probability) for o in everything.chance_outcomes) == pytest.approx(dict(state.chance_outcomes()))
    drawn = client.apply_actions(position, [ChanceDraw(11)])
    again = client.apply_actions(position, [ChanceDraw(11)])
    assert drawn.applied == again.applied and drawn.applied[0].id in dict(state.chance_outcomes())
    with pytest.raises(InvalidArgumentError) as error:
        client.legal_actions(position, for_seat=2)
    assert "for_seat" in str(error.value)


def test_another_seats_options_are_not_listed_for_a_seat(client: AdvisorClient) -> None:
    """A seat's options (which can reveal its hand) are listed for it only when it decides."""
    state = games.get("war_of_the_posies").new_game(players=2, seed=4)
    position = Position("war_of_the_posies", state.encode())
    mover = state.current_player
    assert client.legal_actions(position, for_seat=mover).actions
    assert client.legal_actions(position, for_seat=1 - mover).actions == ()
    assert client.legal_actions(position, for_seat=1 - mover).current_player == mover


def test_drawing_at_a_decision_is_invalid(client: AdvisorClient) -> None:
    from hortus.clients import ChanceDraw

    position = Position("botanik", games.get("botanik").new_game(seed=1).encode())
    with pytest.raises(InvalidArgumentError) as error:
        client.apply_actions(position, [ChanceDraw(1)])
    assert "actions[0].draw_seed" in str(error.value)


# --- exact values ----------------------------------------------------------------------------
def _near_end_record(seed: int, back: int) -> tuple[Position, tuple[RecordedAction, ...]]:
    """The decision `back` decisions before the end of a seeded random Botanik game, and the
    actions (chance outcomes too) played from there to the end."""
    rng = random.Random(seed)
    state = games.get(GAME).new_game(players=2, seed=seed)
    played: list[tuple[bytes | None, RecordedAction]] = []
    while not state.is_terminal():
        decision = state.encode() if not state.is_chance() else None
        action = state.draw_chance(rng.getrandbits(64)) if state.is_chance() else rng.choice(state.legal_actions())
        played.append((decision, RecordedAction(action, seat=state.current_player)))
        state.apply(action)
    starts = [i for i, (decision, _) in enumerate(played) if decision is not None]
    start = starts[-back]
    position = played[start][0]
    assert position is not None
    return Position(GAME, position), tuple(m for _, m in played[start:])


def test_exact_values_are_flagged_on_hints_and_reviews(client: AdvisorClient) -> None:
    """Two decisions before the end nothing is hidden and the rest is small: the hints and
    the review carry the exact flag (and the dataclasses' dicts say so)."""
    position, moves = _near_end_record(2, 2)
    ranked = client.rank_moves(position, iterations=1000, seed=2)
    assert ranked.best.exact  # the best move's value is exact (the others may hold bounds only)
    assert ranked.to_dict()["moves"][0]["exact"] is True
    record = GameRecord(GAME, 2, position=position.encoded, moves=moves)
    reviewed = [r for r in client.review(record, iterations=1000, seed=2) if isinstance(r, ReviewedMove)]
    assert reviewed[0].exact or reviewed[0].forced
    assert any(r.exact for r in reviewed) and reviewed[0].to_dict()["exact"] == reviewed[0].exact
    # early in a game nothing is solved
    opening = client.new_game(GAME, players=2, seed=4).position
    assert not any(m.exact for m in client.rank_moves(opening, iterations=200, seed=2).moves)
