"""Botanik rule scenarios KT1-KT16 of botanik.decisions.md, the rulebook's 14-VP example and
every rule option (FLAG)."""

from __future__ import annotations

import random

import pytest

from hortus import games
from hortus.games.botanik import game as bk

from botanik_positions import E, machine, notations, position, t

FILLER_TOPS = [t("green", "plant"), t("purple", "veg")]


def side_targets(state: games.State, tile_name: str) -> set[int]:
    """Columns (1-based) where `tile_name` may go on the own side."""
    out = set()
    for text in notations(state):
        if text.startswith(tile_name + " to side "):
            out.add(int(text.rsplit(" ", 1)[1]))
    return out


def test_kt1_link_by_colour_or_type() -> None:
    s = position(top=[t("yellow", "gear"), t("red", "loop"), t("blue", "open"), t("purple", "plant"), t("yellow", "veg")],
                 arrival=[t("red", "gear2"), t("green", "loop")])
    assert side_targets(s, "red gear") == {1, 2}


def test_kt2_link_by_type_only() -> None:
    s = position(top=[t("yellow", "gear"), t("red", "loop"), t("blue", "open"), t("purple", "plant"), t("yellow", "veg")],
                 arrival=[t("red", "gear2"), t("green", "loop")])
    assert side_targets(s, "green loop") == {2}


def test_kt3_plant_and_vegetable_are_different_types() -> None:
    s = position(top=[t("red", "plant"), t("yellow", "gear"), t("yellow", "gear2"), t("yellow", "loop"), t("yellow", "loop2")],
                 arrival=[t("red", "veg"), t("blue", "veg")])
    assert 1 in side_targets(s, "red vegetable")
    assert 1 not in side_targets(s, "blue vegetable")


def test_kt4_occupied_side_and_only_central_targets() -> None:
    tops = [t("yellow", "gear"), t("red", "gear"), t("blue", "gear"), t("green", "gear"), t("purple", "gear")]
    mine = [t("yellow", "loop"), t("red", "loop"), t("blue", "loop"), t("green", "loop"), t("purple", "loop")]
    s = position(top=tops, side=(mine, [E] * 5), arrival=[t("red", "gear2")])
    assert side_targets(s, "red gear") == set()
    assert all(" to stack " in text for text in notations(s))
    assert len(notations(s)) == 5
    s = position(top=tops, side=([mine[0], E, E, E, E], [E] * 5), arrival=[t("yellow", "gear2")])
    assert 1 not in side_targets(s, "yellow gear")


def test_kt5_central_placement_frees_own_tile() -> None:
    s = position(top=[t("blue", "gear"), *FILLER_TOPS, t("red", "open"), t("red", "plant")],
                 side=([t("blue", "loop"), E, E, E, E], [E] * 5), arrival=[t("yellow", "cc")])
    s.apply_text("yellow covered-cross to stack 1")
    view = s.view(0)
    assert view["queue"][0] == [t("blue", "loop")] and view["side"][0][0] == E
    assert s.current_player == 0
    assert all(text.startswith("build blue loop at") for text in notations(s))


def test_kt6_only_unlinked_tile_is_freed() -> None:
    s = position(top=[t("blue", "loop"), *FILLER_TOPS, t("red", "open"), t("red", "plant")],
                 side=([t("blue", "gear"), E, E, E, E], [t("red", "loop"), E, E, E, E]), arrival=[t("yellow", "loop2")])
    s.apply_text("yellow loop to stack 1")
    view = s.view(0)
    assert view["queue"] == [[t("blue", "gear")], []]
    assert view["side"][1][0] == t("red", "loop")


def test_kt7_both_tiles_freed() -> None:
    s = position(top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
                 side=([t("blue", "loop"), E, E, E, E], [t("red", "gear"), E, E, E, E]), arrival=[t("yellow", "open")])
    s.apply_text("yellow open-cross to stack 1")
    view = s.view(0)
    assert view["queue"] == [[t("blue", "loop")], [t("red", "gear")]]
    assert s.current_player == 0  # A9: the turn player's items first
    s.apply(s.legal_actions()[0])
    assert s.current_player == 1  # then the opponent's freed tile, in the turn player's turn


