"""Search candidates: tree reuse across one seat's consecutive decisions
(``Search.advance``, ``SearchTrees.follow``, bot option ``reuse``) and expansion by the playout
policy's choice (``Limits.expansion_policy``, bot option ``expand=policy``)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hortus import games
from hortus._ext.mcts import Search
from hortus.games import CHANCE, TERMINAL
from hortus.search import Limits, SearchSettings, SearchTrees, analyze, analyze_stream, settings_for
from hortus.search.bots import MctsBot, make_bot


def consecutive_decision(name: str, seed: int = 5) -> tuple[games.State, int, games.State]:
    """A position of `name` where the seat to move has a move after which the same seat
    decides again with no chance event in between: (before, that move, after)."""
    state = games.get(name).new_game(players=2, seed=seed)
    rng = random.Random(seed)
    for _ in range(400):
        if state.current_player == TERMINAL:
            break
        if state.current_player == CHANCE:
            state.resolve_chance(rng)
            continue
        for action in state.search_actions():
            after = state.clone()
            after.apply(action)
            if after.current_player == state.current_player:
                return state, action, after
        state.apply(rng.choice(state.legal_actions()))
    raise AssertionError(f"{name}: no consecutive decisions of one seat found")


def subtree(search: Search, node: int) -> list[tuple[Any, ...]]:
    """Every node under `node` (itself excluded) as (path of actions, visits, rewards, wins,
    availability), sorted: the tree's content, whatever its node numbering."""
    out: list[tuple[Any, ...]] = []

    def walk(n: int, path: tuple[int, ...]) -> None:
        for child in search.children(n):
            here = path + (int(child["action"]),)
            out.append(
                (
                    here,
                    child["visits"],
                    tuple(child["reward"]),
                    tuple(child["win"]),
                    child["availability"],
                    child["mover"],
                    child["mover_sq"],
                )
            )
            walk(int(child["node"]), here)

    walk(node, ())
    return sorted(out)


@pytest.mark.parametrize("name", ["botanical_lab", "war_of_the_posies", "botanists"])
def test_advance_keeps_exactly_the_subtree_of_the_move(name: str) -> None:
    before, action, after = consecutive_decision(name)
    search = Search(before.kernel_state)
    search.run(iterations=3000, seed=1)
    [child] = [c for c in search.children(0) if c["action"] == action]
    expected = subtree(search, int(child["node"]))
    assert expected, "the move's subtree is empty: the test would prove nothing"
    assert search.advance(after.kernel_state, [action])
    assert subtree(search, 0) == expected
    assert search.node_count == len(expected) + 1
    assert search.root_visits() == child["visits"]
    # the kept tree is searched from `after`: its root children are `after`'s moves
    assert {c["action"] for c in search.children(0)} <= set(after.legal_actions())
    visits = search.root_visits()
    below = sum(c["visits"] for c in search.children(0))
    search.run(iterations=500, seed=2)
    assert search.root_visits() == visits + 500
    # every iteration went through one of the kept root's own children (selection walks the
    # children through links that the compaction renumbered too)
    kept = search.children(0)
    assert sum(c["visits"] for c in kept) == below + 500
    assert len({c["action"] for c in kept}) == len(kept)  # no move expanded twice


def test_advance_refuses_a_move_not_in_the_tree_or_another_seat() -> None:
    before, action, after = consecutive_decision("botanical_lab")
    search = Search(before.kernel_state)
    search.run(iterations=1, seed=1)  # one iteration: at most one child
    tried = {c["action"] for c in search.children(0)}
    untried = next(a for a in before.search_actions() if a not in tried)
    nodes = search.node_count
    assert not search.advance(after.kernel_state, [untried])
    assert search.node_count == nodes
    other_seat = before.clone()
    while other_seat.current_player in (before.current_player, CHANCE):
        if other_seat.current_player == CHANCE:
            other_seat.resolve_chance(random.Random(1))
        else:
            other_seat.apply(other_seat.legal_actions()[0])
    assert not search.advance(other_seat.kernel_state, [])


def test_follow_only_the_seats_own_move_with_nothing_in_between() -> None:
    before, action, after = consecutive_decision("war_of_the_posies")
    limits = Limits(iterations=2000, seed=3)
    trees = SearchTrees.start(before, limits)
    for _ in analyze_stream(before, limits, interval_ms=0, trees=trees):
        pass
    other = next(a for a in before.search_actions() if a != action)
    elsewhere = before.clone()
    elsewhere.apply(other)
    assert trees.follow(before, other, after) is None  # after is not where `other` leads
    assert trees.follow(after, action, after) is None  # not the trees' position
    kept = trees.follow(before, action, after)
    assert kept is not None and kept.position == after.encode() and kept.seat == before.current_player
    analysis = list(analyze_stream(after, limits, interval_ms=0, trees=kept))[-1][0]
    assert analysis.best.action in after.legal_actions()


