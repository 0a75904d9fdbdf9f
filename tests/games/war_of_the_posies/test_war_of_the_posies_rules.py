"""War of the Posies rule scenarios WT1-WT16 of war_of_the_posies.decisions.md, the rulebook's
worked examples (34-point scoring, example turn, planting example), every rule option (FLAG),
the card data loader, hidden information (views, determinization, fairness) and the safety
end."""

from __future__ import annotations

import copy
import itertools
import random
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hortus import games
from hortus.games.war_of_the_posies import components as wc
from hortus.games.war_of_the_posies import game as wp
from hortus.games.war_of_the_posies import kernel
from hortus.search import Limits, analyze

from war_of_the_posies_positions import GAME, core, decode_core, draw_first, draw_named, k, named, notations, position

FOUNTAIN = "St. George's Fountain #1"


def seat_garden(state: games.State, seat: int) -> list[dict[str, Any]]:
    garden: list[dict[str, Any]] = state.view(seat)["seats"][seat]["garden"]
    return garden


# --- WT1 / WT11 / WT12: scoring --------------------------------------------------------------


def test_wt1_rulebook_scoring_example_is_34() -> None:
    """21 in locked Flowers (a planted poison included), 6 in Expeditions in the deck, 7
    Reputation of completed GFs."""
    s = position(
        stage="over",
        gardens={
            0: [
                ("Glasshouse", ["Rose", "Golden Lily", "Blue Poppy", "Orchid"]),  # 20, Rep 3
                ("Rose Arch", ["Geranium", "Ragwort", "Blue Starter"]),  # 0, Rep 2
                ("Stone Bench", ["Red Campion", "Blue Starter"]),  # 1, Rep 1
                ("Birdbath", ["Red Starter", "Red Starter"]),  # 0, Rep 1
            ]
        },
        discards={0: {"Amazon Expedition": 1}},
        draws={0: {"Amazon Expedition": 1}},
        end_trigger=0,
    )
    assert s.is_terminal()
    assert s.scores() == [34.0, 0.0]
    assert s.returns() == [1.0, 0.0]


def test_wt11_incomplete_garden_feature_scores_nothing() -> None:
    s = position(
        stage="over", gardens={0: [("Glasshouse", ["Geranium", "Sunflower", "Blue Poppy", None])]}, end_trigger=1, turn=0
    )
    assert s.scores()[0] == 0.0  # 2 + 3 + 5 planted, not locked; Rep 3 not earned
    s = position(
        stage="over",
        gardens={0: [("Glasshouse", ["Geranium", "Sunflower", "Blue Poppy", "Purple Starter"])]},
        end_trigger=1,
        turn=0,
    )
    assert s.scores()[0] == 2 + 3 + 5 + 0 + 3  # the same GF completed: locked Flowers + Rep


def wt12_position(extra_unlocked_for_seat_1: bool, tiebreak: str = "all_planted") -> games.State:
    seat_1: list[tuple[str, list[str | None]]] = [
        ("Glasshouse", ["Red Starter", "Yellow Starter", "Blue Starter", "Purple Starter"]),
        ("Trellis", ["Red Starter", "Yellow Starter"]),
        ("Stone Bench", ["Red Campion", "Blue Starter"]),
    ]
    if extra_unlocked_for_seat_1:
        seat_1.append(("Sundial", ["Purple Starter", None]))
    return position(
        stage="over",
        end_trigger=0,
        options={"tiebreak_count": tiebreak},
        gardens={
            # 9 Flowers under seat 0's GFs (7 locked), 5 points.
            0: [
                ("Glasshouse", ["Red Starter", "Yellow Starter", "Blue Starter", "Purple Starter"]),
                ("Rose Arch", ["Red Starter", "Yellow Starter", "Blue Starter"]),
                ("Orangery", ["Red Campion", None, "Buttercup", None]),
            ],
            # 8 Flowers (all locked): 3 + 1 + 1 Rep + 1 point (Red Campion) = 6.
            1: seat_1,
        },
        discards={0: {"Botanical Survey": 1}},  # seat 0: 5 Rep + 1 Expedition point = 6
    )


def test_wt12_tie_broken_by_planted_flowers() -> None:
    s = wt12_position(extra_unlocked_for_seat_1=False)
    assert s.scores() == [6.0, 6.0]
    summary = kernel.seat_summary(s.kernel_state.core())
    assert [row[1] for row in summary] == [9, 8]  # planted under own GFs
    assert s.returns() == [1.0, 0.0]


def test_wt12_further_tie_is_a_shared_win() -> None:
    s = wt12_position(extra_unlocked_for_seat_1=True)
    assert s.scores() == [6.0, 6.0]
    assert [row[1] for row in kernel.seat_summary(s.kernel_state.core())] == [9, 9]
    assert s.returns() == [0.5, 0.5]


@pytest.mark.parametrize("tiebreak, expected", [("all_planted", [1.0, 0.0]), ("locked_only", [0.0, 1.0])])
def test_flag_tiebreak_count(tiebreak: str, expected: list[float]) -> None:
    """A9: seat 0 has 9 Flowers under its GFs but only 7 locked; seat 1 has 8, all locked."""
    s = wt12_position(extra_unlocked_for_seat_1=False, tiebreak=tiebreak)
    assert s.view(0)["options"]["tiebreak_count"] == tiebreak
    assert s.returns() == expected


@pytest.mark.parametrize("tiebreak", wp.TIEBREAK_COUNTS)
def test_flag_tiebreak_count_reaches_new_games(tiebreak: str) -> None:
    s = GAME.new_game(players=3, seed=4, options={"tiebreak_count": tiebreak})
    assert core(s)["tiebreak_locked_only"] == wp.TIEBREAK_COUNTS.index(tiebreak)
    assert GAME.decode(s.encode()).view(1)["options"] == {"tiebreak_count": tiebreak}


# --- WT2: the example turn ------------------------------------------------------------------


