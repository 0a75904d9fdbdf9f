"""A random mid-game decision position, for tests that need "some position" of every game."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hortus import games
from hortus.search.analysis import Limits, analyze
from hortus.search.bots import make_bot
from hortus.search.settings import BASELINE, settings_for, with_changes


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


def assert_baseline_frozen(
    name: str,
    frozen_games: dict[int, tuple[list[float], list[int]]],
    position: games.State,
    frozen_analysis: list[tuple[int, int]],
) -> None:
    """`mcts-base` plays move for move as when these were recorded: `frozen_games` (seed:
    scores and moves of `mcts-base:100` self-play) and `frozen_analysis` (the baseline's
    500-iteration analysis of `position`, seed 5, margin 0.1 / 10 points: (action, visits))."""
    for seed, expected in frozen_games.items():
        assert self_play(name, seed, ("mcts-base:100", "mcts-base:100")) == (expected[0], expected[1]), seed
    analysis = analyze(position, Limits(iterations=500, seed=5), settings=BASELINE)
    assert [(m.action, m.visits) for m in analysis.moves] == frozen_analysis


def search_moves(state: games.State, limits: Limits, **changes: Any) -> list[tuple[int, int]]:
    """(action, visits) of every ranked move of `state`'s analysis under `limits`, with the
    game's search settings changed by `changes`."""
    return [(m.action, m.visits) for m in analyze(state, limits, settings=settings_for(state, **changes)).moves]


def patch_settings(monkeypatch: pytest.MonkeyPatch, game_type: type[games.Game], **changes: Any) -> None:
    """`game_type`'s search.toml settings with `changes` on top, for the rest of a test."""
    original = game_type.search_settings
    monkeypatch.setattr(game_type, "search_settings", lambda self, players: with_changes(original(self, players), changes))


def assert_baseline_playout_changes_the_search(state: games.State, changed: bool = True) -> None:
    """The same seeded playout search differs with ``baseline_playout`` exactly when the game's
    playout policy has changed since the baseline was frozen."""
    # baseline_playout=False explicitly: a game's own settings may already play out with the
    # baseline's policy (Botanists at 2 seats does).
    current = search_moves(state, Limits(iterations=400, seed=9), evaluation="playout", baseline_playout=False)
    baseline = search_moves(state, Limits(iterations=400, seed=9), evaluation="playout", baseline_playout=True)
    assert (current != baseline) == changed


def assert_policies_legal_along_a_game(name: str, players: int, seed: int, same_as_baseline: bool = False) -> None:
    """Over the decisions of a seeded game of `name` played half by the playout policy, half at
    random: both policies (the current and the frozen baseline's) only propose legal actions,
    the same seed gives the same proposal, and with `same_as_baseline` the two agree."""
    rng = random.Random(seed)
    state = games.get(name).new_game(players=players, seed=seed)
    decisions = 0
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        legal = set(state.legal_actions())
        ks = state.kernel_state
        for _ in range(3):
            s = rng.getrandbits(64)
            proposal = ks.rollout_action(s)
            assert proposal in legal and proposal == ks.rollout_action(s)
            assert ks.rollout_action(s, baseline=True) in legal
            if same_as_baseline:
                assert proposal == ks.rollout_action(s, baseline=True)
        state.apply(ks.rollout_action(rng.getrandbits(64)) if decisions % 2 else rng.choice(sorted(legal)))
        decisions += 1
