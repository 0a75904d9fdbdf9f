"""Per seat count figures of a game's balance from seeded games (``hortus.balance.play``).

Reproducible: every figure comes from the games' records, and those depend only on the seed
and the game's index, put back in order: the report is the same for any ``jobs`` and on Ray.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hortus import games
from hortus.balance.paired import Lab, card_effects, paired_effect
from hortus.balance.play import Change, GameRecord, GameTask, run_games
from hortus.games.base import END_REASONS
from hortus.search.arena import wilson_interval
from hortus.search.levels import get_level

__all__ = [
    "SeatReport",
    "balance_report",
    "quantiles",
    "report_dict",
    "report_json",
    "report_tasks",
    "seat_report",
    "seat_reports_of",
    "skill_matrix",
]

QUANTILES = (0.1, 0.5, 0.9)
DRAW_EVERY = 4
"""The draw's share is measured at every fourth decision: a tenth of a level-4 decision's
cost there, and hundreds of decisions per seat count still."""


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
    rounds: tuple[float, ...]
    """Rounds per game at p10, p50, p90 (see ``rounds_counted``)."""
    rounds_counted: str
    """"rounds" as the game counts them, or "turns per seat" for a game that keeps no count
    (a turn: a run of decisions by one seat)."""
    end_share: dict[str, float]
    """The share of games that ended each way (``END_REASONS``; "unknown" if a game does not
    tell)."""
    margin: tuple[float, ...]
    """Winning margin in points at p10, p50, p90."""
    mean_points: tuple[float, ...]
    """Mean final points per seat."""
    draw_share: float | None
    """Mean share of a decision's outcome the draw decides (sampled decisions), or None."""
    draw_decisions: int
    """Decisions whose draw share was measured."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "games": self.games,
            "seat_share": list(self.seat_share),
            "seat_interval95": [list(i) for i in self.seat_interval],
            "first_player_gap": self.first_player_gap,
            "decisions_p10_p50_p90": list(self.decisions),
            "rounds_p10_p50_p90": list(self.rounds),
            "rounds_counted": self.rounds_counted,
            "end_share": dict(self.end_share),
            "margin_p10_p50_p90": list(self.margin),
            "mean_points": list(self.mean_points),
            "draw_share_mean": self.draw_share,
            "draw_share_decisions": self.draw_decisions,
        }


def seat_report(players: int, records: Sequence[GameRecord]) -> SeatReport:
    """The figures of one seat count from its games (all seats played by the same bot spec, so
    a seat's share is the seat's advantage)."""
    n = len(records)
    shares = tuple(sum(r.returns[s] for r in records) for s in range(players))
    if all(r.rounds is not None for r in records):
        rounds = [float(r.rounds or 0) for r in records]
        counted = "rounds"
    else:
        rounds = [r.turns / players for r in records]
        counted = "turns per seat"
    reasons = [r.end_reason or "unknown" for r in records]
    kinds = list(END_REASONS) + (["unknown"] if "unknown" in reasons else [])
    draws = [x for r in records for x in r.draw_shares]
    return SeatReport(
        players=players,
        games=n,
        seat_share=tuple(s / n if n else 0.0 for s in shares),
        seat_interval=tuple(wilson_interval(s, n) for s in shares),
        first_player_gap=(shares[0] / n - 1.0 / players) if n else 0.0,
        decisions=tuple(quantiles([float(r.decisions) for r in records])),
        rounds=tuple(quantiles(rounds)),
        rounds_counted=counted,
        end_share={k: reasons.count(k) / n if n else 0.0 for k in kinds},
        margin=tuple(quantiles([_margin(r) for r in records])),
        mean_points=tuple(statistics.fmean(r.scores[s] for r in records) if n else 0.0 for s in range(players)),
        draw_share=statistics.fmean(draws) if draws else None,
        draw_decisions=len(draws),
    )


def seat_count_tasks(
    game: str, players: int, bot: str, games_count: int, seed: int, change: Change, *, draw_every: int = 0, key: int = 0
) -> list[GameTask]:
    """The games of one seat count: seed ``seed + players`` (the paired arms use the same)."""
    return [GameTask((key, players, i), game, (bot,), players, seed + players, i, change, draw_every) for i in range(games_count)]


def balance_report(
    game: str,
    players: Sequence[int],
    bot: str,
    games_count: int,
    seed: int,
    *,
    jobs: int = 1,
    ray_address: str | None = None,
    options: Mapping[str, str] | None = None,
    progress: Callable[[GameRecord], None] | None = None,
    variant: Mapping[str, str] | None = None,
    ablate: Sequence[str] = (),
    swap: Mapping[str, str] | None = None,
    components: str | None = None,
    base_components: str | None = None,
    cards: Sequence[str] | None = None,
    skill_levels: Sequence[int] = (),
    skill_games: int | None = None,
    effect_bot: str | None = None,
    effect_games: int | None = None,
    draw_every: int = DRAW_EVERY,
    seat_reports: bool = True,
) -> dict[str, Any]:
    """Play `games_count` games per seat count, every seat played by `bot`, and the comparisons
    asked for, and return the report as a JSON-ready dict (stable key order, so its dump is
    byte-identical per seed). `variant`, `ablate`, `swap`, `components`: each one a paired
    comparison against the game as given (`options`); `cards`: every named card ablated in
    turn and ranked ("all": every card of the supply). `base_components`: a components file
    the game as given uses (the report and every comparison are about it). ValueError names a
    bad argument before any game is played."""
    target = games.get(game)
    for count in players:
        if not target.min_players <= count <= target.max_players:
            raise ValueError(f"{target.name} takes {target.min_players}-{target.max_players} players, not {count}")
    base = Change(
        options=tuple(sorted(target.resolve_options(options).items())) if options else (),
        components=str(base_components) if base_components is not None else None,
    )
    base.game(game)  # a bad file fails here, naming the file and the field
    lab = Lab(game, bot=effect_bot or bot, seed=seed, jobs=jobs, ray_address=ray_address, base=base, progress=progress)
    comparisons: list[tuple[str, Change, str | None]] = []
    if variant:
        target.resolve_options({**dict(base.options), **variant})  # fail before any game is played
        merged = tuple(sorted({**dict(base.options), **variant}.items()))
        comparisons.append(("variant", replace(base, options=merged), None))
    for card in ablate:
        comparisons.append(("ablate", replace(base, remove=(card,)), card))
    for a, b in (swap or {}).items():
        comparisons.append(("swap", replace(base, swap=((a, b),)), a))
    if components is not None:
        comparisons.append(("components", replace(base, components=str(components)), None))
    for _, change, _ in comparisons:
        change.game(game)  # a bad file, card or swap fails here, naming it
    everything = base.game(game).card_names()
    ranked = list(everything) if cards is not None and list(cards) == ["all"] else list(cards or [])
    for card in ranked:
        replace(base, remove=(card,)).game(game)
    for level in skill_levels:
        get_level(level)  # ValueError names a level out of 1..8
    per_seats = []
    if seat_reports:
        tasks = report_tasks(game, players, bot, games_count, seed, base, draw_every=draw_every)
        per_seats = seat_reports_of(players, run_games(tasks, jobs=jobs, ray_address=ray_address, progress=progress))
    pairs = effect_games or games_count
    effects = [
        paired_effect(lab, count, pairs, change, kind=kind, card=card) for kind, change, card in comparisons for count in players
    ]
    ranking = card_effects(lab, players, pairs, ranked) if ranked else []
    skill = (
        []
        if not skill_levels
        else skill_matrix(game, skill_levels, skill_games or games_count, seed, jobs=jobs, ray_address=ray_address, base=base)
    )
    return report_dict(
        game,
        bot,
        seed,
        games_count if seat_reports else 0,
        base,
        per_seats,
        skill=skill,
        effects=effects,
        ranking=ranking,
        effect_bot=effect_bot or bot,
        effect_pairs=pairs if (effects or ranking) else 0,
    )


def report_tasks(
    game: str, players: Sequence[int], bot: str, games_count: int, seed: int, base: Change, *, draw_every: int = DRAW_EVERY
) -> list[GameTask]:
    """The games of the per seat count report, every seat count's in order."""
    return [t for count in players for t in seat_count_tasks(game, count, bot, games_count, seed, base, draw_every=draw_every)]


