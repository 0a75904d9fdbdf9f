"""Botanical Lab rule scenarios LT1-LT16 of botanical_lab.decisions.md (the rulebook's
3+1+4+2 observation example and seed-set example included), every rule option (FLAG), the
component data validation and the fairness of determinization on hands."""

from __future__ import annotations

import copy
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
    CIRCLE,
    DIAMOND,
    GAME,
    HEXAGON,
    SQUARE,
    TRIANGLE,
    core,
    end_turn,
    kind,
    notations,
    policy_proposals,
    position,
    search_notations,
    search_world,
    space,
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
    s = position(
        stage="observation",
        rooms={RED: R2},
        vp={RED: 7},
        board={
            "R2(0,1)": ("flower", RED, TRIANGLE),
            "R2(1,1)": ("flower", RED, SQUARE),
            "R2(1,0)": ("flower", RED, CIRCLE),
            "R2(2,0)": ("flower", RED, HEXAGON),
        },
    )
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


def test_lt1_observation_offers_own_flowers_in_any_order() -> None:
    """After observing one flower another own flower can still be observed, whatever
    the order; the search alone takes them in ascending order (the result is the same)."""
    s = position(
        stage="observation",
        rooms={RED: R2},
        board={
            "R2(0,1)": ("flower", RED, TRIANGLE),
            "R2(1,1)": ("flower", BLUE, SQUARE),
            "R2(2,0)": ("flower", RED, HEXAGON),
            "R1(0,0)": ("flower", RED, CIRCLE),
        },
    )
    assert notations(s) == ["end observation", "observe R2(0,1)", "observe R2(2,0)"]
    world = search_world(s)
    assert search_notations(world) == notations(s)  # a search may start from either
    s.apply_text("observe R2(2,0)")
    world.apply_text("observe R2(2,0)")
    assert notations(s) == ["end observation", "observe R2(0,1)"]
    assert search_notations(s) == notations(s)  # outside a search's world nothing is pruned
    assert search_notations(world) == ["end observation"]  # the search takes them in ascending order
    s.apply_text("observe R2(0,1)")
    s.apply_text("end observation")
    ascending = position(
        stage="observation",
        rooms={RED: R2},
        board={
            "R2(0,1)": ("flower", RED, TRIANGLE),
            "R2(1,1)": ("flower", BLUE, SQUARE),
            "R2(2,0)": ("flower", RED, HEXAGON),
            "R1(0,0)": ("flower", RED, CIRCLE),
        },
    )
    ascending.apply_text("observe R2(0,1)")
    ascending.apply_text("observe R2(2,0)")
    ascending.apply_text("end observation")
    assert s == ascending and vp(s, RED) == 2 + 4


def test_lt2_adjacency_bonus_per_connected_group() -> None:
    s = position(
        stage="observation",
        rooms={RED: R1},
        board={
            "R1(0,0)": ("flower", RED, CIRCLE),
            "R1(0,1)": ("flower", RED, CIRCLE),
            "R1(2,1)": ("flower", RED, CIRCLE),
            "R1(2,2)": ("flower", RED, CIRCLE),
        },
    )
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
    s = position(
        stage="observation", rooms={RED: R1}, board={"R1(0,0)": ("flower", RED, CIRCLE), "R1(0,1)": ("flower", RED, CIRCLE)}
    )
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


@pytest.mark.parametrize(
    "plays, allowed",
    [
        (["exp2", "exp3"], 2),  # 5: the rulebook example
        (["exp1", "exp3"], 1),  # 4
        (["exp1", "exp1", "exp1", "exp2", "exp3"], 3),  # 8
        ([], 0),
    ],
)
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
    assert "acquire hexagon seed" in texts and "acquire diamond seed" not in texts
    assert "acquire exp3" not in texts and "acquire skill_general" in texts


def test_lt5_budget_costs_add_up() -> None:
    s = develop({"exp1": 3, "exp2": 1}, options={"acquire_mode": "budget"})
    for card in ("exp1", "exp1", "exp1", "exp2"):
        s.apply_text(f"play {card}")
    assert "acquire diamond seed" in notations(s)
    after_seed1 = s.clone()
    after_seed1.apply_text("acquire circle seed")
    assert "acquire hexagon seed" in notations(after_seed1)  # 1 + 4 <= 5
    after_seed2 = s.clone()
    after_seed2.apply_text("acquire triangle seed")
    assert "acquire hexagon seed" not in notations(after_seed2)  # 2 + 4 > 5
    assert "acquire square seed" in notations(after_seed2)


def test_lt5_acquired_cards_go_to_the_discard_pile() -> None:
    s = develop({"exp1": 4, "exp2": 1})
    s.apply_text("play exp2")
    s.apply_text("acquire circle-square fertilizer")
    d = core(s)
    assert d["discard"][RED][kind("circle-square fertilizer")] == 1 and d["hand"][RED][kind("circle-square fertilizer")] == 0
    assert d["stock"][kind("circle-square fertilizer")] == lab.STOCK[kind("circle-square fertilizer")] - 1


# --- LT6 fertilizer ----------------------------------------------------------------------------


def test_lt6_fertilizer_grows_every_matching_plant_of_the_room() -> None:
    s = position(
        rooms={RED: R1},
        hands={RED: {"circle-triangle fertilizer": 1, "exp1": 4}},
        board={
            "R1(0,0)": ("leaf", BLUE, CIRCLE),
            "R1(0,2)": ("leaf", RED, TRIANGLE),
            "R1(0,1)": ("prepared", RED, 0),
            "R1(2,2)": ("flower", BLUE, CIRCLE, 2),
        },
    )
    stock = plants_in_stock(s)
    s.apply_text("fertilize with circle-triangle fertilizer")
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


