"""A random mid-game decision position, for tests that need "some position" of every game."""

from __future__ import annotations

import random
from dataclasses import replace

from hortus import games
from hortus.search.analysis import analyze
from hortus.search.bots import BASELINE, make_bot


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


def self_play(name: str, seed: int, specs: tuple[str, str]) -> tuple[list[float], list[int]]:
    """Final scores and every decision of a seeded 2-seat game of `name` between two bot specs
    (bot seeds 1 and 2; the game's seed drives the setup and chance)."""
    state = games.get(name).new_game(players=2, seed=seed)
    rng = random.Random(seed)
    bots = [make_bot(specs[0], seed=1), make_bot(specs[1], seed=2)]
    moves = []
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        action = bots[state.current_player].choose(state)
        moves.append(action)
        state.apply(action)
    return list(state.scores()), moves


def assert_baseline_frozen(name: str, frozen_games: dict[int, tuple[list[float], list[int]]],
                           position: games.State, frozen_analysis: list[tuple[int, int]]) -> None:
    """`mcts-base` plays move for move as when these were recorded: `frozen_games` (seed:
    scores and moves of `mcts-base:100` self-play) and `frozen_analysis` (the baseline's
    500-iteration analysis of `position`, seed 5, margin 0.1 / 10 points: (action, visits))."""
    for seed, expected in frozen_games.items():
        assert self_play(name, seed, ("mcts-base:100", "mcts-base:100")) == (expected[0], expected[1]), seed
    analysis = analyze(position, replace(BASELINE, iterations=500, seed=5, margin_weight=0.1, margin_scale=10.0))
    assert [(m.action, m.visits) for m in analysis.moves] == frozen_analysis