def test_wt2_rulebook_example_turn() -> None:
    s = position(
        hands={0: {"Head Gardener": 1, "Red Starter": 1, "Yellow Starter": 1, "Blue Starter": 1, "Purple Starter": 1}},
        market_row=["Mignonette", "Seed Hunting", "Porters", "Tulip", "Rose"],
        gf_row=["St. George's Fountain", "Glasshouse", "Pergola", "Gazebo"],
    )
    # Coin-only plays commute, so they are offered in ascending card order.
    for name in ("Red Starter", "Yellow Starter", "Blue Starter", "Purple Starter", "Head Gardener"):
        s.apply_text(f"play {name}")
    d = core(s)
    assert (d["coins"], d["buys"]) == (6, 2)
    s.apply_text("buy Mignonette")
    assert s.is_chance()  # WB3: the Market slot is refilled at once
    assert "market reveals Geranium" in [s.action_to_string(a) for a, _ in s.chance_outcomes()]
    draw_named(s, "market reveals Geranium")
    s.apply_text(f"buy {FOUNTAIN}")
    draw_named(s, "garden row reveals Birdbath")
    d = core(s)
    assert d["coins"] == 1 and d["buys"] == 0
    assert named(d["discard"][0]) == {"Mignonette": 1}
    assert [gf["label"] for gf in seat_garden(s, 0)] == [FOUNTAIN]
    assert d["market_row_count"] == 5 and d["gf_row_count"] == 4
    assert "buy Birdbath #2" not in notations(s)  # no purchase left
    s.apply_text("end turn")
    d = core(s)
    assert d["coins"] == 0  # the leftover coin is lost
    assert named(d["discard"][0]) == {
        "Mignonette": 1,
        "Head Gardener": 1,
        "Red Starter": 1,
        "Yellow Starter": 1,
        "Blue Starter": 1,
        "Purple Starter": 1,
    }
    assert s.is_chance() and d["draws_pending"] == 5 and d["draw_seat"] == 0
    draw_first(s)
    d = core(s)
    assert d["hand_count"][0] == 5 and d["draw_count"][0] == 0
    assert s.current_player == 1


# --- WT3 / WT4 / WT5 / WT6: planting and limits -----------------------------------------------


def test_wt3_rulebook_planting_example() -> None:
    s = position(
        hands={0: {"Strawflower": 1, "Sunflower": 1, "Red Starter": 1}}, gardens={0: [("St. George's Fountain", [None, None])]}
    )
    s.apply_text(f"plant Strawflower in {FOUNTAIN} of seat 0")
    d = core(s)
    # COIN 5; DRAW 1; PLANT 1 in printed order (WP3): the draw is a chance node, then +1 plant.
    assert (d["coins"], d["plants"], d["draws_pending"]) == (5, 0, 1)
    draw_first(s)
    assert core(s)["hand_count"][0] == 3 and core(s)["plants"] == 1
    s.apply_text(f"plant Sunflower in {FOUNTAIN} of seat 0")  # legal thanks to +1 plant
    draw_first(s)  # Sunflower's Plant: draw 1
    d = core(s)
    fountain = seat_garden(s, 0)[0]
    assert fountain["complete"] and fountain["slots"] == ["Strawflower", "Sunflower"]
    assert d["coins"] == 7  # + the WC's 2 coins now
    assert d["plants"] == 0 and d["hand_count"][0] == 3
    assert s.scores()[0] == 1 + 1 + 3  # Rep 1 + locked 1 + 3


def test_wt4_no_second_planting_without_an_extra_plant() -> None:
    s = position(hands={0: {"Red Starter": 2}}, gardens={0: [("Birdbath", [None, None])]})
    s.apply_text("plant Red Starter in Birdbath #2 of seat 0")
    assert not any(text.startswith("plant") for text in notations(s))
    with pytest.raises(games.IllegalActionError):
        s.apply_text("plant Red Starter in Birdbath #2 of seat 0")


def test_wt5_no_second_purchase_without_an_extra_buy() -> None:
    s = position(hands={0: {"Red Starter": 1}}, coins=10, buys=1, market_row=["Mignonette", "Rose", "Tulip", "Iris", "Porters"])
    s.apply_text("buy Mignonette")
    draw_first(s)
    assert core(s)["coins"] == 7
    assert not any(text.startswith("buy") for text in notations(s))


def test_wt6_matching_free_symbol_only() -> None:
    s = position(
        hands={0: {"Marigold": 1, "Buttercup": 1, "Geranium": 1}},
        plants=3,
        gardens={0: [("St. George's Fountain", ["Yellow Starter", None])]},
    )
    texts = notations(s)
    assert f"plant Marigold in {FOUNTAIN} of seat 0" in texts
    assert not any(t.startswith("plant Geranium") for t in texts)  # no red slot
    s.apply_text(f"plant Marigold in {FOUNTAIN} of seat 0")
    draw_first(s)
    assert seat_garden(s, 0)[0]["complete"]
    assert not any(t.startswith("plant") for t in notations(s))  # complete: no free slot


# --- WT7 / WT8: poisonous Flowers ----------------------------------------------------------------


def test_wt7_poison_completes_an_opponents_feature() -> None:
    s = position(hands={0: {"Ragwort": 1}}, gardens={1: [("St. George's Fountain", ["Yellow Starter", None])]})
    s.apply_text(f"plant Ragwort in {FOUNTAIN} of seat 1")
    d = core(s)
    assert (d["coins"], d["plants"]) == (2, 0)  # Ragwort's Plant: +2 coins to P1
    fountain = seat_garden(s, 1)[0]
    assert fountain["complete"] and fountain["wc_pending"]  # locked at once, WC later
    assert s.scores()[1] == 1 - 2  # Rep 1, Ragwort -2 counts for P2
    s.apply_text("end turn")
    draw_first(s)
    # At the start of P2's turn, before any action, P2's WC (+2 coins) resolves.
    assert s.current_player == 1
    d = core(s)
    assert d["coins"] == 2 and not s.view(1)["seats"][1]["garden"][0]["wc_pending"]


def test_wt8_non_poisonous_flowers_never_go_to_an_opponent() -> None:
    s = position(
        hands={0: {"Sunflower": 1, "Ragwort": 1}},
        gardens={1: [("St. George's Fountain", [None, None])], 0: [("Herb Spiral", [None, None])]},
    )
    texts = notations(s)
    assert f"plant Sunflower in {FOUNTAIN} of seat 1" not in texts
    assert f"plant Ragwort in {FOUNTAIN} of seat 1" in texts
    assert "plant Sunflower in Herb Spiral #9 of seat 0" in texts
    assert "plant Ragwort in Herb Spiral #9 of seat 0" in texts  # WPl5: own GF too


# --- WT9: Cultivate instead of Plant -------------------------------------------------------------


def test_wt9_playing_a_flower_resolves_cultivate() -> None:
    s = position(hands={0: {"Strawflower": 1}}, gardens={0: [("St. George's Fountain", [None, None])]})
    s.apply_text("play Strawflower")
    d = core(s)
    assert d["coins"] == 2 and d["plants"] == 1 and d["draws_pending"] == 0
    assert named(d["play"]) == {"Strawflower": 1}
    s.apply_text("end turn")
    assert named(core(s)["discard"][0]) == {"Strawflower": 1}  # stays in the deck cycle


# --- WT10: the end sequence ----------------------------------------------------------------------


