"""The protobuf-JSON examples of the protocol page (one per game), executed; the README's
front-page promises checked.

Each example is a fenced ``json`` block right after a marker ``<!-- json-example: GAME REQUEST -->``
in docs/service/protocol.md: a seat's structured view of a mid-game position inside a ``SuggestMoveRequest`` or
``RankMovesRequest``, as a web frontend would send it. Every example is parsed strictly with
``google.protobuf.json_format`` into its request message and sent to an in-process server on a
free port; the answer must be a valid move of the position the server completes the view
into, and the view must be exactly what that seat sees of that position. Corrupting an example
(a field out of range) must give ``INVALID_ARGUMENT`` naming the field.

The examples were made from seeded random play (``EXAMPLES``); ``python
tests/docs/test_readme_examples.py`` prints them again (e.g. after a view message changed).
"""

from __future__ import annotations

from paths import REPO
import copy
import json
import random
import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2  # type: ignore[import-untyped, unused-ignore]
from grpc_status import rpc_status

from hortus import games
from hortus.views import structured_to_view, view_to_structured
from hortus.server import RunningServer, ServerConfig
from hortus.v1 import advisor_pb2 as pb
from hortus.v1 import positions_pb2
from servers import Servers

# the examples live on the protocol page of the docs site (the README links to it)
README = REPO / "docs" / "service" / "protocol.md"
MARKER = re.compile(r"<!-- json-example: (\w+) (\w+) -->\s*```json\n(.*?)```", re.S)
METHODS = {"SuggestMoveRequest": "SuggestMove", "RankMovesRequest": "RankMoves"}
RESPONSES: dict[str, type[Message]] = {"SuggestMove": pb.SuggestMoveResponse, "RankMoves": pb.RankMovesResponse}

# game -> (seed of the deal and of the random play, decisions played, request, view seed):
# two-player positions well into the game, where hidden parts are given as counts
EXAMPLES: dict[str, tuple[int, int, str, int]] = {
    "botanik": (5, 24, "SuggestMoveRequest", 0),
    "botanists": (5, 60, "RankMovesRequest", 7),
    "botanical_lab": (5, 80, "RankMovesRequest", 7),
    "war_of_the_posies": (5, 40, "RankMovesRequest", 7),
}


def readme_examples() -> list[tuple[str, str, str]]:
    """(game, request message name, JSON text) of every marked example on the protocol page."""
    return MARKER.findall(README.read_text())


def view_key(game: str) -> str:
    """The JSON name of a game's field in ``StructuredPosition`` (``botanical_lab`` ->
    ``botanicalLab``)."""
    name: str = positions_pb2.StructuredPosition.DESCRIPTOR.fields_by_name[game].json_name
    return name


# --- making the examples -----------------------------------------------------------------------
def example_state(game: str, seed: int, decisions: int) -> games.State:
    """The two-player position after `decisions` random decisions (and the chance outcomes
    between them) from the deal of `seed`, at a decision."""
    rng = random.Random(seed)
    state = games.get(game).new_game(players=2, seed=rng.getrandbits(32))
    played = 0
    while played < decisions or state.is_chance():
        assert not state.is_terminal(), f"{game}: the game ended before {decisions} decisions"
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
            played += 1
    return state


def example_request(game: str) -> dict[str, Any]:
    """An example request as a JSON-able dictionary (proto3 JSON mapping: lowerCamelCase
    names, zero values omitted; the seat and the integer budgets written as numbers)."""
    seed, decisions, request, view_seed = EXAMPLES[game]
    state = example_state(game, seed, decisions)
    seat = state.current_player
    structured = json_format.MessageToDict(view_to_structured(game, state.view(seat)))
    view = {"seat": seat, **structured[view_key(game)]}
    position: dict[str, Any] = {"game": game, "structured": {view_key(game): view}}
    if view_seed:
        position["structured"]["seed"] = view_seed
    out: dict[str, Any] = {"position": position, "limits": {"iterations": 400, "seed": 1}}
    if request == "RankMovesRequest":
        out["maxMoves"] = 3
    return out


