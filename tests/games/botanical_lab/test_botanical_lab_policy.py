"""Botanical Lab's playout policy: the frozen baseline search keeps the policy of
2026-12-01 (the kernel's baseline_rollout_action), the current policy is always legal and
deterministic given its seed, and it plays the obvious moves the rules reward (LP1 with LO1,
LP2 with LP3, A7)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from hortus import games

from botanical_lab_positions import SQUARE, position, search_world
from positions import assert_baseline_frozen, assert_baseline_playout_changes_the_search, midgame

RED, BLUE = 0, 1
R1, R2, R3 = 0, 1, 2

# Moves of seeded `mcts-base:100` self-play (seat 0 bot seed 1, seat 1 bot seed 2; the game's
# seed drives setup and chance), recorded on main at 8953d7a before the playout policy changed.
FROZEN_GAMES = {
    7: (
        [43.0, 25.0],
        [
            11,
            46,
            11,
            11,
            0,
            128,
            0,
            0,
            126,
            175,
            0,
            11,
            11,
            46,
            0,
            77,
            66,
            94,
            11,
            46,
            12,
            0,
            92,
            93,
            1086,
            11,
            46,
            0,
            0,
            11,
            0,
            61,
            93,
            64,
            0,
            12,
            11,
            42,
            172,
            1086,
            1101,
            1101,
            1101,
            1086,
            0,
            12,
            42,
            11,
            0,
            0,
            1112,
            0,
            11,
            0,
            121,
            78,
            76,
            0,
            1114,
            1110,
            0,
            0,
            126,
            170,
            171,
            92,
            0,
            11,
            41,
            0,
            1086,
            1101,
            1102,
            1086,
            93,
            64,
            1107,
            0,
            0,
            94,
            93,
            77,
            76,
            93,
            12,
            11,
            43,
            0,
            11,
            0,
            64,
            0,
            0,
            0,
            78,
            91,
            77,
            64,
            0,
            12,
            41,
            175,
            63,
            76,
            0,
            1108,
            1109,
            1112,
            0,
            11,
            41,
            11,
            0,
            95,
            185,
            133,
            11,
            0,
            170,
            78,
            77,
            93,
            0,
            186,
            231,
            93,
            76,
            1086,
            1102,
            11,
            0,
            62,
            0,
            12,
            11,
            48,
            121,
            77,
            76,
            0,
            76,
            126,
            0,
            11,
            0,
            69,
            61,
            0,
            0,
            0,
            11,
            0,
            129,
            1086,
            1101,
            66,
            64,
            11,
            11,
            47,
            77,
            63,
            0,
            11,
            0,
            1088,
            0,
            12,
            0,
            91,
            171,
            128,
            1086,
            1101,
            1113,
            0,
            11,
            0,
            124,
            1086,
            1102,
            175,
            62,
            11,
            0,
            92,
            66,
            62,
            0,
            12,
            47,
            11,
            11,
            178,
            227,
            11,
            41,
            1086,
            79,
            0,
            1109,
            1112,
            0,
            0,
            63,
            67,
            1086,
            95,
            1086,
            1116,
            1117,
            0,
            0,
            0,
            0,
        ],
    ),
    8: (
        [39.0, 33.0],
        [
            12,
            11,
            47,
            11,
            129,
            78,
            11,
            46,
            11,
            12,
            11,
            48,
            171,
            11,
            41,
            0,
            0,
            11,
            41,
            0,
            121,
            93,
            92,
            76,
            11,
            46,
            0,
            79,
            78,
            95,
            133,
            12,
            11,
            0,
            1088,
            77,
            179,
            0,
            91,
            92,
            91,
            172,
            122,
            0,
            0,
            0,
            1087,
            96,
            76,
            93,
            61,
            12,
            41,
            0,
            91,
            1086,
            84,
            0,
            11,
            0,
            65,
            1086,
            93,
            92,
            11,
            46,
            11,
            76,
            128,
            1086,
            1102,
            0,
            12,
            46,
            0,
            93,
            91,
            126,
            1087,
            1110,
            1115,
            0,
            11,
            12,
            48,
            0,
            1107,
            1109,
            0,
            11,
            0,
            121,
            171,
            1086,
            1086,
            1112,
            1107,
            1108,
            1109,
            0,
            11,
            0,
            83,
            63,
            94,
            175,
            1114,
            0,
            12,
            11,
            52,
            11,
            11,
            44,
            0,
            122,
            1086,
            1101,
            128,
            1086,
            1102,
            1086,
            0,
            11,
            0,
            66,
            80,
            78,
            77,
            11,
            41,
            0,
            93,
            91,
            126,
            0,
            1114,
            1113,
            1108,
            0,
            11,
            63,
            71,
            76,
            1087,
            11,
            12,
            47,
            124,
            1088,
            122,
            0,
            175,
            129,
            1086,
            1101,
            95,
            91,
            171,
            1086,
            1086,
            78,
            61,
            1110,
            1108,
            1109,
            1112,
            0,
        ],
    ),
}
# The same day's baseline analysis (500 iterations, seed 5) of a position after 60 random steps.
FROZEN_ANALYSIS = [
    (124, 69),
    (128, 64),
    (95, 53),
    (175, 43),
    (96, 40),
    (176, 40),
    (171, 34),
    (0, 28),
    (66, 25),
    (62, 20),
    (121, 20),
    (126, 20),
    (65, 13),
    (63, 11),
    (174, 11),
    (172, 9),
]


def test_the_frozen_baseline_plays_as_on_2026_12_01() -> None:
    """mcts-base (baseline_playout) plays move for move as before the policy changed."""
    assert_baseline_frozen("botanical_lab", FROZEN_GAMES, midgame("botanical_lab", 4, 60), FROZEN_ANALYSIS)


def test_baseline_playout_switch_reaches_the_search() -> None:
    """The same search differs with baseline_playout: the two policies differ."""
    assert_baseline_playout_changes_the_search(midgame("botanical_lab", 4, 40))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(2, 4))
def test_the_policies_are_legal_and_deterministic(seed: int, players: int) -> None:
    """Over the decisions of a game played half by the policy, half at random, in a search's
    world (the policy's list then prunes orders) and outside: both policies only propose legal
    actions, and the same seed gives the same proposal."""
    rng = random.Random(seed)
    state = games.get("botanical_lab").new_game(players=players, seed=seed)
    decisions = 0
    while not state.is_terminal() and decisions < 400:
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        legal = set(state.legal_actions())
        world = search_world(state, rng.getrandbits(32)) if decisions % 3 == 0 else state
        for _ in range(3):
            s = rng.getrandbits(64)
            proposal = world.kernel_state.rollout_action(s)
            assert proposal in set(world.legal_actions()) and proposal == world.kernel_state.rollout_action(s)
            assert world.kernel_state.rollout_action(s, baseline=True) in set(world.legal_actions())
        state.apply(state.kernel_state.rollout_action(rng.getrandbits(64)) if decisions % 2 else rng.choice(sorted(legal)))
        decisions += 1


def proposals(state: games.State, baseline: bool = False, draws: int = 400) -> Counter[str]:
    """What a policy proposes over `draws` seeds, in a search's world (as playouts see it)."""
    world = search_world(state)
    return Counter(world.action_to_string(world.kernel_state.rollout_action(seed, baseline=baseline)) for seed in range(draws))


def test_lp1_the_assistant_goes_where_its_flowers_are_observed() -> None:
    """LO1: flowers are observed only in the room where the assistant ends Phase 2. With
    nothing to grow or prepare in R1 and an own square flower in R2, the policy spends a card
    to move there (LP1); the baseline policy saw no use in R2 and mostly ended Phase 2."""
    s = position(rooms={RED: R1}, hands={RED: {"exp1": 1}}, board={"R2(1,1)": ("flower", RED, SQUARE)})
    current = proposals(s)
    baseline = proposals(s, baseline=True)
    assert current["move to R2 with exp1"] > 0.8 * 400, current
    assert baseline["move to R2 with exp1"] < 0.2 * 400, baseline


def test_lp2_a_seed_goes_where_the_fertilizer_in_hand_sprouts_it() -> None:
    """LP2 then LP3: with a square seed and a triangle-hexagon fertilizer in R2, the seed goes
    on a space the fertilizer then sprouts (R2(0,1), R2(1,2), R2(2,1) list triangle or hexagon;
    R2(1,0) and R2(1,1) do not), before the fertilizer is played."""
    s = position(
        rooms={RED: R2},
        extra={RED: {"square seed": 1, "triangle-hexagon fertilizer": 1}},
        hands={RED: {"square seed": 1, "triangle-hexagon fertilizer": 1}},
    )
    sprouting = {"prepare R2(0,1) with square seed", "prepare R2(1,2) with square seed", "prepare R2(2,1) with square seed"}
    current = proposals(s)
    baseline = proposals(s, baseline=True)
    assert sum(current[t] for t in sprouting) > 0.85 * 400, current
    assert sum(baseline[t] for t in sprouting) < 0.75 * 400, baseline
    assert current["fertilize with triangle-hexagon fertilizer"] < 0.1 * 400, current


def test_a7_the_fertilizer_player_picks_the_dearer_flower_for_itself() -> None:
    """A7: the fertilizer player chooses the breed of a multi-breed space: its own prepared
    R1(0,1) (circle or triangle) sprouts as triangle (2 VP a flower against 1), another seat's
    as circle."""
    for owner, wanted in ((RED, "sprout R1(0,1) as triangle"), (BLUE, "sprout R1(0,1) as circle")):
        s = position(
            rooms={RED: R1}, hands={RED: {"circle-triangle fertilizer": 1, "exp1": 1}}, board={"R1(0,1)": ("prepared", owner, 0)}
        )
        s.apply_text("fertilize with circle-triangle fertilizer")
        current = proposals(s)
        assert current[wanted] > 0.85 * 400, (owner, current)
        assert proposals(s, baseline=True)[wanted] < 0.65 * 400, owner