def test_kt8_linked_by_colour_stays() -> None:
    s = position(top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
                 side=([t("yellow", "gear"), E, E, E, E], [E] * 5), arrival=[t("yellow", "loop"), t("purple", "loop")])
    s.apply_text("yellow loop to stack 1")
    view = s.view(0)
    assert view["queue"] == [[], []] and view["side"][0][0] == t("yellow", "gear")
    assert s.current_player == 1  # the turn passed


def test_kt9_meca_exchange_after_the_turn_player_finishes() -> None:
    s = position(me=0, top=[t("green", "gear"), t("purple", "gear"), t("red", "loop"), t("green", "cc"), t("purple", "cc")],
                 side=([E, E, t("blue", "loop"), E, E], [E, E, t("red", "meca"), E, E]),
                 arrival=[t("blue", "gear")])
    s.apply_text("blue gear to stack 3")
    # B's Meca is freed; A has nothing pending, so B exchanges now.
    assert s.current_player == 1
    texts = notations(s)
    assert "exchange red meca-botanist for blue gear on stack 3" in texts  # K-MB3
    s.apply_text("exchange red meca-botanist for blue gear on stack 3")
    view = s.view(0)
    assert view["top"][2] == t("red", "meca")
    # The Meca on top frees A's Blue Loop (neither red nor a Meca); A resolves it first (A9).
    assert view["queue"] == [[t("blue", "loop")], [t("blue", "gear")]]
    assert s.current_player == 0


def test_kt10_meca_exchange_targets_exclude_mecas() -> None:
    tops = [t("yellow", "meca"), t("red", "gear"), t("blue", "loop"), t("green", "meca"), t("purple", "plant")]
    s = position(me=0, top=tops, side=([E, E, E, E, t("purple", "meca")], [E] * 5), arrival=[t("red", "gear2")])
    s.apply_text("red gear to stack 5")  # frees my purple Meca
    assert sorted(text.rsplit(" ", 1)[1] for text in notations(s)) == ["2", "3", "5"]


def kt11_machine() -> list[tuple[int, int, int, int]]:
    """The rulebook's scoring example with the A1 geometry (decisions.md KT11)."""
    return machine(
        0,
        (t("yellow", "gear*"), 1, 0, 1), (t("yellow", "open"), 2, 0, 0), (t("yellow", "gear"), 3, 0, 1),
        (t("yellow", "loop*"), 2, 1, 0), (t("green", "gear*"), -1, 0, 1), (t("green", "cc*"), -2, 0, 1),
        (t("green", "loop"), -2, 1, 3), (t("green", "plant"), 0, -1, 0), (t("red", "gear"), 0, 1, 0),
        (t("red", "veg"), 0, 2, 2), (t("yellow", "plant"), 1, 1, 0), (t("red", "gear2"), 3, -1, 1),
        (t("red", "loop"), 4, -1, 3), (t("red", "gear*"), 4, -2, 0),
    )


def test_kt11_rulebook_scoring_example_is_14() -> None:
    s = position(stage="over", top=[t("blue", "gear"), t("blue", "gear2"), t("blue", "loop"), t("blue", "loop2"), t("blue", "cc")],
                 machines=(kt11_machine(), machine(1)))
    assert s.is_terminal()
    assert s.scores() == [14.0, 0.0]
    assert s.returns() == [1.0, 0.0]


def test_kt11_red_gear_flower_is_removed_with_its_island() -> None:
    # The flowered red Gear at (4,-2) is in the removed island: the 4 single flowers counted are
    # the yellow Gear*, yellow Loop*, green Gear* and green Covered-cross*.
    s = position(stage="over", top=[t("blue", "gear"), t("blue", "gear2"), t("blue", "loop"), t("blue", "loop2"), t("blue", "cc")],
                 machines=(kt11_machine()[:-1] + [(t("red", "gear*"), 4, -2, 0)], machine(1)))
    assert s.scores()[0] == 14.0


def test_kt12_first_placements_touch_the_source() -> None:
    s = position(stage="resolve", placed=1, top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
                 arrival=[t("red", "open"), t("purple", "open")], queue=([t("yellow", "gear2")], []))
    assert sorted(notations(s)) == sorted([
        "build yellow gear at 1,0 r1", "build yellow gear at -1,0 r1",
        "build yellow gear at 0,1 r0", "build yellow gear at 0,-1 r0",
    ])