def compact(value: Any, indent: int = 0, width: int = 100) -> str:
    """JSON for people: what fits on a line stays on it; objects and lists of short entries
    are filled line by line to `width` columns; longer entries one a line."""
    pad = " " * indent
    flat = json.dumps(value, ensure_ascii=False)
    if len(pad) + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        entries = [(f"{json.dumps(k, ensure_ascii=False)}: ", v) for k, v in value.items()]
    else:
        entries = [("", v) for v in value]
    flats = [key + json.dumps(v, ensure_ascii=False) for key, v in entries]
    if all(len(f) <= width // 2 for f in flats):  # short entries: fill lines
        lines, line = [], ""
        for f in flats:
            if line and len(inner) + len(line) + len(f) + 2 > width:
                lines.append(line + ",")
                line = ""
            line = f"{line}, {f}" if line else f
        parts = lines + [line]
    else:
        parts = [key + compact(v, indent + 2, width).lstrip() for key, v in entries]
        parts = [p + "," for p in parts[:-1]] + parts[-1:]
    open_, close = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return open_ + "\n" + "\n".join(inner + part for part in parts) + "\n" + pad + close


# --- running them ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def running(serve_module: Servers) -> RunningServer:
    return serve_module(ServerConfig(max_concurrent_searches=2, max_threads=1))


@pytest.fixture(scope="module")
def channel(running: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as ch:
        yield ch


def send(channel: grpc.Channel, method: str, request: Message) -> Message:
    """A unary call with a plain generic stub, as any gRPC or transcoding frontend makes it."""
    call = channel.unary_unary(
        f"/hortus.v1.Advisor/{method}",
        request_serializer=type(request).SerializeToString,
        response_deserializer=RESPONSES.get(method, pb.ViewPositionResponse).FromString,
    )
    response: Message = call(request, timeout=60)
    return response


def violations(error: grpc.RpcError) -> list[str]:
    """The fields named by the BadRequest of a failed call's rich status."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type, unused-ignore]
    assert status is not None, "no rich status in the trailers"
    fields: list[str] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields.extend(v.field for v in bad.field_violations)
    return fields


def test_every_game_has_one_example() -> None:
    found = [game for game, _, _ in readme_examples()]
    assert sorted(found) == sorted(games.names()), "one README JSON example per registered game"
    for game, request, _ in readme_examples():
        assert request in METHODS, f"{game}: {request} is not a request the examples may use"


@pytest.mark.parametrize("game, request_name, text", readme_examples(), ids=[g for g, _, _ in readme_examples()])
def test_readme_example_runs(channel: grpc.Channel, game: str, request_name: str, text: str) -> None:
    request = json_format.Parse(text, getattr(pb, request_name)())  # strict: no unknown field
    method = METHODS[request_name]
    assert request.position.game == game and request.position.structured.WhichOneof("view") == game
    name, view = structured_to_view(request.position.structured)
    seed = int(request.position.structured.seed)
    state = games.get(name).from_view(view, seed=seed)  # what the server completes it into
    seat = view["seat"]
    assert state.current_player == seat, "an example is the view of the seat to decide"
    legal = {a: state.action_to_string(a) for a in state.legal_actions()}
    assert len(legal) >= 2, "an example has a real choice"

    response: Any = send(channel, method, request)
    analysis = response.analysis
    assert analysis.seat == seat and analysis.iterations == request.limits.iterations
    if method == "SuggestMove":
        assert legal[response.action.id] == response.action.notation
        assert response.turn[0] == response.action
    else:
        assert 1 <= len(analysis.moves) <= request.max_moves
        for move in analysis.moves:
            assert legal[move.action.id] == move.action.notation
            assert 0.0 <= move.win_probability <= 1.0 and move.visits > 0
    # the answer's JSON mapping (what a web frontend reads) holds all of it
    assert json_format.Parse(json_format.MessageToJson(response), type(response)()) == response

    # the example is exactly what that seat sees of the completed position
    completed = pb.Position(game=game, encoded=state.encode())
    seen: Any = send(channel, "ViewPosition", pb.ViewPositionRequest(position=completed, seat=seat))
    expected = positions_pb2.StructuredPosition()
    expected.CopyFrom(request.position.structured)
    expected.seed = 0
    assert seen.structured == expected


@pytest.mark.parametrize("game, request_name, text", readme_examples(), ids=[g for g, _, _ in readme_examples()])
def test_corrupted_readme_example_names_the_field(channel: grpc.Channel, game: str, request_name: str, text: str) -> None:
    original = json.loads(text)
    view = original["position"]["structured"][view_key(game)]
    stage = "nonsense" if isinstance(view.get("stage"), str) else 999
    for key, bad in (("seat", 9), ("stage", stage)):
        corrupted = copy.deepcopy(original)
        corrupted["position"]["structured"][view_key(game)][key] = bad
        request = json_format.Parse(json.dumps(corrupted), getattr(pb, request_name)())
        with pytest.raises(grpc.RpcError) as info:
            send(channel, METHODS[request_name], request)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert violations(info.value) == [f"position.structured.{game}.{key}"]


if __name__ == "__main__":
    for game in EXAMPLES:
        print(f"<!-- json-example: {game} {EXAMPLES[game][2]} -->")
        print("```json")
        print(compact(example_request(game)))
        print("```\n")


# --- the front page ----------------------------------------------------------------------------
FRONT_PAGE = REPO / "README.md"
LINK = re.compile(r"\]\(((?:docs/|CHANGELOG)[^)#]*)")


def test_front_page_is_short_and_keeps_the_two_commands() -> None:
    text = FRONT_PAGE.read_text()
    assert len(text.splitlines()) <= 250, "README.md is a front page: at most 250 lines"
    assert "pip install '.[web]' && hortus serve" in text
    assert "pip install -e '.[test]' && pytest" in text


def test_front_page_links_into_the_docs_resolve() -> None:
    links = LINK.findall(FRONT_PAGE.read_text())
    assert links, "the README links into docs/"
    generated = {"docs/service/fields.md"}  # written from the proto by docs/hooks.py at build time
    missing = [link for link in links if link not in generated and not (REPO / link).exists()]
    assert not missing, f"README links to missing files: {missing}"
