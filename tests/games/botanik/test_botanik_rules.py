"""Botanik rule scenarios KT1-KT16 of botanik.decisions.md, the rulebook's 14-VP example and
every rule option (FLAG)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    s = position(
        top=[t("yellow", "gear"), t("red", "loop"), t("blue", "open"), t("purple", "plant"), t("yellow", "veg")],
        arrival=[t("red", "gear2"), t("green", "loop")],
    )
    assert side_targets(s, "red gear") == {1, 2}


def test_kt2_link_by_type_only() -> None:
    s = position(
        top=[t("yellow", "gear"), t("red", "loop"), t("blue", "open"), t("purple", "plant"), t("yellow", "veg")],
        arrival=[t("red", "gear2"), t("green", "loop")],
    )
    assert side_targets(s, "green loop") == {2}


def test_kt3_plant_and_vegetable_are_different_types() -> None:
    s = position(
        top=[t("red", "plant"), t("yellow", "gear"), t("yellow", "gear2"), t("yellow", "loop"), t("yellow", "loop2")],
        arrival=[t("red", "veg"), t("blue", "veg")],
    )
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
    s = position(
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "open"), t("red", "plant")],
        side=([t("blue", "loop"), E, E, E, E], [E] * 5),
        arrival=[t("yellow", "cc")],
    )
    s.apply_text("yellow covered-cross to stack 1")
    view = s.view(0)
    assert view["queue"][0] == [t("blue", "loop")] and view["side"][0][0] == E
    assert s.current_player == 0
    assert all(text.startswith("build blue loop at") for text in notations(s))


def test_kt6_only_unlinked_tile_is_freed() -> None:
    s = position(
        top=[t("blue", "loop"), *FILLER_TOPS, t("red", "open"), t("red", "plant")],
        side=([t("blue", "gear"), E, E, E, E], [t("red", "loop"), E, E, E, E]),
        arrival=[t("yellow", "loop2")],
    )
    s.apply_text("yellow loop to stack 1")
    view = s.view(0)
    assert view["queue"] == [[t("blue", "gear")], []]
    assert view["side"][1][0] == t("red", "loop")


def test_kt7_both_tiles_freed() -> None:
    s = position(
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
        side=([t("blue", "loop"), E, E, E, E], [t("red", "gear"), E, E, E, E]),
        arrival=[t("yellow", "open")],
    )
    s.apply_text("yellow open-cross to stack 1")
    view = s.view(0)
    assert view["queue"] == [[t("blue", "loop")], [t("red", "gear")]]
    assert s.current_player == 0  # A9: the turn player's items first
    s.apply(s.legal_actions()[0])
    assert s.current_player == 1  # then the opponent's freed tile, in the turn player's turn


def test_kt8_linked_by_colour_stays() -> None:
    s = position(
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
        side=([t("yellow", "gear"), E, E, E, E], [E] * 5),
        arrival=[t("yellow", "loop"), t("purple", "loop")],
    )
    s.apply_text("yellow loop to stack 1")
    view = s.view(0)
    assert view["queue"] == [[], []] and view["side"][0][0] == t("yellow", "gear")
    assert s.current_player == 1  # the turn passed


def test_kt9_meca_exchange_after_the_turn_player_finishes() -> None:
    s = position(
        me=0,
        top=[t("green", "gear"), t("purple", "gear"), t("red", "loop"), t("green", "cc"), t("purple", "cc")],
        side=([E, E, t("blue", "loop"), E, E], [E, E, t("red", "meca"), E, E]),
        arrival=[t("blue", "gear")],
    )
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
        (t("yellow", "gear*"), 1, 0, 1),
        (t("yellow", "open"), 2, 0, 0),
        (t("yellow", "gear"), 3, 0, 1),
        (t("yellow", "loop*"), 2, 1, 0),
        (t("green", "gear*"), -1, 0, 1),
        (t("green", "cc*"), -2, 0, 1),
        (t("green", "loop"), -2, 1, 3),
        (t("green", "plant"), 0, -1, 0),
        (t("red", "gear"), 0, 1, 0),
        (t("red", "veg"), 0, 2, 2),
        (t("yellow", "plant"), 1, 1, 0),
        (t("red", "gear2"), 3, -1, 1),
        (t("red", "loop"), 4, -1, 3),
        (t("red", "gear*"), 4, -2, 0),
    )


def test_kt11_rulebook_scoring_example_is_14() -> None:
    s = position(
        stage="over",
        top=[t("blue", "gear"), t("blue", "gear2"), t("blue", "loop"), t("blue", "loop2"), t("blue", "cc")],
        machines=(kt11_machine(), machine(1)),
    )
    assert s.is_terminal()
    assert s.scores() == [14.0, 0.0]
    assert s.returns() == [1.0, 0.0]


def test_kt11_red_gear_flower_is_removed_with_its_island() -> None:
    # The flowered red Gear at (4,-2) is in the removed island: the 4 single flowers counted are
    # the yellow Gear*, yellow Loop*, green Gear* and green Covered-cross*.
    s = position(
        stage="over",
        top=[t("blue", "gear"), t("blue", "gear2"), t("blue", "loop"), t("blue", "loop2"), t("blue", "cc")],
        machines=(kt11_machine()[:-1] + [(t("red", "gear*"), 4, -2, 0)], machine(1)),
    )
    assert s.scores()[0] == 14.0


def test_kt12_first_placements_touch_the_source() -> None:
    s = position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("yellow", "gear2")], []),
    )
    assert sorted(notations(s)) == sorted(
        [
            "build yellow gear at 1,0 pipes E,W",
            "build yellow gear at -1,0 pipes E,W",
            "build yellow gear at 0,1 pipes N,S",
            "build yellow gear at 0,-1 pipes N,S",
        ]
    )


def test_kt13_placement_may_not_close_the_network() -> None:
    plants = machine(0, (t("yellow", "plant"), 0, -1, 0), (t("red", "plant"), -1, 0, 3), (t("blue", "plant"), 0, 1, 2))
    s = position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("green", "plant")], []),
        machines=(plants, machine(1)),
    )
    texts = notations(s)
    assert "build green plant at 1,0 pipes W" not in texts  # its only pipe would close the last open end
    assert "build green plant at -1,-1 pipes N" in texts
    assert "build green plant at -1,-1 pipes W" in texts


def test_kt14_a_tile_with_no_placement_is_removed() -> None:
    # With no_cycles the Source may be sealed by four dead ends; a freed Open-cross then has no
    # legal placement anywhere (every free neighbour cell faces a blank side) and is removed.
    sealed = machine(
        0,
        (t("yellow", "plant"), 0, -1, 0),
        (t("red", "plant"), -1, 0, 3),
        (t("blue", "plant"), 0, 1, 2),
        (t("green", "plant"), 1, 0, 1),
    )
    s = position(
        top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
        side=([t("blue", "open"), E, E, E, E], [E] * 5),
        arrival=[t("yellow", "loop"), t("purple", "loop")],
        machines=(sealed, machine(1)),
        options={"closure_rule": "no_cycles"},
    )
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
    return position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("blue", "loop")], []),
        machines=(ring, machine(1)),
        options={"closure_rule": rule},
    )


@pytest.mark.parametrize("rule, closes_loop_allowed", [("open_end", True), ("no_cycles", False), ("both", False)])
def test_flag_closure_rule(rule: str, closes_loop_allowed: bool) -> None:
    s = cycle_position(rule)
    assert ("build blue loop at 0,1 pipes N,E" in notations(s)) is closes_loop_allowed


def test_flag_closure_both_also_needs_an_open_end() -> None:
    plants = machine(0, (t("yellow", "plant"), 0, -1, 0), (t("red", "plant"), -1, 0, 3), (t("blue", "plant"), 0, 1, 2))
    kwargs = dict(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), t("green", "gear"), t("green", "loop"), t("red", "cc"), t("red", "gear")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("green", "plant")], []),
        machines=(plants, machine(1)),
    )
    assert "build green plant at 1,0 pipes W" in notations(position(**kwargs, options={"closure_rule": "no_cycles"}))
    assert "build green plant at 1,0 pipes W" not in notations(position(**kwargs, options={"closure_rule": "both"}))


@pytest.mark.parametrize("adjacency, points", [("orthogonal", 3), ("pipe", 0)])
def test_flag_group_adjacency(adjacency: str, points: int) -> None:
    m = machine(
        0,
        (t("yellow", "gear"), 1, 0, 1),
        (t("yellow", "loop"), 2, 0, 2),
        (t("blue", "loop"), 2, 1, 3),
        (t("yellow", "gear2"), 1, 1, 1),
    )
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
    s = position(me=0, top=tops, side=([t("red", "meca"), t("purple", "loop"), E, E, E], [E] * 5), arrival=[t("blue", "gear")])
    s.apply_text("blue gear to stack 1")  # frees my red Meca
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


def test_baseline_playout_policy_draws_placements_uniformly() -> None:
    """The frozen baseline's playout policy (baseline_rollout_action) samples machine
    placements by rejection: uniform over the legal ones."""
    s = position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("yellow", "loop2")], []),
        machines=(machine(0, (t("green", "gear"), 1, 0, 1), (t("green", "loop"), 2, 0, 2)), machine(1)),
    )
    legal = s.legal_actions()
    assert len(legal) > 4
    draws = 12000
    counts = {a: 0 for a in legal}
    for seed in range(draws):
        counts[s.kernel_state.rollout_action(seed, baseline=True)] += 1
    expected = draws / len(legal)
    p = 1 / len(legal)
    assert all(abs(c - expected) <= 5 * (expected * (1 - p)) ** 0.5 for c in counts.values())


# --- every legal order, readable pictures, nothing hidden -------------------------


def two_exchanges(identical: bool, stop_at_seat1_choice: bool = False) -> games.State:
    """Seat 0 places a blue Gear on stack 1 and frees both seats' Meca-Botanists. Seat 0
    exchanges its red Meca for stack 2's top, which frees a side tile of each seat; seat 1 then
    exchanges its yellow Meca for stack 3's top, which frees its side tile there: seat 1 has
    three pending items (with `identical`, the first two are identical purple Gears)."""
    tops = [
        t("green", "meca"),
        t("purple", "loop*"),
        t("purple", "gear2") if identical else t("blue", "loop"),
        t("green", "plant"),
        t("red", "veg"),
    ]
    side0 = [t("red", "meca"), t("purple", "cc"), E, E, E]
    side1 = [t("yellow", "meca"), t("purple", "gear"), t("blue", "gear*") if identical else t("blue", "open"), E, E]
    s = position(me=0, top=tops, side=(side0, side1), arrival=[t("blue", "gear")])
    s.apply_text("blue gear to stack 1")
    s.apply_text("exchange red meca-botanist for purple loop* on stack 2")
    assert sorted(notations(s)) == ["first purple covered-cross", "first purple loop*"]
    while s.current_player == 0:  # seat 0 builds its two tiles
        s.apply(s.legal_actions()[0])
    assert sorted(notations(s)) == ["first purple gear", "first yellow meca-botanist"]
    if stop_at_seat1_choice:
        return s
    s.apply_text("first yellow meca-botanist")
    top3 = "purple gear" if identical else "blue loop"
    s.apply_text(f"exchange yellow meca-botanist for {top3} on stack 3")
    assert s.current_player == 1 and len(s.view(1)["queue"][1]) == 3
    return s


def test_order_choice_covers_a_third_pending_item() -> None:
    # K-MB5 "in the order of your choice": any of the three pending items may go first.
    s = two_exchanges(identical=False)
    assert s.view(1)["queue"][1] == [t("purple", "gear"), t("blue", "loop"), t("blue", "open")]
    assert notations(s) == ["first purple gear", "first blue loop", "first blue open-cross"]
    s.apply_text("first blue open-cross")
    # the chosen item goes first, the others keep their order
    assert s.view(1)["queue"][1] == [t("blue", "open"), t("purple", "gear"), t("blue", "loop")]
    assert all(x.startswith("build blue open-cross at") for x in notations(s))
    s.apply(s.legal_actions()[0])
    assert notations(s) == ["first purple gear", "first blue loop"]


def test_identical_first_items_do_not_hide_a_different_third() -> None:
    s = two_exchanges(identical=True)
    assert s.view(1)["queue"][1] == [t("purple", "gear"), t("purple", "gear2"), t("blue", "gear*")]
    # the two purple Gears are one choice (nothing tells them apart); the flowered blue Gear
    # is a real alternative
    assert notations(s) == ["first purple gear", "first blue gear*"]
    s.apply_text("first blue gear*")
    assert all(x.startswith("build blue gear* at") for x in notations(s))


def test_rotations_are_named_by_their_pipes() -> None:
    s = position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("yellow", "cc")], []),
    )
    texts = notations(s)
    # the T junction east of the Source must pipe West into it: three of its sides, W among them
    east = sorted(x.rsplit(" ", 1)[1] for x in texts if " at 1,0 " in x)
    assert east == sorted(["N,E,W", "N,S,W", "E,S,W"])
    assert all(" r0" not in x and " r1" not in x for x in texts)
    for action in s.legal_actions():  # the named sides are the drawn exits
        sides = s.action_to_string(action).rsplit(" ", 1)[1].split(",")
        exits = bk.kernel.tile_exits(t("yellow", "cc"), action & 3)
        assert sides == [bk.SIDES[d] for d in range(4) if exits >> d & 1]


def test_svg_picture_offers_every_build_cell() -> None:
    # The SVG picture reads build targets from the notation: with pipes-named rotations each of
    # the four cells around the Source is still a clickable target.
    s = position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), *FILLER_TOPS, t("red", "cc"), t("red", "plant")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("yellow", "gear2")], []),
    )
    svg = s.picture(0)
    for cell in ("1,0", "-1,0", "0,1", "0,-1"):
        assert f"build at {cell}" in svg


def test_every_orientation_has_its_own_name() -> None:
    # Names are unique per distinct orientation (A3) for every tile, so round trips stay exact.
    for tile in range(bk.N_COLOURED + 2):
        if bk.is_meca(tile):
            continue
        rotations = bk.kernel.distinct_rotations(tile)
        names = [bk.pipes_name(tile, r) for r in rotations]
        assert len(set(names)) == len(names)
        for r in range(4):  # a rotation not kept is named like the orientation it repeats
            assert bk.pipes_name(tile, r) in names


def test_bridge_conduits_are_named_apart() -> None:
    # Replacement data with two conduits per tile ("bridge" reading of A1) names each conduit.
    assert bk.pipes_name(t("red", "gear"), 1) == "pipes E,W"
    from hortus.games.botanik.components import TileType

    bridge = TileType("covered_cross", 3, ((0, 2), (1, 3)), (1, 0, 0), False, False)
    conduits = sorted(sorted((d + 1) % 4 for d in q) for q in bridge.conduits)
    assert "+".join(",".join(bk.SIDES[d] for d in q) for q in conduits) == "N,S+E,W"


def test_tile_codes_never_reuse_a_letter() -> None:
    colour_letters = {c.lower() for c in bk.COLOUR_CODES}
    type_letters = {c.lower() for c in bk.TYPE_CODES}
    assert len(colour_letters) == 5 and len(type_letters) == len(bk.COMPONENTS.tile_types)
    assert not colour_letters & type_letters
    assert bk.tile_code(t("purple", "plant")) == "Pt3" and bk.tile_code(t("green", "gear*")) == "Gw1"
    key = bk.key_text()
    assert "P purple" in key and "t plant" in key and "w gear" in key and "G green" in key
    assert "*" in key  # the star of "red gear*" is explained


def test_registry_cells_never_run_together() -> None:
    longest = [t("purple", "cc*"), t("yellow", "cc*"), t("green", "cc*"), t("red", "cc*"), t("blue", "cc*")]
    assert len(bk.tile_name(longest[0])) == len(bk.tile_name(longest[1])) == 21  # the longest names
    s = position(top=longest, arrival=[t("red", "gear")])
    row = next(line for line in s.render().splitlines() if line.startswith("central top"))
    assert row.split()[2:] == [
        "purple",
        "covered-cross*",
        "yellow",
        "covered-cross*",
        "green",
        "covered-cross*",
        "red",
        "covered-cross*",
        "blue",
        "covered-cross*",
    ]
    assert "covered-cross*yellow" not in row


def test_final_picture_names_the_winner_and_the_tie_break() -> None:
    tops = [t("blue", "gear"), t("blue", "gear2"), t("blue", "loop"), t("blue", "loop2"), t("blue", "cc")]
    s = position(stage="over", top=tops, machines=(kt11_machine(), machine(1)))
    assert "Game over: seat 0 wins, 14 points to 0 (machine tiles 10 and 0)." in s.render()
    a = machine(0, (t("red", "gear"), 1, 0, 1), (t("yellow", "gear"), 2, 0, 1))
    b = machine(1, (t("green", "gear"), 1, 0, 1))
    s = position(stage="over", top=tops, machines=(a, b))
    text = s.render()
    assert "seat 0 wins the tie-break with 2 machine tiles to 1" in text
    assert "Machine of seat 1: 0 points, 1 tile piped to the Source (tie-break)" in text
    b = machine(1, (t("green", "gear"), 1, 0, 1), (t("purple", "gear"), 2, 0, 1))
    assert "a draw, 0 points and 2 machine tiles each" in position(stage="over", top=tops, machines=(a, b)).render()
    assert "Game over" not in position(top=tops, arrival=[t("red", "gear")]).render()


def random_positions(count: int, seed: int = 0) -> list[games.State]:
    """Decision positions met in seeded random games (every 7th decision)."""
    g = games.get("botanik")
    out: list[games.State] = []
    game_seed = seed
    while len(out) < count:
        rng = random.Random(game_seed)
        s = g.new_game(seed=game_seed)
        step = 0
        while not s.is_terminal() and len(out) < count:
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            if step % 7 == 3:
                out.append(s.clone())
            s.apply(rng.choice(s.legal_actions()))
            step += 1
        game_seed += 1
    return out


def random_position(rng: random.Random) -> games.State:
    """A position after a random number of random decisions (chance, decision or the end)."""
    s = games.get("botanik").new_game(seed=rng.getrandbits(32))
    for _ in range(rng.randrange(0, 130)):
        if s.is_terminal():
            break
        if s.is_chance():
            s.resolve_chance(rng)
        else:
            s.apply(rng.choice(s.legal_actions()))
    return s


def test_nothing_hidden_and_nothing_differs_between_seats() -> None:
    """Audit: Botanik has no private information. Both seats see the same
    picture and the whole position; determinizing (any seed, any observer) changes nothing; the
    draw probabilities depend only on public tiles (65 minus every tile seen)."""
    g = games.get("botanik")
    for s in random_positions(25, seed=40):
        assert s.render(0) == s.render(1) == s.render()
        for seat in (0, 1):
            for seed in (1, 2, 99):
                assert g.from_view(s.view(seat), seed=seed).encode() == s.encode()
            ks = s.kernel_state.clone()
            ks.determinize(seat, 12345)
            assert bytes(ks.core()) == bytes(s.kernel_state.core())
        view = s.view(0)
        seen = set(view["top"]) | {x for row in view["side"] for x in row} | set(view["arrival"])
        seen |= {x for q in view["queue"] for x in q} | set(view["buried"]) | set(view["removed"])
        seen |= {m[0] for ms in view["machines"] for m in ms}
        unseen = [x for x in range(65) if x not in seen]
        assert sum(1 for x in bk.kernel.core_to_dict(s.kernel_state.core())["status"] if x == bk.AT_POOL) == len(unseen)


def pending(state: games.State, seat: int) -> list[int]:
    queue: list[int] = state.view(seat)["queue"][seat]
    return queue


def resolve_in_order(state: games.State, seat: int, order: list[int], choice: dict[int, int]) -> games.State | None:
    """Resolve `seat`'s pending items in `order` (tile ids: the items pending now and those
    they bring, the tiles an exchange takes or frees), each with its action in `choice` (a build
    or an exchange). None when the rules do not allow that order with those choices."""
    s = state.clone()
    for tile in order:
        queue = pending(s, seat)
        if s.current_player != seat or tile not in queue:
            return None
        if queue[0] != tile or any(s.action_to_string(a).startswith("first ") for a in s.legal_actions()):
            first = next((a for a in s.legal_actions() if s.action_to_string(a) == f"first {bk.tile_name(tile)}"), None)
            if first is None:
                return None
            s.apply(first)
            if pending(s, seat)[0] != tile:
                return None  # an identical copy stands for it: another order of the same thing
        if choice[tile] not in s.legal_actions():
            return None
        s.apply(choice[tile])
    return s if not pending(s, seat) else None


def same_position(a: games.State, b: games.State) -> bool:
    """Equal as positions: the same view once each machine's tiles are sorted (the core lists
    a machine's tiles in build order, which no rule reads), and the same options to move."""

    def key(s: games.State) -> dict[str, object]:
        view = s.view(0)
        view["machines"] = [sorted(map(tuple, m)) for m in view["machines"]]
        return view

    return key(a) == key(b) and a.legal_actions() == b.legal_actions() and a.scores() == b.scores()


