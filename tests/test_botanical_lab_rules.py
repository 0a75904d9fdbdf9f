"""Botanical Lab rule scenarios LT1-LT16 of botanical_lab.decisions.md (the rulebook's
3+1+4+2 observation example and seed-set example included), every rule option (FLAG), the
component data validation and the fairness of determinization on hands."""

from __future__ import annotations

import itertools
import random
import tomllib
from functools import lru_cache
from pathlib import Path

import pytest

from hortus import games
from hortus.games.botanical_lab import components as components_module
from hortus.games.botanical_lab import game as lab
from hortus.games.botanical_lab.components import ComponentDataError

from botanical_lab_positions import (
    CIRCLE, DIAMOND, GAME, HEXAGON, SQUARE, TRIANGLE, core, end_turn, kind, notations, position, space,
)

RED, BLUE = 0, 1
R1, R2, R3 = 0, 1, 2


def vp(state: games.State, seat: int) -> int:
    return int(core(state)["vp"][seat])


def plants_in_stock(state: games.State) -> list[int]:
    return list(core(state)["plant_stock"])


# --- LT1-LT3 observation -----------------------------------------------------------------------

def test_lt1_rulebook_observation_example_is_15_points() -> None:
    """Red removes 4 adjacent flowers worth 3, 1, 4 and 2: 10 + bonus(4) = 5, so +15 VP."""
    s = position(stage="observation", rooms={RED: R2}, vp={RED: 7}, board={
        "R2(0,1)": ("flower", RED, TRIANGLE), "R2(1,1)": ("flower", RED, SQUARE),
        "R2(1,0)": ("flower", RED, CIRCLE), "R2(2,0)": ("flower", RED, HEXAGON)})
    stock_before = plants_in_stock(s)
    for name in ("R2(0,1)", "R2(1,0)", "R2(1,1)", "R2(2,0)"):
        s.apply_text(f"observe {name}")
    assert vp(s, RED) == 7  # scored when the observation ends
    s.apply_text("end observation")
    assert vp(s, RED) == 7 + 15
    d = core(s)
    assert plants_in_stock(s) == [n + 1 if b < 4 else n for b, n in enumerate(stock_before)]
    assert d["markers_free"][RED] == 10
    assert all(d["space_status"][space(n)] == lab.SPACE_EMPTY for n in ("R2(0,1)", "R2(1,1)", "R2(1,0)", "R2(2,0)"))


def test_lt1_observation_is_offered_in_ascending_order_and_only_own_flowers() -> None:
    s = position(stage="observation", rooms={RED: R2}, board={
        "R2(0,1)": ("flower", RED, TRIANGLE), "R2(1,1)": ("flower", BLUE, SQUARE),
        "R2(2,0)": ("flower", RED, HEXAGON), "R1(0,0)": ("flower", RED, CIRCLE)})
    assert notations(s) == ["end observation", "observe R2(0,1)", "observe R2(2,0)"]
    s.apply_text("observe R2(2,0)")
    assert notations(s) == ["end observation"]  # removals go in ascending order (same result)


def test_lt2_adjacency_bonus_per_connected_group() -> None:
    s = position(stage="observation", rooms={RED: R1}, board={
        "R1(0,0)": ("flower", RED, CIRCLE), "R1(0,1)": ("flower", RED, CIRCLE),
        "R1(2,1)": ("flower", RED, CIRCLE), "R1(2,2)": ("flower", RED, CIRCLE)})
    for name in ("R1(0,0)", "R1(0,1)", "R1(2,1)", "R1(2,2)"):
        s.apply_text(f"observe {name}")
    s.apply_text("end observation")
    assert vp(s, RED) == 4 + 1 + 1


def test_lt3_a_single_flower_has_no_bonus() -> None:
    s = position(stage="observation", rooms={RED: R1}, board={"R1(1,1)": ("flower", RED, SQUARE)})
    s.apply_text("observe R1(1,1)")
    s.apply_text("end observation")
    assert vp(s, RED) == 3


def test_lt3_kept_flowers_do_not_count_for_the_bonus() -> None:
    s = position(stage="observation", rooms={RED: R1}, board={
        "R1(0,0)": ("flower", RED, CIRCLE), "R1(0,1)": ("flower", RED, CIRCLE)})
    s.apply_text("observe R1(0,1)")
    s.apply_text("end observation")
    assert vp(s, RED) == 1
    assert core(s)["space_status"][space("R1(0,0)")] == lab.SPACE_FLOWER


@pytest.mark.parametrize("size, bonus", [(5, 10), (6, 10), (9, 10)])
def test_lt3_five_or_more_flowers_give_ten(size: int, bonus: int) -> None:
    names = [f"R1({i // 3},{i % 3})" for i in range(9)]
    breeds = {name: (CIRCLE if CIRCLE in lab.SPACE_BREEDS[space(name)] else lab.SPACE_BREEDS[space(name)][0]) for name in names}
    # A snake through the grid keeps every prefix connected.
    snake = ["R1(0,0)", "R1(0,1)", "R1(0,2)", "R1(1,2)", "R1(1,1)", "R1(1,0)", "R1(2,0)", "R1(2,1)", "R1(2,2)"][:size]
    s = position(stage="observation", rooms={RED: R1}, board={n: ("flower", RED, breeds[n]) for n in snake})
    printed = sum(lab.COMPONENTS.breeds[breeds[n] - 1].flower_vp for n in snake)
    for name in sorted(snake, key=space):
        s.apply_text(f"observe {name}")
    s.apply_text("end observation")
    assert vp(s, RED) == printed + bonus


