"""Botanists value-model features: the projected score is the banked score
with every pending scoring rule applied (SC1-SC4 of this round's phase, then E1 and E2), checked
against a Python reading of the rules on positions from seeded random play."""

from __future__ import annotations

import random

import pytest

from hortus import games
from hortus._ext.mcts import Search
from hortus.games import CHANCE, TERMINAL
from hortus.games.botanists.game import core_dict

ST_PLANT, ST_KEEP, ST_CHOOSE_FIRST = 9, 20, 21
ORDER_PERSONAL, ORDER_FULFILLED = 3, 7


def projected(d: dict, p: int) -> int:  # type: ignore[type-arg]
    score = d["score"][p]
    left = sum(d["leftover"][p])
    if p == d["cur"] and d["stage"] < ST_KEEP:
        left += sum(d["collected"])  # a purchase's tiles not yet placed
        if d["stage"] == ST_PLANT and left > 0:
            left -= 1  # P5: one of them is planted
    down = sum(d["land_down"][p][: d["land_filled"][p]])
    personal = sum(1 for loc in d["order_loc"] if loc == ORDER_PERSONAL + p)
    r = d["round"]
    if d["stage"] not in (ST_KEEP, ST_CHOOSE_FIRST) and r < 3:
        score += 5 * sum(1 for loc in d["order_loc"] if loc == ORDER_FULFILLED + p)  # SC1
        score += -2 * left + (7 if left == 0 else 0)  # SC3, SC2
        column = range(5 * r, 5 * r + 5)
        if d["land_filled"][p] >= 5 * r + 5 and all(not d["land_down"][p][k] and d["land_colour"][p][k] < 5 for k in column):
            score += [2, 3, 5][r]  # SC4
    return score - down * (down + 1) // 2 - 5 * personal  # E1, E2


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_projected_score_applies_every_pending_scoring_rule(seed: int) -> None:
    rng = random.Random(seed)
    state = games.get("botanists").new_game(players=2, seed=seed)
    checked = 0
    while state.current_player != TERMINAL:
        if state.current_player == CHANCE:
            state.resolve_chance(rng)
            continue
        d = core_dict(state)
        search = Search(state.kernel_state)
        assert search.num_features == 18
        for seat in range(2):
            f = search.features(seat)
            own, other = projected(d, seat), projected(d, 1 - seat)
            assert f[0] * 50 == pytest.approx(own)
            assert f[1] * 50 == pytest.approx(other)
            assert f[2] * 50 == pytest.approx(own - other)
            assert all(-5.0 < x < 5.0 for x in f)
        checked += 1
        state.apply(rng.choice(state.legal_actions()))
    assert checked > 50
