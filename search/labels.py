"""What training asks of the search: a position's features as the value model sees them, and
a seeded search's verdict on it (the labels of ``hortus.training``).

The labelling search is the compiled search with only the reward's margin set from the game's
settings, every playout to the end: the model files record the command that made them, and
the same command must give the same file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hortus._ext.mcts import Search

if TYPE_CHECKING:
    from hortus.games import State
    from hortus.search.settings import SearchSettings


@dataclass(frozen=True)
class SearchLabel:
    """A decision position's features from every seat's side, and every seat's mean win share
    and final points over the iterations through the search's most visited move."""

    features: tuple[tuple[float, ...], ...]
    """Index = seat: the kernel's features of the position from that seat's side."""
    win_share: tuple[float, ...]
    points: tuple[float, ...]


def feature_count(state: State) -> int:
    """The number of features the game's kernel computes (`state` a decision node)."""
    return int(Search(state.kernel_state).num_features)


def search_label(state: State, iterations: int, seed: int, settings: SearchSettings) -> SearchLabel:
    """Label the decision position `state` with a one-thread search of `iterations` seeded with
    `seed`, its reward's margin from `settings`."""
    search = Search(state.kernel_state)
    search.run(iterations=iterations, seed=seed, margin_weight=settings.margin_weight, margin_scale=settings.margin_scale)
    best = max(search.children(), key=lambda c: c["visits"])
    visits = max(1, best["visits"])
    seats = range(state.num_players)
    return SearchLabel(
        features=tuple(tuple(search.features(seat)) for seat in seats),
        win_share=tuple(best["win"][seat] / visits for seat in seats),
        points=tuple(best["score"][seat] / visits for seat in seats),
    )