def test_wt10_end_trigger_gives_every_other_player_one_final_turn() -> None:
    seven = [
        ("Glasshouse", ["Red Starter", "Yellow Starter", "Blue Starter", "Purple Starter"]),
        ("Rose Arch", ["Red Starter", "Yellow Starter", "Blue Starter"]),
        ("Trellis", ["Geranium", "Marigold"]),
        ("Sundial", ["Purple Starter", "Violet"]),
    ]
    s = position(players=3, first=0, turn=1, gardens={1: seven})
    assert s.view(0)["end_trigger"] is None
    s.apply_text("end turn")  # P2 ends its turn with 7 Reputation
    draw_first(s)
    view = s.view(0)
    assert view["end_trigger"] == 1 and view["final_turns_left"] == 2
    order = []
    while not s.is_terminal():
        if s.is_chance():
            draw_first(s)
            continue
        order.append(s.current_player)
        s.apply_text("end turn")
    assert order == [2, 0]  # P3 then P1; P2 never again
    assert s.scores()[1] == 7 + 2 + 2 + 1  # Rep 7 + Geranium, Marigold, Violet


def test_only_the_first_end_trigger_counts() -> None:
    seven = [
        ("Glasshouse", ["Red Starter", "Yellow Starter", "Blue Starter", "Purple Starter"]),
        ("Rose Arch", ["Red Starter", "Yellow Starter", "Blue Starter"]),
        ("Trellis", ["Geranium", "Marigold"]),
        ("Sundial", ["Purple Starter", "Violet"]),
    ]
    also_seven = [
        ("Glasshouse", ["Amaryllis", "Strawflower", "Delphinium", "Clematis"]),
        ("Pergola", ["Tulip", "Daffodil", "Iris"]),
        ("Stone Bench", ["Dahlia", "Bluebell"]),
        ("Wishing Well", ["Hydrangea", "Aster"]),
    ]
    s = position(players=3, first=0, turn=1, gardens={1: seven, 2: also_seven})
    s.apply_text("end turn")
    draw_first(s)
    s.apply_text("end turn")  # P3 also has 7: A11, no new trigger
    draw_first(s)
    view = s.view(0)
    assert view["end_trigger"] == 1 and view["final_turns_left"] == 1 and s.current_player == 0
    s.apply_text("end turn")
    assert s.is_terminal()


# --- WT13 / WT14: end of turn --------------------------------------------------------------------


def test_wt13_draw_reshuffles_the_discard_when_the_pile_runs_out() -> None:
    s = position(
        hands={0: {"Red Starter": 2, "Head Gardener": 1}},
        draws={0: {"Blue Starter": 1, "Purple Starter": 1}},
        discards={0: {"Yellow Starter": 2, "Basic Tools": 1}},
        play_area={"Blue Starter": 1, "Purple Starter": 1},
    )
    s.apply_text("end turn")
    d = core(s)
    assert d["discard_count"][0] == 8 and d["draw_count"][0] == 2
    kinds = sorted(s.action_to_string(a) for a, _ in s.chance_outcomes())
    assert kinds == ["seat 0 draws Blue Starter", "seat 0 draws Purple Starter"]  # the 2 first
    draw_first(s)
    d = core(s)
    # Both draw-pile cards were drawn; the 8 discarded cards became the new draw pile.
    assert d["hand_count"][0] == 5 and d["discard_count"][0] == 0 and d["draw_count"][0] == 5


def test_wt13_draws_step_by_step() -> None:
    s = position(
        hands={0: {"Red Starter": 2, "Head Gardener": 1}},
        draws={0: {"Blue Starter": 1, "Purple Starter": 1}},
        discards={0: {"Yellow Starter": 2, "Basic Tools": 1}},
        play_area={"Blue Starter": 1, "Purple Starter": 1},
    )
    s.apply_text("end turn")
    s.apply_text("seat 0 draws Blue Starter")
    s.apply_text("seat 0 draws Purple Starter")
    d = core(s)
    assert (d["hand_count"][0], d["draw_count"][0], d["discard_count"][0]) == (2, 8, 0)
    assert d["draws_pending"] == 3
    for _ in range(3):
        s.apply(s.chance_outcomes()[0][0])
    d = core(s)
    assert (d["hand_count"][0], d["draw_count"][0]) == (5, 5)


def test_draw_fewer_when_both_piles_are_empty() -> None:
    s = position(hands={0: {"Red Starter": 1}}, draws={0: {}}, discards={}, plants=1, gardens={0: [("Birdbath", [None, None])]})
    s.apply_text("plant Red Starter in Birdbath #2 of seat 0")
    s.apply_text("end turn")  # nothing left to draw: WE2 draw fewer
    assert s.current_player == 1
    assert core(s)["hand_count"][0] == 0


def test_wt14_unspent_coins_are_lost() -> None:
    s = position(hands={0: {"Red Starter": 1}}, coins=4)
    s.apply_text("end turn")
    draw_first(s)
    assert s.current_player == 1 and core(s)["coins"] == 0
    s.apply_text("end turn")
    draw_first(s)
    assert core(s)["coins"] == 0


# --- WT15: composting ------------------------------------------------------------------------------


def test_wt15_compost_heap_composts_two_starters() -> None:
    s = position(hands={0: {"Compost Heap": 1, "Red Starter": 2, "Amazon Expedition": 1}})
    before = s.scores()[0]
    s.apply_text("play Compost Heap")
    assert sorted(notations(s)) == sorted(["compost Red Starter from hand", "compost Amazon Expedition from hand", "stop"])
    s.apply_text("compost Red Starter from hand")
    s.apply_text("compost Red Starter from hand")
    d = core(s)
    assert d["depth"] == 0 and d["coins"] == 1
    assert named(d["compost"]).get("Red Starter") == 2
    s.apply_text("end turn")
    d = core(s)
    assert "Red Starter" not in named(d["discard"][0])  # gone from every count
    assert named(d["hand"][0]).get("Red Starter", 0) + named(d["draw"][0]).get("Red Starter", 0) == 0
    assert s.scores()[0] == before


def test_wt15_a_composted_expedition_no_longer_scores() -> None:
    s = position(hands={0: {"Compost Heap": 1, "Amazon Expedition": 1}})
    assert s.scores()[0] == 3
    s.apply_text("play Compost Heap")
    s.apply_text("compost Amazon Expedition from hand")
    assert s.scores()[0] == 0


def test_a_choice_with_nothing_left_to_pick_is_not_asked() -> None:
    """After a pick empties the hand, "stop" alone is not a decision."""
    s = position(hands={0: {"Compost Heap": 1, "Amazon Expedition": 1}})
    s.apply_text("play Compost Heap")  # COIN 1; COMPOST_HAND 2
    s.apply_text("compost Amazon Expedition from hand")  # 1 pick left, the hand is empty
    assert core(s)["depth"] == 0 and core(s)["frame_left"] == [0, 0, 0]
    assert "stop" not in notations(s) and "end turn" in notations(s)