def test_kt13_placement_may_not_close_the_network() -> None:
    plants = machine(0, (t("yellow", "plant"), 0, -1, 0), (t("red", "plant"), -1, 0, 3), (t("blue", "plant"), 0, 1, 2))
    s = position(stage="resolve", placed=1, top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
                 arrival=[t("red", "open"), t("purple", "open")], queue=([t("green", "plant")], []), machines=(plants, machine(1)))
    texts = notations(s)
    assert "build green plant at 1,0 r1" not in texts  # its only pipe would close the last open end
    assert "build green plant at -1,-1 r2" in texts
    assert "build green plant at -1,-1 r1" in texts


def test_kt14_a_tile_with_no_placement_is_removed() -> None:
    # With no_cycles the Source may be sealed by four dead ends; a freed Open-cross then has no
    # legal placement anywhere (every free neighbour cell faces a blank side) and is removed.
    sealed = machine(0, (t("yellow", "plant"), 0, -1, 0), (t("red", "plant"), -1, 0, 3),
                     (t("blue", "plant"), 0, 1, 2), (t("green", "plant"), 1, 0, 1))
    s = position(top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
                 side=([t("blue", "open"), E, E, E, E], [E] * 5), arrival=[t("yellow", "loop"), t("purple", "loop")],
                 machines=(sealed, machine(1)), options={"closure_rule": "no_cycles"})
    s.apply_text("yellow loop to stack 1")
    view = s.view(0)
    assert t("blue", "open") in view["removed"]
    assert view["queue"] == [[], []] and len(view["machines"][0]) == 5
    assert s.current_player == 1


def test_kt15_complete_game_structure() -> None:
    g = games.get("botanik")
    rng = random.Random(15)
    s = g.new_game(seed=15)
    placements = [0, 0]
    registry_turns: list[int] = []
    holders: list[int] = []
    while not s.is_terminal():
        if s.is_chance():
            holders.append(s.view(0)["holder"])
            s.resolve_chance(rng)
            continue
        view = s.view(0)
        action = rng.choice(s.legal_actions())
        if view["stage"] == "registry":
            placements[s.current_player] += 1
            registry_turns.append(s.current_player)
        s.apply(action)
    assert placements == [30, 30]
    assert registry_turns == [i % 2 for i in range(60)]  # A B A / B A B / ... strictly alternating
    # new_game(seed) drew phase 1's arrival; phases 2..20 each start with a draw, and the
    # pawn alternates A, B, A, ... (seat 0 is A).
    assert holders == [phase % 2 for phase in range(1, 20)]
    view = s.view(0)
    assert view["phase"] == 20 and view["arrival"] == [E, E, E]


def test_kt16_tie_break_on_machine_tiles() -> None:
    tops = [t("blue", "gear"), t("blue", "gear2"), t("blue", "loop"), t("blue", "loop2"), t("blue", "cc")]
    a = machine(0, (t("red", "gear"), 1, 0, 1), (t("yellow", "gear"), 2, 0, 1))
    b = machine(1, (t("green", "gear"), 1, 0, 1))
    s = position(stage="over", top=tops, machines=(a, b))
    assert s.scores() == [0.0, 0.0]
    assert s.returns() == [1.0, 0.0]
    b = machine(1, (t("green", "gear"), 1, 0, 1), (t("purple", "gear"), 2, 0, 1))
    s = position(stage="over", top=tops, machines=(a, b))
    assert s.returns() == [0.5, 0.5]


# --- rule options (FLAGs) -------------------------------------------------------------------

def cycle_position(rule: str) -> games.State:
    ring = machine(0, (t("yellow", "loop"), 1, 0, 2), (t("red", "loop"), 1, 1, 3))
    return position(stage="resolve", placed=1, top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
                    arrival=[t("red", "open"), t("purple", "open")], queue=([t("blue", "loop")], []),
                    machines=(ring, machine(1)), options={"closure_rule": rule})


@pytest.mark.parametrize("rule, closes_loop_allowed", [("open_end", True), ("no_cycles", False), ("both", False)])
def test_flag_closure_rule(rule: str, closes_loop_allowed: bool) -> None:
    s = cycle_position(rule)
    assert ("build blue loop at 0,1 r0" in notations(s)) is closes_loop_allowed


