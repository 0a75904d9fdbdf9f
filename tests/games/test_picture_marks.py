"""What the seat pictures tell a player beyond the moves: the last turn's moves marked where
they changed the board (every game), Botanical Lab's breeds as the rulebook's symbols with a
legend, and Botanists' face-down tiles with their public colour (A27)."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from hortus import games
from hortus.games.botanical_lab.game import COMPONENTS as LAB, SPACE_BREEDS, SPACE_NAMES
from hortus.games.botanists.game import COLOURS, EMPTY
from hortus.games.svg import Last
from hortus.server.errors import RequestError
from hortus.server.pictures import last_moves
from hortus.v1 import advisor_pb2 as pb

NS = "{http://www.w3.org/2000/svg}"


def _title(el: ET.Element) -> str:
    t = el.find(f"{NS}title")
    return t.text or "" if t is not None else ""


def _marked(svg: str) -> list[ET.Element]:
    return [el for el in ET.fromstring(svg).iter() if "last" in (el.get("class") or "").split()]


def _botanik(text: str, seat: int, view: dict[str, object]) -> str | None:
    if m := re.match(r"^build .+ at (-?\d+),(-?\d+)\b", text):
        return f" at {m.group(1)},{m.group(2)}"
    if m := re.match(r"^.+ to (side|stack) (\d)$", text):
        return f"column {m.group(2)}"
    if m := re.match(r"^exchange .+ on stack (\d)$", text):
        return f"central stacks, column {m.group(1)}"
    return None


def _botanists(text: str, seat: int, view: dict[str, object]) -> str | None:
    if m := re.match(r"^(?:move|bonus: move my pawn to) ([a-e][1-5])$", text):
        return f"market {m.group(1)}"
    if re.match(r"^(?:plant \w+ face-(?:up|down)|tend \w+)$", text):
        filled = view["land_filled"][seat]  # type: ignore[index]
        return f"land space {filled}"
    if m := re.match(r"^(?:fulfil open|bonus: take open order) (\d+)$", text):
        return f"open order {m.group(1)}"
    return None


def _lab(text: str, seat: int, view: dict[str, object]) -> str | None:
    if m := re.match(r"^move to (\S+) with ", text):
        return f"room {m.group(1)}"
    if m := re.search(r"(R\w+\(\d+,\d+\))", text):
        return m.group(1)
    if re.match(r"^acquire ", text):
        return " card"
    return None


def _war(text: str, seat: int, view: dict[str, object]) -> str | None:
    if m := re.match(r"^(?:plant .+ in|uproot .+ from) (.+) of seat \d+$", text):
        return m.group(1)
    if m := re.match(r"^buy (.+ #\d+)$", text):
        return m.group(1)
    if text.startswith("play "):
        return "play area"
    return None


PLACES: dict[str, tuple[int, Callable[[str, int, dict[str, object]], str | None]]] = {
    "botanik": (2, _botanik),
    "botanists": (2, _botanists),
    "botanical_lab": (3, _lab),
    "war_of_the_posies": (3, _war),
}


@pytest.mark.parametrize("name", sorted(PLACES))
def test_the_last_move_is_marked_where_it_changed_the_board(name: str) -> None:
    """After each move that places, takes or changes something, every seat's picture marks
    an element for it (class "last", data-last = its notation) whose title names the place
    the notation names; nothing else is marked. A move the picture draws nothing for (ending
    a phase) marks nothing."""
    players, place = PLACES[name]
    game = games.get(name)
    rng = random.Random(11)
    state = game.new_game(players=players, seed=11)
    checked = 0
    for _ in range(300):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        mover = state.current_player
        action = rng.choice(state.legal_actions())
        text = game.action_to_string(state, action)
        state.apply(action)
        for seat in range(players):
            marked = _marked(state.picture(seat, (), Last(mover, (text,))))
            assert all(el.get("data-last") == text for el in marked), (text, [el.get("data-last") for el in marked])
            where = place(text, mover, state.view(mover))
            if where is None:
                continue
            assert marked, f"{text!r} marked nothing in seat {seat}'s picture"
            assert any(where in _title(el) for el in marked), (text, where, [_title(el) for el in marked])
            checked += 1
        # no last turn: nothing marked
        assert not _marked(state.picture(0))
    assert checked >= 20, checked


def test_the_last_turns_moves_are_checked() -> None:
    request = pb.LegalActionsRequest(last=pb.LastMoves(seat=2, notations=["move c3"]))
    with pytest.raises(RequestError) as e:
        last_moves(request, 2)
    assert e.value.field == "last.seat"
    request = pb.LegalActionsRequest(last=pb.LastMoves(seat=0, notations=["x"] * 65))
    with pytest.raises(RequestError) as e:
        last_moves(request, 2)
    assert e.value.field == "last.notations"
    request = pb.LegalActionsRequest(last=pb.LastMoves(seat=0, notations=["x" * 300]))
    with pytest.raises(RequestError) as e:
        last_moves(request, 2)
    assert e.value.field == "last.notations[0]"
    assert last_moves(pb.LegalActionsRequest(), 2) is None
    assert last_moves(pb.LegalActionsRequest(last=pb.LastMoves(seat=1, notations=["a", "b"])), 2) == Last(1, ("a", "b"))


# Botanical Lab's breeds: LC1's symbols, in the order of components.toml's [[breeds]].
SHAPES = {
    "circle": ("circle", 0),
    "triangle": ("polygon", 3),
    "square": ("rect", 0),
    "hexagon": ("polygon", 6),
    "diamond": ("polygon", 4),
}


def _breed_shape(group: ET.Element) -> tuple[str, int]:
    [shape] = [el for el in group if el.tag != f"{NS}title"]
    tag = shape.tag.removeprefix(NS)
    return tag, len(shape.get("points", "").split()) if tag == "polygon" else 0


def test_botanical_lab_breeds_are_the_rulebooks_symbols_with_a_legend() -> None:
    assert [b.name for b in LAB.breeds] == list(SHAPES)
    state = games.get("botanical_lab").new_game(players=2, seed=5)
    root = ET.fromstring(state.picture(0))
    spaces = {el.get("data-space"): el for el in root.iter() if el.get("data-space")}
    assert set(spaces) == set(SPACE_NAMES)
    for s, name in enumerate(SPACE_NAMES):
        groups = [el for el in spaces[name].iter() if el.get("class") == "breed"]
        assert [g.get("data-breed") for g in groups] == [LAB.breeds[b - 1].name for b in SPACE_BREEDS[s]], name
        for g in groups:
            assert _breed_shape(g) == SHAPES[g.get("data-breed") or ""]
            breed = next(b for b in LAB.breeds if b.name == g.get("data-breed"))
            assert _title(g) == f"{breed.symbol} {breed.name}"
    [legend] = [el for el in root.iter() if el.get("class") == "legend"]
    entries = [el for el in legend if el.get("class") == "breed"]
    assert [e.get("data-breed") for e in entries] == list(SHAPES)
    labels = " ".join(t.text or "" for t in legend.iter(f"{NS}text"))
    assert all(name in labels for name in SHAPES), labels


def test_botanical_lab_plants_show_their_breeds_symbol() -> None:
    """A sprouted leaf or a flower carries its breed's symbol too, not only its colour."""
    rng = random.Random(2)
    state = games.get("botanical_lab").new_game(players=2, seed=2)
    seen = 0
    for _ in range(3000):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
        view = state.view(0)
        grown = [s for s, (status, _, breed, _) in enumerate(view["spaces"]) if breed and status >= 2]
        if not grown:
            continue
        root = ET.fromstring(state.picture(0))
        spaces = {el.get("data-space"): el for el in root.iter() if el.get("data-space")}
        for s in grown:
            names = [el.get("data-breed") for el in spaces[SPACE_NAMES[s]].iter() if el.get("class") == "breed"]
            plant = LAB.breeds[view["spaces"][s][2] - 1].name
            assert names[len(SPACE_BREEDS[s]) :] == [plant], (SPACE_NAMES[s], names)
            seen += 1
        if seen >= 10:
            break
    assert seen >= 10, seen


def test_botanists_face_down_tiles_show_their_public_colour() -> None:
    """Every tile on every land, face down too, carries the colour the viewing seat's view
    gives it (A27: public), and the picture draws that colour's band on the withered back."""
    rng = random.Random(4)
    state = games.get("botanists").new_game(players=3, seed=4)
    down_seen = 0
    for _ in range(2000):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
        for seat in range(3):
            view = state.view(seat)
            expected = [
                (COLOURS[view["land_colour"][w][k]], "down" if view["land_down"][w][k] else "up")
                for w in [seat] + [p for p in range(3) if p != seat]
                for k in range(view["land_filled"][w])
                if view["land_colour"][w][k] != EMPTY
            ]
            tiles = [el for el in ET.fromstring(state.picture(seat)).iter() if el.get("class") == "tile"]
            assert [(t.get("data-colour"), t.get("data-face")) for t in tiles] == expected
            down_seen += sum(1 for _, face in expected if face == "down")
    assert down_seen >= 20, down_seen
