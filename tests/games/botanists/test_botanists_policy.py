"""Botanists's playout policy: the search can still play out with the policy of
2026-12-01 (the kernel's baseline_rollout_action, which tests/test_botanists_baseline.py
replays move for move), the current policy is always legal and
deterministic given its seed, and it plays the moves the scoring rules reward (one-ply greedy:
a tile face up on its sign, P5; orders fulfilled, O2/SC1, a personal one first, E2; a swap
bonus that completes an order, 2.6)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hortus import games

from botanists_positions import G, R, build, cell, full_market, land
from positions import assert_baseline_playout_changes_the_search, assert_policies_legal_along_a_game, midgame


def test_baseline_playout_switch_reaches_the_search() -> None:
    """The same search differs with baseline_playout (Botanists's policy changed)."""
    assert_baseline_playout_changes_the_search(midgame("botanists", 3, 42))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(1, 4))
def test_the_policies_are_legal_and_deterministic(seed: int, players: int) -> None:
    """Both policies only propose legal actions, deterministically given their seed (solo too);
    solo the playout policy is the baseline's (POLICY_SEATS: the new one plays out at 2-4 seats)."""
    assert_policies_legal_along_a_game("botanists", players, seed, same_as_baseline=players == 1)


def shares(state: games.State, good: set[int], draws: int = 300) -> tuple[float, float]:
    """How often the current policy and the baseline's propose one of `good`."""
    ks = state.kernel_state
    new = sum(ks.rollout_action(s) in good for s in range(draws))
    old = sum(ks.rollout_action(s, baseline=True) in good for s in range(draws))
    return new / draws, old / draws


def test_purchase_collects_the_flower_the_next_space_asks_for() -> None:
    """P1-P5: the red board's first space asks for red, and the market holds one red tile (d4)
    among yellows. The policy moves where a card of its hand covers d4 and plays that card, so
    the tile is planted face up (no withered tile, E1; the column may still earn SC4); the
    baseline moves anywhere."""
    market = full_market("Y")
    market[cell("d4")] = R
    state = build(
        players=2,
        stage="action",
        boards=["red", "blue"],
        pawns=["c3", "a1"],
        market=market,
        hands=[["O/0", "I-h/0"], ["O/1", "O/2"]],
        open_orders=("GG", "PP", "RR"),
    )
    good_moves = set()
    for action in state.legal_actions():
        after = state.clone()
        after.apply(action)
        covering = set()
        for card in after.legal_actions():
            probe = after.clone()
            probe.apply(card)
            if any(probe.action_to_string(a) == "plant red face-up" for a in probe.legal_actions()):
                covering.add(card)
        if covering:
            good_moves.add(action)
            assert shares(after, covering)[0] > 0.8, state.action_to_string(action)
    assert 0 < len(good_moves) < len(state.legal_actions()) / 2, len(good_moves)
    new, old = shares(state, good_moves)
    assert new > 0.8 and old < 0.5, (new, old)


def test_a_personal_order_before_an_open_one_of_the_same_flowers() -> None:
    """O2/E2: two red leftovers fulfil either the open RR order or the personal RR one,
    not both. An open order is worth 5 (SC1); the personal one is worth 5 and also saves the
    -5 an unfulfilled personal order costs at the end (E2). The policy passes on the open
    order to fulfil the personal one; the baseline mostly takes the open one."""
    state = build(
        players=2,
        stage="fulfil_open",
        boards=["blue", "red"],
        pawns=["c3", "a1"],
        lands=[land("Bu")],
        own_action=1,
        planted=1,
        done_mask=1,
        leftovers=["RR"],
        open_orders=("RR", "GG", "PP"),
        personal=[["RR"]],
        hands=[["O/0", "O/1"], ["O/2", "O/3"]],
    )
    names = {state.action_to_string(a): a for a in state.legal_actions()}
    open_first = {a for text, a in names.items() if text.startswith("fulfil open")}
    assert open_first, names
    new, old = shares(state, open_first)
    assert new < 0.2 and old > 0.7, (new, old)


def test_purchase_weighs_what_else_the_card_collects() -> None:
    """P5 + O2/SC1/SC3: the red board's first space asks for red, and the market holds two red
    tiles among yellows: b4, whose eight neighbours are green, and d2. With the open order GG
    (and no yellow order) a card covering b4 also collects greens that fulfil it at the end of
    the purchase (5 points), where one covering d2 collects only yellows that stay as
    leftovers (-2 each at the scoring phase). The policy weighs each (destination, card) pair
    and moves where it collects red and green; collecting red alone (cover) would move to
    either, the baseline anywhere."""
    market = full_market("Y")
    for name in ("a3", "a4", "a5", "b3", "b5", "c3", "c4", "c5"):
        market[cell(name)] = G
    market[cell("b4")] = R
    market[cell("d2")] = R
    state = build(
        players=2,
        stage="action",
        boards=["red", "blue"],
        pawns=["c2", "e5"],
        market=market,
        hands=[["O/0", "O/1"], ["O/2", "O/3"]],
        open_orders=("GG", "PP", "BB"),
    )
    with_green, red_only = set(), set()
    for action in state.legal_actions():
        after = state.clone()
        after.apply(action)
        for card in after.legal_actions():
            probe = after.clone()
            probe.apply(card)
            texts = {probe.action_to_string(a) for a in probe.legal_actions()}
            if "plant red face-up" in texts:
                (with_green if "plant green face-down" in texts else red_only).add(action)
    red_only -= with_green
    assert with_green and red_only, (with_green, red_only)
    new, old = shares(state, with_green)
    assert new > 0.8 and old < 0.5, (new, old)
    assert shares(state, red_only)[0] < 0.15