def test_flag_closure_both_also_needs_an_open_end() -> None:
    plants = machine(0, (t("yellow", "plant"), 0, -1, 0), (t("red", "plant"), -1, 0, 3), (t("blue", "plant"), 0, 1, 2))
    kwargs = dict(stage="resolve", placed=1, top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
                  arrival=[t("red", "open"), t("purple", "open")], queue=([t("green", "plant")], []), machines=(plants, machine(1)))
    assert "build green plant at 1,0 r1" in notations(position(**kwargs, options={"closure_rule": "no_cycles"}))
    assert "build green plant at 1,0 r1" not in notations(position(**kwargs, options={"closure_rule": "both"}))


@pytest.mark.parametrize("adjacency, points", [("orthogonal", 3), ("pipe", 0)])
def test_flag_group_adjacency(adjacency: str, points: int) -> None:
    m = machine(0, (t("yellow", "gear"), 1, 0, 1), (t("yellow", "loop"), 2, 0, 2),
                (t("blue", "loop"), 2, 1, 3), (t("yellow", "gear2"), 1, 1, 1))
    tops = [t("blue", "gear"), t("blue", "gear2"), t("red", "loop"), t("red", "loop2"), t("red", "cc")]
    s = position(stage="over", top=tops, machines=(m, machine(1)), options={"group_adjacency": adjacency})
    assert s.scores()[0] == points


@pytest.mark.parametrize("first", [0, 1])
def test_flag_first_player(first: int) -> None:
    s = games.get("botanik").new_game(seed=3, options={"first_player": str(first)})
    assert s.current_player == first
    assert s.view(0)["holder"] == first


def test_plant_flowers_need_a_direct_same_colour_link() -> None:
    tops = [t("blue", "gear"), t("blue", "gear2"), t("red", "loop"), t("red", "loop2"), t("red", "cc")]
    # Green Plant piped into a green Gear: 3 flowers. Piped into the Source only: 0 (A6, A13).
    linked = machine(0, (t("green", "gear"), 1, 0, 1), (t("green", "plant"), 2, 0, 1))
    lonely = machine(0, (t("green", "plant"), 1, 0, 1))
    assert position(stage="over", top=tops, machines=(linked, machine(1))).scores()[0] == 3
    assert position(stage="over", top=tops, machines=(lonely, machine(1))).scores()[0] == 0


def test_order_choice_for_two_recovered_tiles() -> None:
    # K-MB5: the exchange recovers the stack top and frees my side tile: I choose the order.
    tops = [t("red", "loop"), t("purple", "gear"), t("green", "cc"), t("green", "gear"), t("purple", "cc")]
    s = position(me=0, top=tops, side=([t("red", "meca"), t("purple", "loop"), E, E, E], [E] * 5),
                 arrival=[t("blue", "gear")])
    s.apply_text("blue gear to stack 1")          # frees my red Meca
    s.apply_text("exchange red meca-botanist for purple gear on stack 2")  # Meca on top frees my purple loop
    assert sorted(notations(s)) == ["first purple gear", "first purple loop"]
    s.apply_text("first purple loop")
    assert all(x.startswith("build purple loop") for x in notations(s))


def test_illegal_actions_are_refused() -> None:
    s = games.get("botanik").new_game(seed=2)
    with pytest.raises(games.IllegalActionError):
        s.apply(0xFFFF)
    with pytest.raises(games.IllegalActionError):
        s.parse_action("plant a tree")
    legal = s.legal_actions()
    bad = next(a for a in range(0x40) if a not in legal)
    with pytest.raises(games.IllegalActionError):
        s.apply(bad)


def test_playout_policy_draws_placements_uniformly() -> None:
    """The playout policy samples machine placements by rejection: uniform over the legal ones."""
    s = position(stage="resolve", placed=1, top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
                 arrival=[t("red", "open"), t("purple", "open")], queue=([t("yellow", "loop2")], []),
                 machines=(machine(0, (t("green", "gear"), 1, 0, 1), (t("green", "loop"), 2, 0, 2)), machine(1)))
    legal = s.legal_actions()
    assert len(legal) > 4
    draws = 12000
    counts = {a: 0 for a in legal}
    for seed in range(draws):
        counts[s.kernel_state.rollout_action(seed)] += 1
    expected = draws / len(legal)
    p = 1 / len(legal)
    assert all(abs(c - expected) <= 5 * (expected * (1 - p)) ** 0.5 for c in counts.values())