# --- LT4-LT5 development ----------------------------------------------------------------------

def develop(hand: dict[str, int], **kwargs: object) -> games.State:
    return position(stage="development", hands={RED: hand}, **kwargs)  # type: ignore[arg-type]


def acquisitions(state: games.State) -> int:
    """Greedy count of how many cards can be acquired in a row (cheapest seed first)."""
    n = 0
    while state.current_player == RED and core(state)["stage"] == lab.STAGE_DEVELOP:
        buys = [t for t in notations(state) if t.startswith("acquire ")]
        if not buys:
            break
        state.apply_text(buys[0])
        n += 1
    return n


@pytest.mark.parametrize("plays, allowed", [
    (["exp2", "exp3"], 2),                          # 5: the rulebook example
    (["exp1", "exp3"], 1),                          # 4
    (["exp1", "exp1", "exp1", "exp2", "exp3"], 3),  # 8
    ([], 0),
])
def test_lt4_experiment_total_sets_the_number_of_acquisitions(plays: list[str], allowed: int) -> None:
    s = develop({"exp1": 3, "exp2": 1, "exp3": 1}, extra={RED: {"exp3": 1}})
    for card in plays:  # experiments are played in non-decreasing kind order (LD6)
        s.apply_text(f"play {card}")
    if allowed == 0:
        assert not [t for t in notations(s) if t.startswith("acquire ")]
    else:
        assert acquisitions(s) == allowed


def test_lt5_threshold_cost_at_most_the_total() -> None:
    s = develop({"exp1": 4, "exp2": 1})
    for _ in range(4):
        s.apply_text("play exp1")
    texts = notations(s)
    assert "acquire seed4" in texts and "acquire seed5" not in texts
    assert "acquire exp3" not in texts and "acquire skill_general" in texts


def test_lt5_budget_costs_add_up() -> None:
    s = develop({"exp1": 3, "exp2": 1}, options={"acquire_mode": "budget"})
    for card in ("exp1", "exp1", "exp1", "exp2"):
        s.apply_text(f"play {card}")
    assert "acquire seed5" in notations(s)
    after_seed1 = s.clone()
    after_seed1.apply_text("acquire seed1")
    assert "acquire seed4" in notations(after_seed1)     # 1 + 4 <= 5
    after_seed2 = s.clone()
    after_seed2.apply_text("acquire seed2")
    assert "acquire seed4" not in notations(after_seed2)  # 2 + 4 > 5
    assert "acquire seed3" in notations(after_seed2)


def test_lt5_acquired_cards_go_to_the_discard_pile() -> None:
    s = develop({"exp1": 4, "exp2": 1})
    s.apply_text("play exp2")
    s.apply_text("acquire fert13")
    d = core(s)
    assert d["discard"][RED][kind("fert13")] == 1 and d["hand"][RED][kind("fert13")] == 0
    assert d["stock"][kind("fert13")] == lab.STOCK[kind("fert13")] - 1


# --- LT6 fertilizer ----------------------------------------------------------------------------

def test_lt6_fertilizer_grows_every_matching_plant_of_the_room() -> None:
    s = position(rooms={RED: R1}, hands={RED: {"fert12": 1, "exp1": 4}}, board={
        "R1(0,0)": ("leaf", BLUE, CIRCLE), "R1(0,2)": ("leaf", RED, TRIANGLE),
        "R1(0,1)": ("prepared", RED, 0), "R1(2,2)": ("flower", BLUE, CIRCLE, 2)})
    stock = plants_in_stock(s)
    s.apply_text("fertilize with fert12")
    assert s.current_player == RED
    assert sorted(notations(s)) == ["sprout R1(0,1) as circle", "sprout R1(0,1) as triangle"]
    s.apply_text("sprout R1(0,1) as triangle")
    d = core(s)
    assert vp(s, RED) == 3
    assert d["space_status"][space("R1(0,0)")] == lab.SPACE_FLOWER and d["space_step"][space("R1(0,0)")] == 1
    assert d["space_owner"][space("R1(0,0)")] == BLUE
    assert d["space_status"][space("R1(0,2)")] == lab.SPACE_FLOWER
    assert d["space_status"][space("R1(0,1)")] == lab.SPACE_LEAF and d["space_breed"][space("R1(0,1)")] == TRIANGLE
    assert d["space_step"][space("R1(2,2)")] == 2  # flowers cannot grow further
    assert plants_in_stock(s) == [stock[0], stock[1] - 1, *stock[2:]]


def test_lt6_a_fertilizer_that_grows_nothing_is_not_offered() -> None:
    s = position(rooms={RED: R1}, hands={RED: {"fert12": 1, "exp1": 4}}, board={"R1(2,2)": ("flower", BLUE, CIRCLE)})
    assert "fertilize with fert12" not in notations(s)


def test_lt6_seed_then_fertilizer_twice_in_one_turn() -> None:
    """LP4: prepare, sprout and bloom in one turn with one seed and two fertilizers."""
    s = position(rooms={RED: R1}, extra={RED: {"fert12": 1}}, hands={RED: {"seed1": 1, "fert12": 2, "exp1": 2}})
    s.apply_text("prepare R1(0,0) with seed1")
    s.apply_text("fertilize with fert12")  # a single candidate breed: sprouts at once
    assert core(s)["space_status"][space("R1(0,0)")] == lab.SPACE_LEAF
    s.apply_text("fertilize with fert12")
    assert core(s)["space_status"][space("R1(0,0)")] == lab.SPACE_FLOWER
    assert vp(s, RED) == 2