def test_lt6_a_fertilizer_that_grows_nothing_is_legal_but_not_in_playouts() -> None:
    """LP5: a fertilizer with nothing to grow may be played, for no effect; the playout policy
    leaves it out (keeping it is the same: both end in the discard pile)."""
    s = position(
        rooms={RED: R1}, hands={RED: {"circle-triangle fertilizer": 1, "exp1": 4}}, board={"R1(2,2)": ("flower", BLUE, CIRCLE)}
    )
    assert "fertilize with circle-triangle fertilizer" in notations(s)
    assert "fertilize with circle-triangle fertilizer" in search_notations(search_world(s))
    assert "fertilize with circle-triangle fertilizer" not in policy_proposals(s)
    s.apply_text("fertilize with circle-triangle fertilizer")
    d = core(s)
    assert d["stage"] == lab.STAGE_CULTIVATE and vp(s, RED) == 0 and d["space_step"][space("R1(2,2)")] == 1
    assert d["play"][RED][kind("circle-triangle fertilizer")] == 1


def test_lt6_seed_then_fertilizer_twice_in_one_turn() -> None:
    """LP4: prepare, sprout and bloom in one turn with one seed and two fertilizers."""
    s = position(
        rooms={RED: R1},
        extra={RED: {"circle-triangle fertilizer": 1}},
        hands={RED: {"circle seed": 1, "circle-triangle fertilizer": 2, "exp1": 2}},
    )
    s.apply_text("prepare R1(0,0) with circle seed")
    s.apply_text("fertilize with circle-triangle fertilizer")  # a single candidate breed: sprouts at once
    assert core(s)["space_status"][space("R1(0,0)")] == lab.SPACE_LEAF
    s.apply_text("fertilize with circle-triangle fertilizer")
    assert core(s)["space_status"][space("R1(0,0)")] == lab.SPACE_FLOWER
    assert vp(s, RED) == 2


# --- LT7-LT8 plant death -------------------------------------------------------------------------


def test_lt7_a_flower_on_the_bottom_step_dies_in_its_owners_phase_4() -> None:
    s = position(
        rooms={RED: R1}, hands={RED: {"exp1": 4, "circle seed": 1}}, vp={RED: 5}, board={"R2(1,1)": ("flower", RED, SQUARE, 3)}
    )
    stock = plants_in_stock(s)
    s.apply_text("end cultivation")
    d = core(s)
    assert d["space_status"][space("R2(1,1)")] == lab.SPACE_EMPTY
    assert plants_in_stock(s)[SQUARE - 1] == stock[SQUARE - 1] + 1
    assert d["markers_free"][RED] == 10 and vp(s, RED) == 5


def test_lt7_a_flower_above_the_bottom_moves_down_one_step() -> None:
    s = position(
        rooms={RED: R1},
        hands={RED: {"exp1": 4, "circle seed": 1}},
        board={"R2(1,1)": ("flower", RED, SQUARE, 2), "R3(0,0)": ("leaf", RED, SQUARE), "R3(2,2)": ("prepared", RED, 0)},
    )
    s.apply_text("end cultivation")
    d = core(s)
    assert d["space_step"][space("R2(1,1)")] == 3
    assert d["space_status"][space("R3(0,0)")] == lab.SPACE_LEAF  # LX2: leaves never die
    assert d["space_status"][space("R3(2,2)")] == lab.SPACE_PREPARED  # nor prepared spaces


def test_lt8_only_the_owners_phase_4_ages_a_flower() -> None:
    s = position(
        turn=BLUE, rooms={BLUE: R1}, hands={BLUE: {"exp1": 4, "circle seed": 1}}, board={"R1(2,2)": ("flower", RED, CIRCLE, 1)}
    )
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
        s = position(rooms={RED: R1}, hands={RED: {"circle seed": 1, "exp1": 4}}, board={"R1(0,1)": (status, owner, breed)})
        texts = notations(s)
        assert "prepare R1(0,1) with circle seed" not in texts
        assert "prepare R1(0,0) with circle seed" in texts


def test_lt9_seeds_need_a_matching_space_and_a_marker() -> None:
    s = position(rooms={RED: R1}, hands={RED: {"circle seed": 1, "exp1": 4}})
    spaces = sorted(t.split()[1] for t in notations(s) if t.startswith("prepare "))
    assert spaces == ["R1(0,0)", "R1(0,1)", "R1(1,0)", "R1(1,2)", "R1(2,1)", "R1(2,2)"]
    # A20: with all 10 markers on the boards no seed can be used.
    board = {f"R3({i // 3},{i % 3})": ("prepared", RED, 0) for i in range(9)}
    board["R2(0,0)"] = ("prepared", RED, 0)
    s = position(rooms={RED: R1}, hands={RED: {"circle seed": 1, "exp1": 4}}, board=board)
    assert not [t for t in notations(s) if t.startswith("prepare ")]


def test_lt10_rulebook_movement_example() -> None:
    s = position(
        rooms={RED: R1},
        extra={RED: {"square seed": 1, "square-hexagon fertilizer": 1}},
        hands={RED: {"exp1": 2, "square seed": 1, "square-hexagon fertilizer": 1}},
        board={"R2(1,1)": ("leaf", BLUE, SQUARE), "R2(0,2)": ("prepared", RED, 0), "R2(1,2)": ("leaf", RED, HEXAGON)},
    )
    s.apply_text("move to R3 with exp1")
    s.apply_text("prepare R3(0,0) with square seed")
    s.apply_text("move to R2 with exp1")
    s.apply_text("fertilize with square-hexagon fertilizer")
    d = core(s)
    assert d["space_status"][space("R3(0,0)")] == lab.SPACE_PREPARED  # used in R2, not R3
    assert d["space_status"][space("R2(1,1)")] == lab.SPACE_FLOWER
    assert d["space_status"][space("R2(1,2)")] == lab.SPACE_FLOWER
    assert d["space_status"][space("R2(0,2)")] == lab.SPACE_LEAF and d["space_breed"][space("R2(0,2)")] == HEXAGON
    assert vp(s, RED) == 3
    assert d["room"][RED] == R2
    # Every card went to the play area; moving had no effect of its own.
    assert d["play"][RED][kind("exp1")] == 2 and sum(d["hand"][RED]) == 0


