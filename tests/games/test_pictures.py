"""Seat pictures (``State.picture``, games/*/picture.py): well-formed SVG for every game and
seat count, every legal move of the viewing seat clickable through ``data-action``, hints
highlighted, and no leak: a seat's picture is the same for every re-deal of what it cannot see.
"""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

from hortus import games
from hortus.games import svg as svg_module

SEATS = {"botanik": [2], "botanists": [1, 2, 3, 4], "botanical_lab": [2, 3, 4], "war_of_the_posies": [2, 3, 4]}
CASES = [(name, n) for name, counts in SEATS.items() for n in counts]
NS = "{http://www.w3.org/2000/svg}"


def _checkpoints(name: str, players: int, seed: int, every: int = 9, limit: int = 400) -> list[games.State]:
    """Positions along a random game (decisions and chance both random), the last one final."""
    rng = random.Random(seed)
    state = games.get(name).new_game(players=players, seed=seed)
    out = [state.clone()]
    for step in range(limit):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
        if step % every == every - 1:
            out.append(state.clone())
    out.append(state.clone())
    return out


def _actions(svg: str) -> list[set[int]]:
    root = ET.fromstring(svg)
    return [{int(a) for a in el.get("data-action", "").split()} for el in root.iter() if el.get("data-action")]


@pytest.mark.parametrize("name,players", CASES)
def test_picture_is_svg_with_every_move_of_the_seat_clickable(name: str, players: int) -> None:
    for state in _checkpoints(name, players, seed=players):
        for seat in range(players):
            svg = state.picture(seat)
            root = ET.fromstring(svg)
            assert root.tag == f"{NS}svg" and root.get("class") == "hortus-picture"
            assert root.get("data-game") == name and root.get("data-seat") == str(seat)
            assert len(list(root.iter(f"{NS}rect"))) > 5, "an empty picture"
            clickable = set().union(*_actions(svg)) if _actions(svg) else set()
            if state.current_player == seat:
                # Every legal move has an element, and elements stand only for legal moves.
                assert clickable == set(state.legal_actions())
            else:
                assert clickable == set()


@pytest.mark.parametrize("name,players", CASES)
def test_picture_shows_only_what_the_seat_sees(name: str, players: int) -> None:
    """The no-leak property: re-deal everything `seat` cannot see (``from_view`` with other
    seeds) and the picture must not change."""
    game = games.get(name)
    for state in _checkpoints(name, players, seed=10 + players, every=13):
        if state.is_chance():
            continue
        for seat in range(players):
            svg = state.picture(seat)
            view = state.view(seat)
            for k in (1, 2, 3):
                again = game.from_view(view, seed=k)
                assert again.picture(seat) == svg, f"seat {seat}'s picture changed on re-deal {k}"


# Moves the drawing itself must place (on a cell, a card, a Garden Feature), not in the strip.
PLACED = {
    "botanik": ("build ", "exchange "),
    "botanists": ("move ", "card ", "plant ", "fulfil open "),
    "botanical_lab": ("prepare ", "acquire ", "observe ", "move to "),
    "war_of_the_posies": ("play ", "buy ", "plant "),
}


@pytest.mark.parametrize("name,players", [(name, counts[-1]) for name, counts in SEATS.items()])
def test_board_moves_are_drawn_where_they_happen(name: str, players: int) -> None:
    seen = 0
    for state in _checkpoints(name, players, seed=3, every=2):
        if state.current_player < 0:
            continue
        root = ET.fromstring(state.picture(state.current_player))
        strip = [g for g in root.iter(f"{NS}g") if g.get("class") == "moves-strip"]
        in_strip = {int(el.get("data-action")) for g in strip for el in g.iter() if el.get("data-action")}
        for action in state.legal_actions():
            text = state.action_to_string(action)
            if text.startswith(PLACED[name]):
                seen += 1
                assert action not in in_strip, f"{text!r} has no place in the drawing"
    assert seen > 20


def test_a_re_deal_does_change_what_others_see() -> None:
    """The no-leak test has teeth: a re-deal from seat 0's view does change seat 1's hand, so
    a picture that drew seat 1's hand for seat 0 would fail the test above."""
    game = games.get("war_of_the_posies")
    state = game.new_game(players=2, seed=5)
    pictures = {game.from_view(state.view(0), seed=k).picture(1) for k in range(6)}
    assert len(pictures) > 1