# --- LT7-LT8 plant death -------------------------------------------------------------------------

def test_lt7_a_flower_on_the_bottom_step_dies_in_its_owners_phase_4() -> None:
    s = position(rooms={RED: R1}, hands={RED: {"exp1": 4, "seed1": 1}}, vp={RED: 5},
                 board={"R2(1,1)": ("flower", RED, SQUARE, 3)})
    stock = plants_in_stock(s)
    s.apply_text("end cultivation")
    d = core(s)
    assert d["space_status"][space("R2(1,1)")] == lab.SPACE_EMPTY
    assert plants_in_stock(s)[SQUARE - 1] == stock[SQUARE - 1] + 1
    assert d["markers_free"][RED] == 10 and vp(s, RED) == 5


def test_lt7_a_flower_above_the_bottom_moves_down_one_step() -> None:
    s = position(rooms={RED: R1}, hands={RED: {"exp1": 4, "seed1": 1}},
                 board={"R2(1,1)": ("flower", RED, SQUARE, 2), "R3(0,0)": ("leaf", RED, SQUARE),
                        "R3(2,2)": ("prepared", RED, 0)})
    s.apply_text("end cultivation")
    d = core(s)
    assert d["space_step"][space("R2(1,1)")] == 3
    assert d["space_status"][space("R3(0,0)")] == lab.SPACE_LEAF      # LX2: leaves never die
    assert d["space_status"][space("R3(2,2)")] == lab.SPACE_PREPARED  # nor prepared spaces


def test_lt8_only_the_owners_phase_4_ages_a_flower() -> None:
    s = position(turn=BLUE, rooms={BLUE: R1}, hands={BLUE: {"exp1": 4, "seed1": 1}},
                 board={"R1(2,2)": ("flower", RED, CIRCLE, 1)})
    end_turn(s, BLUE)
    assert s.current_player == RED
    assert core(s)["space_step"][space("R1(2,2)")] == 1
    end_turn(s, RED)
    assert core(s)["space_step"][space("R1(2,2)")] == 2


# --- LT9-LT10 cultivation ---------------------------------------------------------------------

@pytest.mark.parametrize("status", ["prepared", "leaf", "flower"])
def test_lt9_no_seed_on_a_space_with_a_marker(status: str) -> None:
    breed = 0 if status == "prepared" else CIRCLE
    for owner in (RED, BLUE):
        s = position(rooms={RED: R1}, hands={RED: {"seed1": 1, "exp1": 4}}, board={"R1(0,1)": (status, owner, breed)})
        texts = notations(s)
        assert "prepare R1(0,1) with seed1" not in texts
        assert "prepare R1(0,0) with seed1" in texts


def test_lt9_seeds_need_a_matching_space_and_a_marker() -> None:
    s = position(rooms={RED: R1}, hands={RED: {"seed1": 1, "exp1": 4}})
    spaces = sorted(t.split()[1] for t in notations(s) if t.startswith("prepare "))
    assert spaces == ["R1(0,0)", "R1(0,1)", "R1(1,0)", "R1(1,2)", "R1(2,1)", "R1(2,2)"]
    # A20: with all 10 markers on the boards no seed can be used.
    board = {f"R3({i // 3},{i % 3})": ("prepared", RED, 0) for i in range(9)}
    board["R2(0,0)"] = ("prepared", RED, 0)
    s = position(rooms={RED: R1}, hands={RED: {"seed1": 1, "exp1": 4}}, board=board)
    assert not [t for t in notations(s) if t.startswith("prepare ")]


def test_lt10_rulebook_movement_example() -> None:
    s = position(rooms={RED: R1}, extra={RED: {"seed3": 1, "fert34": 1}},
                 hands={RED: {"exp1": 2, "seed3": 1, "fert34": 1}},
                 board={"R2(1,1)": ("leaf", BLUE, SQUARE), "R2(0,2)": ("prepared", RED, 0),
                        "R2(1,2)": ("leaf", RED, HEXAGON)})
    s.apply_text("move to R3 with exp1")
    s.apply_text("prepare R3(0,0) with seed3")
    s.apply_text("move to R2 with exp1")
    s.apply_text("fertilize with fert34")
    d = core(s)
    assert d["space_status"][space("R3(0,0)")] == lab.SPACE_PREPARED  # used in R2, not R3
    assert d["space_status"][space("R2(1,1)")] == lab.SPACE_FLOWER
    assert d["space_status"][space("R2(1,2)")] == lab.SPACE_FLOWER
    assert d["space_status"][space("R2(0,2)")] == lab.SPACE_LEAF and d["space_breed"][space("R2(0,2)")] == HEXAGON
    assert vp(s, RED) == 3
    assert d["room"][RED] == R2
    # Every card went to the play area; moving had no effect of its own.
    assert d["play"][RED][kind("exp1")] == 2 and sum(d["hand"][RED]) == 0


