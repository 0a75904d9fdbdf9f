"""Sealed positions (``Position.sealed``, ``hortus serve --seal-key``): the blob holds no
plaintext, any changed byte or unknown key id is INVALID_ARGUMENT naming position.sealed, keys
rotate (the newest seals, all open), servers sharing the key file open each other's blobs,
--require-sealed refuses encoded positions, and every answer about a sealed position is the
same across re-deals of what its seat cannot see. ``view_digest``: the same request made with
the seat's view alone gives the same answer and the same digest."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message
from grpc_status import rpc_status
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]

from hortus import games
from hortus.server import RunningServer, ServerConfig, build_server
from hortus.server.sealing import SealKeyError, append_new_key, load_sealer, parse_keys
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import advisor_pb2_grpc
from hortus.views import view_digest, view_to_structured
from positions import midgame

HIDDEN_GAMES = ["botanical_lab", "botanists", "war_of_the_posies"]  # games whose views hide something
KEY = base64.b64encode(bytes(range(32))).decode()
OTHER_KEY = base64.b64encode(bytes(range(1, 33))).decode()


def violation(error: grpc.RpcError) -> tuple[str, str]:
    """The field and description of a failed call's BadRequest violation."""
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            return bad.field_violations[0].field, bad.field_violations[0].description
    raise AssertionError("no BadRequest")


def refused(call: object, request: Message) -> tuple[str, str]:
    with pytest.raises(grpc.RpcError) as caught:
        response = call(request)  # type: ignore[operator]
        for _ in response if not isinstance(response, Message) else ():
            pass
    return violation(caught.value)


class Served:
    """A started server and a stub of it."""

    def __init__(self, **settings: object) -> None:
        config = ServerConfig(max_concurrent_searches=2, max_threads=1, workers=8, draw_worlds=0, **settings)  # type: ignore[arg-type]
        self.running: RunningServer = build_server("127.0.0.1:0", config)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.running.port}")
        self.stub = advisor_pb2_grpc.AdvisorStub(self.channel)

    def close(self) -> None:
        self.channel.close()
        self.running.stop(0)


@pytest.fixture()
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "seal.keys"
    path.write_text(f"# test keys\nk1 {KEY}\n")
    return path


@pytest.fixture()
def served(key_file: Path) -> Iterator[Served]:
    server = Served(seal_key_file=str(key_file))
    yield server
    server.close()


def seal(stub: advisor_pb2_grpc.AdvisorStub, state: games.State, seat: int) -> pb.PositionInfo:
    """`state` handed out sealed for `seat` (ApplyActions of no action, seal_for_seat)."""
    request = pb.ApplyActionsRequest(position=pb.Position(game=state.game.name, encoded=state.encode()), seal_for_seat=seat)
    info: pb.PositionInfo = stub.ApplyActions(request).info
    return info


def decision_for(name: str, seat: int = 0) -> games.State:
    """A mid-game decision of `seat` in a 2-seat game of `name` where `seat` cannot see
    everything (its view has several completions), when the game hides anything."""
    for seed in range(80):
        state = midgame(name, seed, steps=6 + seed % 9)
        if state.current_player != seat:
            continue
        view = state.view(seat)
        if name == "botanik" or len({state.game.from_view(view, seed=k).encode() for k in (11, 12, 13)}) == 3:
            return state
    raise AssertionError(f"no decision of seat {seat} found in {name}")


def re_deals(state: games.State, seat: int) -> list[games.State]:
    """`state` and two re-deals of what `seat` cannot see, all different, all with its view."""
    view = state.view(seat)
    worlds = [state] + [state.game.from_view(view, seed=k) for k in (11, 12)]
    assert all(w.view(seat) == view for w in worlds)
    assert len({w.encode() for w in worlds}) == 3, "the re-deals must differ in the hidden part"
    return worlds


def without(message: Message, *names: str) -> bytes:
    """`message`'s bytes with the named fields cleared wherever they appear (a sealed blob is
    fresh ciphertext every time, timings and tokens differ)."""
    copy = type(message)()
    copy.CopyFrom(message)

    def clear(m: Message) -> None:
        for field, value in m.ListFields():
            if field.name in names:
                m.ClearField(field.name)
            elif isinstance(value, Message):
                clear(value)
            elif field.message_type is not None and not hasattr(value, "keys"):  # a repeated message field
                for item in value:
                    clear(item)

    clear(copy)
    return copy.SerializeToString(deterministic=True)


