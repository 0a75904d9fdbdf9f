"""The UCT exploration constant per game (``Limits.exploration`` None = ``Game.search_exploration``,
issue 16): the game's value applies, an explicit one overrides it, the frozen baseline keeps
0.7, training's self-play keeps 0.7 (so a model file stays reproducible), and a negative
constant is refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hortus import games
from hortus.search import Limits, analyze
from hortus.search.bots import BASELINE, make_bot
from positions import midgame


def _visits(state: games.State, limits: Limits) -> list[tuple[int, int]]:
    return [(m.action, m.visits) for m in analyze(state, limits).moves]


def test_the_game_default_applies_and_an_explicit_constant_overrides_it(monkeypatch: pytest.MonkeyPatch) -> None:
    state = midgame("botanical_lab", 3)
    game_type = type(state.game)
    wide = _visits(state, Limits(iterations=1500, seed=4, exploration=1.5))
    narrow = _visits(state, Limits(iterations=1500, seed=4, exploration=0.2))
    assert wide != narrow
    monkeypatch.setattr(game_type, "search_exploration", lambda self, players: 1.5)
    assert _visits(state, Limits(iterations=1500, seed=4)) == wide
    assert _visits(state, Limits(iterations=1500, seed=4, exploration=0.2)) == narrow
    baseline = _visits(state, replace(BASELINE, iterations=1500, seed=4))
    monkeypatch.setattr(game_type, "search_exploration", lambda self, players: 0.2)
    assert _visits(state, Limits(iterations=1500, seed=4)) == narrow
    assert _visits(state, replace(BASELINE, iterations=1500, seed=4)) == baseline  # always 0.7


@pytest.mark.parametrize("name", games.names())
def test_every_game_states_its_constant(name: str) -> None:
    game = games.get(name)
    for players in range(game.min_players, game.max_players + 1):
        assert game.search_exploration(players) > 0


def test_botanik_searches_with_its_lower_constant() -> None:
    """Botanik's default (README, Botanik, issue 16 round 10): 0.35, which gave better hints at
    equal strength."""
    state = midgame("botanik", 2)
    assert state.game.search_exploration(2) == 0.35
    default = _visits(state, Limits(iterations=1500, seed=6))
    assert default == _visits(state, Limits(iterations=1500, seed=6, exploration=0.35))
    assert default != _visits(state, Limits(iterations=1500, seed=6, exploration=0.7))
    assert make_bot("mcts-base:100")._limits.exploration == 0.7


def test_a_negative_constant_is_refused() -> None:
    with pytest.raises(ValueError, match="exploration must be >= 0"):
        Limits(exploration=-0.1)


def test_training_self_play_keeps_uct_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model file is reproduced by the command it records even after a game changes its
    constant: self-play spells out 0.7 (``training.data``)."""
    from hortus.training.data import self_play_positions

    before = self_play_positions("botanik", 2, 1, seed=3, play_iterations=40, per_game=4)
    monkeypatch.setattr(type(games.get("botanik")), "search_exploration", lambda self, players: 3.0)
    assert self_play_positions("botanik", 2, 1, seed=3, play_iterations=40, per_game=4) == before