# --- WT16: Basic Tools and a completed Birdbath ----------------------------------------------------


def test_wt16_basic_tools_second_planting_completes_birdbath() -> None:
    s = position(hands={0: {"Red Starter": 2, "Basic Tools": 1}}, gardens={0: [("Birdbath", [None, None])]})
    s.apply_text("play Basic Tools")
    assert core(s)["plants"] == 2
    s.apply_text("plant Red Starter in Birdbath #2 of seat 0")
    s.apply_text("plant Red Starter in Birdbath #2 of seat 0")
    assert s.is_chance()  # the WC: draw 1, now
    draw_first(s)
    assert seat_garden(s, 0)[0]["complete"]
    assert core(s)["hand_count"][0] == 1
    assert s.scores()[0] == 1  # Rep 1, two 0-point Flowers


# --- the effect vocabulary ------------------------------------------------------------------------


def test_uproot_composts_an_unlocked_flower_and_frees_the_slot() -> None:
    s = position(
        hands={0: {"Night Raid": 1}},
        gardens={
            0: [("Birdbath", ["Oleander", None])],
            1: [("Great Fountain", ["Golden Lily", None, "Orchid", None])],
        },
    )
    s.apply_text("play Night Raid")
    assert sorted(notations(s)) == sorted(
        [
            "uproot Oleander from Birdbath #2 of seat 0",
            "uproot Golden Lily from Great Fountain #28 of seat 1",
            "uproot Orchid from Great Fountain #28 of seat 1",
            "stop",
        ]
    )
    s.apply_text("uproot Golden Lily from Great Fountain #28 of seat 1")
    d = core(s)
    assert named(d["compost"]).get("Golden Lily") == 1 and d["depth"] == 0
    assert s.view(0)["seats"][1]["garden"][0]["slots"] == [None, None, "Orchid", None]


def test_locked_flowers_cannot_be_uprooted() -> None:
    s = position(hands={0: {"Night Raid": 1}}, gardens={1: [("Birdbath", ["Oleander", "Red Starter"])]})
    s.apply_text("play Night Raid")
    assert core(s)["depth"] == 0 and core(s)["coins"] == 1  # no target: the choice is skipped


def test_gain_basic_hand_takes_the_top_and_reveals_the_next() -> None:
    s = position(hands={0: {"Plant Exchange": 1}}, basic_top="Violet")
    s.apply_text("play Plant Exchange")
    assert named(core(s)["hand"][0]) == {"Violet": 1}
    assert s.is_chance()
    assert all(s.action_to_string(a).startswith("basic pile reveals") for a, _ in s.chance_outcomes())
    draw_first(s)
    assert s.current_player == 0 and core(s)["basic_top"] != wp.EMPTY


def test_start_of_turn_wc_with_a_choice_is_decided_by_its_owner() -> None:
    s = position(
        hands={0: {"Foxglove": 1}, 1: {"Red Starter": 1}},
        discards={1: {"Seed Hunting": 1}},
        gardens={1: [("Wishing Well", ["Blue Starter", None])]},
    )
    s.apply_text("plant Foxglove in Wishing Well #10 of seat 1")
    s.apply_text("end turn")
    draw_first(s)
    # P2's turn starts with Wishing Well's COMPOST_ANY 1, hand and discard both eligible.
    assert s.current_player == 1
    texts = notations(s)
    assert "compost Seed Hunting from discard" in texts and "stop" in texts
    assert "end turn" not in texts
    s.apply_text("compost Seed Hunting from discard")
    assert "end turn" in notations(s)


def test_buying_the_top_basic_flower_reveals_the_next() -> None:
    s = position(hands={0: {"Red Starter": 1}}, coins=2, basic_top="Buttercup")
    s.apply_text("buy Buttercup")
    assert named(core(s)["discard"][0]) == {"Buttercup": 1}
    assert s.is_chance()
    draw_first(s)
    assert core(s)["basic_top"] != wp.EMPTY


def test_plant_into_a_garden_feature_bought_this_turn() -> None:
    s = position(hands={0: {"Yellow Starter": 1}}, coins=2, gf_row=["St. George's Fountain", "Birdbath", "Trellis", "Arbor"])
    s.apply_text(f"buy {FOUNTAIN}")
    draw_first(s)
    assert f"plant Yellow Starter in {FOUNTAIN} of seat 0" in notations(s)  # WPl7


def test_coin_only_plays_are_legal_in_any_order() -> None:
    """WT1 "in any order": after `play Basic Tools` the Red Starter is still
    playable; both orders reach the same position, and the search expands every order."""
    hand = {"Red Starter": 1, "Basic Tools": 1, "Field Notes": 1}
    s = position(hands={0: hand})
    s.apply_text("play Basic Tools")
    assert "play Red Starter" in notations(s)
    assert s.search_actions() == s.legal_actions()
    s.apply_text("play Red Starter")
    t = position(hands={0: hand})
    t.apply_text("play Red Starter")
    t.apply_text("play Basic Tools")
    assert s.encode() == t.encode()  # the same position either way
    assert core(s)["coins"] == 2 and core(s)["plants"] == 2
    s.apply_text("play Field Notes")  # and the game goes on
    draw_first(s)
    assert s.current_player == 0 and "end turn" in notations(s)


def test_search_from_a_root_after_a_coin_only_play_offers_every_play() -> None:
    """The AI's own case: a search rooted after `play Basic Tools` must still consider the
    Red Starter (determinize, run at every iteration's root, clears the run's order)."""
    s = position(
        hands={0: {"Red Starter": 1, "Basic Tools": 1}},
        coins=2,
        market_row=["Mignonette", "Seed Hunting", "Field Notes", "Porters", "Geranium"],
    )
    s.apply_text("play Basic Tools")
    world = s.clone()
    world.kernel_state.determinize(0, 1)
    assert "play Red Starter" in [world.action_to_string(a) for a in world.search_actions()]
    moves = {m.notation for m in analyze(s, Limits(iterations=200, seed=1)).moves}
    assert "play Red Starter" in moves