def check_every_order(s: games.State, rng: random.Random) -> int | None:
    """Resolve the decider's pending items once with random choices (the reference), then in
    every order of those items with the same build spots and exchange columns: each order the
    rules allow must reach the reference position. The number of orders reached, or None when
    the reference itself hands over to the other seat (A9 interleaving)."""
    import itertools

    seat = s.current_player
    ref = s.clone()
    choice: dict[int, int] = {}
    while ref.current_player == seat and pending(ref, seat):
        firsts = [a for a in ref.legal_actions() if ref.action_to_string(a).startswith("first ")]
        if firsts:
            ref.apply(rng.choice(firsts))
            continue
        action = rng.choice(ref.legal_actions())
        choice[pending(ref, seat)[0]] = action
        ref.apply(action)
    if pending(ref, seat) or len(choice) > 6:
        return None
    orders = 0
    for perm in itertools.permutations(choice):
        reached = resolve_in_order(s, seat, list(perm), choice)
        if reached is not None:
            orders += 1
            assert same_position(reached, ref), perm
    assert orders >= 1
    return orders


def test_every_order_of_pending_items_reaches_the_same_position() -> None:
    """Conformance for Botanik: a seat's pending items commute. From random positions
    where a seat has two or more pending items, every order the rules allow with the same
    choices is accepted and reaches the same position."""
    g = games.get("botanik")
    checked = orders = 0
    game_seed = 0
    while checked < 15 and game_seed < 400:
        rng = random.Random(game_seed)
        s = g.new_game(seed=game_seed)
        game_seed += 1
        while not s.is_terminal():
            if s.is_chance():
                s.resolve_chance(rng)
                continue
            seat = s.current_player
            if len(pending(s, seat)) >= 2 and not s.view(seat)["order_locked"][seat]:
                reached = check_every_order(s, rng)
                if reached is not None:
                    checked += 1
                    orders += reached
                break
            s.apply(rng.choice(s.legal_actions()))
    assert checked >= 15 and orders > checked


