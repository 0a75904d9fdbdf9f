"""The root picks its next move by UCT like every other node, q + c * sqrt(log(N) / n); the
UCB-sqrt root rule measured once was not adopted and is gone from the search, with the other
unused switches of ``Search.run`` (the widening exponent is fixed at 0.5)."""

from __future__ import annotations

import math

import pytest

from hortus import games
from hortus._ext.mcts import Search
from hortus.search import Limits, make_bot
from positions import midgame

MULTI = [n for n in games.names() if games.get(n).max_players >= 2]
C = 0.7


def next_root_choice(search: Search) -> int | None:
    """The root child the next iteration must descend into by UCT, from the tree's statistics
    (each child's availability is counted before its index is computed); None when the two
    best indices are too close to call or a root move is still untried."""
    indices = []
    for child in search.children(0):
        if child["visits"] == 0:
            return None
        q = child["reward"][child["mover"]] / child["visits"]
        n_parent = child["availability"] + 1.0
        indices.append((q + C * math.sqrt(math.log(n_parent) / child["visits"]), child["node"]))
    indices.sort(reverse=True)
    if len(indices) < 2 or indices[0][0] - indices[1][0] < 1e-9:
        return None
    return indices[0][1]


@pytest.mark.parametrize("name", MULTI)
def test_the_root_descends_by_uct(name: str) -> None:
    state = midgame(name, 5)
    moves = len(state.kernel_state.search_actions())
    assert moves >= 2, "the position has one move: the test would see nothing"
    search = Search(state.kernel_state)
    search.run(iterations=60 * moves, seed=3, exploration=C)
    assert len(search.children(0)) == moves, "every root move is tried by now"
    checked = 0
    for _ in range(40):
        expected = next_root_choice(search)
        before = {c["node"]: c["visits"] for c in search.children(0)}
        search.run(iterations=1, resume=True, exploration=C)
        grown = [c["node"] for c in search.children(0) if c["visits"] > before[c["node"]]]
        assert len(grown) == 1
        if expected is not None:
            assert grown[0] == expected
            checked += 1
    assert checked >= 30


def test_the_removed_switches_are_refused() -> None:
    search = Search(midgame("botanists", 7).kernel_state)
    for removed in ("root_sqrt", "widening_alpha"):
        with pytest.raises(TypeError, match=removed):
            search.run(iterations=10, **{removed: 1})
    for removed in ("root_exploration", "widening_alpha", "draw_playouts"):
        with pytest.raises(TypeError, match=removed):
            Limits(**{removed: 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="root=sqrt"):
        make_bot("mcts:100,root=sqrt")