def test_identical_garden_feature_copies_are_each_selectable() -> None:
    """Glasshouse #23 and #24 both in the row, two owned empty Topiary Walks: every
    copy is a legal target by its own number, for the search too."""
    s = position(
        hands={0: {"Yellow Starter": 1}},
        coins=6,
        gf_row=["Glasshouse", "Glasshouse", "Birdbath", "Trellis"],
        gardens={0: [("Topiary Walk", [None, None, None]), ("Topiary Walk", [None, None, None])]},
    )
    texts = notations(s)
    assert [t for t in texts if t.startswith("buy Glasshouse")] == ["buy Glasshouse #23", "buy Glasshouse #24"]
    plants = [t for t in texts if t.startswith("plant")]
    assert plants == ["plant Yellow Starter in Topiary Walk #17 of seat 0", "plant Yellow Starter in Topiary Walk #18 of seat 0"]
    assert s.search_actions() == s.legal_actions()
    s.apply_text("plant Yellow Starter in Topiary Walk #18 of seat 0")
    assert seat_garden(s, 0)[1]["label"] == "Topiary Walk #18"
    assert seat_garden(s, 0)[1]["slots"] == ["Yellow Starter", None, None]
    s.apply_text("buy Glasshouse #24")
    assert [g["label"] for g in seat_garden(s, 0)] == ["Topiary Walk #17", "Topiary Walk #18", "Glasshouse #24"]


def test_owner_chooses_the_order_of_several_pending_when_completed_bonuses() -> None:
    """WG2 "during their next turn": two Features completed by an opponent's
    poison; at the start of its turn the owner picks which bonus resolves first."""
    s = position(
        players=2,
        turn=1,
        hands={1: {"Red Starter": 1}},
        discards={1: {"Seed Hunting": 1}},
        gardens={1: [("Birdbath", ["Red Starter", "Oleander"]), ("Wishing Well", ["Blue Starter", "Foxglove"])]},
        pending_wc=["Birdbath", "Wishing Well"],
    )
    assert notations(s) == ["resolve Birdbath #2 when completed", "resolve Wishing Well #10 when completed"]
    assert s.search_actions() == s.legal_actions()
    first = s.clone()
    first.apply_text("resolve Wishing Well #10 when completed")  # COMPOST_ANY 1 first
    assert "compost Seed Hunting from discard" in notations(first)
    first.apply_text("compost Red Starter from hand")
    assert first.is_chance()  # then Birdbath's DRAW 1
    second = s.clone()
    second.apply_text("resolve Birdbath #2 when completed")
    assert second.is_chance()  # DRAW 1 first
    for state in (s, first, second):
        for a in state.legal_actions() + [x for x, _ in state.chance_outcomes()]:
            assert state.parse_action(state.action_to_string(a)) == a


def test_identical_pending_when_completed_bonuses_are_not_a_choice() -> None:
    s = position(
        players=2,
        hands={0: {"Ragwort": 1, "Foxglove": 1}},
        plants=2,
        gardens={1: [("St. George's Fountain", ["Yellow Starter", None]), ("Sundial", ["Purple Starter", None])]},
    )
    s.apply_text("plant Ragwort in St. George's Fountain #1 of seat 1")
    s.apply_text("plant Foxglove in Sundial #4 of seat 1")
    s.apply_text("end turn")
    draw_first(s)
    assert s.current_player == 1
    assert core(s)["coins"] == 4 and "end turn" in notations(s)  # COIN 2 twice, no question


def test_search_orders_coin_only_runs_only_inside_a_sampled_world() -> None:
    """search_actions equals legal_actions in a position a player reached; in a world the
    search sampled (determinize) it orders coin-only runs from that root on."""
    s = position(hands={0: {"Red Starter": 1, "Yellow Starter": 1, "Basic Tools": 1}})
    s.apply_text("play Basic Tools")
    assert s.search_actions() == s.legal_actions()
    world = s.clone()
    world.kernel_state.determinize(0, 3)
    assert world.search_actions() == world.legal_actions()  # the root: every play
    world.apply_text("play Yellow Starter")
    searched = [world.action_to_string(a) for a in world.search_actions()]
    assert "play Red Starter" in notations(world) and "play Red Starter" not in searched  # in-tree order


# --- any order: permutations, and what the search subset reaches ----------------------------------


def _rules_key(state: games.State) -> tuple[Any, ...]:
    """The position up to what the rules ignore: the coin-only run memory (last_pure) and the
    numbers of identical Garden Feature copies (their places and contents, sorted per kind)."""
    d = core(state)
    copies: dict[int, list[tuple[Any, ...]]] = {}
    for g in range(wp.N_GF):
        copies.setdefault(wp.GFS[g].kind, []).append((d["gf_loc"][g], d["gf_flags"][g], tuple(d["gf_slot"][g])))
    d["last_pure"] = 0
    for g in range(wp.N_GF):
        d["gf_loc"][g] = d["gf_flags"][g] = 0
        d["gf_slot"][g] = []
    return (state.current_player, repr(sorted(d.items())), repr(sorted((k, sorted(v)) for k, v in copies.items())))


def _random_positions(count: int, seed: int) -> list[games.State]:
    rng = random.Random(seed)
    out: list[games.State] = []
    while len(out) < count:
        s = GAME.new_game(players=rng.choice((2, 3, 4)), seed=rng.getrandbits(32))
        for _ in range(rng.randrange(1, 150)):
            s.resolve_chance(rng)
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        s.resolve_chance(rng)
        if not s.is_terminal():
            out.append(s)
    return out


def _play(state: games.State, actions: list[int]) -> games.State | None:
    """`actions` applied in order if each is legal when its turn comes and no chance node
    falls in between; None otherwise."""
    s = state.clone()
    for a in actions:
        if s.is_chance() or a not in s.legal_actions():
            return None
        s.apply(a)
    return s


def test_every_allowed_permutation_of_a_turns_moves_reaches_the_same_position() -> None:
    """From random positions, a random run of moves without chance between them;
    every reordering the rules allow is accepted and ends in the same position (the rules'
    position: the coin-only memory aside). Every legal action's notation round-trips."""
    rng = random.Random(14)
    checked = 0
    for s in _random_positions(150, 14):
        for a in s.legal_actions():
            assert s.parse_action(s.action_to_string(a)) == a
        run: list[int] = []
        t = s.clone()
        for _ in range(rng.choice((2, 3, 3, 4))):
            if t.current_player != s.current_player:
                break
            a = rng.choice(t.legal_actions())
            t.apply(a)
            run.append(a)
        if t.is_chance() or len(run) < 2:
            continue
        if rng.random() < 0.5:
            t2 = _play(s, sorted(run))  # at least the sorted order, often a new one
            if t2 is not None:
                assert _rules_key(t2) == _rules_key(t)
        for order in itertools.permutations(run):
            reached = _play(s, list(order))
            if reached is not None and list(order) != run:
                assert _rules_key(reached) == _rules_key(t), [s.action_to_string(a) for a in order]
                checked += 1
    assert checked > 20