def test_lt10_fuel_is_any_card_but_experiment_cards_go_first() -> None:
    s = position(rooms={RED: R1}, extra={RED: {"seed3": 1}}, hands={RED: {"exp1": 1, "seed3": 1, "fert12": 1}})
    assert [t for t in notations(s) if t.startswith("move")] == ["move to R2 with exp1", "move to R3 with exp1"]
    s = position(rooms={RED: R1}, extra={RED: {"seed3": 1}}, hands={RED: {"seed3": 1, "fert12": 1}})
    assert sorted(t for t in notations(s) if t.startswith("move")) == [
        "move to R2 with fert12", "move to R2 with seed3", "move to R3 with fert12", "move to R3 with seed3"]


# --- LT11-LT12 seed sets ----------------------------------------------------------------------

def test_lt11_rulebook_seed_set_example_is_4() -> None:
    s = position(extra={RED: {"seed1": 1, "seed2": 1, "seed3": 2}}, vp={RED: 10})
    assert s.scores()[RED] == 10 + 4


def test_lt12_layers_beat_two_small_sets() -> None:
    s = position(extra={RED: {"seed1": 2, "seed2": 2, "seed3": 1, "seed4": 1}}, vp={RED: 10})
    assert s.scores()[RED] == 10 + 5


@lru_cache(maxsize=None)
def best_partition(seeds: tuple[int, ...]) -> int:
    """Brute force: the best split of the seeds into sets of distinct breeds."""
    best = 0
    present = [b for b in range(5) if seeds[b]]
    for size in range(1, len(present) + 1):
        for chosen in itertools.combinations(present, size):
            rest = tuple(n - 1 if b in chosen else n for b, n in enumerate(seeds))
            best = max(best, lab.COMPONENTS.seed_set_bonus[size] + best_partition(rest))
    return best


def test_lt12_closed_form_is_the_best_partition() -> None:
    for seeds in itertools.product(range(5), repeat=5):
        assert lab.COMPONENTS.seed_set_points(list(seeds)) == best_partition(seeds), seeds


# --- LT13-LT14 end of the game ----------------------------------------------------------------

def test_lt13_the_final_round_is_played_to_its_end() -> None:
    s = position(players=4, turn=1, start=0, vp={1: 36}, hands={1: {"exp1": 4, "seed1": 1}})
    end_turn(s, 1)
    assert core(s)["final_round"] == 1
    assert s.current_player == 2
    end_turn(s, 2)
    assert s.current_player == 3
    end_turn(s, 3)
    assert s.is_terminal()
    assert s.returns() == [0.0, 1.0, 0.0, 0.0]


def test_lt13_the_last_seat_of_the_round_ends_the_game_at_once() -> None:
    s = position(players=4, turn=3, start=0, vp={3: 35}, hands={3: {"exp1": 4, "seed1": 1}})
    end_turn(s, 3)
    assert s.is_terminal()
    s = position(players=4, turn=3, start=0, vp={3: 34}, hands={3: {"exp1": 4, "seed1": 1}})
    end_turn(s, 3)
    assert not s.is_terminal() and s.current_player == 0


def test_lt13_the_round_follows_the_start_player() -> None:
    s = position(players=3, turn=2, start=1, vp={2: 40}, hands={2: {"exp1": 4, "seed1": 1}})
    end_turn(s, 2)
    assert s.current_player == 0  # seat 0 closes the round that seat 1 started
    end_turn(s, 0)
    assert s.is_terminal()


def over(extra_a: dict[str, int], extra_b: dict[str, int]) -> games.State:
    return position(stage="over", turn=1, start=0, final_round=1, vp={0: 40, 1: 40},
                    extra={0: extra_a, 1: extra_b})


def test_lt14_tie_broken_by_research_documents() -> None:
    a = {"fert13": 4, "fert24": 4, "fert34": 3}                       # 8 + 11 = 19 cards
    b = {"fert34": 1, "fert5": 4, "exp2": 6, "exp3": 2}                # 8 + 13 = 21 cards
    s = over(a, b)
    assert s.is_terminal() and s.scores() == [40.0, 40.0]
    assert s.returns() == [0.0, 1.0]
    s = over({"fert13": 4, "fert24": 4, "fert34": 3}, {"fert34": 1, "fert5": 4, "exp2": 6})
    assert s.returns() == [0.5, 0.5]


# --- LT15 documentation ---------------------------------------------------------------------------

def test_lt15_draw_reshuffle_draw() -> None:
    s = position(extra={RED: {"seed3": 1, "fert13": 1, "exp2": 1}}, rooms={RED: R1},
                 hands={RED: {"exp1": 3, "seed3": 1}}, play={"seed1": 1, "fert12": 1},
                 draw_piles={RED: {"exp2": 2}}, discards={RED: {"exp1": 1, "seed2": 1, "fert13": 1}})
    d = core(s)
    assert sum(d["draw"][RED]) == 2 and sum(d["discard"][RED]) + sum(d["hand"][RED]) + sum(d["play"][RED]) == 9
    s.apply_text("end cultivation")
    assert s.is_chance() and [s.action_to_string(a) for a, _ in s.chance_outcomes()] == ["draw exp2"]
    s.apply_text("draw exp2")
    s.apply_text("draw exp2")
    d = core(s)
    assert s.is_chance() and sum(d["draw"][RED]) == 9 and sum(d["discard"][RED]) == 0  # reshuffled
    weights = {s.action_to_string(a): p for a, p in s.chance_outcomes()}
    assert weights["draw exp1"] == pytest.approx(4 / 9)
    for _ in range(3):
        s.apply(s.chance_outcomes()[0][0])
    d = core(s)
    assert sum(d["hand"][RED]) == 5 and sum(d["draw"][RED]) == 6
    assert s.current_player == BLUE


