"""The public search API: limits, analyses, bots. Game-agnostic: it sees games only through
``hortus.games`` states and their compiled kernels.

Units and perspective of every reported value:

* ``visits``: ISMCTS iterations that went through the move (summed over threads).
* ``win_probability``: the mean win share of the seat to move at the root (``Analysis.seat``)
  over those iterations, in [0, 1]; a k-way tie counts 1/k.
* ``expected_scores``: mean final points of every seat (index = seat) at the end of the
  simulated games, in the game's own points.

Search reward (what UCT maximises per seat, max^n for 3-4 seats):
``win_share + margin_weight * tanh((own points - best other points) / margin_scale)``,
so lost or won positions still prefer better scores, and the margin term is bounded by
``margin_weight`` (0.1 by default) so it can never outweigh a change in the win share.
"""

from __future__ import annotations

from hortus.search.analysis import (
    Analysis,
    ConstraintError,
    Limits,
    MoveInfo,
    SearchHandle,
    SearchTrees,
    analyze,
    analyze_stream,
)
from hortus.search.bots import Bot, GreedyBot, MctsBot, RandomBot, make_bot
from hortus.search.labels import SearchLabel, feature_count, search_label
from hortus.search.settings import BASELINE, SearchSettings, settings_for
from hortus.search.speed import random_decisions_per_second

__all__ = [
    "BASELINE",
    "Analysis",
    "Bot",
    "ConstraintError",
    "GreedyBot",
    "Limits",
    "MctsBot",
    "MoveInfo",
    "RandomBot",
    "SearchSettings",
    "SearchHandle",
    "SearchLabel",
    "SearchTrees",
    "analyze",
    "analyze_stream",
    "feature_count",
    "make_bot",
    "random_decisions_per_second",
    "search_label",
    "settings_for",
]