def _reachable(root: games.State, depth: int, actions_of: str) -> set[tuple[Any, ...]]:
    seat = root.current_player
    seen = {_rules_key(root)}
    frontier = [root]
    for _ in range(depth):
        following = []
        for s in frontier:
            if s.current_player != seat:
                continue
            for a in getattr(s, actions_of)():
                child = s.clone()
                child.apply(a)
                key = _rules_key(child)
                if key not in seen:
                    seen.add(key)
                    following.append(child)
        frontier = following
    return seen


def test_search_subset_in_a_sampled_world_reaches_every_position_the_rules_allow() -> None:
    """In worlds the search samples (where search_actions prunes), every position
    reachable through the legal moves within a few decisions is reachable through the subset,
    up to the copy numbers of identical Garden Features; the subset is never empty."""
    checked = 0
    for i, s in enumerate(_random_positions(40, 15)):
        world = s.clone()
        world.kernel_state.determinize(s.current_player, i)
        assert world.search_actions()
        full = _reachable(world, 3, "legal_actions")
        if len(full) > 3000:
            continue
        assert full <= _reachable(world, 3, "search_actions")
        checked += 1
    assert checked > 20


# --- contradictory views are refused, naming the field -----------------------


def _contradictions(view: dict[str, Any], rng: random.Random) -> list[tuple[str, Any]]:
    """(expected field prefix, mutator) pairs that make `view` contradict itself."""
    seat = view["seat"]
    row, deck = view["garden_row"], view["garden_deck"]
    owned = [(p, i) for p, e in enumerate(view["seats"]) for i in range(len(e["garden"]))]
    out: list[tuple[str, Any]] = [
        ("garden_deck", lambda v: v["garden_deck"].append("Nonexistent #99")),
        ("garden_deck", lambda v: v["garden_deck"].remove(rng.choice(v["garden_deck"]))),
        ("turn_ending", lambda v: v.__setitem__("turn_ending", "no")),
        ("basic_top", lambda v: v.__setitem__("basic_top", "Rose")),
        ("players", lambda v: v.__setitem__("players", 5)),
        (f"seats[{seat}].hand_count", lambda v: v["seats"][seat].__setitem__("hand_count", v["seats"][seat]["hand_count"] + 1)),
        ("game", lambda v: v.__setitem__("game", "botanik")),
    ]
    if row:
        out.append(("garden_deck", lambda v: v["garden_deck"].append(rng.choice(v["garden_row"]))))
        out.append(("garden_row", lambda v: v["garden_row"].append(v["garden_row"][0])))
    if deck:
        out.append(("garden_deck", lambda v: v["garden_deck"].append(v["garden_deck"][0])))
    if owned:
        p, i = rng.choice(owned)
        label = view["seats"][p]["garden"][i]["label"]
        out.append(("garden_row", lambda v: v["garden_row"].append(label)))
        out.append(("garden_deck", lambda v: v["garden_deck"].append(label)))
        out.append((f"seats[{p}].garden", lambda v: v["seats"][p]["garden"].append(dict(v["seats"][p]["garden"][i]))))
        out.append((f"seats[{p}].garden[{i}].complete", lambda v: v["seats"][p]["garden"][i].__setitem__("complete", "yes")))
        out.append((f"seats[{p}].garden[{i}].slots", lambda v: v["seats"][p]["garden"][i]["slots"].append(None)))
    if view["effects"]:
        out.append(("effects[0].effect", lambda v: v["effects"][0].__setitem__("effect", "Rose play")))
    other = (seat + 1) % view["players"]
    out.append((f"seats[{other}]", lambda v: v["seats"][other]["unseen"].__setitem__("Himalayan Expedition", 9)))
    return out


def test_contradictory_views_are_refused_naming_the_field() -> None:
    """Views of random positions, each mutated to contradict itself (a Garden
    Feature in two places or none, an unknown label, a label twice, counts that disagree,
    wrong types ...): from_view refuses every one with InvalidPositionError naming the field."""
    rng = random.Random(155)
    tried = 0
    for s in _random_positions(25, 155):
        for seat in range(s.num_players):
            base = s.view(seat)
            GAME.from_view(base)  # the view itself is fine
            for expected, mutate in _contradictions(base, rng):
                view = copy.deepcopy(base)
                mutate(view)
                with pytest.raises(games.InvalidPositionError) as info:
                    GAME.from_view(view)
                assert info.value.field.startswith(expected), (expected, str(info.value))
                tried += 1
    assert tried > 300


def test_render_describes_cards_and_bonuses_in_words() -> None:
    """The picture shows each Market and hand card's colour, points, cost and
    abilities, and Garden Feature bonuses in words, not the effect notation."""
    s = position(
        hands={0: {"Mignonette": 1}},
        market_row=["Sunflower", "Porters", "Ragwort", "Rose", "Field Notes"],
        gf_row=["Japanese Garden", "Birdbath", "Trellis", "Arbor"],
    )
    text = s.render(0)
    assert "Mignonette: purple Flower, 2 points, cost 3; play: +2 coins; plant: +1 coin" in text
    assert "Sunflower: yellow Flower, 3 points, cost 5; play: +1 coin, +1 purchase; plant: draw 1 card" in text
    assert "Ragwort: Poisonous yellow Flower, -2 points" in text
    assert "Porters: Expedition, 0 points, cost 4; play: +1 coin, +1 purchase" in text
    assert "when completed: compost up to 2 cards from your hand or discard pile, +2 coins" in text
    assert "COMPOST_ANY" not in text and "WC " not in text
    assert "Mignonette" not in s.render(1)  # another seat's hand stays hidden


# --- game length, safety end, structure ------------------------------------------------------------


def test_safety_end_after_the_round_limit() -> None:
    s = position(players=2, first=0, turn=1, round=wp.ROUND_LIMIT, hands={1: {"Red Starter": 1}})
    s.apply_text("end turn")
    assert s.is_terminal()
    s = position(players=2, first=0, turn=0, round=wp.ROUND_LIMIT, hands={0: {"Red Starter": 1}})
    s.apply_text("end turn")
    assert not s.is_terminal()


def test_setup_deals_rows_first_player_and_hands() -> None:
    s = GAME.new_game(players=4)
    outcomes = s.chance_outcomes()
    assert [s.action_to_string(a) for a, _ in outcomes] == [f"seat {p} goes first" for p in range(4)]
    s.apply_text("seat 2 goes first")
    draw_first(s)
    d = core(s)
    assert s.current_player == 2 and d["round"] == 1
    assert d["market_row_count"] == 5 and d["gf_row_count"] == 4 and d["basic_top"] != wp.EMPTY
    assert d["hand_count"][:4] == [5, 5, 5, 5] and d["draw_count"][:4] == [5, 5, 5, 5]
    assert d["market_deck_count"] == 77 - 5 and d["gf_deck_count"] == 29 - 4 and d["basic_count"] == 15


