"""Botanists rule scenarios BT1-BT20 of botanists.decisions.md, every rule option (FLAG),
the solo Little Helper flow, component-file validation and fairness on hidden hands."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hortus import games
from hortus.games.botanists import components as components_module
from hortus.games.botanists import game as bt
from hortus.search import Limits, analyze

from botanists_positions import (
    B,
    E,
    G,
    P,
    R,
    Y,
    build,
    card,
    cell,
    end_of_round,
    full_market,
    land,
    matching_land,
    notations,
    score_phase,
    state_dict,
)

GAME = games.get("botanists") if "botanists" in games.names() else bt.BotanistsGame()
ALL_O = ["O/0", "O/1", "O/2", "O/3"]  # together these fit every cell of the market


def move_targets(state: games.State) -> set[str]:
    return {t.split()[1] for t in notations(state) if t.startswith("move ")}


def cells(*names: str) -> set[str]:
    return set(names)


def chance_until_decision(state: games.State) -> list[str]:
    """Apply the first outcome of every chance node up to the next decision; their notations."""
    seen = []
    while state.is_chance():
        action = state.chance_outcomes()[0][0]
        seen.append(state.action_to_string(action))
        state.apply(action)
    return seen


# --- BT1-BT4, BT14, BT15, BT20: scoring ------------------------------------------------------
@pytest.mark.parametrize("k, penalty", [(0, 0), (1, 1), (2, 3), (3, 6), (4, 10), (5, 15), (6, 21), (7, 28)])
def test_bt1_withered_penalty_is_triangular(k: int, penalty: int) -> None:
    s = end_of_round(
        players=2, round_=2, boards=["blue", "red"], lands=[matching_land("blue", 15, down=range(k)), matching_land("red", 15)]
    )
    score_phase(s)
    assert s.is_terminal()
    # +7 no leftovers, +5 column 2 all face up, -T(k).
    assert s.scores()[0] == 7 + 5 - penalty
    assert s.scores()[1] == 7 + 5


def test_bt2_scoring_phase_one() -> None:
    s = end_of_round(
        players=2,
        round_=0,
        boards=["blue", "red"],
        lands=[matching_land("blue", 5), matching_land("red", 5, down=[0])],
        fulfilled=[["YG", "BP"]],
    )
    score_phase(s)
    assert s.scores() == [10 + 7 + 0 + 2, 7.0]
    d = state_dict(s)
    assert not any(loc >= bt.ORDER_FULFILLED for loc in d["order_loc"])  # SC6: discarded


def test_bt3_scoring_phase_two_and_keep() -> None:
    s = end_of_round(
        players=2,
        round_=1,
        boards=["blue", "red"],
        lands=[matching_land("blue", 10, down=[7]), matching_land("red", 10, down=[6])],
        fulfilled=[["YG"]],
        leftovers=["RRY", ""],
    )
    score_phase(s)
    assert s.scores()[0] == 5 - 6
    assert s.current_player == 0  # SC5: seat 0 decides what to keep
    assert "keep red, yellow" in notations(s) and "keep red, red" in notations(s)
    bag_red = state_dict(s)["bag"][R]
    s.apply_text("keep red, yellow")
    d = state_dict(s)
    assert d["bag"][R] == bag_red + 1
    assert d["leftover"][0][R] == 1 and d["leftover"][0][Y] == 1


def test_bt3_kept_tiles_are_penalised_again() -> None:
    s = end_of_round(
        players=2,
        round_=2,
        boards=["blue", "red"],
        lands=[matching_land("blue", 15, down=[7]), matching_land("red", 15, down=[6])],
        leftovers=["RY", ""],
        scores=[-1, 0],
    )
    score_phase(s)
    # -1 so far, -4 for the two kept leftovers, +5 column 2, -1 withered.
    assert s.scores()[0] == -1 - 4 + 5 - 1


def test_bt4_scoring_phase_three_ends_the_game() -> None:
    s = end_of_round(players=2, round_=2, boards=["blue", "red"], lands=[matching_land("blue", 15), matching_land("red", 15)])
    score_phase(s)
    assert s.is_terminal()  # SC7 is not run after the last phase
    assert s.scores() == [12.0, 12.0]


def test_bt14_blue_board_second_personal_order() -> None:
    s = GAME.new_game(players=2, seed=3, options={"board_assignment": "choose"})
    assert s.current_player == 0
    s.apply_text("choose the blue board")
    assert "choose the blue board" not in notations(s)
    s.apply_text("choose the red board")
    s.resolve_chance(random.Random(1))
    d = state_dict(s)
    personal = [sum(1 for loc in d["order_loc"] if loc == bt.ORDER_PERSONAL + p) for p in range(2)]
    assert personal == [2, 1]


def test_bt14_unfulfilled_personal_costs_five_fulfilled_scores_five() -> None:
    end = end_of_round(
        players=2,
        round_=2,
        boards=["blue", "red"],
        lands=[matching_land("blue", 15), matching_land("red", 15)],
        personal=[["RR"], []],
    )
    score_phase(end)
    assert end.scores() == [12 - 5, 12]
    phase = end_of_round(
        players=2,
        round_=0,
        boards=["blue", "red"],
        lands=[matching_land("blue", 5), matching_land("red", 5)],
        fulfilled=[["RG"], []],
        personal=[["RR"], []],
    )
    score_phase(phase)
    assert phase.scores()[0] == 5 + 7 + 2


def test_bt15_furthest_behind_chooses_next_first_player() -> None:
    lands = [land("Bd") + matching_land(b, 5)[1:] for b in ("blue", "red", "green", "purple")]
    s = end_of_round(players=4, round_=0, boards=["blue", "red", "green", "purple"], lands=lands, scores=[13, 1, 1, 8])
    score_phase(s)
    assert s.scores() == [20, 8, 8, 15]
    assert state_dict(s)["stage"] == bt.ST_CHOOSE_FIRST
    assert s.current_player == 2
    assert notations(s) == ["seat 0 starts", "seat 1 starts", "seat 2 starts", "seat 3 starts"]
    s.apply_text("seat 1 starts")
    chance_until_decision(s)
    d = state_dict(s)
    assert d["round"] == 1 and d["first_player"] == 1 and s.current_player == 1


def test_bt20_solo_withered_penalties_are_separate() -> None:
    s = end_of_round(
        players=1,
        round_=2,
        boards=["blue"],
        helper_board="red",
        lands=[matching_land("blue", 15, down=[0, 10])],
        helper_land=matching_land("red", 15, down=[1, 2, 10]),
    )
    score_phase(s)
    assert s.is_terminal()
    assert s.scores() == [7 - 3 - 6]
    assert s.returns() == [1.0]


# --- BT5-BT10, BT16: movement, cards, collecting -----------------------------------------------
def test_bt5_two_king_steps_around_a_pawn() -> None:
    s = build(players=2, stage="action", boards=["blue", "red"], pawns=["c3", "d3"], hands=[ALL_O, ["I-h/0", "I-h/1"]])
    every = {bt.cell_name(c) for c in range(25)}
    assert move_targets(s) == every - {"c3", "d3"}


def test_bt6_corner_escape() -> None:
    s = build(
        players=4,
        stage="action",
        boards=["blue", "red", "green", "purple"],
        pawns=["a1", "b1", "a2", "b2"],
        hands=[ALL_O, [], [], []],
    )
    assert move_targets(s) == cells("d1", "e1", "d2", "e2", "a4", "b4", "d4", "e4", "a5", "b5", "d5", "e5")


def test_bt7_card_may_not_hang_off_the_market() -> None:
    s = build(
        players=2,
        stage="card",
        boards=["blue", "red"],
        pawns=["a1", "e5"],
        part=bt.PART_PURCHASE,
        own_action=1,
        hands=[["I-h/1", "I-h/0"], ["O/0", "O/1"]],
    )
    assert notations(s) == ["card I-h/0"]


def test_bt8_no_legal_purchase_redraws_the_hand() -> None:
    s = build(
        players=2,
        stage="action",
        boards=["blue", "red"],
        pawns=["e5", "a1"],
        hands=[["I-h/0", "I-v/0"], ["O/0", "O/1"]],
        normalize=True,
    )
    d = state_dict(s)
    assert d["card_loc"][card("I-h/0")] == bt.CARD_DISCARD and d["card_loc"][card("I-v/0")] == bt.CARD_DISCARD
    assert s.is_chance() and d["pend_cards"] == 2
    assert all(t.startswith("seat 0 draws card ") for t in map(s.action_to_string, [a for a, _ in s.chance_outcomes()]))
    assert s.view(1)["market_discard"] == sorted([card("I-h/0"), card("I-v/0")])  # A22: revealed


def test_bt9_other_pawns_block_their_tiles() -> None:
    market = full_market("R")
    market[cell("c3")], market[cell("d3")], market[cell("c4")], market[cell("d4")] = Y, G, B, P
    s = build(
        players=2,
        stage="card",
        boards=["blue", "red"],
        pawns=["c3", "d4"],
        market=market,
        part=bt.PART_PURCHASE,
        own_action=1,
        hands=[["O/0", "I-h/0"], ["O/1", "O/2"]],
    )
    s.apply_text("card O/0")
    d = state_dict(s)
    assert d["collected"] == [0, 1, 1, 1, 0]
    assert d["market"][cell("d4")] == P
    assert [d["market"][cell(c)] for c in ("c3", "d3", "c4")] == [E, E, E]


def test_bt10_cards_are_read_from_the_seat() -> None:
    market = full_market("R")
    for name, colour in (("c3", Y), ("b3", G), ("c2", B), ("b2", P)):
        market[cell(name)] = colour
    s = build(
        players=3,
        stage="card",
        boards=["blue", "red", "green"],
        cur=2,
        turns_done=2,
        pawns=["a5", "e5", "c3"],
        market=market,
        part=bt.PART_PURCHASE,
        own_action=1,
        hands=[["I-h/0", "I-h/1"], ["I-v/0", "I-v/1"], ["O/0", "T-up/0"]],
    )
    s.apply_text("card O/0")
    d = state_dict(s)
    assert d["collected"] == [0, 1, 1, 1, 1]
    assert [d["market"][cell(c)] for c in ("c3", "b3", "c2", "b2")] == [E] * 4


def test_bt16_refill_in_row_major_order() -> None:
    market = full_market("R")
    market[cell("c3")] = B
    s = build(
        players=2,
        stage="card",
        boards=["blue", "red"],
        pawns=["c3", "a1"],
        market=market,
        part=bt.PART_PURCHASE,
        own_action=1,
        hands=[["O/0", "I-h/0"], ["O/1", "O/2"]],
        open_orders=["GG", "YY", "PP"],
    )
    s.apply_text("card O/0")
    assert sum(state_dict(s)["collected"]) == 4
    s.apply_text("plant blue face-up")
    events = chance_until_decision(s)
    tiles = [e for e in events if e.startswith("draw ")]
    assert [t.split()[-1] for t in tiles] == ["c3", "d3", "c4", "d4"]
    assert s.current_player == 1


# --- BT11-BT13, BT17: planting, tending, bonuses -------------------------------------------------
def test_bt11_plant_options() -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["red", "blue"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="RYY",
        hands=[["O/0"], ["O/1", "O/2"]],
    )
    assert notations(s) == ["plant red face-up", "plant red face-down", "plant yellow face-down"]


def test_bt12_no_tending_without_leftovers() -> None:
    s = build(players=2, stage="action", boards=["blue", "red"], pawns=["c3", "a1"], hands=[ALL_O[:2], ["O/2", "O/3"]])
    assert not any(t.startswith("tend") for t in notations(s))
    s = build(
        players=2, stage="action", boards=["blue", "red"], pawns=["c3", "a1"], leftovers=["RG"], hands=[ALL_O[:2], ["O/2", "O/3"]]
    )
    assert [t for t in notations(s) if t.startswith("tend")] == ["tend red", "tend green"]


def test_bt13_tended_tile_lies_face_down_and_triggers_the_bonus() -> None:
    s = build(
        players=2, stage="action", boards=["green", "red"], pawns=["c3", "a1"], leftovers=["G"], hands=[ALL_O[:2], ["O/2", "O/3"]]
    )
    s.apply_text("tend green")
    d = state_dict(s)
    assert d["land_colour"][0][0] == G and d["land_down"][0][0] == 1
    assert notations(s) == [
        "bonus: take open order 1",
        "bonus: take open order 2",
        "bonus: take open order 3",
        "bonus: take the top order of the deck",
        "bonus: skip",
    ]
    s.apply_text("bonus: skip")
    s.apply_text("keep the open orders")
    s.apply_text("do not draw")
    # No leftover: no T5 fulfilment; nothing to refill either, so seat 1's turn begins.
    assert state_dict(s)["stage"] == bt.ST_ACTION and s.current_player == 1


def test_bt17_purple_swap_under_a_pawn() -> None:
    market = full_market("G")
    market[cell("b2")] = R
    s = build(
        players=2,
        stage="plant",
        boards=["purple", "red"],
        pawns=["c3", "b2"],
        market=market,
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="GY",
        leftovers=["B"],
        hands=[["O/0"], ["O/1", "O/2"]],
    )
    s.apply_text("plant green face-down")
    assert "bonus: give my blue to the market" in notations(s)
    assert "bonus: give my yellow to the market" not in notations(s)  # A16: not yet leftovers
    s.apply_text("bonus: give my blue to the market")
    s.apply_text("bonus: take red from market b2")
    d = state_dict(s)
    assert d["market"][cell("b2")] == B and d["pawn"][1] == cell("b2")
    assert d["leftover"][0] == [1, 1, 0, 0, 0]


# --- BT18, BT19: the Little Helper ---------------------------------------------------------------
def test_bt18_helper_without_a_usable_card_redraws_three() -> None:
    s = build(
        players=1,
        stage="helper_card",
        boards=["blue"],
        helper="a1",
        pawns=[None],
        solo_first=1,
        hands=[["I-h/3", "I-v/3", "O/3"]],
        normalize=True,
    )
    d = state_dict(s)
    assert all(d["card_loc"][card(c)] == bt.CARD_DISCARD for c in ("I-h/3", "I-v/3", "O/3"))
    assert s.is_chance() and d["pend_cards"] == 3
    s = build(
        players=1,
        stage="helper_card",
        boards=["blue"],
        helper="a1",
        pawns=[None],
        solo_first=1,
        hands=[["I-h/3", "I-v/3", "O/0"]],
    )
    assert notations(s) == ["helper card O/0"]
    s.apply_text("helper card O/0")
    targets = {t.split()[2] for t in notations(s)}
    assert targets == {"b1", "a2", "b2"}


def test_bt19_solo_red_bonus_swaps_with_a_face_up_helper_tile() -> None:
    helper_land = matching_land("purple", 2) + [(R, 0)]  # space 3 holds R face up (an earlier swap)
    s = build(
        players=1,
        stage="plant",
        boards=["red"],
        helper_board="purple",
        turns_done=2,
        pawns=["e5"],
        helper="a1",
        lands=[matching_land("red", 2)],
        helper_land=helper_land,
        solo_first=1,
        done_mask=2,
        planted=2,
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="GB",
        leftovers=["Y"],
        hands=[["O/0", "O/1"]],
    )
    s.apply_text("plant green face-down")  # space 3's sign is red
    assert notations(s) == ["bonus: give my yellow to the helper", "bonus: skip"]
    s.apply_text("bonus: give my yellow to the helper")
    assert notations(s) == [
        "bonus: take purple from helper space 1",
        "bonus: take red from helper space 2",
        "bonus: take red from helper space 3",
    ]
    s.apply_text("bonus: take red from helper space 3")
    d = state_dict(s)
    assert d["land_colour"][bt.HELPER][2] == Y and d["land_down"][bt.HELPER][2] == 0
    assert d["leftover"][0][R] == 1 and d["leftover"][0][Y] == 0


def test_bt19_mismatched_face_up_helper_tile_counts_for_the_column_bonus() -> None:
    helper_land = matching_land("purple", 5)
    helper_land[2] = (Y, 0)
    s = end_of_round(
        players=1,
        round_=0,
        boards=["red"],
        helper_board="purple",
        lands=[matching_land("red", 5, down=[0])],
        helper_land=helper_land,
    )
    score_phase(s)
    assert s.scores() == [7 + 2]


def test_solo_turn_order_discard_and_refill() -> None:
    s = GAME.new_game(players=1, seed=4)
    assert notations(s) == ["own move first", "helper move first"]
    s.apply_text("helper move first")
    rng = random.Random(2)
    while state_dict(s)["stage"] != bt.ST_SOLO_DISCARD:
        if s.is_chance():
            s.resolve_chance(rng)
            continue
        s.apply(s.legal_actions()[0])
    d = state_dict(s)
    assert d["done_mask"] == 3
    hand = [k for k in range(76) if d["card_loc"][k] == bt.CARD_HAND]
    assert notations(s) == [f"discard card {bt.card_name(k)}" for k in hand] + ["discard nothing"]
    s.apply_text(f"discard card {bt.card_name(hand[0])}")
    chance_until_decision(s)
    assert sum(1 for loc in state_dict(s)["card_loc"] if loc == bt.CARD_HAND) == 3


# --- every FLAG ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["true", "false"])
def test_flag_fulfil_after_purchase(value: str) -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["blue", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="BRY",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": value},
    )
    s.apply_text("plant blue face-up")
    if value == "true":
        assert notations(s) == ["fulfil open 1", "fulfil no open order"]
        s.apply_text("fulfil open 1")
        assert state_dict(s)["leftover"][0] == [0] * 5
    else:
        assert s.is_chance() and state_dict(s)["stage"] == bt.ST_END_TURN


@pytest.mark.parametrize("value", ["false", "true"])
def test_flag_bonus_sees_new_leftovers(value: str) -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["purple", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="PR",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"bonus_sees_new_leftovers": value, "fulfil_after_purchase": "false"},
    )
    s.apply_text("plant purple face-down")
    if value == "false":
        # No leftover while the bonus resolves: nothing to give, so it is skipped at once.
        assert state_dict(s)["stage"] == bt.ST_END_TURN
        assert state_dict(s)["leftover"][0][R] == 1
    else:
        assert state_dict(s)["stage"] == bt.ST_BONUS
        assert notations(s)[0] == "bonus: give my red to the market"


@pytest.mark.parametrize("entry, centre", [("outer_start", True), ("outer_is_step1", False)])
def test_flag_entry_mode(entry: str, centre: bool) -> None:
    s = build(
        players=2,
        stage="action",
        boards=["blue", "red"],
        pawns=[None, None],
        hands=[ALL_O, []],
        options={"entry_mode": entry, "move_mode": "straight2"},
    )
    targets = move_targets(s)
    assert ("c3" in targets) == centre
    assert targets >= {bt.cell_name(c) for c in range(25) if c != 12}
    king = build(
        players=2, stage="action", boards=["blue", "red"], pawns=[None, "c3"], hands=[ALL_O, []], options={"entry_mode": entry}
    )
    assert move_targets(king) == {bt.cell_name(c) for c in range(25)} - {"c3"}


@pytest.mark.parametrize("mode, count", [("king2", 24), ("straight2", 16)])
def test_flag_move_mode(mode: str, count: int) -> None:
    s = build(
        players=2, stage="action", boards=["blue", "red"], pawns=["c3", None], hands=[ALL_O, []], options={"move_mode": mode}
    )
    targets = move_targets(s)
    assert len(targets) == count
    assert ("b1" in targets) == (mode == "king2")


@pytest.mark.parametrize("mode, expected", [("seat", ("c3", "b3", "c2", "b2")), ("absolute", ("c3", "d3", "c4", "d4"))])
def test_flag_orientation_mode(mode: str, expected: tuple[str, ...]) -> None:
    s = build(
        players=3,
        stage="card",
        boards=["blue", "red", "green"],
        cur=2,
        turns_done=2,
        pawns=["a5", "e5", "c3"],
        part=bt.PART_PURCHASE,
        own_action=1,
        hands=[["I-h/0", "I-h/1"], ["I-v/0", "I-v/1"], ["O/0", "T-up/0"]],
        options={"orientation_mode": mode},
    )
    s.apply_text("card O/0")
    d = state_dict(s)
    assert {bt.cell_name(c) for c in range(25) if d["market"][c] == E} == set(expected)


@pytest.mark.parametrize("value", ["deal", "choose"])
def test_flag_board_assignment(value: str) -> None:
    s = GAME.new_game(players=3, seed=7, options={"board_assignment": value})
    if value == "choose":
        assert notations(s) == [f"choose the {b.name} board" for b in bt.COMPONENTS.boards]
        for name in ("yellow", "green", "blue"):
            s.apply_text(f"choose the {name} board")
        s.resolve_chance(random.Random(0))
        assert state_dict(s)["board"][:3] == [4, 1, 0]
    else:
        boards = state_dict(s)["board"][:3]
        assert state_dict(s)["stage"] == bt.ST_ACTION  # dealt by chance, no decision
        assert len(set(boards)) == 3 and all(b < 5 for b in boards)


@pytest.mark.parametrize("value, total", [("29", 145), ("25", 125)])
def test_flag_tiles_per_colour(value: str, total: int) -> None:
    s = GAME.new_game(players=2, seed=1, options={"tiles_per_colour": value})
    d = state_dict(s)
    assert sum(d["bag"]) + sum(1 for v in d["market"] if v != E) == total


# --- components, fairness, solo returns ----------------------------------------------------------
def test_malformed_components_name_the_entry(tmp_path: Path) -> None:
    text = components_module.DEFAULT_PATH.read_text()
    broken = text.replace('signs = ["RYRGB", "GRBRY", "BGRYR"]', 'signs = ["RYRGB", "GRBXY", "BGRYR"]')
    path = tmp_path / "components.toml"
    path.write_text(broken)
    with pytest.raises(components_module.ComponentDataError, match=r"boards\[2\] \(red\)\.signs\[1\]\[3\]"):
        components_module.load(path)
    path.write_text(text.replace("cells = [[0, 0], [0, 1], [1, 0], [1, 1]]", "cells = [[0, 0], [0, 1], [1, 0], [2, 1]]"))
    with pytest.raises(components_module.ComponentDataError, match=r"shapes\[2\] \(O\)\.cells"):
        components_module.load(path)
    path.write_text(text.replace('    "RYGBP",\n]', '    "R",\n]'))
    with pytest.raises(components_module.ComponentDataError, match=r"orders\[81\]"):
        components_module.load(path)
    path.write_text(text.replace('P = "swap_market"', 'P = "teleport"'))
    with pytest.raises(components_module.ComponentDataError, match=r"bonus_by_colour\.P"):
        components_module.load(path)
    assert components_module.load() == bt.COMPONENTS


def test_fairness_hidden_hands() -> None:
    rng = random.Random(11)
    s = GAME.new_game(players=3, seed=11)
    for _ in range(25):
        if s.is_chance():
            s.resolve_chance(rng)
        s.apply(rng.choice(s.legal_actions()))
    s.resolve_chance(rng)
    seat = s.current_player
    worlds = []
    for seed in (1, 2, 3):
        world = s.clone()
        world.kernel_state.determinize(seat, seed)
        assert world.view(seat) == s.view(seat)
        worlds.append(world)
    hands = {tuple(state_dict(w)["card_loc"]) for w in worlds}
    assert len(hands) == 3  # the other seats' hands really were re-dealt
    first = analyze(worlds[0], Limits(iterations=300, seed=5))
    for world in worlds[1:]:
        other = analyze(world, Limits(iterations=300, seed=5))
        assert (first.moves, first.iterations) == (other.moves, other.iterations)
    view = s.view(seat)
    assert "card_loc" not in view and len(view["hand_sizes"]) == 3


def test_view_rebuilds_the_position_for_every_seat_count() -> None:
    for players in (1, 2, 3, 4):
        rng = random.Random(players)
        s = GAME.new_game(players=players, seed=players)
        for _ in range(40):
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            seat = s.current_player
            rebuilt = GAME.from_view(s.view(seat), seed=3)
            assert rebuilt.view(seat) == s.view(seat)
            assert rebuilt.legal_actions() == s.legal_actions()
            s.apply(rng.choice(s.legal_actions()))


def test_solo_returns_are_the_whole_share() -> None:
    rng = random.Random(0)
    s = GAME.new_game(players=1, seed=0)
    while not s.is_terminal():
        if s.is_chance():
            s.resolve_chance(rng)
            continue
        s.apply(rng.choice(s.legal_actions()))
    assert s.returns() == [1.0]
    assert "Helper" in s.render()


# --- the five bonus actions (2.6) and their solo changes (L9) -----------------------------------
def test_bonus_red_swaps_leftovers_with_another_player() -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["blue", "red"],
        turns_done=2,
        pawns=["c3", "a1"],
        lands=[matching_land("blue", 1), matching_land("red", 1)],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="GY",
        leftovers=["B", "RR"],
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": "false"},
    )
    s.apply_text("plant green face-down")  # space 2 of the blue board has a red sign
    assert notations(s) == ["bonus: swap with seat 1", "bonus: skip"]
    s.apply_text("bonus: swap with seat 1")
    assert notations(s) == ["bonus: give my blue to seat 1"]
    s.apply_text("bonus: give my blue to seat 1")
    assert notations(s) == ["bonus: take red from seat 1"]
    s.apply_text("bonus: take red from seat 1")
    d = state_dict(s)
    assert d["leftover"][0] == [1, 1, 0, 0, 0]  # the swapped red + the purchase's yellow
    assert d["leftover"][1] == [1, 0, 0, 1, 0]


@pytest.mark.parametrize("players", [2, 1])
def test_bonus_yellow_moves_a_pawn(players: int) -> None:
    common = dict(
        stage="plant",
        turns_done=3 * players,
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="GR",
        options={"fulfil_after_purchase": "false"},
    )
    if players == 2:
        s = build(
            players=2,
            boards=["blue", "red"],
            pawns=["c3", "a1"],
            hands=[["O/0"], ["O/1", "O/2"]],
            lands=[matching_land("blue", 3), matching_land("red", 3)],
            **common,
        )
    else:
        s = build(
            players=1,
            boards=["blue"],
            pawns=["c3"],
            helper="a1",
            hands=[["O/0", "O/1"]],
            lands=[matching_land("blue", 3)],
            helper_land=matching_land("red", 3),
            solo_first=0,
            **common,
        )
    s.apply_text("plant green face-down")  # space 4 of the blue board has a yellow sign
    own = {t.split()[-1] for t in notations(s) if t.startswith("bonus: move my pawn")}
    helper = {t.split()[-1] for t in notations(s) if t.startswith("bonus: move the helper")}
    assert own == {bt.cell_name(c) for c in range(25)} - {"c3", "a1"}
    assert helper == (set() if players == 2 else {bt.cell_name(c) for c in range(25)} - {"c3", "a1"})
    if players == 1:
        s.apply_text("bonus: move the helper to e5")
        assert state_dict(s)["pawn"][bt.HELPER] == cell("e5")
    else:
        s.apply_text("bonus: move my pawn to e5")
        assert state_dict(s)["pawn"][0] == cell("e5")


def test_bonus_green_takes_an_open_order_and_the_row_is_refilled() -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["green", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="RY",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": "false"},
    )
    s.apply_text("plant red face-down")  # space 1 of the green board has a green sign
    s.apply_text("bonus: take open order 2")
    d = state_dict(s)
    taken = [o for o in range(82) if d["order_loc"][o] == bt.ORDER_PERSONAL]
    assert [bt.order_name(o) for o in taken] == ["GB"] and d["open_orders"][1] == E
    assert s.is_chance()
    assert all(t.startswith("reveal open order ") for t in map(s.action_to_string, [a for a, _ in s.chance_outcomes()]))
    chance_until_decision(s)
    assert state_dict(s)["open_orders"][1] != E


def test_bonus_green_top_of_the_deck() -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["green", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="RY",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": "false"},
    )
    s.apply_text("plant red face-down")
    s.apply_text("bonus: take the top order of the deck")
    assert s.action_to_string(s.chance_outcomes()[0][0]).startswith("seat 0 draws personal order ")
    s.apply(s.chance_outcomes()[0][0])
    assert sum(1 for loc in state_dict(s)["order_loc"] if loc == bt.ORDER_PERSONAL) == 1


def test_bonus_blue_is_three_points_at_once() -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["blue", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="RY",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": "false"},
    )
    s.apply_text("plant red face-down")  # space 1 of the blue board has a blue sign
    assert s.scores()[0] == 3
    assert state_dict(s)["stage"] == bt.ST_END_TURN


def test_tend_discards_open_orders_and_draws_two() -> None:
    s = build(
        players=2,
        stage="action",
        boards=["red", "blue"],
        pawns=["c3", "a1"],
        leftovers=["RRY"],
        hands=[["O/0", "O/1"], ["O/2", "O/3"]],
        open_orders=["RR", "GB", "PP"],
    )
    s.apply_text("tend yellow")  # a matching red would also go face down; the red bonus has no partner
    assert notations(s)[:2] == ["keep the open orders", "discard open orders 1"]
    s.apply_text("discard open orders 2,3")
    chance_until_decision(s)
    assert E not in state_dict(s)["open_orders"]
    s.apply_text("draw 2 market cards")
    chance_until_decision(s)
    hand = [k for k in range(76) if state_dict(s)["card_loc"][k] == bt.CARD_HAND]
    assert len(hand) == 4
    assert notations(s) == [f"discard card {bt.card_name(k)}" for k in hand]
    s.apply_text(f"discard card {bt.card_name(hand[3])}")
    assert notations(s) == [f"discard card {bt.card_name(k)}" for k in hand[:3]]
    s.apply_text(f"discard card {bt.card_name(hand[0])}")
    assert sum(1 for loc in state_dict(s)["card_loc"] if loc == bt.CARD_HAND) == 2
    assert notations(s)[-1] == "fulfil no open order" or notations(s)[-1] == "fulfil no personal order"


def test_decoding_names_the_broken_field() -> None:
    s = GAME.new_game(players=2, seed=1)
    d = state_dict(s)
    d["bag"][R] += 1
    from hortus.games.botanists import kernel

    import zlib
    from hortus.games.base import _CHECKSUM, _HEADER, FORMAT_VERSION, MAGIC

    core = bytes(kernel.dict_to_core(d))
    body = _HEADER.pack(MAGIC, FORMAT_VERSION, GAME.game_id, 0, 2, len(core)) + core
    with pytest.raises(games.InvalidPositionError) as info:
        GAME.decode(body + _CHECKSUM.pack(zlib.crc32(body)))
    assert info.value.field == "bag[0]"
    view = s.view(0)
    view["market"] = view["market"][:-1]
    with pytest.raises(games.InvalidPositionError) as info:
        GAME.from_view(view)
    assert info.value.field == "market"


# --- A10: exhaustion -----------------------------------------------------------------------------
def test_a10_no_possible_purchase_and_nothing_to_tend_passes_the_turn() -> None:
    every_tile = "".join(letter * 29 for letter in "RYGBP")
    s = build(
        players=2,
        stage="action",
        boards=["blue", "red"],
        pawns=["c3", "a1"],
        market=[E] * 25,
        leftovers=["", every_tile],
        hands=[ALL_O[:2], ["O/2", "O/3"]],
        normalize=True,
    )
    d = state_dict(s)
    assert s.current_player == 1 and d["turns_done"] == 1
    # G1: the passed turn still uses up its space, which stays empty (no tile, not withered).
    assert d["land_filled"][0] == 1 and d["land_colour"][0][0] == E and d["land_down"][0][0] == 0
    assert all(t.startswith("tend ") for t in notations(s))
    assert "b--" in s.render()


def test_a10_empty_order_deck_reshuffles_the_discard_pile() -> None:
    order_loc = [bt.ORDER_DISCARD] * 82
    s = build(
        players=2,
        stage="plant",
        boards=["green", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="RY",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": "false"},
    )
    d = state_dict(s)
    for o in d["open_orders"]:
        order_loc[o] = bt.ORDER_OPEN
    s = build(
        players=2,
        stage="plant",
        boards=["green", "red"],
        pawns=["c3", "a1"],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="RY",
        hands=[["O/0"], ["O/1", "O/2"]],
        options={"fulfil_after_purchase": "false"},
        order_loc=order_loc,
    )
    s.apply_text("plant red face-down")
    s.apply_text("bonus: take the top order of the deck")
    assert sum(p for _, p in s.chance_outcomes()) == pytest.approx(1.0)
    s.apply(s.chance_outcomes()[0][0])
    d = state_dict(s)
    assert d["order_loc"].count(bt.ORDER_DECK) == 78 and d["order_loc"].count(bt.ORDER_PERSONAL) == 1


def test_views_of_a_seat_not_to_move_rebuild_a_playable_position() -> None:
    """from_view for a seat that is not deciding: the re-dealt hand of the seat to move still
    allows what its public play shows (a card that fits where its pawn moved)."""
    for seed in range(6):
        rng = random.Random(seed)
        s = GAME.new_game(players=3, seed=seed)
        while state_dict(s)["stage"] != bt.ST_CARD:
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            s.apply(rng.choice(s.legal_actions()))
        mover = s.current_player
        for observer in range(3):
            if observer == mover:
                continue
            for world_seed in range(3):
                world = GAME.from_view(s.view(observer), seed=world_seed)
                assert world.view(observer) == s.view(observer)
                assert world.legal_actions()


# --- through the gRPC service (in-process, free port) ---------------------------------------------
@pytest.mark.parametrize("players, steps", [(1, 10_000), (3, 120)])
def test_played_through_the_service(players: int, steps: int) -> None:
    """A whole solo game, and the start of a 3-player game, with the AI's suggestions played
    for every seat and chance drawn by the client, as `hortus play botanists` does."""
    from hortus.clients import AdvisorClient
    from hortus.server import ServerConfig, build_server

    server = build_server("127.0.0.1:0", ServerConfig(default_iterations=50, max_threads=1))
    try:
        with AdvisorClient(f"127.0.0.1:{server.port}", timeout=60) as client:
            info = client.new_game("botanists", players, seed=5)
            position = info.position
            rng = random.Random(5)
            for _ in range(steps):
                legal = client.legal_actions(position)
                if legal.terminal:
                    break
                if legal.is_chance:
                    outcomes = legal.chance_outcomes
                    outcome = rng.choices(outcomes, [o.probability for o in outcomes])[0]
                    info = client.apply_actions(position, [outcome.action.notation])
                else:
                    suggestion = client.suggest_move(position, iterations=50, seed=rng.getrandbits(32))
                    assert suggestion.action.id in [a.id for a in legal.actions]
                    info = client.apply_actions(position, [suggestion.action.id])
                position = info.position
            if players == 1:
                assert info.terminal and list(info.returns) == [1.0]
            assert "Botanists" in info.rendered
    finally:
        server.stop(0)


# --- every rule-legal move in any order; public knowledge exact --------------------------
def test_t5_personal_order_may_be_fulfilled_before_the_open_one() -> None:
    """T5/P8: "one order from the open market and/or one personal order", in either order."""
    s = build(
        players=2,
        stage="fulfil_open",
        boards=["blue", "red"],
        pawns=["c3", "a1"],
        lands=[land("Bu")],
        own_action=1,
        planted=1,
        done_mask=1,
        leftovers=["RYRR"],
        personal=[["RR"]],
        hands=[["O/0", "O/1"], ["O/2", "O/3"]],
        open_orders=["RY", "GB", "PP"],
    )
    assert notations(s) == ["fulfil open 1", "fulfil personal RR", "fulfil no open order"]
    # the search follows either order: after either first move the other stays reachable
    assert s.search_actions() == s.legal_actions()
    after_open = s.clone()
    after_open.apply_text("fulfil open 1")
    assert after_open.search_actions() == after_open.legal_actions()
    assert notations(after_open) == ["fulfil personal RR", "fulfil no personal order"]
    personal_first = s.clone()
    personal_first.apply_text("fulfil personal RR")
    assert notations(personal_first) == ["fulfil open 1", "fulfil no open order"]
    personal_first.apply_text("fulfil open 1")
    open_first = s.clone()
    open_first.apply_text("fulfil open 1")
    open_first.apply_text("fulfil personal RR")
    assert personal_first.encode() == open_first.encode()
    assert state_dict(open_first)["leftover"][0] == [0] * 5 and state_dict(open_first)["stage"] == bt.ST_END_TURN
    # the personal order alone, then no open order: the same as no open order, then the personal
    only = s.clone()
    only.apply_text("fulfil personal RR")
    only.apply_text("fulfil no open order")
    later = s.clone()
    later.apply_text("fulfil no open order")
    later.apply_text("fulfil personal RR")
    assert only.encode() == later.encode()


def test_straight2_entry_may_be_diagonal() -> None:
    """A13 outer_is_step1 + A14 straight2: entering is a step from beside the market, diagonal
    too, and the second step keeps its direction; b2 is reachable only through the corner a1
    (diagonal entry) or diagonally from c1/a3 when b1, a2 and c1 are taken."""
    options = {"entry_mode": "outer_is_step1", "move_mode": "straight2"}
    s = build(
        players=4,
        stage="action",
        boards=["blue", "red", "green", "purple"],
        pawns=[None, "b1", "a2", "c1"],
        hands=[ALL_O, [], [], []],
        options=options,
    )
    targets = move_targets(s)
    assert "b2" in targets  # a1 (entered diagonally) then on to b2
    assert "c3" not in targets  # two steps from beside the market at most
    outer = {bt.cell_name(c) for c in range(25) if c // 5 in (0, 4) or c % 5 in (0, 4)}
    inner = {bt.cell_name(c) for c in range(25)} - outer - {"c3"}
    assert targets == (outer - {"b1", "a2", "c1"}) | inner
    # from the edge tile b1 (free now) the diagonal entries continue to a2 and c2, not only b2
    s = build(
        players=4,
        stage="action",
        boards=["blue", "red", "green", "purple"],
        pawns=[None, "a1", "c1", "b2"],
        hands=[ALL_O, [], [], []],
        options=options,
    )
    targets = move_targets(s)
    assert {"c2", "d2"} <= targets and "b2" not in targets


def cards_in_deck(state: games.State) -> set[int]:
    return {k for k, loc in enumerate(state_dict(state)["card_loc"]) if loc == bt.CARD_DECK}


def held_since_reshuffle(players: int, seed: int) -> tuple[games.State, set[int]] | None:
    """A random game (drawing 2 market cards whenever it tends) played to the first decision
    after the market-card discard pile was reshuffled into the deck, and the cards that were
    in hands at the reshuffle and still are."""
    rng = random.Random(seed)
    s = GAME.new_game(players=players, seed=seed)
    in_hands: set[int] | None = None
    while not s.is_terminal():
        if s.is_chance():
            d = state_dict(s)
            if in_hands is None and d["pend_cards"] and bt.CARD_DECK not in d["card_loc"]:
                in_hands = {k for k, loc in enumerate(d["card_loc"]) if loc >= bt.CARD_HAND}
            s.resolve_chance(rng)
            continue
        if in_hands is not None:
            return s, {k for k in in_hands if state_dict(s)["card_loc"][k] >= bt.CARD_HAND}
        legal = s.legal_actions()
        s.apply(bt.A["DRAW2"] if bt.A["DRAW2"] in legal else rng.choice(legal))
    return None


def test_cards_in_hands_at_a_reshuffle_stay_out_of_the_deck() -> None:
    """A10 reshuffle: the new deck is the public discard pile, so the cards in hands at that
    moment are known not to be in it until they leave the hands; determinize and from_view keep
    them in the other hands (as many per seat), and views carry them."""
    found = 0
    for seed in range(12):
        played = held_since_reshuffle(4, seed)
        if played is None:
            continue
        s, held = played
        found += 1
        seat = s.current_player
        d = state_dict(s)
        counts = [sum(1 for k in held if d["card_loc"][k] == bt.CARD_HAND + p) for p in range(4)]
        assert held and held.isdisjoint(cards_in_deck(s))
        for world_seed in range(1, 7):
            world = s.clone()
            world.kernel_state.determinize(seat, world_seed)
            for w in (world, GAME.from_view(s.view(seat), seed=world_seed)):
                assert held.isdisjoint(cards_in_deck(w)), "a held card was dealt into the deck"
                wd = state_dict(w)
                assert [sum(1 for k in held if wd["card_loc"][k] == bt.CARD_HAND + p) for p in range(4)] == counts
                assert w.view(seat) == s.view(seat)
        view = s.view(seat)
        assert view["held_cards"] == sorted(held) and view["held_counts"] == counts
    assert found >= 2


def turn_ends(state: games.State, actions: Callable[[games.State], list[int]], limit: int = 4000) -> set[bytes] | None:
    """The positions where the turn of the seat to move ends (another seat or chance to act, or
    the end), over every sequence of `actions`; None past `limit` sequences."""
    seat = state.current_player
    ends: set[bytes] = set()
    stack = [state]
    visited = 0
    while stack:
        s = stack.pop()
        if s.current_player != seat:
            ends.add(s.encode())
            continue
        visited += 1
        if visited > limit:
            return None
        for a in actions(s):
            child = s.clone()
            child.apply(a)
            stack.append(child)
    return ends


def random_turn_starts(count: int, stages: set[int]) -> Iterator[games.State]:
    """Decisions at the given stages from random games of every seat count (drawing 2 cards
    whenever it tends, to reach the discard-down stage too)."""
    rng = random.Random(14)
    found = 0
    while found < count:
        players = rng.randint(1, 4)
        s = GAME.new_game(players=players, seed=rng.getrandbits(32))
        while not s.is_terminal() and found < count:
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            if state_dict(s)["stage"] in stages and rng.random() < 0.5:
                found += 1
                yield s.clone()
            legal = s.legal_actions()
            s.apply(bt.A["DRAW2"] if bt.A["DRAW2"] in legal and rng.random() < 0.7 else rng.choice(legal))


def test_search_subset_reaches_every_end_of_turn_the_legal_moves_reach() -> None:
    """search_actions prunes only equivalent orders: from random decisions late in a turn, the
    ends of the turn reachable through it are exactly those reachable through legal_actions."""
    compared = 0
    late = {
        bt.ST_PLANT,
        bt.ST_BONUS,
        bt.ST_TEND_DISCARD,
        bt.ST_TEND_KEEP,
        bt.ST_FULFIL_OPEN,
        bt.ST_FULFIL_PERSONAL,
        bt.ST_HELPER_DEST,
        bt.ST_SOLO_DISCARD,
        bt.ST_KEEP,
    }
    for s in random_turn_starts(60, late):
        assert set(s.search_actions()) <= set(s.legal_actions()) and s.search_actions()
        full = turn_ends(s, lambda x: x.legal_actions())
        if full is None:
            continue
        assert turn_ends(s, lambda x: x.search_actions()) == full
        compared += 1
    assert compared >= 40


def test_every_order_of_commuting_moves_is_accepted_and_reaches_one_position() -> None:
    """The moves of a turn that commute (T5's open and personal order, T4's cards discarded one
    at a time): every order the rules allow is accepted and reaches the same position."""
    fulfil = set(range(bt.A["FULFIL_OPEN"], bt.A["NO_FULFIL"]))
    discard = set(range(bt.A["DISCARD_CARD"], bt.A["NO_DISCARD"]))
    groups = 0
    starts = list(random_turn_starts(40, {bt.ST_FULFIL_OPEN, bt.ST_TEND_KEEP}))
    starts.append(
        build(
            players=2,
            stage="fulfil_open",
            boards=["blue", "red"],
            pawns=["c3", "a1"],
            lands=[land("Bu")],
            own_action=1,
            planted=1,
            done_mask=1,
            leftovers=["RYRRYB"],
            personal=[["RR", "YB"]],
            hands=[["O/0", "O/1"], ["O/2", "O/3"]],
        )
    )
    for s in starts:
        kind = fulfil if state_dict(s)["stage"] == bt.ST_FULFIL_OPEN else discard
        # every sequence of moves of that kind, by the seat to move, until the kind is done
        sequences: dict[frozenset[int], list[tuple[list[int], bytes]]] = {}
        stack: list[tuple[games.State, list[int]]] = [(s, [])]
        while stack:
            state, path = stack.pop()
            moves = [a for a in state.legal_actions() if a in kind] if state.current_player == s.current_player else []
            if not moves and path:
                sequences.setdefault(frozenset(path), []).append((path, state.encode()))
            for a in moves:
                child = state.clone()
                child.apply(a)
                stack.append((child, path + [a]))
        for members, reached in sequences.items():
            if len(members) < 2:
                continue
            groups += 1
            assert len({p[0] for p, _ in reached}) == len(members), "every move may come first"
            assert len({end for _, end in reached}) == 1
            assert len(reached) == len(list(itertools.permutations(members)))
    assert groups >= 5


# --- the text picture, for a person who knows the game -----------------------
def test_render_draws_the_cards_in_hand_with_their_highlight() -> None:
    s = build(
        players=2, stage="action", boards=["blue", "red"], pawns=["c3", "a1"], hands=[["L-b/2", "T-right/0"], ["O/2", "O/3"]]
    )
    text = s.render(0)
    picture = text.split("\n")
    at = next(i for i, line in enumerate(picture) if line.split() == ["T-right/0", "L-b/2"])
    assert [line.split() for line in picture[at + 1 : at + 4]] == [
        ["@", ".", "#", "#", "@"],
        ["#", "#", "#", ".", "."],
        ["#", "."],
    ]
    assert "L-b/2" not in s.render(1) and "L-b/2" not in s.render()  # only the own hand


def test_render_draws_the_market_from_the_viewing_seats_side() -> None:
    """A15: seat 2 sits at the top edge and reads cards from there: its picture is turned
    half way round (row 5 first, column e at the left), seat 1's a quarter (column e first)."""
    market = full_market("R")
    market[cell("a1")], market[cell("e1")], market[cell("a5")] = Y, G, B
    s = build(
        players=4,
        stage="action",
        boards=["blue", "red", "green", "purple"],
        pawns=["c3", "a1", "e5", "b2"],
        market=market,
        hands=[ALL_O[:2], ALL_O[2:], ["I-h/0", "I-h/1"], ["I-v/0", "I-v/1"]],
    )

    def grid(seat: int) -> list[list[str]]:
        lines = s.render(seat).split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith("Market seen from"))
        return [line.split() for line in lines[at + 1 : at + 7]]

    assert grid(0)[0] == ["a", "b", "c", "d", "e"] and grid(0)[1][:2] == ["1", "Y1"] and grid(0)[5][1] == "B"
    assert (
        grid(2)[0] == ["e", "d", "c", "b", "a"] and grid(2)[1][:2] == ["5", "R2"] and grid(2)[5][1:] == ["G", "R", "R", "R", "Y1"]
    )
    assert (
        grid(1)[0] == ["1", "2", "3", "4", "5"]
        and grid(1)[1][:2] == ["e", "G"]
        and grid(1)[5][1:] == ["Y1", "R", "R", "R", "B"]
        and grid(1)[4][2] == "R3"
    )
    assert grid(3)[0] == ["5", "4", "3", "2", "1"] and grid(3)[1][:2] == ["a", "B"]
    assert "seen from seat 2's side (top edge" in s.render(2)


def test_render_shows_collected_tiles_and_the_pending_choice() -> None:
    s = build(
        players=2,
        stage="plant",
        boards=["blue", "red"],
        turns_done=2,
        pawns=["c3", "a1"],
        lands=[matching_land("blue", 1), matching_land("red", 1)],
        part=bt.PART_PURCHASE,
        own_action=1,
        collected="GYY",
        leftovers=["B", "RR"],
        hands=[["O/0"], ["O/1", "O/2"]],
    )
    text = s.render(1)
    assert "Collected this purchase (seat 0): 1 yellow, 2 green" not in text
    assert "Collected this purchase (seat 0): 2 yellow, 1 green" in text
    assert "Now: seat 0: plant one collected tile on space 2 (sign red)" in text
    s.apply_text("plant green face-down")  # the red sign's bonus: swap with a player
    s.apply_text("bonus: swap with seat 1")
    s.apply_text("bonus: give my blue to seat 1")
    text = s.render(0)
    assert "Collected this purchase (seat 0): 2 yellow" in text  # still waiting (P6/A16)
    assert "Now: seat 0 resolves the bonus: swap a leftover with another player's; swapping with seat 1; giving blue" in text
