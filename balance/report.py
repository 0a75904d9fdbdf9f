"""Per seat count figures of a game's balance from seeded arenas (``play_match``).

Reproducible: every figure comes from the games' records, and those depend only on the seed
and game index (``play_match``), so the report is the same for any ``jobs``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hortus import games
from hortus.balance.paired import paired_option_effect
from hortus.search.arena import GameRecord, play_match, wilson_interval

__all__ = ["SeatReport", "balance_report", "quantiles", "seat_report", "skill_matrix"]

QUANTILES = (0.1, 0.5, 0.9)


def quantiles(values: Sequence[float], qs: Sequence[float] = QUANTILES) -> list[float]:
    """Quantiles by linear interpolation between order statistics (numpy's default method),
    so that a handful of games still gives a figure."""
    if not values:
        return [0.0 for _ in qs]
    ordered = sorted(values)
    out = []
    for q in qs:
        pos = q * (len(ordered) - 1)
        low = int(pos)
        high = min(low + 1, len(ordered) - 1)
        out.append(ordered[low] + (ordered[high] - ordered[low]) * (pos - low))
    return out


def _margin(record: GameRecord) -> float:
    """The winner's lead over the runner-up in points (0 in a tie for first)."""
    ordered = sorted(record.scores, reverse=True)
    return ordered[0] - ordered[1] if len(ordered) > 1 else 0.0


@dataclass(frozen=True)
class SeatReport:
    """One seat count's figures."""

    players: int
    games: int
    seat_share: tuple[float, ...]
    """Mean win share of each seat (ties shared)."""
    seat_interval: tuple[tuple[float, float], ...]
    """95% Wilson interval of each seat's share."""
    first_player_gap: float
    """Seat 0's share minus the fair share 1/players."""
    decisions: tuple[float, ...]
    """Decisions per game at p10, p50, p90."""
    margin: tuple[float, ...]
    """Winning margin in points at p10, p50, p90."""
    mean_points: tuple[float, ...]
    """Mean final points per seat."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "games": self.games,
            "seat_share": list(self.seat_share),
            "seat_interval95": [list(i) for i in self.seat_interval],
            "first_player_gap": self.first_player_gap,
            "decisions_p10_p50_p90": list(self.decisions),
            "margin_p10_p50_p90": list(self.margin),
            "mean_points": list(self.mean_points),
        }


def seat_report(players: int, records: Sequence[GameRecord]) -> SeatReport:
    """The figures of one seat count from its games (all seats played by the same bot spec, so
    a seat's share is the seat's advantage)."""
    n = len(records)
    shares = tuple(sum(r.returns[s] for r in records) for s in range(players))
    return SeatReport(
        players=players,
        games=n,
        seat_share=tuple(s / n if n else 0.0 for s in shares),
        seat_interval=tuple(wilson_interval(s, n) for s in shares),
        first_player_gap=(shares[0] / n - 1.0 / players) if n else 0.0,
        decisions=tuple(quantiles([float(r.decisions) for r in records])),
        margin=tuple(quantiles([_margin(r) for r in records])),
        mean_points=tuple(statistics.fmean(r.scores[s] for r in records) if n else 0.0 for s in range(players)),
    )


def balance_report(
    game: str,
    players: Sequence[int],
    bot: str,
    games_count: int,
    seed: int,
    *,
    jobs: int = 1,
    options: dict[str, str] | None = None,
    progress: Callable[[GameRecord], None] | None = None,
    variant: dict[str, str] | None = None,
    skill_levels: Sequence[int] = (),
    skill_games: int | None = None,
) -> dict[str, Any]:
    """Play `games_count` games per seat count, every seat played by `bot`, and return the
    report as a JSON-ready dict (stable key order, so its dump is byte-identical per seed)."""
    if variant:
        games.get(game).resolve_options({**(options or {}), **variant})  # fail before any game is played
    per_seats = []
    for count in players:
        match = play_match(
            game,
            [bot] * count,
            games_count,
            seed=seed + count,
            jobs=jobs,
            players=count,
            options=options,
            progress=progress,
        )
        per_seats.append(seat_report(count, match.records).to_dict())
    effects = (
        [paired_option_effect(game, count, bot, games_count, seed + count, variant, base=options, jobs=jobs) for count in players]
        if variant
        else []
    )
    skill = (
        [] if not skill_levels else skill_matrix(game, skill_levels, skill_games or games_count, seed, jobs=jobs, options=options)
    )
    return {
        "game": game,
        "bot": bot,
        "seed": seed,
        "games_per_seat_count": games_count,
        "options": dict(sorted((options or {}).items())),
        "seat_counts": per_seats,
        "skill": skill,
        "variant_effects": effects,
    }


def skill_matrix(
    game: str,
    levels: Sequence[int],
    games_count: int,
    seed: int,
    *,
    jobs: int = 1,
    options: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every pair of levels head to head at 2 seats, seats alternating: the stronger level's
    share with its interval, and the upset rate (the weaker level's share), a measure of how
    much luck decides."""
    rows = []
    ordered = sorted(set(levels))
    for i, weak in enumerate(ordered):
        for strong in ordered[i + 1 :]:
            match = play_match(
                game,
                [f"level:{strong}", f"level:{weak}"],
                games_count,
                seed=seed + 1000 * strong + weak,
                jobs=jobs,
                players=2,
                options=options,
            )
            stronger = match.stats[0]
            rows.append(
                {
                    "stronger": strong,
                    "weaker": weak,
                    "games": stronger.games,
                    "stronger_share": stronger.score_rate,
                    "stronger_interval95": list(stronger.interval),
                    "upset_rate": 1.0 - stronger.score_rate,
                }
            )
    return rows