# --- the key file -------------------------------------------------------------------------------
def test_key_file_rules(tmp_path: Path) -> None:
    assert [k for k, _ in parse_keys(f"a {KEY}\n# old\n\nb {OTHER_KEY}  # new\n")] == ["a", "b"]
    for text, words in (
        ("", "no key"),
        (f"a {KEY}\na {OTHER_KEY}\n", "appears twice"),
        ("a AAAA\n", "not 32"),
        ("a not-base64!\n", "not base64"),
        (f"a b {KEY}\n", "ID BASE64KEY"),
        (f"sp@ce {KEY}\n", "key id"),
    ):
        with pytest.raises(SealKeyError, match=words):
            parse_keys(text)
    path = tmp_path / "keys"
    assert append_new_key(path, "first") == "first"
    assert (path.stat().st_mode & 0o777) == 0o600  # a secret: its owner only
    assert append_new_key(path, "second") == "second"
    sealer = load_sealer(path)
    assert sealer.key_ids == ("first", "second") and sealer.sealing_id == "second"  # the newest seals
    with pytest.raises(SealKeyError, match="already there"):
        append_new_key(path, "first")


# --- the blob -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", games.names())
def test_a_sealed_blob_holds_no_plaintext(served: Served, key_file: Path, name: str) -> None:
    state = decision_for(name) if name != "botanik" else midgame(name, 1)
    info = seal(served.stub, state, 0)
    blob = info.position.sealed
    assert info.position.encoded == b"" and not info.position.HasField("structured")
    # the server's own key opens it to exactly the position
    opened = load_sealer(key_file).open(blob)
    assert (opened.game, opened.encoded, opened.seat, opened.key_id) == (name, state.encode(), 0, "k1")
    # no run of 8 bytes of the plain position (game name, header, state) appears in the blob
    plain = pb.Position(game=name, encoded=state.encode()).SerializeToString()
    runs = {plain[i : i + 8] for i in range(len(plain) - 7)}
    assert not any(blob[i : i + 8] in runs for i in range(len(blob) - 7))
    # sealing the same position again gives other bytes (a fresh nonce), of the same length
    again = seal(served.stub, state, 0).position.sealed
    assert again != blob and len(again) == len(blob)


def test_one_flipped_byte_is_invalid_argument_position_sealed(served: Served) -> None:
    state = decision_for("botanical_lab")
    blob = seal(served.stub, state, 0).position.sealed
    # every byte: the header (version, key id), the nonce, the ciphertext and the tag
    for i in range(len(blob)):
        bad = bytearray(blob)
        bad[i] ^= 0x01
        field, description = refused(served.stub.LegalActions, pb.LegalActionsRequest(position=pb.Position(sealed=bytes(bad))))
        assert field == "position.sealed", (i, description)
    # truncated, or given with encoded bytes
    field, _ = refused(served.stub.LegalActions, pb.LegalActionsRequest(position=pb.Position(sealed=blob[:20])))
    assert field == "position.sealed"
    both = pb.Position(sealed=blob, encoded=state.encode())
    assert refused(served.stub.LegalActions, pb.LegalActionsRequest(position=both))[0] == "position"


def test_a_blob_of_an_unknown_key_id_is_refused_by_name(served: Served, tmp_path: Path) -> None:
    blob = seal(served.stub, decision_for("botanists"), 0).position.sealed
    other_file = tmp_path / "other.keys"
    other_file.write_text(f"k9 {OTHER_KEY}\n")
    other = Served(seal_key_file=str(other_file))
    try:
        field, description = refused(other.stub.LegalActions, pb.LegalActionsRequest(position=pb.Position(sealed=blob)))
        assert field == "position.sealed" and "'k1'" in description
        # the same id with another key: does not authenticate
        other_file.write_text(f"k1 {OTHER_KEY}\n")
        impostor = Served(seal_key_file=str(other_file))
        try:
            field, description = refused(impostor.stub.LegalActions, pb.LegalActionsRequest(position=pb.Position(sealed=blob)))
            assert field == "position.sealed" and "authenticate" in description
        finally:
            impostor.close()
    finally:
        other.close()
    # without a key at all
    plain = Served()
    try:
        field, description = refused(plain.stub.LegalActions, pb.LegalActionsRequest(position=pb.Position(sealed=blob)))
        assert field == "position.sealed" and "no sealing key" in description
    finally:
        plain.close()


def test_rotation_the_newest_key_seals_every_key_opens(served: Served, key_file: Path) -> None:
    state = decision_for("war_of_the_posies")
    old_blob = seal(served.stub, state, 0).position.sealed
    append_new_key(key_file, "k2")
    rotated = Served(seal_key_file=str(key_file))  # a restarted (or another) server: both keys
    try:
        assert rotated.stub.LegalActions(pb.LegalActionsRequest(position=pb.Position(sealed=old_blob))).actions
        new_blob = seal(rotated.stub, state, 0).position.sealed
        assert load_sealer(key_file).open(new_blob).key_id == "k2"
        # the server that still has only k1 cannot open k2's blobs, and says which key it lacks
        field, description = refused(served.stub.LegalActions, pb.LegalActionsRequest(position=pb.Position(sealed=new_blob)))
        assert field == "position.sealed" and "'k2'" in description
    finally:
        rotated.close()