@pytest.mark.parametrize("name,players", [("botanik", 2), ("botanists", 3), ("botanical_lab", 2), ("war_of_the_posies", 2)])
def test_hinted_move_and_principal_variation_are_highlighted(name: str, players: int) -> None:
    state = games.get(name).new_game(players=players, seed=1)
    seat = state.current_player
    legal = state.legal_actions()
    hint, later = legal[0], legal[-1]
    root = ET.fromstring(state.picture(seat, highlight=[hint, later]))
    marked = {
        el.get("class"): {int(a) for a in el.get("data-action", "").split()}
        for el in root.iter()
        if el.get("data-action") and el.get("class") != "act"
    }
    assert any(hint in ids for cls, ids in marked.items() if "hint" in cls)
    if not any(hint in ids and later in ids for ids in marked.values()):
        assert any(later in ids for cls, ids in marked.items() if "pv" in cls)
    plain = ET.fromstring(state.picture(seat))
    assert all(el.get("class") == "act" for el in plain.iter() if el.get("data-action"))


def test_picture_needs_a_real_seat() -> None:
    state = games.get("botanik").new_game(seed=1)
    with pytest.raises(ValueError, match="seat 2"):
        state.picture(2)


def test_a_game_without_a_picture_module_gets_its_text_picture() -> None:
    state = games.get("botanik").new_game(seed=2)
    svg = svg_module.text_picture(state, state.current_player)
    root = ET.fromstring(svg)
    assert "Botanik" in "".join(root.itertext())
    assert set().union(*_actions(svg)) == set(state.legal_actions())


def test_war_card_texts_are_in_words() -> None:
    from hortus.games.war_of_the_posies.picture import words

    assert words((("COIN", 2), ("DRAW", 1))) == "+2 coins, then draw 1 card"
    assert words((("GAIN_BASIC_HAND", 1),)) == "take the top Basic Flower into your hand"


def test_legal_actions_answers_with_the_picture_of_for_seat() -> None:
    from hortus.clients import AdvisorClient, InvalidArgumentError
    from hortus.server import ServerConfig, create_server

    server, port = create_server("127.0.0.1:0", ServerConfig())
    try:
        with AdvisorClient(f"127.0.0.1:{port}", timeout=30) as client:
            info = client.new_game("botanists", players=3, seed=4)
            state = games.get("botanists").decode(info.position.encoded)
            mover = state.current_player
            hint = state.legal_actions()[0]
            legal = client.legal_actions(info.position, for_seat=mover, picture=True, highlight=[hint])
            assert legal.picture == state.picture(mover, [hint]) and 'class="act hint"' in legal.picture
            other = client.legal_actions(info.position, for_seat=(mover + 1) % 3, picture=True)
            assert other.picture == state.picture((mover + 1) % 3) and "data-action" not in other.picture
            assert client.legal_actions(info.position).picture == ""
            with pytest.raises(InvalidArgumentError, match="for_seat"):
                client.legal_actions(info.position, picture=True)
    finally:
        server.stop(0)


# --- Botanists: the market from the viewing seat's side (A15) ----------------------------------
# A15 (botanists.decisions.md): a card offset (dr, dc), dr toward the player and dc to the
# player's right, lands on the board offset s0 (dr, dc), s1 (dc, -dr), s2 (-dr, -dc), s3 (-dc, dr);
# default sides: 2 players {0, 2}, 3 players {0, 1, 2}, 4 players {0, 1, 2, 3}.
A15_SIDES = {1: (0,), 2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}


def _a15(side: int, dr: int, dc: int) -> tuple[int, int]:
    return ((dr, dc), (dc, -dr), (-dr, -dc), (-dc, dr))[side]