@pytest.mark.parametrize("identical", [False, True])
def test_a_meca_exchange_and_a_build_commute(identical: bool) -> None:
    # Random play almost never frees both seats' Meca-Botanists at once: the constructed case.
    s = two_exchanges(identical, stop_at_seat1_choice=True)
    assert pending(s, 1) == [t("yellow", "meca"), t("purple", "gear")]
    total = 0
    for seed in range(6):
        orders = check_every_order(s, random.Random(seed))
        assert orders is not None
        total += orders
    assert total > 6  # some references allow more than one order (the exchange before or after the build)


def reachable(state: games.State, depth: int, search: bool) -> set[bytes]:
    """Positions reached by up to `depth` decisions (stopping at chance and the end)."""
    out = {state.encode()}
    if depth == 0 or state.current_player < 0:
        return out
    for action in state.search_actions() if search else state.legal_actions():
        child = state.clone()
        child.apply(action)
        out |= reachable(child, depth - 1, search)
    return out


def test_search_subset_reaches_every_position() -> None:
    """The canonical subset the search expands (search_actions) is non-empty wherever legal
    actions exist, lies inside them, and loses no position within two decisions."""
    for s in random_positions(30, seed=70):
        legal, search = s.legal_actions(), s.search_actions()
        assert search and set(search) <= set(legal)
        if len(legal) <= 40:
            assert reachable(s, 2, True) == reachable(s, 2, False)


