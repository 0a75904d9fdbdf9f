"""Selection by a seat's best own continuation (``SearchSettings.turn_max``): the tree's turn
values follow their definition exactly, the setting is deterministic, the frozen baseline never
uses it, and bad settings are refused."""

from __future__ import annotations

from typing import Any

import pytest

from hortus import games
from hortus._ext.mcts import Search
from hortus.search import BASELINE, Limits, SearchSettings, analyze, make_bot, settings_for
from hortus.search.analysis import SearchTrees
from positions import midgame, patch_settings

MULTI = [n for n in games.names() if games.get(n).max_players >= 2]


def walk(search: Search, node: int = 0) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every node below `node` with its children's statistics."""
    out = []
    for child in search.children(node):
        below = search.children(child["node"])
        out.append((child, below))
        out.extend(walk(search, child["node"]))
    return out


@pytest.mark.parametrize("name", MULTI)
def test_turn_values_are_the_best_own_continuation(name: str) -> None:
    """After a search, every visited node's turn value is the better of its mover's mean reward
    and the best turn value among that mover's own next decisions with at least
    max(16, visits // 8) visits (each node was last updated together with its last updated
    child, so the definition holds exactly at the end)."""
    state = midgame(name, 4)
    trees = SearchTrees.start(state, Limits(iterations=3000, seed=2), settings_for(state, turn_max=True))
    search = trees.searches[0]
    search.run(iterations=3000, seed=2, turn_max=True)
    checked = continued = 0
    for node, children in walk(search):
        if node["visits"] == 0:
            continue
        mean = node["reward"][node["mover"]] / node["visits"]
        need = max(16, node["visits"] >> 3)
        own = [c["turn_value"] for c in children if c["mover"] == node["mover"] and c["visits"] >= need]
        assert node["turn_value"] == pytest.approx(max([mean, *own]), abs=1e-6)  # stored as a float
        checked += 1
        continued += bool(own) and max(own) > mean
    assert checked > 100
    if name != "botanik":  # a Botanik seat's decisions in a row are rare this early
        assert continued > 0, "no move was valued by a continuation: the test saw nothing"


def test_without_turn_max_nodes_hold_no_turn_value() -> None:
    state = midgame("war_of_the_posies", 4)
    search = Search(state.kernel_state)
    search.run(iterations=1000, seed=2)
    assert all(node["turn_value"] == 0.0 for node, _ in walk(search))


@pytest.mark.parametrize("name", MULTI)
def test_turn_max_is_deterministic_and_changes_the_search(name: str) -> None:
    state = midgame(name, 5)
    limits = Limits(iterations=1500, seed=3)
    on = settings_for(state, turn_max=True)
    first, again = analyze(state, limits, settings=on), analyze(state, limits, settings=on)
    assert [(m.action, m.visits, m.win_probability) for m in first.moves] == [
        (m.action, m.visits, m.win_probability) for m in again.moves
    ]
    if name != "botanik":  # see above: the same search there when no seat moves twice in a row
        plain = analyze(state, limits, settings=settings_for(state, turn_max=False))
        assert [m.visits for m in plain.moves] != [m.visits for m in first.moves]


def test_the_game_default_applies_and_the_baseline_never_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """No settings given follows the game's search.toml; ``mcts-base`` spells out False."""
    state = midgame("war_of_the_posies", 6)
    game_type = type(state.game)
    limits = Limits(iterations=1500, seed=4)

    def visits(settings: SearchSettings | None = None) -> list[tuple[int, int]]:
        return [(m.action, m.visits) for m in analyze(state, limits, settings=settings).moves]

    on = visits(settings_for(state, turn_max=True))
    off = visits(settings_for(state, turn_max=False))
    with monkeypatch.context() as patch:
        patch_settings(patch, game_type, turn_max=True)
        assert visits() == on
        baseline_when_on = visits(BASELINE)
    with monkeypatch.context() as patch:
        patch_settings(patch, game_type, turn_max=False)
        assert visits() == off
        assert visits(BASELINE) == baseline_when_on
    assert on != off


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 5), (4, 19)])  # 15, 8 and 16 moves
def test_botanists_searches_with_turn_max_where_tuned(players: int, seed: int) -> None:
    """Botanists' default (docs/games/botanists.md): turn_max at 2-4 seats, where
    it is part of the search that beat mcts-base at equal time."""
    state = midgame("botanists", seed, players=players)

    def visits(settings: SearchSettings | None = None) -> list[tuple[int, int]]:
        return [(m.action, m.visits) for m in analyze(state, Limits(iterations=2000, seed=5), settings=settings).moves]

    default = visits()
    on = visits(settings_for(state, turn_max=True))
    off = visits(settings_for(state, turn_max=False))
    assert on != off
    assert default == on


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="turn_min_visits"):
        SearchSettings(turn_min_visits=0)
    with pytest.raises(ValueError, match="turn_min_visits"):
        SearchSettings(turn_min_visits=True)
    state = midgame("botanik", 1)
    with pytest.raises(ValueError, match="turn_min_visits"):
        Search(state.kernel_state).run(iterations=10, turn_max=True, turn_min_visits=0)
    assert make_bot("mcts:100,turn=max").settings(state).turn_max is True  # type: ignore[attr-defined]
    assert make_bot("mcts:100,turn=mean").settings(state).turn_max is False  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="turn=best"):
        make_bot("mcts:100,turn=best")