def test_lt10_fuel_is_any_card_but_playouts_spend_experiment_cards_first() -> None:
    s = position(
        rooms={RED: R1},
        extra={RED: {"square seed": 1}},
        hands={RED: {"exp1": 1, "square seed": 1, "circle-triangle fertilizer": 1}},
    )
    assert {t for t in policy_proposals(s) if t.startswith("move")} <= {"move to R2 with exp1", "move to R3 with exp1"}
    assert sorted(t for t in notations(s) if t.startswith("move")) == [
        "move to R2 with circle-triangle fertilizer",
        "move to R2 with exp1",
        "move to R2 with square seed",
        "move to R3 with circle-triangle fertilizer",
        "move to R3 with exp1",
        "move to R3 with square seed",
    ]
    s = position(
        rooms={RED: R1}, extra={RED: {"square seed": 1}}, hands={RED: {"square seed": 1, "circle-triangle fertilizer": 1}}
    )
    assert sorted(t for t in notations(s) if t.startswith("move")) == [
        "move to R2 with circle-triangle fertilizer",
        "move to R2 with square seed",
        "move to R3 with circle-triangle fertilizer",
        "move to R3 with square seed",
    ]


# --- LT11-LT12 seed sets ----------------------------------------------------------------------


def test_lt11_rulebook_seed_set_example_is_4() -> None:
    s = position(extra={RED: {"circle seed": 1, "triangle seed": 1, "square seed": 2}}, vp={RED: 10})
    assert s.scores()[RED] == 10 + 4


def test_lt12_layers_beat_two_small_sets() -> None:
    s = position(extra={RED: {"circle seed": 2, "triangle seed": 2, "square seed": 1, "hexagon seed": 1}}, vp={RED: 10})
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
    s = position(players=4, turn=1, start=0, vp={1: 36}, hands={1: {"exp1": 4, "circle seed": 1}})
    end_turn(s, 1)
    assert core(s)["final_round"] == 1
    assert s.current_player == 2
    end_turn(s, 2)
    assert s.current_player == 3
    end_turn(s, 3)
    assert s.is_terminal()
    assert s.returns() == [0.0, 1.0, 0.0, 0.0]


def test_lt13_the_last_seat_of_the_round_ends_the_game_at_once() -> None:
    s = position(players=4, turn=3, start=0, vp={3: 35}, hands={3: {"exp1": 4, "circle seed": 1}})
    end_turn(s, 3)
    assert s.is_terminal()
    s = position(players=4, turn=3, start=0, vp={3: 34}, hands={3: {"exp1": 4, "circle seed": 1}})
    end_turn(s, 3)
    assert not s.is_terminal() and s.current_player == 0


def test_lt13_the_round_follows_the_start_player() -> None:
    s = position(players=3, turn=2, start=1, vp={2: 40}, hands={2: {"exp1": 4, "circle seed": 1}})
    end_turn(s, 2)
    assert s.current_player == 0  # seat 0 closes the round that seat 1 started
    end_turn(s, 0)
    assert s.is_terminal()


def over(extra_a: dict[str, int], extra_b: dict[str, int]) -> games.State:
    return position(stage="over", turn=1, start=0, final_round=1, vp={0: 40, 1: 40}, extra={0: extra_a, 1: extra_b})


def test_lt14_tie_broken_by_research_documents() -> None:
    a = {"circle-square fertilizer": 4, "triangle-hexagon fertilizer": 4, "square-hexagon fertilizer": 3}  # 8 + 11 = 19 cards
    b = {"square-hexagon fertilizer": 1, "diamond fertilizer": 4, "exp2": 6, "exp3": 2}  # 8 + 13 = 21 cards
    s = over(a, b)
    assert s.is_terminal() and s.scores() == [40.0, 40.0]
    assert s.returns() == [0.0, 1.0]
    s = over(
        {"circle-square fertilizer": 4, "triangle-hexagon fertilizer": 4, "square-hexagon fertilizer": 3},
        {"square-hexagon fertilizer": 1, "diamond fertilizer": 4, "exp2": 6},
    )
    assert s.returns() == [0.5, 0.5]


# --- LT15 documentation ---------------------------------------------------------------------------


def test_lt15_draw_reshuffle_draw() -> None:
    s = position(
        extra={RED: {"square seed": 1, "circle-square fertilizer": 1, "exp2": 1}},
        rooms={RED: R1},
        hands={RED: {"exp1": 3, "square seed": 1}},
        play={"circle seed": 1, "circle-triangle fertilizer": 1},
        draw_piles={RED: {"exp2": 2}},
        discards={RED: {"exp1": 1, "triangle seed": 1, "circle-square fertilizer": 1}},
    )
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
    s = position(
        extra={RED: {"skill_general": 1}}, hands={RED: {"skill_general": 1, "exp1": 4}}, draw_piles={RED: {"circle seed": 1}}
    )
    assert sum(core(s)["discard"][RED]) == 3  # triangle seed, circle-triangle fertilizer, exp2
    s.apply_text("play skill_general")
    s.apply_text("draw circle seed")
    # The draw pile is empty: the discard pile (3 cards) becomes the draw pile for the 2nd card.
    assert s.is_chance() and sum(core(s)["draw"][RED]) == 3 and sum(core(s)["discard"][RED]) == 0
    s.apply(s.chance_outcomes()[0][0])
    assert s.current_player == RED and sum(core(s)["hand"][RED]) == 6