def test_lt15_a_skill_draw_reshuffles_the_discard_pile() -> None:
    s = position(extra={RED: {"skill_general": 1}}, hands={RED: {"skill_general": 1, "exp1": 4}},
                 draw_piles={RED: {"seed1": 1}})
    assert sum(core(s)["discard"][RED]) == 3  # seed2, fert12, exp2
    s.apply_text("play skill_general")
    s.apply_text("draw seed1")
    # The draw pile is empty: the discard pile (3 cards) becomes the draw pile for the 2nd card.
    assert s.is_chance() and sum(core(s)["draw"][RED]) == 3 and sum(core(s)["discard"][RED]) == 0
    s.apply(s.chance_outcomes()[0][0])
    assert s.current_player == RED and sum(core(s)["hand"][RED]) == 6


def test_lt15_both_piles_empty_stops_short() -> None:
    """LY2 [RES-RULE]: with both piles empty the draw stops short."""
    hand = {"skill_general": 1, "exp1": 4, "seed2": 1, "fert12": 1, "exp2": 1}
    s = position(extra={RED: {"skill_general": 1}}, hands={RED: hand}, draw_piles={RED: {"seed1": 1}})
    assert sum(core(s)["discard"][RED]) == 0
    s.apply_text("play skill_general")
    s.apply_text("draw seed1")
    assert s.current_player == RED and core(s)["stage"] == lab.STAGE_CULTIVATE
    assert sum(core(s)["hand"][RED]) == 8


# --- LT16 empty plant stock ------------------------------------------------------------------------

def lt16(hand: dict[str, int]) -> games.State:
    return position(rooms={RED: R3}, extra={RED: {"fert5": 1, "fert34": 1}}, hands={RED: hand}, board={
        "R3(0,1)": ("prepared", RED, 0), "R3(1,1)": ("prepared", BLUE, 0),
        "R3(1,0)": ("flower", BLUE, DIAMOND), "R3(1,2)": ("flower", BLUE, DIAMOND), "R3(2,1)": ("flower", RED, DIAMOND)})


def test_lt16_no_plant_of_the_breed_no_growth() -> None:
    s = lt16({"fert5": 1, "exp1": 4})
    assert plants_in_stock(s)[DIAMOND - 1] == 0
    assert "fertilize with fert5" not in notations(s)  # it would grow nothing (LP5)
    s = lt16({"fert34": 1, "exp1": 4})
    s.apply_text("fertilize with fert34")
    d = core(s)
    assert d["space_status"][space("R3(0,1)")] == lab.SPACE_LEAF and d["space_breed"][space("R3(0,1)")] == HEXAGON
    assert d["space_status"][space("R3(1,1)")] == lab.SPACE_PREPARED
    assert vp(s, RED) == 1


def test_lt16_short_stock_the_fertilizer_player_chooses_who_grows() -> None:
    """A8 extended: one diamond left, two prepared diamond spaces: one grows, the player picks."""
    s = position(rooms={RED: R3}, extra={RED: {"fert5": 1}}, hands={RED: {"fert5": 1, "exp1": 4}}, board={
        "R3(1,1)": ("prepared", BLUE, 0), "R3(2,1)": ("prepared", RED, 0),
        "R3(1,0)": ("flower", BLUE, DIAMOND), "R3(1,2)": ("flower", BLUE, DIAMOND)})
    s.apply_text("fertilize with fert5")
    assert notations(s) == ["sprout R3(1,1) as diamond", "leave R3(1,1) prepared"]
    s.apply_text("leave R3(1,1) prepared")
    d = core(s)
    assert d["space_status"][space("R3(2,1)")] == lab.SPACE_LEAF  # the only option left: automatic
    assert d["space_status"][space("R3(1,1)")] == lab.SPACE_PREPARED
    assert vp(s, RED) == 1 and s.current_player == RED


SQUARES_ELSEWHERE = ["R1(1,1)", "R3(0,0)", "R3(2,1)", "R3(2,2)", "R2(0,1)", "R2(1,0)"]
HEXAGONS_ELSEWHERE = ["R3(0,1)", "R3(0,2)", "R3(1,0)", "R3(1,2)", "R3(2,0)", "R2(0,2)"]


def scarce_board() -> dict[str, tuple[str, int, int]]:
    """Flowers on every other square and hexagon space: one plant of each is left in the stock."""
    board: dict[str, tuple[str, int, int]] = {}
    for i, name in enumerate(SQUARES_ELSEWHERE):
        board[name] = ("flower", i % 2, SQUARE)
    for i, name in enumerate(HEXAGONS_ELSEWHERE):
        board[name] = ("flower", i % 2, HEXAGON)
    return board


