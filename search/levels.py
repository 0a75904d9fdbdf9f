"""Difficulty levels 1-8 for AI opponents: geometrically spaced search budgets, plus a
temperature on the final choice for the weakest levels (they sometimes play a less visited
move, as a beginner would). Hint strength is independent of these levels.

Budgets double from level 1 to level 7 and quadruple from 7 to 8: doubling is worth less
the larger the budget, so the strongest level takes a wider step to stay clearly ahead of the
one below it (the measured gaps: docs/benchmarks.md).

The Elo of each level, per game, is measured by ``bench/strength.py --levels`` (round robins
of ``hortus arena``) and stored in ``levels_elo.json`` beside this file.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, replace
from pathlib import Path

from hortus.games import State
from hortus.search.analysis import Analysis, Limits, MoveInfo, analyze

ELO_FILE = Path(__file__).with_name("levels_elo.json")


@dataclass(frozen=True)
class Level:
    level: int
    name: str
    iterations: int
    """ISMCTS iterations per decision (one thread)."""
    temperature: float
    """0 plays the most visited move; T > 0 draws a move with probability ~ visits**(1/T)."""


LEVELS: dict[int, Level] = {
    1: Level(1, "beginner", 32, 1.0),
    2: Level(2, "novice", 64, 0.5),
    3: Level(3, "casual", 128, 0.25),
    4: Level(4, "club", 256, 0.0),
    5: Level(5, "strong", 512, 0.0),
    6: Level(6, "expert", 1024, 0.0),
    7: Level(7, "master", 2048, 0.0),
    8: Level(8, "strongest", 8192, 0.0),
}


def get_level(level: int) -> Level:
    if level not in LEVELS:
        raise ValueError(f"difficulty level must be 1..{len(LEVELS)}, not {level}")
    return LEVELS[level]


def elo_level(game: str, elo: float, table: dict[str, dict[str, float]] | None = None) -> Level:
    """The strength at `elo` on `game`'s measured Elo scale (``levels_elo.json``: level 1 = 0).

    Between two adjacent levels the iteration budget is interpolated on the measured curve —
    the log of the budget linear in Elo, as doubling the budget gains a roughly constant Elo
    between measured points — and the temperature linearly; outside the measured range the
    weakest or strongest level is used. ``Level.level`` is the level at or below `elo`.
    Raises ValueError when `game` has no measured scale or `elo` is not finite."""
    if not math.isfinite(elo):
        raise ValueError(f"target Elo must be a finite number, not {elo}")
    chain = (elo_table() if table is None else table).get(game)
    if not chain:
        raise ValueError(f"{game} has no measured Elo scale (bench/strength.py --levels --write-elo)")
    points = sorted((float(chain[str(n)]), n) for n in LEVELS if str(n) in chain)
    if elo <= points[0][0]:
        return replace(LEVELS[points[0][1]], name=f"elo {elo:g}")
    if elo >= points[-1][0]:
        return replace(LEVELS[points[-1][1]], name=f"elo {elo:g}")
    for (low_elo, low), (high_elo, high) in zip(points, points[1:]):
        if low_elo <= elo < high_elo:
            break
    t = 0.0 if high_elo <= low_elo else (elo - low_elo) / (high_elo - low_elo)
    a, b = LEVELS[low], LEVELS[high]
    iterations = round(math.exp(math.log(a.iterations) + t * (math.log(b.iterations) - math.log(a.iterations))))
    temperature = a.temperature + t * (b.temperature - a.temperature)
    return Level(low, f"elo {elo:g}", max(1, iterations), temperature)


def level_limits(level: int, seed: int = 0, threads: int = 1) -> Limits:
    return Limits(iterations=get_level(level).iterations, seed=seed, threads=threads)


def choose(analysis: Analysis, temperature: float, rng: random.Random) -> MoveInfo:
    """The move a level plays from an analysis: the most visited one at temperature 0."""
    if temperature <= 0 or len(analysis.moves) == 1:
        return analysis.best
    # only the moves the search visited (an analysis lists the unvisited ones too, last)
    moves = [m for m in analysis.moves if m.visits > 0] or list(analysis.moves)
    weights = [max(m.visits, 1) ** (1.0 / temperature) for m in moves]
    return rng.choices(moves, weights)[0]


def play_level(state: State, level: int, seed: int = 0) -> tuple[MoveInfo, Analysis]:
    """Search at a level's budget and pick with its temperature (seeded)."""
    spec = get_level(level)
    analysis = analyze(state, level_limits(level, seed))
    return choose(analysis, spec.temperature, random.Random(seed)), analysis


class LevelBot:
    """A bot playing at a difficulty level."""

    def __init__(self, level: int, seed: int = 0) -> None:
        self.level = get_level(level)
        self.name = f"level{level}"
        self._rng = random.Random(seed)

    def choose(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        limits = replace(level_limits(self.level.level), seed=self._rng.getrandbits(63))
        return choose(analyze(state, limits), self.level.temperature, self._rng).action


def with_gap(chain: dict[str, float], upper: int, gap: float) -> dict[str, float]:
    """An Elo chain ({"1": 0.0, "2": ...}) with level `upper` set `gap` above level upper-1;
    the levels above `upper` already in the chain keep their gaps to it (they move with it)."""
    out = dict(chain)
    shift = out[str(upper - 1)] + gap - out.get(str(upper), 0.0)
    for level in range(upper, len(LEVELS) + 1):
        if level == upper or str(level) in out:
            out[str(level)] = out.get(str(level), 0.0) + shift
    return out


def elo_table() -> dict[str, dict[str, float]]:
    """Measured Elo per game and level ({game: {"1": elo, ...}}), {} if not measured yet."""
    if not ELO_FILE.exists():
        return {}
    data: dict[str, dict[str, float]] = json.loads(ELO_FILE.read_text())
    return data