def test_a_reusing_bot_is_reproducible_and_reuses() -> None:
    """Seeded with an iteration budget, a game between reusing bots is the same every time,
    and the bot does continue its trees within a turn (Botanical Lab's turns are several
    decisions long)."""

    def play() -> tuple[list[int], int]:
        state = games.get("botanical_lab").new_game(players=2, seed=7)
        bots = [MctsBot(Limits(iterations=200), seed=s, reuse_tree=True) for s in (1, 2)]
        rng = random.Random(7)
        moves: list[int] = []
        reused = 0
        while state.current_player != TERMINAL and len(moves) < 60:
            if state.current_player == CHANCE:
                state.resolve_chance(rng)
                continue
            bot = bots[state.current_player]
            kept = bot._kept
            reused += kept is not None and kept.position == state.encode()
            moves.append(bot.choose(state))
            state.apply(moves[-1])
        return moves, reused

    first, reused = play()
    assert play() == (first, reused)
    assert reused > 10


def test_reuse_gives_the_next_decision_the_last_searchs_iterations() -> None:
    before, action, after = consecutive_decision("botanical_lab")
    limits = Limits(iterations=2000, seed=3)
    trees = SearchTrees.start(before, limits)
    for _ in analyze_stream(before, limits, interval_ms=0, trees=trees):
        pass
    [child] = [c for c in trees.searches[0].children(0) if c["action"] == action]
    kept = trees.follow(before, action, after)
    assert kept is not None
    analysis = list(analyze_stream(after, Limits(iterations=500, seed=3), interval_ms=0, trees=kept))[-1][0]
    fresh = analyze(after, Limits(iterations=500, seed=3))
    visits = sum(m.visits for m in analysis.moves)
    assert visits >= child["visits"] - 1 + 500 - 1 > sum(m.visits for m in fresh.moves)


def test_bot_options_reuse_and_expand() -> None:
    bot = make_bot("mcts:100,reuse,expand=policy")
    assert (
        isinstance(bot, MctsBot)
        and bot._reuse_tree
        and bot.settings(games.get("botanik").new_game(players=2, seed=1)).expansion_policy
    )
    assert not make_bot("mcts:100")._reuse_tree  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        make_bot("mcts-base:100,reuse")


@pytest.mark.parametrize("name", ["botanical_lab", "war_of_the_posies"])
def test_policy_expansion_changes_the_tree_and_stays_deterministic(name: str) -> None:
    before, _, _ = consecutive_decision(name)
    limits = Limits(iterations=400, seed=2)
    uniform = analyze(before, limits, settings=settings_for(before, expansion_policy=False))
    policy = analyze(before, limits, settings=settings_for(before, expansion_policy=True))
    assert policy.moves == analyze(before, limits, settings=settings_for(before, expansion_policy=True)).moves
    assert [m.visits for m in policy.moves] != [m.visits for m in uniform.moves]


def test_game_defaults_and_the_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    """War of the Posies (2-4 seats) and Botanical Lab (2 seats) search with policy expansion
    and widening by default (they won at equal time together); the other games and seat
    counts do not, and the frozen baseline never does; bot options override the game's."""
    import hortus.search.analysis as analysis

    seen: list[tuple[bool, float]] = []
    real = analysis._search_options

    def spy(settings: SearchSettings) -> dict[str, Any]:
        options = real(settings)
        seen.append((bool(options["expansion_policy"]), float(options["widening_c"])))
        return options

    monkeypatch.setattr(analysis, "_search_options", spy)
    lab, _, _ = consecutive_decision("botanical_lab")
    war, _, _ = consecutive_decision("war_of_the_posies")
    analyze(war, Limits(iterations=10))
    analyze(lab, Limits(iterations=10))
    make_bot("mcts-base:10", seed=1).choose(war)
    make_bot("mcts:10,expand=uniform,widen=0", seed=1).choose(war)
    assert seen == [(True, 1.0), (True, 1.0), (False, 0.0), (False, 0.0)]
    lab_game = games.get("botanical_lab")
    for players in (2, 3, 4):  # measured and tuned at 2 and 4 seats (search.toml)
        tuned = players in (2, 4)
        lab_settings = lab_game.search_settings(players)
        assert lab_settings.expansion_policy == tuned and lab_settings.widening == float(tuned)
        assert lab_settings.turn_max == tuned
        assert (lab_settings.margin_weight, lab_settings.margin_scale) == (0.1, 10.0)
    war_game = games.get("war_of_the_posies")
    for players in (2, 3, 4):  # measured and tuned at every seat count (search.toml)
        tuned = True
        war_settings = war_game.search_settings(players)
        assert war_settings.expansion_policy == tuned and war_settings.widening == float(tuned)
        assert war_settings.turn_max == tuned
        assert (war_settings.margin_weight, war_settings.margin_scale) == ((0.3, 10.0) if tuned else (0.1, 10.0))
    botanists_game = games.get("botanists")
    for players in (1, 2, 3, 4):  # the tuned search where it won at equal time, not solo (search.toml)
        tuned = players != 1
        botanists_settings = botanists_game.search_settings(players)
        assert botanists_settings.turn_max == tuned
        assert not botanists_settings.expansion_policy and botanists_settings.widening == 0.0
