"""The exact solvers: Star1 with its bounds table agrees with plain memoised expectimax,
budgets give up cleanly, and the fairness check sees hidden hands."""

from __future__ import annotations

import random

import pytest

from hortus import games
from hortus.games.base import State
from hortus.search.exact import SolveBudgetError, expectimax, nothing_hidden, star1


def _near_end(name: str, players: int, seed: int, back: int) -> State:
    """The decision `back` decisions before the end of a seeded random game."""
    rng = random.Random(seed)
    state = games.get(name).new_game(players=players, seed=seed)
    decisions: list[State] = []
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        decisions.append(state.clone())
        state.apply(rng.choice(state.legal_actions()))
    return decisions[-back]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("back", [1, 2, 3])
def test_star1_agrees_with_expectimax(seed: int, back: int) -> None:
    state = _near_end("botanik", 2, seed, back)
    plain = expectimax(state)
    pruned = star1(state)
    assert plain.values.keys() == pruned.values.keys()
    for action, v in plain.values.items():
        assert pruned.values[action] == pytest.approx(v, abs=1e-9)
        assert 0.0 <= v <= 1.0
    assert pruned.best == plain.best


def test_last_decision_is_the_best_return() -> None:
    # One decision from the end with no chance after it: each move's value is its returns.
    state = _near_end("botanik", 2, 3, 1)
    solution = expectimax(state)
    for action, v in solution.values.items():
        child = state.clone()
        child.apply(action)
        if child.is_terminal():
            assert v == child.returns()[state.current_player]


def test_budget_gives_up() -> None:
    state = _near_end("botanik", 2, 1, 3)
    with pytest.raises(SolveBudgetError):
        star1(state, budget=2)
    with pytest.raises(SolveBudgetError):
        expectimax(state, budget=2)


def test_botanik_hides_nothing() -> None:
    assert nothing_hidden(_near_end("botanik", 2, 0, 3))


def test_hidden_hands_are_seen() -> None:
    # A card game with private hands: the solver must not be used there.
    state = games.get("war_of_the_posies").new_game(players=2, seed=1)
    rng = random.Random(1)
    state.resolve_chance(rng)
    assert not nothing_hidden(state)
