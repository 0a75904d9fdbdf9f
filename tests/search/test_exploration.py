"""The UCT exploration constant per game (``SearchSettings.exploration``, from each game's
search.toml): the game's value applies, explicit settings override it, the frozen baseline
keeps 0.7, training's self-play keeps 0.7 (so a model file stays reproducible), and a negative
constant is refused."""

from __future__ import annotations

from typing import Any

import pytest

from hortus import games
from hortus.search import BASELINE, Limits, SearchSettings, analyze, settings_for
from hortus.search.bots import make_bot
from positions import midgame, patch_settings


def _visits(state: games.State, limits: Limits, settings: SearchSettings | None = None) -> list[tuple[int, int]]:
    return [(m.action, m.visits) for m in analyze(state, limits, settings=settings).moves]


def _tuned(state: games.State, **changes: Any) -> list[tuple[int, int]]:
    return _visits(state, Limits(iterations=1500, seed=4), settings_for(state, **changes))


def test_the_game_default_applies_and_an_explicit_constant_overrides_it(monkeypatch: pytest.MonkeyPatch) -> None:
    state = midgame("botanical_lab", 3)
    game_type = type(state.game)
    wide = _tuned(state, exploration=1.5)
    narrow = _tuned(state, exploration=0.2)
    assert wide != narrow
    baseline = _visits(state, Limits(iterations=1500, seed=4), BASELINE)
    patch_settings(monkeypatch, game_type, exploration=1.5)
    assert _visits(state, Limits(iterations=1500, seed=4)) == wide
    assert _tuned(state, exploration=0.2) == narrow
    assert _visits(state, Limits(iterations=1500, seed=4), BASELINE) == baseline  # always 0.7


@pytest.mark.parametrize("name", games.names())
def test_every_game_states_its_constant(name: str) -> None:
    game = games.get(name)
    for players in range(game.min_players, game.max_players + 1):
        assert game.search_settings(players).exploration > 0


def test_botanik_searches_with_its_lower_constant() -> None:
    """Botanik's default (docs/methods.md): 0.35, which gave better hints at equal strength."""
    state = midgame("botanik", 2)
    assert state.game.search_settings(2).exploration == 0.35
    default = _visits(state, Limits(iterations=1500, seed=6))
    assert default == _visits(state, Limits(iterations=1500, seed=6), settings_for(state, exploration=0.35))
    assert default != _visits(state, Limits(iterations=1500, seed=6), settings_for(state, exploration=0.7))
    bot = make_bot("mcts-base:100")
    assert bot.settings(state).exploration == 0.7  # type: ignore[attr-defined]


def test_a_negative_constant_is_refused() -> None:
    with pytest.raises(ValueError, match="exploration"):
        SearchSettings(exploration=-0.1)


def test_training_self_play_keeps_uct_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model file is reproduced by the command it records even after a game changes its
    constant: self-play spells out 0.7 (``training.data``)."""
    from hortus.training.data import self_play_positions

    before = self_play_positions("botanik", 2, 1, seed=3, play_iterations=40, per_game=4)
    patch_settings(monkeypatch, type(games.get("botanik")), exploration=3.0)
    assert self_play_positions("botanik", 2, 1, seed=3, play_iterations=40, per_game=4) == before
