"""The root's exploration rule (``Limits.root_exploration``, issue 16): with ``"sqrt"`` the root
picks its next move by UCB-sqrt, q + c * sqrt(sqrt(N) / n) (simple regret, Tolpin & Shimony
2012), every other node by UCT as before; the default stays UCT; bad settings are refused."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from hortus import games
from hortus._ext.mcts import Search
from hortus.search import Limits, analyze, make_bot
from hortus.search.bots import BASELINE
from positions import midgame

MULTI = [n for n in games.names() if games.get(n).max_players >= 2]
C = 0.7


def next_root_choice(search: Search, rule: str) -> int | None:
    """The root child the next iteration must descend into under `rule`, from the tree's
    statistics (each child's availability is counted before its index is computed); None when
    the two best indices are too close to call or a root move is still untried."""
    indices = []
    for child in search.children(0):
        if child["visits"] == 0:
            return None
        q = child["reward"][child["mover"]] / child["visits"]
        n_parent = child["availability"] + 1.0
        spread = math.sqrt(n_parent) if rule == "sqrt" else math.log(n_parent)
        indices.append((q + C * math.sqrt(spread / child["visits"]), child["node"]))
    indices.sort(reverse=True)
    if len(indices) < 2 or indices[0][0] - indices[1][0] < 1e-9:
        return None
    return indices[0][1]


@pytest.mark.parametrize("name", MULTI)
@pytest.mark.parametrize("rule", ["sqrt", "uct"])
def test_the_root_descends_by_its_rule(name: str, rule: str) -> None:
    state = midgame(name, 5)
    moves = len(state.kernel_state.search_actions())
    assert moves >= 2, "the position has one move: the test would see nothing"
    search = Search(state.kernel_state)
    search.run(iterations=60 * moves, seed=3, exploration=C, root_sqrt=rule == "sqrt")
    assert len(search.children(0)) == moves, "every root move is tried by now"
    checked = 0
    for _ in range(40):
        expected = next_root_choice(search, rule)
        before = {c["node"]: c["visits"] for c in search.children(0)}
        search.run(iterations=1, resume=True, exploration=C, root_sqrt=rule == "sqrt")
        grown = [c["node"] for c in search.children(0) if c["visits"] > before[c["node"]]]
        assert len(grown) == 1
        if expected is not None:
            assert grown[0] == expected
            checked += 1
    assert checked >= 30


@pytest.mark.parametrize("name", MULTI)
def test_sqrt_spreads_the_roots_visits_over_the_runners_up(name: str) -> None:
    """The point of the rule: the most searched move takes a smaller share of the root's visits."""
    state = midgame(name, 6)
    share = {}
    for rule in ("uct", "sqrt"):
        analysis = analyze(state, Limits(iterations=3000, seed=4, root_exploration=rule))
        share[rule] = max(m.visits for m in analysis.moves) / sum(m.visits for m in analysis.moves)
    assert share["sqrt"] < share["uct"]


def test_the_default_and_the_baseline_keep_uct() -> None:
    assert Limits().root_exploration == "uct"
    assert BASELINE.root_exploration == "uct"
    state = midgame("botanists", 7)
    limits = Limits(iterations=800, seed=5)
    assert analyze(state, limits).moves == analyze(state, replace(limits, root_exploration="uct")).moves


def test_the_bot_option_and_bad_settings() -> None:
    bot = make_bot("mcts:100,root=sqrt")
    assert bot._limits.root_exploration == "sqrt"  # type: ignore[attr-defined]
    assert make_bot("mcts:100,root=uct")._limits.root_exploration == "uct"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="root_exploration"):
        Limits(root_exploration="greedy")
    with pytest.raises(ValueError, match="root=greedy"):
        make_bot("mcts:100,root=greedy")