def test_lt16_short_stock_never_wastes_a_plant() -> None:
    """R2(1,2) accepts ■ and ⬢ and comes first; R2(2,0) accepts only ⬢. With one of each left,
    R2(1,2) must take the square: the choices keep the number of plants grown maximal."""
    board = {"R2(1,2)": ("prepared", RED, 0), "R2(2,0)": ("prepared", BLUE, 0)}
    board.update(scarce_board())
    s = position(rooms={RED: R2}, extra={RED: {"fert34": 1}}, hands={RED: {"fert34": 1, "exp1": 4}}, board=board)
    assert plants_in_stock(s)[SQUARE - 1] == 1 and plants_in_stock(s)[HEXAGON - 1] == 1
    s.apply_text("fertilize with fert34")
    d = core(s)
    assert d["space_breed"][space("R2(1,2)")] == SQUARE and d["space_breed"][space("R2(2,0)")] == HEXAGON
    assert vp(s, RED) == 2


def test_lt16_multi_breed_space_chooses_when_the_stock_allows() -> None:
    s = position(rooms={RED: R2}, extra={RED: {"fert34": 1}}, hands={RED: {"fert34": 1, "exp1": 4}},
                 board={"R2(1,2)": ("prepared", RED, 0), "R2(2,0)": ("prepared", BLUE, 0)})
    s.apply_text("fertilize with fert34")
    assert notations(s) == ["sprout R2(1,2) as square", "sprout R2(1,2) as hexagon"]
    s.apply_text("sprout R2(1,2) as hexagon")
    d = core(s)
    assert d["space_breed"][space("R2(1,2)")] == HEXAGON and d["space_breed"][space("R2(2,0)")] == HEXAGON
    assert vp(s, RED) == 2


# --- skills (LT2, A4) -------------------------------------------------------------------------

def test_typed_skill_reveals_three_and_keeps_its_type() -> None:
    s = position(stage="development", extra={RED: {"skill_seed": 1, "seed3": 1}},
                 hands={RED: {"skill_seed": 1, "exp1": 4}}, draw_piles={RED: {"seed3": 1, "exp2": 1, "seed1": 1, "fert12": 1}})
    s.apply_text("play skill_seed")
    assert s.is_chance()
    for card in ("seed3", "exp2", "seed1"):
        s.apply_text(f"reveal {card}")
    d = core(s)
    assert d["hand"][RED][kind("seed3")] == 1 and d["hand"][RED][kind("seed1")] == 1
    assert d["discard"][RED][kind("exp2")] == 1 and sum(d["draw"][RED]) == 1
    assert s.current_player == RED and d["stage"] == lab.STAGE_DEVELOP


def test_general_skill_draws_two_in_cultivation() -> None:
    s = position(extra={RED: {"skill_general": 1}}, hands={RED: {"skill_general": 1, "exp1": 4}})
    s.apply_text("play skill_general")
    s.apply(s.chance_outcomes()[0][0])
    s.apply(s.chance_outcomes()[0][0])
    d = core(s)
    assert sum(d["hand"][RED]) == 6 and d["stage"] == lab.STAGE_CULTIVATE


# --- rule options (FLAGs) ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["threshold", "budget"])
def test_flag_acquire_mode(mode: str) -> None:
    s = develop({"exp1": 3, "exp2": 1}, options={"acquire_mode": mode})
    for card in ("exp1", "exp1", "exp1", "exp2"):
        s.apply_text(f"play {card}")
    s.apply_text("acquire seed4")  # cost 4 of 5
    # Threshold: each card needs cost <= 5, the total is not spent. Budget: 1 experiment left.
    assert ("acquire seed4" in notations(s)) is (mode == "threshold")
    assert ("acquire skill_general" in notations(s)) is (mode == "threshold")
    assert GAME.new_game(seed=1, options={"acquire_mode": mode}).view(0)["options"]["acquire_mode"] == mode


@pytest.mark.parametrize("track", ["false", "true"])
def test_flag_track_seed_breed(track: str) -> None:
    s = position(rooms={RED: R1}, hands={RED: {"seed2": 1, "fert12": 1, "exp1": 3}}, options={"track_seed_breed": track})
    s.apply_text("prepare R1(0,1) with seed2")
    assert core(s)["space_breed"][space("R1(0,1)")] == (TRIANGLE if track == "true" else 0)
    s.apply_text("fertilize with fert12")
    if track == "true":
        assert core(s)["space_breed"][space("R1(0,1)")] == TRIANGLE   # recorded: no choice
        assert s.current_player == RED and core(s)["stage"] == lab.STAGE_CULTIVATE
    else:
        assert notations(s) == ["sprout R1(0,1) as circle", "sprout R1(0,1) as triangle"]
    assert GAME.new_game(seed=1, options={"track_seed_breed": track}).view(0)["options"]["track_seed_breed"] == track


@pytest.mark.parametrize("scope, bonus", [("all_owned", 2), ("piles_only", 0)])
def test_flag_seed_set_scope(scope: str, bonus: int) -> None:
    # Seat 0 holds seed3 in hand and seed1, seed2 in its piles: a 3-breed set with all_owned.
    s = position(stage="over", turn=1, start=0, final_round=1, vp={0: 40, 1: 40},
                 extra={0: {"seed3": 1}}, hands={0: {"seed3": 1, "exp1": 4}},
                 options={"seed_set_scope": scope})
    assert s.scores() == [40.0 + bonus, 40.0]
    assert GAME.new_game(seed=1, options={"seed_set_scope": scope}).view(0)["options"]["seed_set_scope"] == scope


