"""Paired comparisons: the same deals (the same seeds, seats rotated) played with and without a
change (rule options, a designer's components file, a card removed or swapped), the
difference with a 95% interval, stopping early by the paired GSPRT once the answer is clear.

What is compared: for a change of rules or of the whole components file, seat 0's win share
and points (changed minus given); for a card, the seats that bought, played or planted it in
the game with the card, their win share and points with the card minus without it (the card's
worth to whoever takes it; a pair where nobody took it says nothing and is not counted).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hortus.balance.play import Change, GameRecord, GameTask, run_games
from hortus.balance.sprt import gsprt

__all__ = ["Lab", "card_effects", "paired_effect"]

Z95 = 1.959963984540054
BATCH = 20
"""Pairs played between two looks of the sequential test."""
MU1 = 0.1
"""The effect in win share the test tells from none (H1: |effect| >= MU1)."""
MIN_SAMPLES = 20
"""Counted pairs before the sequential test may stop (a few identical pairs prove nothing)."""


def _interval(values: Sequence[float]) -> list[float] | None:
    """A normal 95% interval of the mean of paired differences (None below two)."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    return [mean - half, mean + half]


@dataclass
class Lab:
    """Plays the arms of comparisons: the given game (`base`) once per deal, however many
    changes are compared against it."""

    game: str
    bot: str
    seed: int
    jobs: int = 1
    ray_address: str | None = None
    base: Change = field(default_factory=Change)
    progress: Callable[[GameRecord], None] | None = None
    _kept: dict[tuple[int, int], GameRecord] = field(default_factory=dict)

    def play(
        self, players: int, indices: Sequence[int], changes: Sequence[Change]
    ) -> tuple[list[GameRecord], list[list[GameRecord]]]:
        """The base arm's and each change's records of the deals `indices` at `players`."""
        tasks = [
            GameTask((0, players, i), self.game, (self.bot,), players, self.seed + players, i, self.base)
            for i in indices
            if (players, i) not in self._kept
        ]
        tasks += [
            GameTask((1 + k, players, i), self.game, (self.bot,), players, self.seed + players, i, change)
            for k, change in enumerate(changes)
            for i in indices
        ]
        records = run_games(tasks, jobs=self.jobs, ray_address=self.ray_address, progress=self.progress)
        for r in records:
            if r.key[0] == 0:
                self._kept[(players, r.index)] = r
        base = [self._kept[(players, i)] for i in indices]
        return base, [[r for r in records if r.key[0] == 1 + k] for k in range(len(changes))]


def _samples(base: GameRecord, changed: GameRecord, card: str | None) -> tuple[float, float] | None:
    """One pair's (share, points) difference, None when it says nothing about `card`."""
    if card is None:
        return changed.returns[0] - base.returns[0], changed.scores[0] - base.scores[0]
    takers = [s for s, taken in enumerate(base.cards) if card in taken]
    if not takers:
        return None
    share = statistics.fmean(base.returns[s] - changed.returns[s] for s in takers)
    points = statistics.fmean(base.scores[s] - changed.scores[s] for s in takers)
    return share, points


@dataclass
class _Tally:
    shares: list[float] = field(default_factory=list)
    points: list[float] = field(default_factory=list)
    pairs: int = 0
    decision: str = "continue"

    def add(self, base: list[GameRecord], changed: list[GameRecord], card: str | None) -> None:
        for a, b in zip(base, changed):
            self.pairs += 1
            sample = _samples(a, b, card)
            if sample is not None:
                self.shares.append(sample[0])
                self.points.append(sample[1])
        if len(self.shares) >= MIN_SAMPLES:
            # two one-sided tests folded into one: H1 is an effect of MU1 in the direction seen
            sign = 1.0 if statistics.fmean(self.shares) >= 0 else -1.0
            self.decision = gsprt([sign * x for x in self.shares], mu0=0.0, mu1=MU1).decision

    def result(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "samples": len(self.shares),
            "share_difference": statistics.fmean(self.shares) if self.shares else 0.0,
            "share_difference_interval95": _interval(self.shares),
            "points_difference": statistics.fmean(self.points) if self.points else 0.0,
            "points_difference_interval95": _interval(self.points),
            "sprt": self.decision,
        }


def _measured(change: Change, card: str | None) -> str:
    if card is None:
        return "seat 0: changed minus given"
    for a, b in change.swap:
        if a == card:
            return f"the seats that took {card}: with it minus with {b} in its place"
    return f"the seats that took {card}: with it minus without"


def paired_effect(
    lab: Lab, players: int, max_pairs: int, change: Change, *, kind: str, card: str | None = None
) -> dict[str, Any]:
    """Up to `max_pairs` paired games at `players` seats (in batches of BATCH) with and
    without `change`, until the GSPRT decides; for `card` (an ablation or a swap) the
    takers' difference with the card minus without, else seat 0's changed minus given."""
    if max_pairs < 1:
        raise ValueError("pairs must be >= 1")
    tally = _Tally()
    while tally.pairs < max_pairs and tally.decision == "continue":
        indices = range(tally.pairs, min(max_pairs, tally.pairs + BATCH))
        base, (changed,) = lab.play(players, indices, [change])
        tally.add(base, changed, card)
    return {
        "kind": kind,
        "change": change.describe(),
        "players": players,
        "measured": _measured(change, card),
        **tally.result(),
    }


def card_effects(lab: Lab, players: Sequence[int], max_pairs: int, cards: Sequence[str]) -> list[dict[str, Any]]:
    """Every card of `cards` removed in turn (paired with the given game, which is played once
    per deal for all of them), each until its GSPRT decides or `max_pairs`; per seat count,
    the cards ranked by their takers' points difference, strongest first."""
    out = []
    for count in players:
        tallies = {card: _Tally() for card in cards}
        while True:
            open_cards = [c for c in cards if tallies[c].pairs < max_pairs and tallies[c].decision == "continue"]
            if not open_cards:
                break
            start = min(tallies[c].pairs for c in open_cards)
            indices = range(start, min(max_pairs, start + BATCH))
            behind = [c for c in open_cards if tallies[c].pairs == start]
            base, arms = lab.play(count, indices, [replace(lab.base, remove=(c,)) for c in behind])
            for card, changed in zip(behind, arms):
                tallies[card].add(base, changed, card)
        rows = [{"card": card, **tallies[card].result()} for card in cards]
        # Ranked by the points difference: a pair's win share difference is -1, 0 or 1 (its
        # spread ~0.7 needs hundreds of pairs per card to rank), points tell cards apart with
        # tens. A card too rarely taken to have an interval ranks after every measured one.
        rows.sort(key=lambda row: (row["samples"] < 2, -row["points_difference"], -row["share_difference"], row["card"]))
        for rank, row in enumerate(rows, 1):
            out.append({"players": count, "rank": rank, **row})
    return out