def test_servers_sharing_the_key_file_open_each_others_blobs(served: Served, key_file: Path) -> None:
    """Worker processes and replicas read the same file: any of them continues a game."""
    replica = Served(seal_key_file=str(key_file))
    try:
        info = served.stub.NewGame(pb.NewGameRequest(game="botanical_lab", players=2, seed=4, seal_for_seat=0))
        again = replica.stub.NewGame(pb.NewGameRequest(game="botanical_lab", players=2, seed=4, seal_for_seat=0))
        assert again.info.view == info.info.view  # the keyed deal: the same on every holder of the key
        step = replica.stub.ApplyActions(pb.ApplyActionsRequest(position=info.info.position))
        assert served.stub.LegalActions(pb.LegalActionsRequest(position=step.info.position)).current_player >= -1
    finally:
        replica.close()


def test_the_deal_of_a_sealed_game_is_keyed(served: Served) -> None:
    """A client that knows the seed cannot deal the game itself: the sealed game's deal is
    not the plain game of the same seed."""
    sealed = served.stub.NewGame(pb.NewGameRequest(game="botanists", players=2, seed=9, seal_for_seat=0)).info
    plain = served.stub.NewGame(pb.NewGameRequest(game="botanists", players=2, seed=9)).info
    mine = games.get("botanists").decode(plain.position.encoded).view(0)
    assert view_to_structured("botanists", mine) != sealed.view


# --- what the server accepts ------------------------------------------------------------
def test_require_sealed_refuses_encoded_positions(key_file: Path) -> None:
    with pytest.raises(ValueError, match="seal_key_file"):
        ServerConfig(require_sealed=True)
    server = Served(seal_key_file=str(key_file), require_sealed=True)
    try:
        state = decision_for("botanical_lab")
        plain = pb.Position(game="botanical_lab", encoded=state.encode())
        for call, request in (
            (server.stub.LegalActions, pb.LegalActionsRequest(position=plain)),
            (server.stub.RankMoves, pb.RankMovesRequest(position=plain, limits=pb.SearchLimits(iterations=50))),
            (server.stub.ApplyActions, pb.ApplyActionsRequest(position=plain, seal_for_seat=0)),
        ):
            field, description = refused(call, request)
            assert field == "position.sealed" and "--require-sealed" in description
        field, _ = refused(server.stub.NewGame, pb.NewGameRequest(game="botanical_lab", seed=1))
        assert field == "seal_for_seat"
        assert server.stub.GetVersion(pb.GetVersionRequest()).require_sealed
        # a seat's own view holds nothing it may not know: accepted (how an answer is checked)
        view = pb.Position(structured=view_to_structured("botanical_lab", state.view(state.current_player)))
        assert server.stub.LegalActions(pb.LegalActionsRequest(position=view)).actions
        info = server.stub.NewGame(pb.NewGameRequest(game="botanical_lab", seed=1, seal_for_seat=1)).info
        assert info.position.sealed and not info.position.encoded
    finally:
        server.close()


def test_answers_are_kept_to_the_audience(served: Served) -> None:
    state = decision_for("botanical_lab", seat=1)  # the other seat (the AI) decides
    info = seal(served.stub, state, 0)
    position = info.position
    assert info.seat_rendered[0] and info.seat_rendered[1] == ""
    assert info.view.botanical_lab.seat == 0
    for call, request, name in (
        (served.stub.LegalActions, pb.LegalActionsRequest(position=position, for_seat=1), "for_seat"),
        (served.stub.ViewPosition, pb.ViewPositionRequest(position=position, seat=1), "seat"),
        (
            served.stub.ApplyActions,
            pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(id=state.legal_actions()[0])]),
            "actions[0]",
        ),
        (served.stub.ApplyActions, pb.ApplyActionsRequest(position=position, seal_for_seat=1), "seal_for_seat"),
        (served.stub.RankMoves, pb.RankMovesRequest(position=position, limits=pb.SearchLimits(iterations=50)), "position.sealed"),
        (served.stub.Analyze, pb.AnalyzeRequest(position=position, limits=pb.SearchLimits(iterations=50)), "position.sealed"),
    ):
        assert refused(call, request)[0] == name
    # the audience's own listing: no decision of the other seat is listed
    assert served.stub.LegalActions(pb.LegalActionsRequest(position=position)).actions == []
    # the other seat's move is played by SuggestMove: the move, the next position sealed, and
    # nothing of the options it was chosen from
    answer = served.stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=pb.SearchLimits(iterations=100, seed=3)))
    assert answer.action.notation and list(answer.turn) == [answer.action]
    assert not answer.analysis.moves and not answer.analysis.view_digest
    assert answer.info.position.sealed and answer.info.view.botanical_lab.seat == 0
    after = state.clone()
    after.apply(answer.action.id)
    assert answer.info.view == view_to_structured("botanical_lab", after.view(0))