def seat_reports_of(players: Sequence[int], records: Sequence[GameRecord]) -> list[dict[str, Any]]:
    """Each seat count's figures from the records of ``report_tasks``."""
    return [seat_report(count, [r for r in records if r.key[1] == count]).to_dict() for count in players]


def report_dict(
    game: str,
    bot: str,
    seed: int,
    games_count: int,
    base: Change,
    seat_counts: list[dict[str, Any]],
    *,
    skill: list[dict[str, Any]] | None = None,
    effects: list[dict[str, Any]] | None = None,
    ranking: list[dict[str, Any]] | None = None,
    effect_bot: str | None = None,
    effect_pairs: int = 0,
) -> dict[str, Any]:
    """The report as JSON-ready data (``report_json`` writes it)."""
    return {
        "game": game,
        "bot": bot,
        "seed": seed,
        "games_per_seat_count": games_count,
        "options": dict(base.options),
        "components": Path(base.components).name if base.components is not None else "shipped",
        "seat_counts": seat_counts,
        "skill": skill or [],
        "effects": effects or [],
        "card_ranking": ranking or [],
        "effect_bot": effect_bot or bot,
        "effect_pairs_max": effect_pairs,
    }


def report_json(report: Mapping[str, Any]) -> str:
    """report.json's text: sorted keys, so the same games give the same bytes."""
    return json.dumps(report, indent=2, sort_keys=True) + "\n"


def skill_matrix(
    game: str,
    levels: Sequence[int],
    games_count: int,
    seed: int,
    *,
    jobs: int = 1,
    ray_address: str | None = None,
    base: Change = Change(),
) -> list[dict[str, Any]]:
    """Every pair of levels head to head at 2 seats, seats alternating: the stronger level's
    share with its interval, and the upset rate (the weaker level's share), a measure of how
    much luck decides."""
    ordered = sorted(set(levels))
    pairs = [(weak, strong) for i, weak in enumerate(ordered) for strong in ordered[i + 1 :]]
    tasks = [
        GameTask((k, i), game, (f"level:{strong}", f"level:{weak}"), 2, seed + 1000 * strong + weak, i, base)
        for k, (weak, strong) in enumerate(pairs)
        for i in range(games_count)
    ]
    records = run_games(tasks, jobs=jobs, ray_address=ray_address)
    rows = []
    for k, (weak, strong) in enumerate(pairs):
        mine = [r for r in records if r.key[0] == k]
        share = sum(r.returns[r.seats.index(0)] for r in mine)
        n = len(mine)
        rows.append(
            {
                "stronger": strong,
                "weaker": weak,
                "games": n,
                "stronger_share": share / n if n else 0.0,
                "stronger_interval95": list(wilson_interval(share, n)),
                "upset_rate": 1.0 - share / n if n else 0.0,
            }
        )
    return rows