@pytest.mark.parametrize("scope", ["all_owned", "piles_only"])
def test_flag_seed_set_scope_tie_break_counts(scope: str) -> None:
    """Equal points; seat 1 owns one card more. At the end every hand holds 5 cards and play
    areas are empty, so both scopes rank the research documents alike."""
    s = position(stage="over", turn=1, start=0, final_round=1, vp={0: 40, 1: 40},
                 extra={1: {"fert13": 1}}, hands={0: {"exp1": 4, "exp2": 1}, 1: {"exp1": 4, "fert13": 1}},
                 options={"seed_set_scope": scope})
    assert s.returns() == [0.0, 1.0]


# --- turn flow, notation, errors -------------------------------------------------------------

def test_setup_deals_five_cards_each_and_starts_in_room_1() -> None:
    s = GAME.new_game(players=3, seed=4)
    d = core(s)
    assert s.current_player == d["start_player"] == d["turn_player"]
    for p in range(3):
        assert sum(d["hand"][p]) == 5 and sum(d["draw"][p]) == 3 and d["room"][p] == 0
        assert d["markers_free"][p] == 10 and d["vp"][p] == 0


def test_start_player_is_a_chance_event() -> None:
    s = GAME.new_game(players=4)
    assert s.is_chance()
    outcomes = s.chance_outcomes()
    assert [s.action_to_string(a) for a, _ in outcomes] == [f"start player seat {q}" for q in range(4)]
    assert all(p == pytest.approx(0.25) for _, p in outcomes)


def test_illegal_actions_are_refused() -> None:
    s = GAME.new_game(seed=2)
    with pytest.raises(games.IllegalActionError):
        s.apply(5000)
    with pytest.raises(games.IllegalActionError):
        s.parse_action("plant a tree")
    legal = s.legal_actions()
    with pytest.raises(games.IllegalActionError):
        s.apply(next(a for a in range(lab.BASES["num_actions"]) if a not in legal))


def test_random_games_end_with_a_winner_above_the_trigger() -> None:
    rng = random.Random(3)
    for seed in range(6):
        s = GAME.new_game(players=2 + seed % 3, seed=seed)
        while not s.is_terminal():
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            s.apply(rng.choice(s.legal_actions()))
        assert max(core(s)["vp"]) >= lab.COMPONENTS.end_trigger_vp
        assert s.render()


# --- fairness of determinization on hands -----------------------------------------------------

def test_determinize_resamples_only_hidden_hands() -> None:
    s = GAME.new_game(players=3, seed=8)
    seat = s.current_player
    other = (seat + 1) % 3
    hands = set()
    for world_seed in range(30):
        w = s.clone()
        w.kernel_state.determinize(seat, world_seed)
        assert w.view(seat) == s.view(seat)
        d = core(w)
        assert d["hand"][seat] == core(s)["hand"][seat]
        hands.add(tuple(d["hand"][other]))
    assert len(hands) > 1  # the opponent's hand really is resampled


def test_determinize_never_reads_the_hidden_split() -> None:
    """Two positions that differ only in which of a seat's unseen cards are in its hand give the
    same worlds for the same seed."""
    a = position(turn=RED, hands={RED: {"exp1": 4, "seed1": 1}, BLUE: {"exp1": 4, "exp2": 1}})
    b = position(turn=RED, hands={RED: {"exp1": 4, "seed1": 1}, BLUE: {"seed1": 1, "seed2": 1, "fert12": 1, "exp1": 2}})
    assert a.view(RED) == b.view(RED) and a.encode() != b.encode()
    for world_seed in range(10):
        wa, wb = a.clone(), b.clone()
        wa.kernel_state.determinize(RED, world_seed)
        wb.kernel_state.determinize(RED, world_seed)
        assert wa.encode() == wb.encode()


def test_views_hide_other_hands() -> None:
    s = GAME.new_game(players=2, seed=3)
    seat = s.current_player
    view = s.view(seat)
    other = view["seats"][1 - seat]
    assert "hand" not in other and "draw" not in other and other["hand_count"] == 5
    assert sum(other["hand_and_draw"]) == 8
    assert sum(view["seats"][seat]["hand"]) == 5
    rebuilt = GAME.from_view(view, seed=4)
    assert rebuilt.view(seat) == view


# --- component data -------------------------------------------------------------------------

def test_default_components_have_the_rulebook_counts() -> None:
    c = lab.COMPONENTS
    assert c.total_cards(4) == 132
    assert c.starter_size == 8
    assert sum(card.stock for card in c.cards if card.card_type == "seed") == 24
    assert sum(card.stock for card in c.cards if card.card_type == "fertilizer") == 20
    assert sum(card.stock for card in c.cards if card.card_type == "experiment") == 10
    assert sum(card.stock for card in c.cards if card.card_type == "skill") == 11
    assert [b.plants for b in c.breeds] == [10, 8, 7, 7, 3]
    assert [len(r.spaces) for r in c.rooms] == [9, 9, 9]