def test_lt15_both_piles_empty_stops_short() -> None:
    """LY2 [RES-RULE]: with both piles empty the draw stops short."""
    hand = {"skill_general": 1, "exp1": 4, "triangle seed": 1, "circle-triangle fertilizer": 1, "exp2": 1}
    s = position(extra={RED: {"skill_general": 1}}, hands={RED: hand}, draw_piles={RED: {"circle seed": 1}})
    assert sum(core(s)["discard"][RED]) == 0
    s.apply_text("play skill_general")
    s.apply_text("draw circle seed")
    assert s.current_player == RED and core(s)["stage"] == lab.STAGE_CULTIVATE
    assert sum(core(s)["hand"][RED]) == 8


# --- LT16 empty plant stock ------------------------------------------------------------------------


def lt16(hand: dict[str, int]) -> games.State:
    return position(
        rooms={RED: R3},
        extra={RED: {"diamond fertilizer": 1, "square-hexagon fertilizer": 1}},
        hands={RED: hand},
        board={
            "R3(0,1)": ("prepared", RED, 0),
            "R3(1,1)": ("prepared", BLUE, 0),
            "R3(1,0)": ("flower", BLUE, DIAMOND),
            "R3(1,2)": ("flower", BLUE, DIAMOND),
            "R3(2,1)": ("flower", RED, DIAMOND),
        },
    )


def test_lt16_no_plant_of_the_breed_no_growth() -> None:
    s = lt16({"diamond fertilizer": 1, "exp1": 4})
    assert plants_in_stock(s)[DIAMOND - 1] == 0
    assert "fertilize with diamond fertilizer" in notations(s)  # legal, for no effect (LP5)
    assert "fertilize with diamond fertilizer" not in policy_proposals(s)
    s = lt16({"square-hexagon fertilizer": 1, "exp1": 4})
    s.apply_text("fertilize with square-hexagon fertilizer")
    d = core(s)
    assert d["space_status"][space("R3(0,1)")] == lab.SPACE_LEAF and d["space_breed"][space("R3(0,1)")] == HEXAGON
    assert d["space_status"][space("R3(1,1)")] == lab.SPACE_PREPARED
    assert vp(s, RED) == 1


def test_lt16_short_stock_the_fertilizer_player_chooses_who_grows() -> None:
    """A8 extended: one diamond left, two prepared diamond spaces: one grows, the player picks."""
    s = position(
        rooms={RED: R3},
        extra={RED: {"diamond fertilizer": 1}},
        hands={RED: {"diamond fertilizer": 1, "exp1": 4}},
        board={
            "R3(1,1)": ("prepared", BLUE, 0),
            "R3(2,1)": ("prepared", RED, 0),
            "R3(1,0)": ("flower", BLUE, DIAMOND),
            "R3(1,2)": ("flower", BLUE, DIAMOND),
        },
    )
    s.apply_text("fertilize with diamond fertilizer")
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
    s = position(
        rooms={RED: R2},
        extra={RED: {"square-hexagon fertilizer": 1}},
        hands={RED: {"square-hexagon fertilizer": 1, "exp1": 4}},
        board=board,
    )
    assert plants_in_stock(s)[SQUARE - 1] == 1 and plants_in_stock(s)[HEXAGON - 1] == 1
    s.apply_text("fertilize with square-hexagon fertilizer")
    d = core(s)
    assert d["space_breed"][space("R2(1,2)")] == SQUARE and d["space_breed"][space("R2(2,0)")] == HEXAGON
    assert vp(s, RED) == 2


def test_lt16_multi_breed_space_chooses_when_the_stock_allows() -> None:
    s = position(
        rooms={RED: R2},
        extra={RED: {"square-hexagon fertilizer": 1}},
        hands={RED: {"square-hexagon fertilizer": 1, "exp1": 4}},
        board={"R2(1,2)": ("prepared", RED, 0), "R2(2,0)": ("prepared", BLUE, 0)},
    )
    s.apply_text("fertilize with square-hexagon fertilizer")
    assert notations(s) == ["sprout R2(1,2) as square", "sprout R2(1,2) as hexagon"]
    s.apply_text("sprout R2(1,2) as hexagon")
    d = core(s)
    assert d["space_breed"][space("R2(1,2)")] == HEXAGON and d["space_breed"][space("R2(2,0)")] == HEXAGON
    assert vp(s, RED) == 2


# --- skills (LT2, A4) -------------------------------------------------------------------------


def test_typed_skill_reveals_three_and_keeps_its_type() -> None:
    s = position(
        stage="development",
        extra={RED: {"skill_seed": 1, "square seed": 1}},
        hands={RED: {"skill_seed": 1, "exp1": 4}},
        draw_piles={RED: {"square seed": 1, "exp2": 1, "circle seed": 1, "circle-triangle fertilizer": 1}},
    )
    s.apply_text("play skill_seed")
    assert s.is_chance()
    for card in ("square seed", "exp2", "circle seed"):
        s.apply_text(f"reveal {card}")
    d = core(s)
    assert d["hand"][RED][kind("square seed")] == 1 and d["hand"][RED][kind("circle seed")] == 1
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
    s.apply_text("acquire hexagon seed")  # cost 4 of 5
    # Threshold: each card needs cost <= 5, the total is not spent. Budget: 1 experiment left.
    assert ("acquire hexagon seed" in notations(s)) is (mode == "threshold")
    assert ("acquire skill_general" in notations(s)) is (mode == "threshold")
    assert GAME.new_game(seed=1, options={"acquire_mode": mode}).view(0)["options"]["acquire_mode"] == mode


