"""How to search, as data: ``SearchSettings``, and each game's settings per seat count.

``Limits`` (``hortus.search.analysis``) says how much to search; ``SearchSettings`` says how. A
game declares its settings in ``search.toml`` beside its ``components.toml``: a ``[default]``
table and ``[seats.N]`` tables that override it at N seats; a key absent from both keeps the
dataclass default below. The file is read once per game and validated, every error naming the
file, the table and the key. docs/search_settings.md gives each setting's meaning and why each
game sets what it sets.
"""

from __future__ import annotations

import functools
import inspect
import math
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hortus.games import Game, State

SETTINGS_FILE = "search.toml"
EVALUATION_MODES = ("default", "playout", "model")


@dataclass(frozen=True)
class SearchSettings:
    """How the search searches (the budget is ``Limits``). The defaults are the search every
    game had before it was tuned; :data:`BASELINE` is the frozen baseline."""

    exploration: float = 0.7
    """The UCT exploration constant (rewards are in [-0.1, 1.1])."""
    margin_weight: float = 0.1
    """Weight of the reward's score-margin term ``weight * tanh(margin / scale)``; it stays
    small where a win share exists, so the margin never outweighs it."""
    margin_scale: float = 10.0
    """Points at which the margin term reaches tanh(1): a typical winning margin."""
    widening: float = 0.0
    """Progressive widening: > 0 allows at most ``widening * visits**0.5`` children per node
    (for decisions with very many options); 0 = off."""
    expansion_policy: bool = False
    """A node not yet fully expanded expands the playout policy's choice first (when untried
    there) rather than a uniformly drawn untried move."""
    turn_max: bool = False
    """Selection values a move by its seat's best own continuation (the better of its mean and
    the best well-visited next decision of the same seat below it, recursively) rather than by
    its mean: where a seat makes several decisions in a row, a move searched little is not
    undervalued for its later decisions still being made by the playout policy."""
    turn_min_visits: int = 16
    """Visits a continuation needs (and at least 1/8 of its parent's) to count for turn_max."""
    evaluation: str = "default"
    """Leaf evaluation: ``"playout"`` plays every playout to the end; ``"model"`` cuts playouts
    short and scores the state with the game's value model (an error if the game has none);
    ``"default"`` is the model where the model file says ``default: true`` and ``value_model``
    is on, else playouts. Games played solo always use playouts."""
    value_model: bool = True
    """Whether ``evaluation="default"`` uses the game's value model at this seat count."""
    eval_plies: int | None = None
    """With a model: decisions played out before the model scores the state (0 = at the new
    leaf); None = the model file's ``eval_plies``."""
    paranoid: bool = False
    """Opponents minimise the searching seat's reward (hardest opponents) instead of max^n."""
    playout_policy: bool = True
    """Play out with the game's playout policy where it has one; False = uniformly random
    playouts (to measure what the policy is worth)."""
    baseline_playout: bool = False
    """Play out (and expand, with ``expansion_policy``) with the playout policy the frozen
    baseline (``mcts-base``) was measured with, where a game has changed its policy since."""
    solve_endgames: bool = True
    """Near the end, where nothing is hidden from any seat and the rest of the game looks small
    enough, solve the position exactly within the budget as well as searching it (two seats
    only; docs/exact.md). False = search only, as the frozen baseline does."""

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ValueError("; ".join(f"{key}: {why}" for key, why in problems))


class SearchSettingsError(ValueError):
    """A game's search.toml is malformed: the message names the file, the table and the key."""


# Settings whose value must be a number (an int is accepted for a float).
_FLOATS = ("exploration", "margin_weight", "margin_scale", "widening")
_BOOLS = (
    "expansion_policy",
    "turn_max",
    "value_model",
    "paranoid",
    "playout_policy",
    "baseline_playout",
    "solve_endgames",
)
FIELDS = tuple(f.name for f in fields(SearchSettings))


