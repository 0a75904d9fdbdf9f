"""Paired comparisons: the same deals (same seeds, seats rotated) played with and without a
change of rule options, the difference in each seat's win share and points with a 95%
interval, stopping early by the paired GSPRT once the answer is clear."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from hortus.balance.sprt import gsprt
from hortus.search.arena import play_match

__all__ = ["paired_option_effect"]

Z95 = 1.959963984540054


def _interval(values: Sequence[float]) -> list[float]:
    """A normal 95% interval of the mean of paired differences."""
    if len(values) < 2:
        return [-math.inf, math.inf]
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    return [mean - half, mean + half]


def paired_option_effect(
    game: str,
    players: int,
    bot: str,
    games_count: int,
    seed: int,
    change: Mapping[str, str],
    *,
    base: Mapping[str, str] | None = None,
    seat: int = 0,
    batch: int = 20,
    mu1: float = 0.1,
    jobs: int = 1,
) -> dict[str, Any]:
    """Play up to `games_count` paired games (in batches of `batch`, each batch's seed derived
    from `seed` and its number, the same for both arms) with rule options `base` and with
    `base` updated by `change`; the difference (changed minus base) in `seat`'s win share and
    points. Stops once the GSPRT of |effect| >= `mu1` against 0 decides either way."""
    if batch < 1 or games_count < 1:
        raise ValueError("games and batch must be >= 1")
    base_options = dict(base or {})
    changed = {**base_options, **change}
    shares: list[float] = []
    points: list[float] = []
    decision = "continue"
    played = 0
    number = 0
    while played < games_count and decision == "continue":
        count = min(batch, games_count - played)
        batch_seed = seed * 1_000_003 + number
        a = play_match(game, [bot] * players, count, batch_seed, jobs=jobs, players=players, options=base_options or None)
        b = play_match(game, [bot] * players, count, batch_seed, jobs=jobs, players=players, options=changed)
        for ra, rb in zip(a.records, b.records):
            shares.append(rb.returns[seat] - ra.returns[seat])
            points.append(rb.scores[seat] - ra.scores[seat])
        played += count
        number += 1
        # two one-sided tests folded into one: H1 is an effect of size mu1 in the direction seen
        sign = 1.0 if statistics.fmean(shares) >= 0 else -1.0
        decision = gsprt([sign * x for x in shares], mu0=0.0, mu1=mu1).decision
    return {
        "game": game,
        "players": players,
        "bot": bot,
        "seat": seat,
        "change": dict(sorted(change.items())),
        "pairs": played,
        "share_difference": statistics.fmean(shares),
        "share_difference_interval95": _interval(shares),
        "points_difference": statistics.fmean(points),
        "points_difference_interval95": _interval(points),
        "sprt": decision,
    }