def load_default() -> dict[str, object]:
    with open(components_module.DEFAULT_PATH, "rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize("edit, entry", [
    (lambda d: d["rooms"][1]["spaces"][0].__setitem__(2, [6]), "rooms[1] (R2).spaces[0][2][0]"),
    (lambda d: d["rooms"][0]["spaces"][1].pop(), "rooms[0] (R1).spaces[1]"),
    (lambda d: d["cards"][3].__setitem__("breeds", [3, 4]), "cards[3] (seed4).breeds"),
    (lambda d: d["cards"][11].pop("cost"), "cards[11] (exp2).cost"),
    (lambda d: d["cards"][13].__setitem__("effect", "DRAW two"), "cards[13] (skill_general).effect"),
    (lambda d: d["cards"][14].__setitem__("effect", "REVEAL_TAKE 3 plant"), "cards[14] (skill_experiment).effect"),
    (lambda d: d["breeds"][4].__setitem__("track", 0), "breeds[4] (diamond).track"),
    (lambda d: d["breeds"].pop(), "breeds"),
    (lambda d: d["constants"].__setitem__("seed_set_bonus", [0, 0, 0, 5, 6, 10]), "constants.seed_set_bonus"),
    (lambda d: d["constants"].__setitem__("acquisition_tiers", [[1, 1], [5, 1]]), "constants.acquisition_tiers[1]"),
    (lambda d: d["cards"][0].__setitem__("colour", "red"), "cards[0] (seed1)"),
])
def test_malformed_components_are_rejected_naming_the_entry(edit: object, entry: str) -> None:
    data = load_default()
    edit(data)  # type: ignore[operator]
    with pytest.raises(ComponentDataError) as info:
        components_module.parse(data)
    assert str(info.value).startswith(entry), str(info.value)


def test_malformed_toml_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "components.toml"
    bad.write_text("[constants\nhand_size = 5\n")
    with pytest.raises(ComponentDataError, match="not valid TOML"):
        components_module.load(bad)


def test_default_components_parse() -> None:
    assert components_module.parse(load_default()) == lab.COMPONENTS


# --- LD6 corrected: a skill after an acquisition that reshuffles it -------------------------------

def test_ld6_late_skill_can_reveal_a_card_acquired_this_turn() -> None:
    s = position(stage="development", extra={RED: {"skill_experiment": 1}},
                 hands={RED: {"exp1": 4, "skill_experiment": 1}}, draw_piles={RED: {"seed2": 1}})
    for _ in range(4):
        s.apply_text("play exp1")
    s.apply_text("acquire exp2")
    # One card in the draw pile, the skill reveals three: the discard pile (with the new exp2)
    # will be reshuffled, so the skill is still offered after the acquisition.
    assert notations(s) == ["end development", "play skill_experiment"]
    s.apply_text("play skill_experiment")
    s.apply_text("reveal seed2")
    assert sum(core(s)["draw"][RED]) == 4  # seed1, fert12, exp2 x2 reshuffled
    s.apply_text("reveal exp2")
    s.apply_text("reveal exp2")
    assert "play exp2" in notations(s)
    s.apply_text("play exp2")  # experiment total 6: a second acquisition, any kind again
    assert "acquire exp3" in notations(s) and "acquire seed1" in notations(s)


def test_ld6_skill_after_an_acquisition_is_not_offered_twice() -> None:
    s = position(stage="development", extra={RED: {"skill_experiment": 1}},
                 hands={RED: {"exp1": 4, "skill_experiment": 1}})
    assert sum(core(s)["draw"][RED]) == 4
    for _ in range(4):
        s.apply_text("play exp1")
    s.apply_text("acquire exp2")
    # The draw pile covers the reveal: playing the skill now is the same as before acquiring.
    assert core(s)["stage"] == lab.STAGE_CULTIVATE


@pytest.mark.parametrize("players", [3, 4])
def test_views_rebuild_the_position_at_every_seat_count(players: int) -> None:
    rng = random.Random(players)
    s = GAME.new_game(players=players, seed=players)
    for _ in range(120):
        if s.is_terminal():
            break
        if s.is_chance():
            s.resolve_chance(rng)
            continue
        seat = s.current_player
        for viewer in range(players):
            rebuilt = GAME.from_view(s.view(viewer), seed=rng.getrandbits(32))
            assert rebuilt.view(viewer) == s.view(viewer)
        assert GAME.from_view(s.view(seat), seed=1).legal_actions() == s.legal_actions()
        s.apply(rng.choice(s.legal_actions()))


# --- through the service and the command line ----------------------------------------------------

def test_a_whole_game_through_the_service() -> None:
    from hortus.clients import AdvisorClient
    from hortus.server import create_server

    server, port = create_server("127.0.0.1:0")
    try:
        with AdvisorClient(f"127.0.0.1:{port}", 30) as client:
            info = client.new_game("botanical_lab", 2, seed=7, options={"acquire_mode": "budget"})
            position = info.position
            rng = random.Random(7)
            for _ in range(3000):
                legal = client.legal_actions(position)
                if legal.terminal:
                    break
                if legal.is_chance:
                    outcomes = legal.chance_outcomes
                    action = rng.choices([o.action for o in outcomes], [o.probability for o in outcomes])[0]
                elif legal.current_player == 0:
                    action = client.suggest_move(position, iterations=60, seed=rng.getrandbits(32)).action
                else:
                    action = rng.choice(legal.actions)
                info = client.apply_actions(position, [action.notation])
                position = info.position
            assert info.terminal
            assert abs(sum(info.returns) - 1.0) < 1e-9
            assert "Botanical Lab" in info.rendered
    finally:
        server.stop(None)


def test_hortus_play_in_the_terminal(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from hortus.clients.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("2\n1\n1\nquit\n"))
    assert main(["play", "botanical_lab", "--seed", "3", "--seat", "0", "--iterations", "50"]) == 0
    out = capsys.readouterr().out
    assert "hortus: botanical_lab, 2 players" in out and "Bye." in out
    assert "You play:" in out