# --- a view that contradicts itself is refused, naming the field -------------


def _place_of(view: dict, tile: int) -> str:
    """The view field that lists `tile`."""
    for c, x in enumerate(view["top"]):
        if x == tile:
            return f"top[{c}]"
    for p in range(2):
        for c, x in enumerate(view["side"][p]):
            if x == tile:
                return f"side[{p}][{c}]"
        for i, x in enumerate(view["queue"][p]):
            if x == tile:
                return f"queue[{p}][{i}]"
        for i, m in enumerate(view["machines"][p]):
            if m[0] == tile:
                return f"machines[{p}][{i}]"
    for i, x in enumerate(view["arrival"]):
        if x == tile:
            return f"arrival[{i}]"
    for key in ("buried", "removed"):
        if tile in view[key]:
            return f"{key}[{view[key].index(tile)}]"
    return "pool"


def contradict(view: dict, kind: int, rng: random.Random) -> tuple[dict, set[str]]:
    """A copy of `view` made contradictory in one way, and the fields an error may name."""
    import copy

    v = copy.deepcopy(view)
    top_tile = v["top"][rng.randrange(5)]
    if kind == 0:  # a third side row, holding a tile also on top
        v["side"].append([top_tile, E, E, E, E])
        return v, {"side"}
    if kind == 1:  # a third queue
        v["queue"].append([top_tile])
        return v, {"queue"}
    if kind == 2:  # a third machine
        v["machines"].append([[bk.SOURCE_ID, 0, 0, 0]])
        return v, {"machines"}
    if kind == 3:
        v["order_locked"] = [0, 0, 0]
        return v, {"order_locked"}
    if kind == 4:  # a tile listed twice: somewhere else too
        field = rng.choice(["buried", "removed", "queue0", "queue1"])
        if field.startswith("queue"):
            p = int(field[-1])
            v["queue"][p].append(top_tile)
            where = f"queue[{p}][{len(v['queue'][p]) - 1}]"
        else:
            v[field].append(top_tile)
            where = f"{field}[{len(v[field]) - 1}]"
        return v, {where, _place_of(view, top_tile)}
    if kind == 5:  # the undrawn count no longer fits the phase
        if v["buried"]:
            v["buried"].pop()  # a buried tile listed nowhere (so taken as undrawn)
        else:
            listed = {x for x in v["top"] + v["arrival"]} | {x for row in v["side"] for x in row}
            listed |= {x for q in v["queue"] for x in q} | {m[0] for ms in v["machines"] for m in ms}
            v["removed"].append(min(x for x in range(65) if x not in listed and x not in v["removed"]))
        return v, {"buried"}
    if kind == 6:
        v["players"] = rng.choice([1, 3, 4])
        return v, {"players"}
    if kind == 7:
        v["colour"] = "red"
        return v, {"colour"}
    if kind == 8:
        v["tile_names"] = dict(v["tile_names"], **{"3": "blue gear"})
        return v, {"tile_names['3']"}
    if kind == 9:
        v["options"] = dict(v["options"], ruleset="classic")
        return v, {"options.ruleset"}
    if kind == 10:  # a Source in the middle of a machine
        p = rng.randrange(2)
        v["machines"][p].append([bk.SOURCE_ID + 1 - p, 5, 5, 0])
        return v, {f"machines[{p}][{len(v['machines'][p]) - 1}]"}
    v["side"] = v["side"][:1]  # kind 11: a seat's side row missing
    return v, {"side"}


CONTRADICTIONS = 12


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.integers(0, CONTRADICTIONS - 1))
def test_contradictory_views_are_refused_naming_the_field(seed: int, kind: int) -> None:
    rng = random.Random(seed)
    s = random_position(rng)
    view = s.view(rng.randrange(2))
    bad, fields = contradict(view, kind, rng)
    with pytest.raises(games.InvalidPositionError) as info:
        games.get("botanik").from_view(bad)
    assert info.value.field in fields, (kind, info.value)


def test_third_side_row_is_refused_through_a_structured_view() -> None:
    # The path a gRPC client takes: BotanikView with three `side` rows, the third holding a
    # tile that is also on top (it used to be ignored).
    from hortus.views import structured_to_view, view_to_structured

    s = random_positions(1, seed=5)[0]
    view = s.view(0)
    view["side"].append([view["top"][0], E, E, E, E])
    name, again = structured_to_view(view_to_structured("botanik", view))
    with pytest.raises(games.InvalidPositionError) as info:
        games.get(name).from_view(again)
    assert info.value.field == "side"