def _problems(s: SearchSettings) -> list[tuple[str, str]]:
    """(key, why) for every value out of range or of the wrong type."""
    out: list[tuple[str, str]] = []
    for key in _FLOATS:
        value = getattr(s, key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            out.append((key, f"expected a finite number, got {value!r}"))
        elif value < 0 or (key == "margin_scale" and value == 0):
            out.append((key, f"must be {'> 0' if key == 'margin_scale' else '>= 0'}, got {value!r}"))
    for key in _BOOLS:
        if not isinstance(getattr(s, key), bool):
            out.append((key, f"expected true or false, got {getattr(s, key)!r}"))
    if isinstance(s.turn_min_visits, bool) or not isinstance(s.turn_min_visits, int) or s.turn_min_visits < 1:
        out.append(("turn_min_visits", f"expected an integer >= 1, got {s.turn_min_visits!r}"))
    if s.evaluation not in EVALUATION_MODES:
        out.append(("evaluation", f"expected one of {', '.join(EVALUATION_MODES)}, got {s.evaluation!r}"))
    if s.eval_plies is not None and (
        isinstance(s.eval_plies, bool) or not isinstance(s.eval_plies, int) or not 0 <= s.eval_plies <= 1000
    ):
        out.append(("eval_plies", f"expected an integer in 0..1000, got {s.eval_plies!r}"))
    return out


def _table(path: Path, name: str, table: Any) -> dict[str, Any]:
    """The keys of one table, each known (``SearchSettings``' field names)."""
    if not isinstance(table, dict):
        raise SearchSettingsError(f"{path}: [{name}] must be a table, got {table!r}")
    for key in table:
        if key not in FIELDS:
            raise SearchSettingsError(f"{path}: [{name}] {key}: unknown setting (known: {', '.join(FIELDS)})")
    return dict(table)


def _build(path: Path, name: str, values: dict[str, Any]) -> SearchSettings:
    """The settings of one table merged over the defaults; the first bad key is named."""
    probe = object.__new__(SearchSettings)
    for f in fields(SearchSettings):
        object.__setattr__(probe, f.name, values.get(f.name, f.default))
    problems = _problems(probe)
    if problems:
        key, why = problems[0]
        raise SearchSettingsError(f"{path}: [{name}] {key}: {why}")
    return SearchSettings(**values)


def load(path: Path, min_players: int, max_players: int) -> dict[int, SearchSettings]:
    """The settings at each seat count in min_players..max_players from `path` (a missing file
    = the defaults at every seat count)."""
    if not path.exists():
        return {n: SearchSettings() for n in range(min_players, max_players + 1)}
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise SearchSettingsError(f"{path}: not valid TOML: {e}") from e
    for name in data:
        if name not in ("default", "seats"):
            raise SearchSettingsError(f"{path}: [{name}]: unknown table (expected [default] and [seats.N])")
    default = _table(path, "default", data.get("default", {}))
    seats = data.get("seats", {})
    if not isinstance(seats, dict):
        raise SearchSettingsError(f"{path}: seats must be tables [seats.N], got {seats!r}")
    per_seat: dict[int, dict[str, Any]] = {}
    for key, table in seats.items():
        if not key.isdigit() or not min_players <= int(key) <= max_players:
            raise SearchSettingsError(f"{path}: [seats.{key}]: not a seat count of this game ({min_players}-{max_players})")
        per_seat[int(key)] = _table(path, f"seats.{key}", table)
    _build(path, "default", default)
    return {
        n: _build(path, f"seats.{n}" if n in per_seat else "default", {**default, **per_seat.get(n, {})})
        for n in range(min_players, max_players + 1)
    }


@functools.cache
def _game_file(game_class: type[Game]) -> dict[int, SearchSettings]:
    path = Path(inspect.getfile(game_class)).with_name(SETTINGS_FILE)
    return load(path, game_class.min_players, game_class.max_players)


def game_settings(game: Game, players: int) -> SearchSettings:
    """`game`'s settings at `players` seats, from its search.toml (read once per game)."""
    table = _game_file(type(game))
    if players not in table:
        raise ValueError(f"{game.name} takes {game.min_players}-{game.max_players} players, not {players}")
    return table[players]


BASELINE = SearchSettings(evaluation="playout", baseline_playout=True, solve_endgames=False)
"""The frozen baseline search (``mcts-base``): the default search of 2026-12-01, before learned
evaluation: UCT's 0.7, the reward margin (0.1, 10), uniform expansion, mean values, no widening,
playouts to the end with each game's playout policy of that day (``baseline_playout``: a game
that has changed its policy since keeps the old one as its kernel's ``baseline_rollout_action``),
no exact endgame solving (``solve_endgames``: it came later). Every later change of the default search is measured against it at equal time, so it is spelled
out here, the same for every game, and never follows a game's ``search.toml``."""


def with_changes(settings: SearchSettings, changes: dict[str, Any]) -> SearchSettings:
    """`settings` with `changes` (field name -> value) applied; ValueError names an unknown
    field or a bad value."""
    unknown = sorted(set(changes) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown search setting {unknown[0]!r} (known: {', '.join(FIELDS)})")
    return replace(settings, **changes)


def settings_for(state: State, **changes: Any) -> SearchSettings:
    """The settings of `state`'s game at its seat count, with `changes` (field=value) on top:
    ``analyze(state, limits, settings=settings_for(state, turn_max=True))``."""
    return with_changes(state.game.search_settings(state.num_players), changes)