@pytest.mark.parametrize("track", ["false", "true"])
def test_flag_track_seed_breed(track: str) -> None:
    s = position(
        rooms={RED: R1},
        hands={RED: {"triangle seed": 1, "circle-triangle fertilizer": 1, "exp1": 3}},
        options={"track_seed_breed": track},
    )
    s.apply_text("prepare R1(0,1) with triangle seed")
    assert core(s)["space_breed"][space("R1(0,1)")] == (TRIANGLE if track == "true" else 0)
    s.apply_text("fertilize with circle-triangle fertilizer")
    if track == "true":
        assert core(s)["space_breed"][space("R1(0,1)")] == TRIANGLE  # recorded: no choice
        assert s.current_player == RED and core(s)["stage"] == lab.STAGE_CULTIVATE
    else:
        assert notations(s) == ["sprout R1(0,1) as circle", "sprout R1(0,1) as triangle"]
    assert GAME.new_game(seed=1, options={"track_seed_breed": track}).view(0)["options"]["track_seed_breed"] == track


@pytest.mark.parametrize("scope, bonus", [("all_owned", 2), ("piles_only", 0)])
def test_flag_seed_set_scope(scope: str, bonus: int) -> None:
    # Seat 0 holds square seed in hand and circle seed, triangle seed in its piles: a 3-breed set with all_owned.
    s = position(
        stage="over",
        turn=1,
        start=0,
        final_round=1,
        vp={0: 40, 1: 40},
        extra={0: {"square seed": 1}},
        hands={0: {"square seed": 1, "exp1": 4}},
        options={"seed_set_scope": scope},
    )
    assert s.scores() == [40.0 + bonus, 40.0]
    assert GAME.new_game(seed=1, options={"seed_set_scope": scope}).view(0)["options"]["seed_set_scope"] == scope


@pytest.mark.parametrize("scope", ["all_owned", "piles_only"])
def test_flag_seed_set_scope_tie_break_counts(scope: str) -> None:
    """Equal points; seat 1 owns one card more. At the end every hand holds 5 cards and play
    areas are empty, so both scopes rank the research documents alike."""
    s = position(
        stage="over",
        turn=1,
        start=0,
        final_round=1,
        vp={0: 40, 1: 40},
        extra={1: {"circle-square fertilizer": 1}},
        hands={0: {"exp1": 4, "exp2": 1}, 1: {"exp1": 4, "circle-square fertilizer": 1}},
        options={"seed_set_scope": scope},
    )
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
    a = position(turn=RED, hands={RED: {"exp1": 4, "circle seed": 1}, BLUE: {"exp1": 4, "exp2": 1}})
    b = position(
        turn=RED,
        hands={
            RED: {"exp1": 4, "circle seed": 1},
            BLUE: {"circle seed": 1, "triangle seed": 1, "circle-triangle fertilizer": 1, "exp1": 2},
        },
    )
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


@pytest.mark.parametrize(
    "edit, entry",
    [
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
    ],
)
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
    s = position(
        stage="development",
        extra={RED: {"skill_experiment": 1}},
        hands={RED: {"exp1": 4, "skill_experiment": 1}},
        draw_piles={RED: {"triangle seed": 1}},
    )
    for _ in range(4):
        s.apply_text("play exp1")
    s.apply_text("acquire exp2")
    # One card in the draw pile, the skill reveals three: the discard pile (with the new exp2)
    # will be reshuffled, so the skill is still offered after the acquisition.
    assert notations(s) == ["end development", "play skill_experiment"]
    s.apply_text("play skill_experiment")
    s.apply_text("reveal triangle seed")
    assert sum(core(s)["draw"][RED]) == 4  # circle seed, circle-triangle fertilizer, exp2 x2 reshuffled
    s.apply_text("reveal exp2")
    s.apply_text("reveal exp2")
    assert "play exp2" in notations(s)
    s.apply_text("play exp2")  # experiment total 6: a second acquisition, any kind again
    assert "acquire exp3" in notations(s) and "acquire circle seed" in notations(s)


def test_ld6_skill_after_an_acquisition_is_not_offered_twice() -> None:
    s = position(stage="development", extra={RED: {"skill_experiment": 1}}, hands={RED: {"exp1": 4, "skill_experiment": 1}})
    assert sum(core(s)["draw"][RED]) == 4
    world = search_world(s)
    for state in (s, world):
        for _ in range(4):
            state.apply_text("play exp1")
        state.apply_text("acquire exp2")
    # The draw pile covers the reveal: playing the skill now is the same line as before
    # acquiring, so playouts do not play it again; the rules (and the search) do.
    assert notations(s) == ["end development", "play skill_experiment"]
    assert search_notations(world) == ["end development", "play skill_experiment"]
    assert {world.action_to_string(world.kernel_state.rollout_action(seed)) for seed in range(50)} == {"end development"}


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

    from hortus.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("2\n1\n1\nquit\n"))
    assert main(["play", "botanical_lab", "--seed", "3", "--seat", "0", "--iterations", "50"]) == 0
    out = capsys.readouterr().out
    assert "hortus: botanical_lab, 2 players" in out and "Bye." in out
    assert "You play:" in out


# --- every rule-legal move, in any order ---------------------------------------


