"""Botanik's playout policy: the frozen baseline search keeps the uniform sampler
of 2026-12-01 (the kernel's baseline_rollout_action), the current policy is always legal and
deterministic given its seed, and it plays the obvious moves the rules reward."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from hortus import games

from botanik_positions import E, machine, position, t
from positions import (
    assert_baseline_frozen,
    assert_baseline_playout_changes_the_search,
    assert_policies_legal_along_a_game,
    midgame,
)

# Moves of seeded `mcts-base:100` self-play (seat 0 bot seed 1, seat 1 bot seed 2; the game's
# seed drives setup and chance), recorded on main at 015731a before the playout policy changed.
FROZEN_GAMES = {
    7: (
        [8.0, 2.0],
        [
            24,
            33,
            0,
            34,
            28,
            12,
            18,
            41,
            24702,
            10,
            24449,
            24963,
            28,
            8,
            24452,
            43,
            35,
            10,
            25,
            40,
            28,
            8,
            40,
            24,
            9,
            44,
            25,
            10,
            0,
            32,
            24,
            24700,
            24956,
            41,
            20,
            11,
            32768,
            24195,
            8,
            24,
            40,
            12,
            23938,
            25,
            40,
            2,
            17,
            32,
            11,
            36,
            19,
            1,
            26,
            23680,
            40,
            24459,
            11,
            24964,
            18,
            40,
            0,
            35,
            24,
            23426,
            8,
            28,
            23168,
            40,
            8,
            25,
            24445,
            23172,
            36,
            10,
            22918,
            18,
            41,
        ],
    ),
    8: (
        [4.0, 7.0],
        [
            1,
            28,
            43,
            19,
            10,
            42,
            43,
            27,
            24451,
            12,
            3,
            28,
            43,
            24710,
            28,
            34,
            8,
            40,
            25,
            24702,
            0,
            4,
            24,
            35,
            25,
            44,
            1,
            16,
            10,
            24447,
            44,
            24445,
            36,
            12,
            25,
            24453,
            4,
            17,
            33,
            44,
            24962,
            18,
            3,
            8,
            27,
            24696,
            41,
            24693,
            24964,
            25,
            8,
            32768,
            24711,
            24197,
            43,
            24456,
            10,
            24453,
            17,
            41,
            3,
            24,
            40,
            8,
            28,
            24189,
            43,
            24189,
            8,
            26,
            40,
            27,
            0,
            36,
            2,
            16,
            35,
        ],
    ),
}
# The same day's baseline analysis (500 iterations, seed 5) of a position after 40 random steps.
FROZEN_ANALYSIS = [
    (25218, 53),
    (24710, 43),
    (25217, 40),
    (24449, 39),
    (24702, 39),
    (25219, 32),
    (25223, 32),
    (24448, 28),
    (24451, 27),
    (24701, 24),
    (25221, 24),
    (24959, 23),
    (25222, 23),
    (24970, 20),
    (24700, 19),
    (24968, 17),
    (24971, 17),
]


def test_the_frozen_baseline_plays_as_on_2026_12_01() -> None:
    """mcts-base (baseline_playout) plays move for move as before the policy changed."""
    assert_baseline_frozen("botanik", FROZEN_GAMES, midgame("botanik", 3, 40), FROZEN_ANALYSIS)


def test_baseline_playout_switch_reaches_the_search() -> None:
    """The same search differs with baseline_playout on Botanik (its policy changed), and not
    on a game without a baseline policy of its own (War of the Posies)."""
    assert_baseline_playout_changes_the_search(midgame("botanik", 4, 30))
    other = games.get("war_of_the_posies").new_game(players=2, seed=4)
    other.resolve_chance(random.Random(4))
    assert_baseline_playout_changes_the_search(other, changed=False)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_the_policies_are_legal_and_deterministic(seed: int) -> None:
    """Over the decisions of a game played half by the policy, half at random: both policies
    only propose legal actions, and the same seed gives the same proposal."""
    assert_policies_legal_along_a_game("botanik", 2, seed)


def policy_counts(state: games.State, draws: int = 400) -> Counter[str]:
    return Counter(state.action_to_string(state.kernel_state.rollout_action(seed)) for seed in range(draws))


def test_registry_frees_own_tiles_and_spares_the_opponents() -> None:
    """K-T4: with a tile that frees my blue Loop on stack 1 (a yellow one does not link with it)
    and would free the opponent's red Gear on stack 4, the policy mostly frees mine and
    rarely theirs."""
    tops = [t("blue", "gear"), t("green", "plant"), t("purple", "veg"), t("red", "loop"), t("purple", "open")]
    s = position(
        me=0, top=tops, side=([t("blue", "loop"), E, E, E, E], [E, E, E, t("red", "gear"), E]), arrival=[t("yellow", "cc")]
    )
    counts = policy_counts(s)
    frees_mine = sum(n for text, n in counts.items() if text.endswith("to stack 1"))
    frees_theirs = sum(n for text, n in counts.items() if text.endswith("to stack 4"))
    assert frees_mine > 0.7 * 400, counts
    assert frees_theirs < 0.1 * 400, counts


def test_machine_placement_joins_the_network_and_the_colour() -> None:
    """K-SC1/K-SC2: a yellow Gear to build, with a yellow Loop east of the Source bending north:
    the one placement that both joins the Source's network and touches the yellow Loop is on
    the Loop's open end, (1,-1). The policy picks it most of the time; uniform draws rarely."""
    s = position(
        stage="resolve",
        placed=1,
        top=[t("blue", "gear"), t("green", "plant"), t("purple", "veg"), t("red", "cc"), t("red", "plant")],
        arrival=[t("red", "open"), t("purple", "open")],
        queue=([t("yellow", "gear2")], []),
        machines=(machine(0, (t("yellow", "loop"), 1, 0, 3)), machine(1)),
    )

    def cell(action: int) -> tuple[int, int]:
        return ((action >> 8) & 63) - 32, ((action >> 2) & 63) - 32

    assert sum(cell(a) == (1, -1) for a in s.legal_actions()) == 1
    policy = sum(cell(s.kernel_state.rollout_action(seed)) == (1, -1) for seed in range(300))
    uniform = sum(cell(s.kernel_state.rollout_action(seed, baseline=True)) == (1, -1) for seed in range(300))
    assert policy > 0.6 * 300 and uniform < 0.3 * 300, (policy, uniform, len(s.legal_actions()))