def _market_on_screen(svg: str) -> dict[int, tuple[int, int]]:
    """Market cell -> its (screen row, screen column) in the picture, from the clickable
    cell elements (``<title>market c3</title>``)."""
    at: dict[int, tuple[float, float]] = {}
    for group in ET.fromstring(svg).iter(f"{NS}g"):
        title = group.find(f"{NS}title")
        if title is None or not (title.text or "").startswith("market "):
            continue
        name = (title.text or "").split()[1]
        rect = group.find(f"{NS}rect")
        assert rect is not None
        at[(int(name[1]) - 1) * 5 + "abcde".index(name[0])] = (float(rect.get("y", 0)), float(rect.get("x", 0)))
    rows = sorted({y for y, _ in at.values()})
    columns = sorted({x for _, x in at.values()})
    assert len(at) == 25 and len(rows) == 5 and len(columns) == 5, "a 5x5 market grid"
    return {cell: (rows.index(y), columns.index(x)) for cell, (y, x) in at.items()}


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_botanists_market_is_drawn_from_the_viewing_seats_side(players: int) -> None:
    """Seat s's picture is the market turned to its side: one step toward the player (dr) is
    one row down on the screen and one step to its right (dc) one column right, as A15 maps
    card offsets onto the board; with orientation_mode=absolute every seat sees side 0."""
    game = games.get("botanists")
    for mode, sides in (("seat", A15_SIDES[players]), ("absolute", (0,) * players)):
        state = game.new_game(players=players, seed=5, options={"orientation_mode": mode})
        for seat, side in enumerate(sides):
            screen = _market_on_screen(state.picture(seat))
            for cell, (row, column) in screen.items():
                r, c = divmod(cell, 5)
                for (dr, dc), step in (((1, 0), (1, 0)), ((0, 1), (0, 1))):
                    br, bc = _a15(side, dr, dc)
                    if 0 <= r + br < 5 and 0 <= c + bc < 5:
                        assert screen[(r + br) * 5 + c + bc] == (row + step[0], column + step[1]), (
                            f"{players} players, {mode}, seat {seat} (side {side}): market cell {cell}"
                        )


def _hand_cards(svg: str) -> dict[int, tuple[tuple[int, int], set[tuple[int, int]]]]:
    """Action id -> the card drawn for it in the hand: (highlighted box, boxes) as (row,
    column) on the screen."""
    cards: dict[int, tuple[tuple[int, int], set[tuple[int, int]]]] = {}
    for group in ET.fromstring(svg).iter(f"{NS}g"):
        title = group.find(f"{NS}title")
        if title is None or not (title.text or "").startswith("card ") or not group.get("data-action"):
            continue
        boxes = [r for r in group.iter(f"{NS}rect") if r.get("fill") in ("#2f6b3a", "#cfe3c8")]
        size = float(boxes[0].get("width", 0))
        x0 = min(float(b.get("x", 0)) for b in boxes)
        y0 = min(float(b.get("y", 0)) for b in boxes)
        place = {b: (round((float(b.get("y", 0)) - y0) / size), round((float(b.get("x", 0)) - x0) / size)) for b in boxes}
        high = [place[b] for b in boxes if b.get("fill") == "#2f6b3a"]
        assert len(high) == 1
        for action in group.get("data-action", "").split():
            cards[int(action)] = (high[0], set(place.values()))
    return cards


def test_botanists_hand_cards_collect_what_the_picture_shows_for_every_side() -> None:
    """Clicking a hand card in seat s's picture plays that card, and it collects the tiles the
    picture shows: the card as drawn, its highlighted box on the pawn's cell of the turned
    market, less cells under other pawns and empty ones (P4) — for a seat on every side."""
    game = games.get("botanists")
    seen: set[tuple[int, int]] = set()  # (players, side) checked
    for players in (2, 3, 4):
        for seed in range(30):
            if all((players, side) in seen for side in A15_SIDES[players]):
                break
            rng = random.Random(seed)
            state = game.new_game(players=players, seed=seed)
            for _ in range(60):
                if state.is_terminal():
                    break
                if state.is_chance():
                    state.resolve_chance(rng)
                    continue
                seat = state.current_player
                svg = state.picture(seat)
                cards = {
                    a: drawn for a, drawn in _hand_cards(svg).items() if state.action_to_string(a).startswith("card ")
                }  # not "discard card"
                if cards:
                    screen = _market_on_screen(svg)
                    cell_at = {place: cell for cell, place in screen.items()}
                    view = state.view(seat)
                    pawn = view["pawn"][seat]
                    others = {c for p, c in enumerate(view["pawn"]) if p != seat}
                    for action, (high, boxes) in cards.items():
                        origin = screen[pawn]
                        drawn = {cell_at[(origin[0] + r - high[0], origin[1] + c - high[1])] for r, c in boxes}
                        after = state.clone()
                        after.apply(action)
                        taken = {c for c in range(25) if after.view(seat)["market"][c] != view["market"][c]}
                        expected = {c for c in drawn if c == pawn or (c not in others and view["market"][c] < 5)}
                        assert taken == expected, (players, seed, seat, state.action_to_string(action))
                    seen.add((players, A15_SIDES[players][seat]))
                state.apply(rng.choice(state.legal_actions()))
    assert seen == {(n, side) for n in (2, 3, 4) for side in A15_SIDES[n]}