def fresh(state: games.State) -> games.State:
    """The same position with no search memory (as a client sends it: encoded bytes)."""
    return GAME.decode(state.encode())


def test_exp1_still_playable_after_exp2_and_a_total_of_5_gives_2_acquisitions() -> None:
    s = develop({"exp1": 3, "exp2": 1, "circle seed": 1})
    world = search_world(s)
    s.apply_text("play exp2")
    world.apply_text("play exp2")
    assert "play exp1" in notations(s)
    assert "play exp1" not in search_notations(world)  # the search plays experiments kind by kind
    for _ in range(3):
        s.apply_text("play exp1")
    assert acquisitions(s) == 2
    ascending = develop({"exp1": 3, "exp2": 1, "circle seed": 1})
    for card in ("exp1", "exp1", "exp1", "exp2"):
        ascending.apply_text(f"play {card}")
    acquisitions(ascending)
    assert s == ascending


def test_an_experiment_played_after_an_acquisition_raises_the_total() -> None:
    s = develop({"exp1": 3, "exp2": 1, "circle seed": 1})
    s.apply_text("play exp2")
    s.apply_text("acquire circle seed")  # total 2: one acquisition, made
    assert [t for t in notations(s) if t.startswith("acquire")] == []
    assert core(s)["stage"] == lab.STAGE_DEVELOP and "play exp1" in notations(s)
    for _ in range(3):
        s.apply_text("play exp1")  # total 5: a second acquisition
    assert "acquire circle seed" in notations(s)


def test_space_0_0_can_be_prepared_after_space_2_1() -> None:
    def start() -> games.State:
        return position(rooms={RED: R1}, extra={RED: {"circle seed": 1}}, hands={RED: {"circle seed": 2, "exp1": 3}})

    s = start()
    world = search_world(s)
    s.apply_text("prepare R1(2,1) with circle seed")
    world.apply_text("prepare R1(2,1) with circle seed")
    assert "prepare R1(0,0) with circle seed" in notations(s)
    assert "prepare R1(0,0) with circle seed" not in search_notations(world)  # searched by ascending space
    s.apply_text("prepare R1(0,0) with circle seed")
    other = start()
    other.apply_text("prepare R1(0,0) with circle seed")
    other.apply_text("prepare R1(2,1) with circle seed")
    assert s == other


def test_a_search_from_a_mid_order_position_follows_the_player() -> None:
    """The search's order memory is not part of the position and starts empty in each world a
    search samples: after a player played exp2 first, a search from there still plays exp1."""
    s = develop({"exp1": 3, "exp2": 1, "circle seed": 1})
    world = search_world(s)
    world.apply_text("play exp2")
    assert "play exp1" not in search_notations(world)
    assert "play exp1" in search_notations(search_world(world))
    assert "play exp1" in search_notations(fresh(world))


def within_turn(state: games.State, depth: int, search: bool, cap: int = 6000) -> set[bytes] | None:
    """Positions reachable from `state` in at most `depth` decisions of the seat to move, over
    every legal action or over the search's subset; None past `cap` positions."""
    seat = state.current_player
    seen = {state.encode()}
    frontier = [state]
    for _ in range(depth):
        following = []
        for s in frontier:
            if s.current_player != seat:
                continue
            for a in s.search_actions() if search else s.legal_actions():
                child = s.clone()
                child.apply(a)
                key = child.encode()
                if key not in seen:
                    seen.add(key)
                    following.append(child)
                    if len(seen) > cap:
                        return None
        frontier = following
    return seen


def random_positions(count: int, seed: int) -> list[games.State]:
    """Decision positions of the turn player from seeded random games (every legal action),
    decoded: no search memory."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = GAME.new_game(players=2 + rng.randrange(3), seed=rng.getrandbits(32))
        for _ in range(rng.randrange(10, 200)):
            if s.is_terminal():
                break
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            s.apply(rng.choice(s.legal_actions()))
        s.resolve_chance(rng)
        if not s.is_terminal():
            out.append(fresh(s))
    return out


def test_the_search_subset_reaches_every_position_the_rules_allow() -> None:
    """From random positions as a search samples them (determinized: the order memory starts
    there), every position reachable within the turn through the legal actions is reachable
    through the search's subset in as many decisions, intermediate positions included."""
    compared = pruned_somewhere = 0
    for i, s in enumerate(random_positions(60, 14)):
        world = search_world(s, i)
        for depth in (3, 2):
            legal = within_turn(world, depth, search=False)
            if legal is None:
                continue
            searched = within_turn(world, depth, search=True)
            assert searched is not None and legal <= searched, lab.core_dict(world)
            compared += 1
            break
        # the subset does prune: after one move, equivalent orders are left out somewhere
        for a in world.search_actions():
            child = world.clone()
            child.apply(a)
            if child.current_player == world.current_player and child.search_actions() != child.legal_actions():
                pruned_somewhere += 1
                break
    assert compared >= 30 and pruned_somewhere >= 5


def commuting_walk(state: games.State, rng: random.Random) -> list[int]:
    """Up to 4 random legal moves of one commuting kind: experiments and acquisitions (phase
    1), seeds in the assistant's room (phase 2) or observations (phase 3)."""
    bases = lab.BASES
    kinds = {
        lab.STAGE_DEVELOP: (bases["experiment"], bases["move"]),
        lab.STAGE_CULTIVATE: (bases["seed"], bases["fertilize"]),
        lab.STAGE_OBSERVE: (bases["observe"], bases["start"]),
    }
    lo, hi = kinds.get(core(state)["stage"], (0, 0))
    walk: list[int] = []
    s = state.clone()
    for _ in range(4):
        if s.current_player != state.current_player:
            break
        options = [a for a in s.legal_actions() if lo <= a < hi and not bases["skill"] <= a < bases["acquire"]]
        if not options:
            break
        walk.append(rng.choice(options))
        s.apply(walk[-1])
    return walk