def test_chance_on_a_sealed_position_is_drawn_by_the_server(served: Served) -> None:
    info = served.stub.NewGame(pb.NewGameRequest(game="botanists", players=2, seal_for_seat=0)).info  # waits at setup
    assert info.current_player == games.CHANCE
    state = games.get("botanists").new_game(players=2, seed=None)
    field, description = refused(
        served.stub.ApplyActions,
        pb.ApplyActionsRequest(
            position=info.position,
            actions=[pb.ActionRef(id=state.legal_actions()[0] if state.legal_actions() else state.chance_outcomes()[0][0])],
        ),
    )
    assert field == "actions[0]" and "draw_seed" in description
    position = info.position
    hidden = 0
    for _ in range(60):
        step = served.stub.ApplyActions(pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(draw_seed=7)]))
        hidden += sum(1 for a in step.applied if a.id == -1)
        assert all(a.notation == "" for a in step.applied if a.id == -1)
        position = step.info.position
        if step.info.current_player != games.CHANCE:
            break
    assert step.info.current_player >= 0
    assert hidden > 0  # the other seat's dealt cards are not named to seat 0


# --- the same answers across re-deals of what the audience cannot see ------------------
TIMINGS = ("sealed", "elapsed_ms", "continuation")


@pytest.mark.parametrize("name", HIDDEN_GAMES)
def test_every_answer_about_a_sealed_position_is_the_same_across_re_deals(served: Served, name: str) -> None:
    state = decision_for(name, seat=0)
    answers: list[list[bytes]] = []
    for world in re_deals(state, 0):
        info = seal(served.stub, world, 0)
        position = pb.Position(sealed=info.position.sealed)
        limits = pb.SearchLimits(iterations=150, seed=5)
        one = [
            without(info, *TIMINGS),
            without(served.stub.ApplyActions(pb.ApplyActionsRequest(position=position)), *TIMINGS),
            without(served.stub.LegalActions(pb.LegalActionsRequest(position=position, picture=True)), *TIMINGS),
            without(served.stub.ViewPosition(pb.ViewPositionRequest(position=position, seat=0)), *TIMINGS),
            without(served.stub.RankMoves(pb.RankMovesRequest(position=position, limits=limits)), *TIMINGS),
            without(served.stub.SuggestMove(pb.SuggestMoveRequest(position=position, limits=limits)), *TIMINGS),
        ]
        analysed = list(served.stub.Analyze(pb.AnalyzeRequest(position=position, limits=limits)))
        one.append(without(analysed[-1], *TIMINGS))
        first = state.legal_actions()[0]
        played = served.stub.ApplyActions(pb.ApplyActionsRequest(position=position, actions=[pb.ActionRef(id=first)]))
        one.append(without(played, *TIMINGS))
        answers.append(one)
    assert answers[0] == answers[1] == answers[2]


@pytest.mark.parametrize("name", games.names())
def test_view_digest_the_same_request_with_the_view_alone_gives_the_same_answer(served: Served, name: str) -> None:
    state = decision_for(name, seat=0) if name != "botanik" else midgame(name, 2)
    seat = state.current_player
    digest = view_digest(state.view(seat))
    limits = pb.SearchLimits(iterations=200, seed=8, threads=1)
    real = pb.Position(game=name, encoded=state.encode())
    views = [pb.Position(structured=view_to_structured(name, state.view(seat), seed=s)) for s in (1, 2)]
    for method, make in (
        (served.stub.SuggestMove, lambda p: pb.SuggestMoveRequest(position=p, limits=limits)),
        (served.stub.RankMoves, lambda p: pb.RankMovesRequest(position=p, limits=limits)),
    ):
        answers = [method(make(p)) for p in [real, *views]]
        assert {a.analysis.view_digest for a in answers} == {digest}
        assert len({without(a, "elapsed_ms", "continuation") for a in answers}) == 1
    sealed = pb.Position(sealed=seal(served.stub, state, seat).position.sealed)
    assert served.stub.RankMoves(pb.RankMovesRequest(position=sealed, limits=limits)).analysis.view_digest == digest
    batch = list(
        served.stub.EvaluateBatch(pb.EvaluateBatchRequest(positions=[pb.EvaluateRequest(id="a", position=real, limits=limits)]))
    )
    assert batch[0].analysis.view_digest == digest