def test_default_pool_counts() -> None:
    cards = wp.COMPONENTS.cards
    flowers = [c for c in cards if c.is_flower and c.category != wc.CATEGORY_STARTING]
    expeditions = [c for c in cards if not c.is_flower and c.category == wc.CATEGORY_MARKET]
    assert len(wp.COMPONENTS.garden_features) == 29
    assert sum(c.copies for c in expeditions) == 33
    assert sum(c.copies for c in flowers) == 60
    assert sum(c.copies for c in flowers if c.category == wc.CATEGORY_BASIC) == 16
    assert sum(c.copies * 4 for c in cards if c.category == wc.CATEGORY_STARTING and c.is_flower) == 32
    assert sum(c.copies for c in cards if c.is_poisonous) == 8
    assert len(cards) == 45
    for symbol in range(4):
        assert sum(gf.symbols.count(symbol) for gf in wp.COMPONENTS.garden_features) == 21


def test_policy_and_random_games_end() -> None:
    rng = random.Random(3)
    for players in (2, 4):
        s = GAME.new_game(players=players, seed=players)
        while not s.is_terminal():
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            action = kernel.policy_action(s.kernel_state.core(), rng.getrandbits(64))
            assert action in s.legal_actions()
            s.apply(action)
        assert s.view(0)["round"] <= wp.ROUND_LIMIT + 1
        assert abs(sum(s.returns()) - 1.0) < 1e-9


# --- hidden information ------------------------------------------------------------------------------


def midgame(players: int, seed: int, steps: int = 40) -> games.State:
    rng = random.Random(seed)
    s = GAME.new_game(players=players, seed=seed)
    for _ in range(steps):
        s.resolve_chance(rng)
        if s.is_terminal():
            break
        s.apply(rng.choice(s.legal_actions()))
    s.resolve_chance(rng)
    return s


def test_view_hides_other_hands_but_not_their_composition() -> None:
    s = midgame(3, 1)
    seat = s.current_player
    view = s.view(seat)
    d = core(s)
    for p in range(3):
        entry = view["seats"][p]
        if p == seat:
            assert "hand" in entry and "unseen" not in entry
        else:
            assert "hand" not in entry and "draw" not in entry
            unseen = [a + b for a, b in zip(d["hand"][p], d["draw"][p])]
            assert entry["unseen"] == named(unseen)
            assert entry["hand_count"] == d["hand_count"][p]


def test_determinize_resamples_only_hidden_hands() -> None:
    s = midgame(4, 2)
    seat = s.current_player
    hands = set()
    for world_seed in range(12):
        world = s.clone()
        world.kernel_state.determinize(seat, world_seed)
        assert world.view(seat) == s.view(seat)
        GAME.decode(world.encode())  # still a valid position
        d = core(world)
        hands.add(tuple(tuple(d["hand"][p]) for p in range(4) if p != seat))
    assert len(hands) > 1  # something is actually resampled


def test_cards_drawn_before_a_reshuffle_are_known_to_everyone() -> None:
    """WT13 seen by the opponent: the 2 cards of the old draw pile (known, since the discarded
    hand is public) are surely in the new hand; only the other 3 are resampled."""
    s = position(
        hands={0: {"Red Starter": 2, "Head Gardener": 1}},
        draws={0: {"Rose": 1, "Orchid": 1}},
        discards={0: {"Yellow Starter": 2, "Basic Tools": 1}},
        play_area={"Blue Starter": 1, "Purple Starter": 1},
    )
    s.apply_text("end turn")
    draw_first(s)
    assert s.current_player == 1
    view = s.view(1)
    assert view["seats"][0]["known_in_hand"] == {"Rose": 1, "Orchid": 1}
    hands = set()
    for world_seed in range(20):
        world = s.clone()
        world.kernel_state.determinize(1, world_seed)
        hand = named(core(world)["hand"][0])
        assert hand["Rose"] == 1 and hand["Orchid"] == 1 and sum(hand.values()) == 5
        hands.add(tuple(sorted(hand.items())))
    assert len(hands) > 1
    # The knowledge ends when seat 0's next turn starts (it may play those cards).
    s.apply_text("end turn")
    draw_first(s)
    assert s.current_player == 0 and s.view(1)["seats"][0]["known_in_hand"] == {}


def test_fairness_analysis_ignores_the_hidden_arrangement() -> None:
    """Two worlds that differ only in the other seats' hands give identical analyses."""
    s = midgame(3, 5)
    seat = s.current_player
    a = s.clone()
    b = s.clone()
    a.kernel_state.determinize(seat, 1)
    b.kernel_state.determinize(seat, 2)
    assert core(a)["hand"] != core(b)["hand"]
    limits = Limits(iterations=200, seed=9)
    first, second = analyze(a, limits), analyze(b, limits)
    assert [(m.action, m.visits) for m in first.moves] == [(m.action, m.visits) for m in second.moves]


def test_from_view_rebuilds_the_position_for_that_seat() -> None:
    """At decisions, sub-decisions and chance nodes alike, for every seat."""
    rng = random.Random(7)
    s = GAME.new_game(players=3, seed=7)
    for step in range(400):
        if s.is_terminal():
            break
        if step % 3 == 0:
            for seat in range(3):
                rebuilt = GAME.from_view(s.view(seat), seed=step)
                assert rebuilt.view(seat) == s.view(seat)
                assert rebuilt.current_player == s.current_player
                if s.current_player == seat:
                    assert rebuilt.legal_actions() == s.legal_actions()
        if s.is_chance():
            s.apply(rng.choices(*zip(*s.chance_outcomes()))[0])
        else:
            s.apply(rng.choice(s.legal_actions()))


def test_from_view_refuses_malformed_views() -> None:
    view = midgame(2, 3).view(0)
    broken = dict(view, market_row={"Dandelion": 1})
    with pytest.raises(games.InvalidPositionError) as info:
        GAME.from_view(broken)
    assert info.value.field == "market_row"
    broken = dict(view, coins=-1)
    with pytest.raises(games.InvalidPositionError) as info:
        GAME.from_view(broken)
    assert info.value.field == "coins"
    seats = [dict(entry) for entry in view["seats"]]
    seats[1]["unseen"] = {}
    with pytest.raises(games.InvalidPositionError) as info:
        GAME.from_view(dict(view, seats=seats))
    assert info.value.field == "seats[1].unseen"


# --- positions and data --------------------------------------------------------------------------------