def test_every_allowed_permutation_of_commuting_moves_reaches_the_same_position() -> None:
    rng = random.Random(3)
    checked = 0
    for s in random_positions(150, 15):
        walk = commuting_walk(s, rng)
        if len(walk) < 2:
            continue
        target = s.clone()
        for a in walk:
            target.apply(a)
        accepted = 0
        for order in set(itertools.permutations(walk)):
            t = s.clone()
            try:
                for a in order:
                    t.apply(a)
            except games.IllegalActionError:
                continue  # e.g. an acquisition before the experiments that allow it
            assert t == target, (walk, order)
            accepted += 1
        # The canonical order (ascending) is among them, and the search offers it step by step.
        t = search_world(s)
        for a in sorted(
            walk, key=lambda a: (a - lab.BASES["seed"]) % lab.MAX_SPACES if lab.BASES["seed"] <= a < lab.BASES["fertilize"] else a
        ):
            assert a in t.search_actions(), (walk, a)
            t.apply(a)
        assert t.view(s.current_player) == target.view(s.current_player)
        checked += accepted
    assert checked >= 40


def test_notation_round_trips_for_every_legal_action() -> None:
    for s in random_positions(60, 16):
        for a in s.legal_actions():
            assert s.parse_action(s.action_to_string(a)) == a


# --- public knowledge -------------------------------------------------------


def test_a_draw_pile_run_dry_into_the_new_hand_is_known_to_everybody() -> None:
    """Phase 5: the hand goes face up to the discard pile and the whole draw pile (3 cards) goes
    into the new hand: every seat knows those 3 are in it; only the 2 drawn after the reshuffle
    are re-dealt by determinization and from_view."""
    s = position(
        turn=RED,
        hands={RED: {"exp1": 4, "exp2": 1}},
        draw_piles={RED: {"circle seed": 1, "triangle seed": 1, "circle-triangle fertilizer": 1}},
    )
    end_turn(s, RED)
    while s.is_chance():
        s.apply(s.chance_outcomes()[0][0])
    known = core(s)["known"][RED][: lab.N_KINDS]
    assert sum(known) == 3 and known[kind("circle seed")] == known[kind("triangle seed")] == 1
    view = s.view(BLUE)
    assert view["seats"][RED]["hand_known"] == known
    for world_seed in range(20):
        w = s.clone()
        w.kernel_state.determinize(BLUE, world_seed)
        assert all(core(w)["hand"][RED][k] >= known[k] for k in range(lab.N_KINDS))
        rebuilt = GAME.from_view(view, seed=world_seed)
        assert rebuilt.view(BLUE) == view
        assert all(core(rebuilt)["hand"][RED][k] >= known[k] for k in range(lab.N_KINDS))


def test_typed_skill_reveals_are_public_and_kept_cards_are_known() -> None:
    s = position(
        stage="development",
        extra={RED: {"skill_seed": 1, "square seed": 1}},
        hands={RED: {"skill_seed": 1, "exp1": 4}},
        draw_piles={RED: {"square seed": 1, "exp2": 1, "circle seed": 1, "circle-triangle fertilizer": 1}},
    )
    s.apply_text("play skill_seed")
    assert s.hidden_chance_outcomes(BLUE) == frozenset()  # every revealed card is seen (A4)
    for card in ("square seed", "exp2", "circle seed"):
        s.apply_text(f"reveal {card}")
    known = s.view(BLUE)["seats"][RED]["hand_known"]
    assert known[kind("square seed")] == 1 and known[kind("circle seed")] == 1 and sum(known) == 2
    s.apply_text("play exp1")
    assert s.view(BLUE)["seats"][RED]["hand_known"] == known  # playing another kind keeps them
    for world_seed in range(10):
        w = s.clone()
        w.kernel_state.determinize(BLUE, world_seed)
        assert core(w)["hand"][RED][kind("square seed")] >= 1 and core(w)["hand"][RED][kind("circle seed")] >= 1


def test_fairness_holds_with_known_cards() -> None:
    """Analyses are identical across re-deals of what the seat cannot see, known cards kept."""
    from hortus.search import Limits, analyze

    s = position(
        turn=RED,
        hands={RED: {"exp1": 4, "exp2": 1}},
        draw_piles={RED: {"circle seed": 1, "triangle seed": 1, "circle-triangle fertilizer": 1}},
    )
    end_turn(s, RED)
    while s.is_chance():
        s.apply(s.chance_outcomes()[-1][0])
    assert s.current_player == BLUE and any(core(s)["known"][RED])
    results = []
    for world_seed in (1, 2, 3):
        w = s.clone()
        w.kernel_state.determinize(BLUE, world_seed)
        assert w.view(BLUE) == s.view(BLUE)
        a = analyze(w, Limits(iterations=150, seed=4))
        results.append([(m.action, m.visits, m.win_probability) for m in a.moves])
    assert results[0] == results[1] == results[2]


# --- pictures ------------------------------------------------------------


