"""Search settings as data: each game's search.toml, loaded once and validated with errors that
name the file, the table and the key (hortus.search.settings)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from hortus import games
from hortus.search.settings import FIELDS, SearchSettings, SearchSettingsError, game_settings, load


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "search.toml"
    path.write_text(text)
    return path


def test_every_game_ships_a_valid_search_toml() -> None:
    for name in games.names():
        game = games.get(name)
        assert Path(inspect.getfile(type(game))).with_name("search.toml").exists(), name
        for players in range(game.min_players, game.max_players + 1):
            assert isinstance(game_settings(game, players), SearchSettings)


def test_the_measured_values_per_game_and_seat_count() -> None:
    botanists = games.get("botanists")
    assert (game_settings(botanists, 1).margin_weight, game_settings(botanists, 1).margin_scale) == (0.5, 60.0)
    assert not game_settings(botanists, 1).value_model and not game_settings(botanists, 1).turn_max
    assert game_settings(botanists, 2).eval_plies == 20 and game_settings(botanists, 3).eval_plies is None
    assert all(game_settings(botanists, n).turn_max and game_settings(botanists, n).value_model for n in (2, 3, 4))
    assert game_settings(games.get("botanik"), 2).exploration == 0.35
    lab = games.get("botanical_lab")
    assert [game_settings(lab, n).turn_max for n in (2, 3, 4)] == [True, False, True]
    assert [game_settings(lab, n).widening for n in (2, 3, 4)] == [1.0, 0.0, 1.0]
    war = games.get("war_of_the_posies")
    assert all(
        game_settings(war, n) == SearchSettings(margin_weight=0.3, expansion_policy=True, widening=1.0, turn_max=True)
        for n in (2, 3, 4)
    )
    assert war.search_settings(2) == game_settings(war, 2)


def test_seat_tables_override_the_default(tmp_path: Path) -> None:
    path = write(tmp_path, "[default]\nexploration = 0.5\nturn_max = true\n[seats.3]\nexploration = 1\n")
    table = load(path, 2, 4)
    assert table[2] == table[4] == SearchSettings(exploration=0.5, turn_max=True)
    assert table[3] == SearchSettings(exploration=1, turn_max=True)
    assert load(tmp_path / "absent.toml", 1, 2) == {1: SearchSettings(), 2: SearchSettings()}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[default]\nexploraton = 0.5\n", "[default] exploraton: unknown setting"),
        ("[seats.2]\nturn_max = 1\n", "[seats.2] turn_max: expected true or false"),
        ("[seats.2]\nsolve_endgames = 'yes'\n", "[seats.2] solve_endgames: expected true or false"),
        ("[seats.2]\nexploration = -1.0\n", "[seats.2] exploration: must be >= 0"),
        ("[default]\nmargin_scale = 0\n", "[default] margin_scale: must be > 0"),
        ("[default]\nexploration = 'high'\n", "[default] exploration: expected a finite number"),
        ("[default]\neval_plies = -2\n", "[default] eval_plies: expected an integer in 0..1000"),
        ("[default]\nevaluation = 'neural'\n", "[default] evaluation: expected one of"),
        ("[seats.7]\nturn_max = true\n", "[seats.7]: not a seat count of this game (2-4)"),
        ("[seats.two]\nturn_max = true\n", "[seats.two]: not a seat count"),
        ("[tuning]\nturn_max = true\n", "[tuning]: unknown table"),
        ("[default\n", "not valid TOML"),
    ],
)
def test_errors_name_the_file_and_the_key(tmp_path: Path, text: str, names: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SearchSettingsError) as info:
        load(path, 2, 4)
    assert str(path) in str(info.value) and names in str(info.value)


def test_settings_validate_themselves() -> None:
    with pytest.raises(ValueError, match="widening"):
        SearchSettings(widening=-0.5)
    assert "exploration" in FIELDS and "iterations" not in FIELDS
