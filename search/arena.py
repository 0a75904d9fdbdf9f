"""Arena: seeded games between bots, alternating seats, with win rates and Wilson intervals.

Game-agnostic: games are reached through the ``hortus.games`` registry, bots through
:func:`hortus.search.make_bot` specs (``random``, ``greedy``, ``mcts``, ``mcts:500``).

Reproducible: game ``i`` of a match with seed ``S`` uses seeds derived from ``(S, i)`` only
(setup, chance draws and every bot's RNG), so results do not depend on ``jobs``.

Units: a game's ``returns`` are win shares per seat (1 sole winner, 1/k in a k-way tie, 0
otherwise); a bot's ``score_rate`` is its mean win share over the games, in [0, 1].
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from hortus import games
from hortus.games import CHANCE, TERMINAL, Game
from hortus.search.bots import Bot, make_bot

__all__ = [
    "BotRecord",
    "GameRecord",
    "MatchResult",
    "play_game",
    "play_match",
    "wilson_interval",
]

MAX_DECISIONS = 100_000
"""A game that has not ended after this many decisions is a bug in its rules: play_game raises."""


def wilson_interval(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% for the default z). `successes` may be
    fractional (draws counted as halves); ``(0, 1)`` when ``n == 0``."""
    if n <= 0:
        return (0.0, 1.0)
    p = min(1.0, max(0.0, successes / n))
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denominator
    low = 0.0 if p <= 0.0 else max(0.0, centre - half)
    high = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return (low, high)


def _derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers (stable across runs and platforms)."""
    return random.Random(":".join(str(p) for p in parts)).getrandbits(63)


@dataclass(frozen=True)
class GameRecord:
    """One finished game."""

    index: int
    """The game's number in its match (0-based)."""
    seed: int
    """The seed of its setup and chance draws."""
    seats: tuple[int, ...]
    """Which bot (index into the match's bots) played each seat."""
    scores: tuple[float, ...]
    """Final points per seat."""
    returns: tuple[float, ...]
    """Win share per seat (1 sole winner, 1/k in a k-way tie, 0 otherwise)."""
    decisions: int
    """Decisions taken by the bots (chance draws not counted)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "seed": self.seed,
            "seats": list(self.seats),
            "scores": list(self.scores),
            "returns": list(self.returns),
            "decisions": self.decisions,
        }


@dataclass(frozen=True)
class BotRecord:
    """One bot's results over a match."""

    spec: str
    """The bot spec (``make_bot``)."""
    label: str
    """A unique label in the match (the spec, numbered when two bots share it)."""
    games: int
    wins: int
    """Games it won alone."""
    draws: int
    """Games it tied for first place."""
    losses: int
    score_rate: float
    """Mean win share, in [0, 1]: (wins + shared wins) / games."""
    interval: tuple[float, float]
    """95% Wilson interval of ``score_rate``."""
    mean_score: float
    """Mean final points."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "label": self.label,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score_rate": self.score_rate,
            "interval95": list(self.interval),
            "mean_score": self.mean_score,
        }


@dataclass(frozen=True)
class MatchResult:
    """A match: its settings, every game and each bot's results."""

    game: str
    bots: tuple[str, ...]
    players: int
    seed: int
    records: tuple[GameRecord, ...]
    stats: tuple[BotRecord, ...] = field(default=())

    @property
    def games(self) -> int:
        return len(self.records)

    def seat_score_rates(self) -> tuple[float, ...]:
        """Mean win share per seat whoever sat there (the seat advantage)."""
        if not self.records:
            return tuple(0.0 for _ in range(self.players))
        return tuple(sum(r.returns[s] for r in self.records) / len(self.records) for s in range(self.players))

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "bots": list(self.bots),
            "players": self.players,
            "seed": self.seed,
            "games": self.games,
            "stats": [s.to_dict() for s in self.stats],
            "seat_score_rates": list(self.seat_score_rates()),
            "records": [r.to_dict() for r in self.records],
        }


