"""A random mid-game decision position, for tests that need "some position" of every game."""

from __future__ import annotations

import random

from hortus import games


def midgame(name: str, seed: int, steps: int = 12, players: int = 2) -> games.State:
    """`steps` uniformly random moves (chance resolved on the way) into a seeded game of `name`
    at `players` seats, then any pending chance resolved: a decision position, or the end of
    the game."""
    rng = random.Random(seed)
    state = games.get(name).new_game(players=players, seed=seed)
    for _ in range(steps):
        if state.is_chance():
            state.resolve_chance(rng)
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    while state.is_chance():
        state.resolve_chance(rng)
    return state