def test_piles_only_seed_sets_of_another_seat_do_not_leak_its_hand() -> None:
    """seed_set_scope=piles_only: another seat's seed-set points depend on which of its unseen
    cards are in its hand; its picture must not show that split."""
    a = position(
        turn=RED,
        options={"seed_set_scope": "piles_only"},
        extra={BLUE: {"square seed": 1}},
        hands={RED: {"exp1": 4, "exp2": 1}, BLUE: {"exp1": 4, "exp2": 1}},
    )
    b = position(
        turn=RED,
        options={"seed_set_scope": "piles_only"},
        extra={BLUE: {"square seed": 1}},
        hands={RED: {"exp1": 4, "exp2": 1}, BLUE: {"circle seed": 1, "triangle seed": 1, "square seed": 1, "exp1": 2}},
    )
    assert a.view(RED) == b.view(RED) and a.scores() != b.scores()
    assert a.render(RED) == b.render(RED)
    assert a.render() == b.render()
    assert "0-2 with seed sets" in a.render(RED)
    assert a.render(BLUE) != b.render(BLUE)  # its own picture is exact


def test_pictures_name_breeds_by_one_word_with_labels_costs_plant_vp_and_experiment_total() -> None:
    s = position(
        stage="development",
        rooms={RED: R2},
        hands={RED: {"exp1": 3, "exp2": 1, "circle seed": 1}},
        board={"R2(1,0)": ("flower", RED, CIRCLE), "R2(0,1)": ("leaf", BLUE, SQUARE), "R1(0,1)": ("prepared", BLUE, 0)},
    )
    s.apply_text("play exp2")
    s.apply_text("play exp1")
    text = s.render(RED)
    assert not any(b.symbol in text for b in lab.COMPONENTS.breeds)
    assert not any(f"seed{i}" in text or f"fert{i}" in text for i in range(1, 6))
    assert "col 0" in text and "row 2" in text
    assert "flower circle s0 1/4" in text and "leaf square s1" in text and "prepared s1" in text
    assert "square seed 6 (cost 3)" in text
    assert "diamond 3 left (5 VP, track 2)" in text
    assert "Experiment total 3: 1 acquisitions allowed, 0 made" in text
    assert all(w in "".join(notations(s)) or True for w in lab.BREED_NAMES)


# --- contradictory views are rejected, naming the field ------------------------


def view_of(seed: int) -> tuple[games.State, dict[str, object]]:
    s = random_positions(1, seed)[0]
    seat = s.current_player
    return s, s.view(seat)


@pytest.mark.parametrize(
    "mutate, field",
    [
        (
            lambda v, me, other: v["seats"][me].__setitem__("hand_count", v["seats"][me]["hand_count"] + 1),
            "seats[{me}].hand_count",
        ),
        (
            lambda v, me, other: v["seats"][me].__setitem__("draw_count", v["seats"][me]["draw_count"] + 1),
            "seats[{me}].draw_count",
        ),
        (
            lambda v, me, other: v["seats"][other].__setitem__("draw_count", v["seats"][other]["draw_count"] + 1),
            "seats[{other}].draw_count",
        ),
        (lambda v, me, other: v["seats"][other].__setitem__("hand_known", [99] * lab.N_KINDS), "seats[{other}].hand_known"),
        (
            lambda v, me, other: v["seats"][me].__setitem__("hand_known", [h + 1 for h in v["seats"][me]["hand"]]),
            "seats[{me}].hand_known",
        ),
        (lambda v, me, other: v["seats"][other].__setitem__("hand", [1] * lab.N_KINDS), "seats[{other}].hand"),
        (lambda v, me, other: v.__setitem__("kinds", ["seed1"] * lab.N_KINDS), "kinds"),
        (lambda v, me, other: v["turn"].__setitem__("seed_floor", 999), "turn.seed_floor"),
    ],
)
def test_contradictory_views_name_the_field(mutate: object, field: str) -> None:
    _, view = view_of(21)
    me = int(view["seat"])  # type: ignore[call-overload]
    other = (me + 1) % int(view["players"])  # type: ignore[call-overload]
    mutate(view, me, other)  # type: ignore[operator]
    with pytest.raises(lab.InvalidPositionError) as info:
        GAME.from_view(view)
    assert info.value.field == field.format(me=me, other=other)


def test_property_contradictory_views_are_rejected() -> None:
    """Random views with one count made to contradict another (a seat's hand_count or
    draw_count against its lists, known cards beyond the hand) are rejected naming that field."""
    from hypothesis import given, settings, strategies as st

    views = [s.view(s.current_player) for s in random_positions(12, 22)]

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(
        st.integers(0, len(views) - 1),
        st.integers(0, 3),
        st.sampled_from(["hand_count", "draw_count", "hand_known"]),
        st.integers(1, 9),
        st.booleans(),
    )
    def check(index: int, who: int, key: str, delta: int, down: bool) -> None:
        view = copy.deepcopy(views[index])
        p = who % view["players"]
        info = view["seats"][p]
        if key == "hand_known":
            base = info["hand"] if p == view["seat"] else info["hand_and_draw"]
            k = delta % lab.N_KINDS
            info["hand_known"] = list(info["hand_known"])
            info["hand_known"][k] = base[k] + delta  # more known copies than there are
        else:
            if down and info[key] < delta:
                return
            info[key] += -delta if down else delta
        with pytest.raises(lab.InvalidPositionError) as caught:
            GAME.from_view(view)
        assert caught.value.field.startswith(f"seats[{p}].")
        if p == view["seat"] or key != "hand_count":
            assert caught.value.field == f"seats[{p}].{key}"

    check()


def test_pictures_show_the_cards_known_to_be_in_another_hand() -> None:
    s = position(
        turn=RED,
        hands={RED: {"exp1": 4, "exp2": 1}},
        draw_piles={RED: {"circle seed": 1, "triangle seed": 1, "circle-triangle fertilizer": 1}},
    )
    end_turn(s, RED)
    while s.is_chance():
        s.apply(s.chance_outcomes()[0][0])
    assert "known: " in s.render(BLUE) and "circle seed x1" in s.render(BLUE)
    assert "known in hand: " in s.picture(BLUE)