def play_game(
    game: Game,
    bots: Sequence[Bot],
    seed: int,
    *,
    players: int | None = None,
    variant: str | None = None,
    options: Mapping[str, str] | None = None,
    max_decisions: int = MAX_DECISIONS,
) -> tuple[tuple[float, ...], tuple[float, ...], int]:
    """Play one game, seat ``i`` played by ``bots[i]``; chance drawn with a RNG seeded by
    `seed`. Returns (final scores, returns, number of decisions)."""
    players = players if players is not None else len(bots)
    if len(bots) != players:
        raise ValueError(f"{players} seats need {players} bots, not {len(bots)}")
    state = game.new_game(players=players, seed=seed, variant=variant, options=options)
    rng = random.Random(_derive_seed(seed, 0x43484E43))  # chance draws after the setup
    decisions = 0
    while True:
        player = state.current_player
        if player == TERMINAL:
            break
        if player == CHANCE:
            state.resolve_chance(rng)
            continue
        if decisions >= max_decisions:
            raise RuntimeError(f"{game.name}: no end after {max_decisions} decisions (seed {seed})")
        state.apply(bots[player].choose(state))
        decisions += 1
    return tuple(state.scores()), tuple(state.returns()), decisions


def _labels(specs: Sequence[str]) -> tuple[str, ...]:
    counts = {s: specs.count(s) for s in specs}
    seen: dict[str, int] = {}
    labels = []
    for spec in specs:
        if counts[spec] > 1:
            seen[spec] = seen.get(spec, 0) + 1
            labels.append(f"{spec}#{seen[spec]}")
        else:
            labels.append(spec)
    return tuple(labels)


def _stats(specs: Sequence[str], records: Sequence[GameRecord]) -> tuple[BotRecord, ...]:
    stats = []
    for b, (spec, label) in enumerate(zip(specs, _labels(specs))):
        wins = draws = losses = 0
        share = points = 0.0
        played = 0
        for record in records:
            for seat, bot in enumerate(record.seats):
                if bot != b:
                    continue
                played += 1
                value = record.returns[seat]
                share += value
                points += record.scores[seat]
                if value >= 1.0 - 1e-9:
                    wins += 1
                elif value > 1e-9:
                    draws += 1
                else:
                    losses += 1
        stats.append(
            BotRecord(
                spec=spec,
                label=label,
                games=played,
                wins=wins,
                draws=draws,
                losses=losses,
                score_rate=share / played if played else 0.0,
                interval=wilson_interval(share, played),
                mean_score=points / played if played else 0.0,
            )
        )
    return tuple(stats)


@dataclass(frozen=True)
class _GameTask:
    """Everything a worker process needs to play game `index` of a match (picklable)."""

    game: str
    bot_specs: tuple[str, ...]
    seats: int
    seed: int
    index: int
    variant: str | None
    options: dict[str, str]


def _play_task(task: _GameTask) -> GameRecord:
    game_seed = _derive_seed(task.seed, task.index)
    seating = tuple((s + task.index) % len(task.bot_specs) for s in range(task.seats))
    bots = [make_bot(task.bot_specs[b], seed=_derive_seed(task.seed, task.index, s)) for s, b in enumerate(seating)]
    scores, returns, decisions = play_game(
        games.get(task.game), bots, game_seed, players=task.seats, variant=task.variant, options=task.options or None
    )
    return GameRecord(task.index, game_seed, seating, scores, returns, decisions)


