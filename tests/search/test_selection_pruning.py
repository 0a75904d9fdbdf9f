"""Selection passes over children whose UCB cannot beat the best so far (without computing it):
the search must choose exactly what computing every child's UCB in full chooses, so whole trees
are compared, statistic for statistic, with the pruning on and off, in every game and in every
selection mode (mean reward, turn_max, paranoid, no exploration, widening)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hortus import games
from hortus._ext import mcts
from positions import midgame

MODES: dict[str, dict[str, Any]] = {
    "mean": {},
    "turn_max": {"turn_max": True, "turn_min_visits": 4},
    "paranoid": {"paranoid": True},
    "paranoid_turn_max": {"paranoid": True, "turn_max": True},
    "greedy": {"exploration": 0.0},
    "wide": {"exploration": 1.4, "widening_c": 1.0, "expansion_policy": True},
}


def tree(search: mcts.Search) -> Iterator[dict[str, Any]]:
    stack = [0]
    while stack:
        for child in search.children(stack.pop()):
            yield child
            stack.append(child["node"])


def grown(state: Any, mode: dict[str, Any], pruning: bool) -> list[dict[str, Any]]:
    mcts._set_selection_pruning(pruning)
    try:
        search = mcts.Search(state.kernel_state, 1 << 16)
        search.run(iterations=1200, seed=5, **mode)
        search.run(iterations=300, seed=6, resume=True, **mode)  # a kept tree goes on alike
        return list(tree(search))
    finally:
        mcts._set_selection_pruning(True)


@pytest.mark.parametrize("name", games.names())
@pytest.mark.parametrize("mode", list(MODES))
def test_pruned_selection_grows_the_same_tree(name: str, mode: str) -> None:
    game = games.get(name)
    players = 2 if game.max_players >= 2 else 1
    state = midgame(name, 3, players=players)
    assert not state.is_terminal()
    pruned = grown(state, MODES[mode], pruning=True)
    full = grown(state, MODES[mode], pruning=False)
    assert len(pruned) > 300
    assert pruned == full