def refused_field(d: dict[str, Any]) -> str:
    """Encode a hand-edited core (pile totals recomputed) and return the field decode names."""
    for key in (
        "hand_count",
        "draw_count",
        "discard_count",
        "play_count",
        "market_row_count",
        "market_deck_count",
        "basic_count",
        "gf_row_count",
        "gf_deck_count",
    ):
        d.pop(key)
    with pytest.raises(games.InvalidPositionError) as info:
        decode_core(bytes(kernel.dict_to_core(d)), d["players"])
    return info.value.field


def test_malformed_positions_are_refused_naming_the_field() -> None:
    s = position(hands={0: {"Red Starter": 1}}, gardens={0: [("Birdbath", ["Red Starter", None])]})
    d = core(s)
    d["market_deck"][k("Red Campion")] += 1  # a Basic Flower in the Market deck
    d["basic_pile"][k("Red Campion")] -= 1
    assert refused_field(d) == "market_deck"
    d = core(s)
    d["hand"][0][k("Rose")] += 1  # a card out of nowhere
    assert refused_field(d) == f"cards[{k('Rose')}]"
    d = core(s)
    d["gf_slot"][1][1] = k("Buttercup") + 1  # a yellow Flower under a red symbol
    d["basic_pile"][k("Buttercup")] -= 1
    assert refused_field(d) == "gf_slot[1][1]"
    d = core(s)
    for name, n in (("Head Gardener", 1), ("Red Starter", 2), ("Blue Starter", 2), ("Purple Starter", 1)):
        d["draw"][1][k(name)] -= n  # a waiting seat holding 6 cards
        d["hand"][1][k(name)] += n
    assert refused_field(d) == "hand_count[1]"
    d = core(s)
    d["depth"] = 1  # an effect frame at rest, not at a choice
    d["frame_effect"][0] = 2 * k("Seed Hunting")
    assert refused_field(d) == "stage"
    d = core(s)
    d["end_trigger"] = 1  # triggered, but no final turn counted
    assert refused_field(d) == "final_turns_left"


def load_default() -> dict[str, Any]:
    with open(wc.DEFAULT_PATH, "rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["cards"][13].update(play="COINS 2"), "cards[13] (Mignonette).play: unknown effect 'COINS'"),
        (lambda d: d["cards"][13].update(cost="three"), "cards[13] (Mignonette).cost"),
        (lambda d: d["cards"][13].update(symbol="green"), "cards[13] (Mignonette).symbol: 'green' is not one of the symbols"),
        (lambda d: d["cards"][36].update(plant="COIN 1"), "cards[36] (Field Notes).plant: only a Flower"),
        (lambda d: d["cards"][4].update(cost=3), "cards[4] (Head Gardener).cost: starting cards are never bought"),
        (lambda d: d["cards"][13].update(play="DRAW"), "cards[13] (Mignonette).play: DRAW needs a number"),
        (lambda d: d["cards"][13].update(colour="red"), "cards[13] (Mignonette): unknown fields ['colour']"),
        (
            lambda d: d["garden_features"][0].update(symbols=["yellow", "gold"]),
            "garden_features[0] (St. George's Fountain).symbols",
        ),
        (
            lambda d: d["garden_features"][0].update(when_completed="COIN 2; FLY 1"),
            "garden_features[0] (St. George's Fountain).when_completed: unknown effect 'FLY'",
        ),
        (lambda d: d["cards"].append(dict(d["cards"][13])), "cards[45] (Mignonette).name: duplicate"),
        (lambda d: d["garden_features"][18].update(copies=7), "garden_features: 33 cards"),
    ],
)
def test_malformed_card_file_is_rejected_naming_card_and_field(mutate: Any, message: str) -> None:
    data = load_default()
    mutate(data)
    with pytest.raises(wc.ComponentDataError) as info:
        wc.parse(data)
    assert message in str(info.value)


def test_malformed_toml_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "cards.toml"
    path.write_text("[[cards]\nname = 'x'\n")
    with pytest.raises(wc.ComponentDataError, match="not valid TOML"):
        wc.load(path)


def test_default_card_file_loads_and_round_trips_effects() -> None:
    comps = wc.load()
    strawflower = comps.cards[comps.kind_index("Strawflower")]
    assert strawflower.plant == (("COIN", 5), ("DRAW", 1), ("PLANT", 1))
    assert strawflower.play == (("COIN", 2),)
    assert comps.cards[comps.kind_index("Mignonette")].cost == 3
    fountain = comps.garden_features[0]
    assert (fountain.name, fountain.cost, fountain.reputation, fountain.symbols) == ("St. George's Fountain", 2, 1, (1, 1))


def test_notation_is_readable_and_round_trips() -> None:
    s = position(hands={0: {"Ragwort": 1, "Compost Heap": 1}}, coins=4, gardens={1: [("St. George's Fountain", [None, None])]})
    for action in s.legal_actions():
        text = s.action_to_string(action)
        assert s.parse_action(text.upper()) == action
    assert "plant Ragwort in St. George's Fountain #1 of seat 1" in notations(s)
    assert "end turn" in notations(s)


# --- through the service and the command line ------------------------------------------------------


def test_service_plays_war_of_the_posies() -> None:
    from hortus.clients import AdvisorClient
    from hortus.server import ServerConfig, create_server

    server, port = create_server("127.0.0.1:0", ServerConfig(default_iterations=50))
    try:
        with AdvisorClient(f"127.0.0.1:{port}") as client:
            info = client.new_game("war_of_the_posies", 3, seed=7, options={"tiebreak_count": "locked_only"})
            state = GAME.decode(info.position.encoded)
            assert state == GAME.new_game(players=3, seed=7, options={"tiebreak_count": "locked_only"})
            legal = client.legal_actions(info.position)
            assert [a.id for a in legal.actions] == state.legal_actions()
            assert [a.notation for a in legal.actions] == notations(state)
            suggestion = client.suggest_move(info.position, iterations=100, seed=1)
            assert suggestion.action.id in state.legal_actions()
            after = client.apply_actions(info.position, [suggestion.action.id])
            state.apply(suggestion.action.id)
            assert GAME.decode(after.position.encoded) == state
    finally:
        server.stop(0)


def test_hortus_play_war_of_the_posies(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from hortus.cli import main

    # The human types "1" (the first legal action, "end turn") throughout; the AI plays.
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 3000))
    assert main(["play", "war_of_the_posies", "--seed", "3", "--iterations", "20"]) == 0
    out = capsys.readouterr().out
    assert "You play: end turn" in out and "AI seat 1 (AI) plays:" in out and "Chance: seat" in out
    assert "Game over." in out and "Final scores:" in out