def play_match(
    game_name: str,
    bot_specs: Sequence[str],
    games_count: int,
    seed: int = 0,
    *,
    jobs: int = 1,
    players: int | None = None,
    variant: str | None = None,
    options: Mapping[str, str] | None = None,
    progress: Callable[[GameRecord], None] | None = None,
) -> MatchResult:
    """Play `games_count` seeded games of `game_name` between `bot_specs`.

    Seats rotate: in game ``i`` seat ``s`` is played by bot ``(s + i) % len(bot_specs)``, so
    with two bots they alternate first seat. ``players`` defaults to the number of bots, raised
    to the game's minimum. ``jobs`` > 1 plays games in that many processes; results are the
    same for any ``jobs``. `progress` is called after each game (in order of
    completion)."""
    if len(bot_specs) < 1:
        raise ValueError("an arena needs at least one bot")
    if games_count < 0:
        raise ValueError("games must be >= 0")
    if jobs < 1:
        raise ValueError("jobs must be >= 1")
    game = games.get(game_name)
    seats = players if players is not None else max(len(bot_specs), game.min_players)
    if not game.min_players <= seats <= game.max_players:
        raise ValueError(f"{game.name} takes {game.min_players}-{game.max_players} players, not {seats}")
    for spec in bot_specs:
        make_bot(spec)  # fail fast on a bad spec
    game.resolve_options(options)
    game.variant_code(variant)

    tasks = [
        _GameTask(game.name, tuple(bot_specs), seats, seed, index, variant, dict(options or {})) for index in range(games_count)
    ]
    records: list[GameRecord] = []
    if jobs == 1 or games_count <= 1:
        for task in tasks:
            records.append(_play_task(task))
            if progress is not None:
                progress(records[-1])
    else:
        # Separate processes: the searches release the GIL, but greedy and random bots and the
        # rules' Python face do not. Results do not depend on `jobs` (seeds come from (S, i)).
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_play_task, task) for task in tasks]
            for future in as_completed(futures):
                record = future.result()
                records.append(record)
                if progress is not None:
                    progress(record)
        records.sort(key=lambda r: r.index)
    return MatchResult(
        game=game.name,
        bots=tuple(bot_specs),
        players=seats,
        seed=seed,
        records=tuple(records),
        stats=_stats(bot_specs, records),
    )


@dataclass(frozen=True)
class RoundRobinResult:
    """Every pair of bots played head to head, and the Elo ratings that fit the results."""

    game: str
    bots: tuple[str, ...]
    matches: tuple[MatchResult, ...]
    elo: tuple[float, ...]
    """Elo per bot (same order as ``bots``), the first bot anchored at 0."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "bots": list(self.bots),
            "elo": dict(zip(self.bots, self.elo)),
            "matches": [{"bots": list(m.bots), "games": m.games, "stats": [s.to_dict() for s in m.stats]} for m in self.matches],
        }


def fit_elo(n_bots: int, results: Sequence[tuple[int, int, float, int]], iterations: int = 2000) -> list[float]:
    """Bradley-Terry (Elo scale) ratings from (bot a, bot b, a's score, games) head to head
    results, by gradient ascent on the log-likelihood; the first bot is anchored at 0."""
    ratings = [0.0] * n_bots
    for _ in range(iterations):
        gradient = [0.0] * n_bots
        for a, b, score, played in results:
            expected = 1.0 / (1.0 + 10 ** ((ratings[b] - ratings[a]) / 400.0))
            # Half a game of prior pull towards 50% keeps 100% records finite.
            delta = (score + 0.5) / (played + 1.0) - expected
            gradient[a] += delta * played
            gradient[b] -= delta * played
        for i in range(n_bots):
            ratings[i] += 4.0 * gradient[i] / max(1, sum(p for a, b, _, p in results if i in (a, b)))
        anchor = ratings[0]
        ratings = [r - anchor for r in ratings]
    return ratings


def round_robin(
    game_name: str,
    bot_specs: Sequence[str],
    games_per_pair: int,
    seed: int = 0,
    *,
    jobs: int = 1,
    progress: Callable[[GameRecord], None] | None = None,
) -> RoundRobinResult:
    """Every pair of `bot_specs` plays `games_per_pair` seeded 2-seat games, seats rotated."""
    if len(bot_specs) < 2:
        raise ValueError("a round robin needs at least two bots")
    matches = []
    results = []
    for a in range(len(bot_specs)):
        for b in range(a + 1, len(bot_specs)):
            match = play_match(
                game_name,
                [bot_specs[a], bot_specs[b]],
                games_per_pair,
                _derive_seed(seed, a, b),
                jobs=jobs,
                players=2,
                progress=progress,
            )
            matches.append(match)
            results.append((a, b, match.stats[0].score_rate * match.games, match.games))
    return RoundRobinResult(game_name, tuple(bot_specs), tuple(matches), tuple(fit_elo(len(bot_specs), results)))
