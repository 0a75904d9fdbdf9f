"""ISMCTS: determinism, fairness (no peeking at hidden information), budgets, strength smoke."""

from __future__ import annotations

import random
import threading

import pytest

from hortus import games
from hortus.search import BASELINE, Limits, SearchHandle, SearchSettings, analyze, make_bot, settings_for
from hortus.search.bots import MctsBot
from hortus.search.analysis import Analysis
from positions import midgame as random_position
from positions import patch_settings


def midgame(name: str, seed: int, steps: int = 12) -> games.State:
    """A random decision position at the game's fewest seats (solo where it has one)."""
    return random_position(name, seed, steps, games.get(name).min_players)


def comparable(a: Analysis) -> tuple[object, ...]:
    return (a.seat, a.moves, a.iterations, a.partial, a.nodes)


@pytest.mark.parametrize("name", games.names())
def test_same_seed_same_analysis(name: str) -> None:
    state = midgame(name, 3)
    first = analyze(state, Limits(iterations=400, seed=11), draw_worlds=8)
    second = analyze(state.clone(), Limits(iterations=400, seed=11), draw_worlds=8)
    assert comparable(first) == comparable(second)
    assert first.moves[0].draw_share is not None
    other = analyze(state, Limits(iterations=400, seed=12))
    assert comparable(other) != comparable(first)


@pytest.mark.parametrize("name", games.names())
def test_fairness_hidden_information_does_not_change_the_analysis(name: str) -> None:
    """Positions that differ only in what the seat to move cannot see (its determinizations)
    give identical analyses for the same seed."""
    for seed in range(3):
        state = midgame(name, seed)
        seat = state.current_player
        worlds = []
        for world_seed in (101, 202, 303):
            world = state.clone()
            world.kernel_state.determinize(seat, world_seed)
            assert world.view(seat) == state.view(seat)
            worlds.append(world)
        analyses = [comparable(analyze(w, Limits(iterations=300, seed=5), draw_worlds=8)) for w in worlds]
        assert analyses[0] == analyses[1] == analyses[2]


def test_analysis_fields() -> None:
    state = midgame("botanik", 1)
    a = analyze(state, Limits(iterations=500, seed=1))
    assert a.seat == state.current_player
    assert a.iterations == 500 and not a.partial
    assert sum(m.visits for m in a.moves) == 500
    assert [m.visits for m in a.moves] == sorted((m.visits for m in a.moves), reverse=True)
    assert a.best is a.moves[0]
    legal = set(state.legal_actions())
    for move in a.moves:
        assert move.action in legal
        assert 0.0 <= move.win_probability <= 1.0
        assert len(move.expected_scores) == state.num_players
        assert move.principal_variation[0] == move.action
        assert move.notation == state.action_to_string(move.action)
        replay = state.clone()
        for action, text in zip(move.principal_variation, move.principal_variation_notation):
            assert replay.current_player == a.seat  # the PV stays within the mover's turn
            assert replay.action_to_string(action) == text
            replay.apply(action)


def test_time_budget_and_partial() -> None:
    state = midgame("botanik", 2)
    a = analyze(state, Limits(iterations=None, time_ms=50, seed=1))
    assert a.iterations > 0 and not a.partial
    cut = analyze(state, Limits(iterations=10_000_000, time_ms=50, seed=1))
    assert cut.partial and cut.iterations < 10_000_000


def test_cancel_from_another_thread() -> None:
    state = midgame("botanik", 2)
    handle = SearchHandle()
    timer = threading.Timer(0.05, handle.cancel)
    timer.start()
    a = analyze(state, Limits(iterations=50_000_000, seed=1), handle)
    timer.join()
    assert a.partial and a.iterations < 50_000_000


def test_two_threads_merge_statistics() -> None:
    state = midgame("botanik", 4)
    a = analyze(state, Limits(iterations=300, seed=1, threads=2))
    assert a.iterations == 600
    assert sum(m.visits for m in a.moves) == 600


@pytest.mark.parametrize("name", games.names())
def test_threads_do_not_interfere(name: str) -> None:
    """Two root-parallel trees give exactly the sum of the two searches run alone with the
    threads' seeds: the kernels and the search share nothing mutable between threads."""
    from hortus.search.analysis import _THREAD_SEED_STRIDE

    state = midgame(name, 5)
    both = analyze(state, Limits(iterations=1500, seed=3, threads=2))
    alone = [analyze(state, Limits(iterations=1500, seed=(3 + i * _THREAD_SEED_STRIDE) & (2**64 - 1))) for i in range(2)]
    visits = {m.action: m.visits for m in both.moves}
    for single in alone:
        for m in single.moves:
            visits[m.action] -= m.visits
    assert set(visits.values()) == {0}


def test_arena_is_bounded_by_max_nodes() -> None:
    state = midgame("botanik", 4)
    a = analyze(state, Limits(iterations=2000, seed=1, max_nodes=50))
    assert a.nodes <= 50 and a.iterations == 2000


def test_refuses_chance_and_terminal_roots() -> None:
    state = games.get("botanik").new_game()
    with pytest.raises(ValueError):
        analyze(state, Limits(iterations=10))
    with pytest.raises(ValueError):
        Limits(iterations=None, time_ms=None)


def play(name: str, bots: list[str], seed: int) -> list[float]:
    game = games.get(name)
    rng = random.Random(seed)
    players = [make_bot(spec, seed=seed * 10 + i) for i, spec in enumerate(bots)]
    state = game.new_game(players=len(bots), seed=seed)
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        state.apply(players[state.current_player].choose(state))
    return state.returns()


def test_mcts_beats_random_smoke() -> None:
    """Seeded, so not flaky: MCTS with a small budget wins most games against random."""
    wins = 0.0
    games_played = 6
    for seed in range(games_played):
        seat = seed % 2
        bots = ["random", "random"]
        bots[seat] = "mcts:300"
        wins += play("botanik", bots, seed)[seat]
    assert wins >= 5


def test_difficulty_levels_are_geometric_and_playable() -> None:
    from hortus.search.levels import LEVELS, LevelBot, choose, get_level

    budgets = [LEVELS[i].iterations for i in range(1, 9)]
    assert [b2 / b1 for b1, b2 in zip(budgets, budgets[1:])] == [2, 2, 2, 2, 2, 2, 4]
    with pytest.raises(ValueError):
        get_level(9)
    state = midgame("botanik", 6)
    bot = LevelBot(1, seed=3)
    assert bot.choose(state) in state.legal_actions()
    analysis = analyze(state, Limits(iterations=400, seed=1))
    rng = random.Random(0)
    assert choose(analysis, 0.0, rng) is analysis.best
    picks = {choose(analysis, 1.0, rng).action for _ in range(200)}
    assert len(picks) > 1  # a warm level sometimes plays another move


def test_elo_chain_with_a_new_gap() -> None:
    from hortus.search.levels import with_gap

    chain = {"1": 0.0}
    for upper, gap in [(2, 100.0), (3, 50.0)]:
        chain = with_gap(chain, upper, gap)
    assert chain == {"1": 0.0, "2": 100.0, "3": 150.0}
    # re-measuring one pair moves the levels above it and keeps their gaps
    assert with_gap(chain, 2, 30.0) == {"1": 0.0, "2": 30.0, "3": 80.0}
    assert with_gap(chain, 3, 10.0) == {"1": 0.0, "2": 100.0, "3": 110.0}


def test_paranoid_and_widening_run() -> None:
    state = midgame("botanik", 7)
    a = analyze(state, Limits(iterations=500, seed=1), settings=settings_for(state, paranoid=True))
    b = analyze(state, Limits(iterations=500, seed=1), settings=settings_for(state, widening=2.0))
    assert a.iterations == b.iterations == 500
    assert len(b.moves) <= len(state.legal_actions())


def test_hint_reasons_come_from_statistics() -> None:
    state = midgame("botanik", 8)
    a = analyze(state, Limits(iterations=800, seed=2))
    assert all(m.reason for m in a.moves)
    if len(a.moves) > 1:
        assert "next best" in a.moves[0].reason or "frees" in a.moves[0].reason or "points" in a.moves[0].reason
    assert all(0.0 <= m.value_spread <= 1.2 for m in a.moves)


def test_draw_dependence_separates_luck_from_choices() -> None:
    """One-way ANOVA over worlds: with one playout per world nothing can be told apart from the
    draw (no within-world variance); with several, the shares stay within [0, 1] and the top
    moves are measured from the seat's own information set only."""
    from hortus._ext.engine import draw_dependence

    state = midgame("war_of_the_posies", 4, steps=30)
    seat = state.current_player
    actions = state.legal_actions()[:2]
    single = draw_dependence(state.kernel_state, seat, actions, 16, 1, 9)
    assert all(within == 0.0 and points_within == 0.0 for _, _, within, _, _, points_within in single)
    several = draw_dependence(state.kernel_state, seat, actions, 16, 4, 9)
    for win_mean, between, within, _, points_between, points_within in several:
        assert 0.0 <= win_mean <= 1.0
        assert 0.0 <= between <= 0.25 and 0.0 <= within <= 0.34
        assert points_between >= 0.0 and points_within >= 0.0
    assert several == draw_dependence(state.kernel_state, seat, actions, 16, 4, 9)
    with pytest.raises(ValueError):
        draw_dependence(state.kernel_state, seat, [state.kernel_state.num_distinct_actions + 5], 16, 4, 9)
    with pytest.raises(ValueError):
        draw_dependence(state.kernel_state, 7, actions, 16, 4, 9)
    with pytest.raises(ValueError):
        draw_dependence(state.kernel_state, seat, actions, 1, 4, 9)


def test_hint_says_when_a_move_is_a_gamble_on_the_draw() -> None:
    from dataclasses import replace

    from hortus.search.analysis import _reason

    state = midgame("botanists", 2)
    a = analyze(state, Limits(iterations=300, seed=3), draw_worlds=16)
    top = a.moves[0]
    assert top.draw_share is not None and 0.0 <= top.draw_share <= 1.0
    assert top.draw_spread is not None and top.draw_points_spread is not None
    gamble = replace(top, draw_share=0.8, draw_spread=0.3, draw_points_spread=6.0)
    assert "gamble on the draw: it decides 80% of the outcome" in _reason(state, gamble, list(a.moves), a.seat)
    skill = replace(top, draw_share=0.1, draw_spread=0.05, draw_points_spread=2.5)
    reason = _reason(state, skill, list(a.moves), a.seat)
    assert "gamble" not in reason and "±2.5 points ride on the draw" in reason


def test_bot_specs_budgets_and_options() -> None:
    state = midgame("botanik", 5)
    legal = set(state.legal_actions())
    for spec in ("mcts:200", "mcts:20ms", "mcts:200,uniform", "mcts:200,widen=2", "mcts:200,paranoid,uniform"):
        bot = make_bot(spec, seed=1)
        assert bot.name == spec
        assert bot.choose(state) in legal
    for bad in (
        "mcts:abc",
        "mcts:200,fast",
        "mcts:0",
        "greedy:3",
        "random,uniform",
        "mcts:200,widen=",
        "mcts:200,c=-1",
        "mcts:200,c=",
        "mcts:200,margin=x",
        "mcts-base:200,c=1",
        "mcts:200,exploration=-1",
        "mcts:200,turn_max=yes",
        "mcts:200,evaluation=oracle",
        "mcts:200,nodes=3",
    ):
        with pytest.raises(ValueError):
            make_bot(bad)


def test_bot_options_reach_the_settings() -> None:
    """Options set ``SearchSettings`` fields by name, or by the short names of older commands
    (``c=``, ``margin=``), over the game's settings; the budget stays in the limits."""
    state = midgame("botanik", 5)
    for spec in ("mcts:50ms,c=1.2,margin=0.3", "mcts:50ms,exploration=1.2,margin_weight=0.3"):
        bot = make_bot(spec)
        assert isinstance(bot, MctsBot)
        settings = bot.settings(state)
        assert settings.exploration == 1.2 and settings.margin_weight == 0.3
        assert settings.margin_scale == state.game.search_settings(2).margin_scale
        assert bot.limits.time_ms == 50.0 and bot.limits.iterations is None
    assert make_bot("mcts:50,turn_max=true").settings(state).turn_max is True  # type: ignore[attr-defined]


def test_the_baseline_is_the_same_for_every_game() -> None:
    """``mcts-base`` searches with the frozen settings of 2026-12-01 in every game and at every
    seat count, whatever a game's search.toml says: UCT 0.7, margin (0.1, 10), playouts."""
    for name in games.names():
        game = games.get(name)
        state = game.new_game(players=max(2, game.min_players), seed=1)
        settings = make_bot("mcts-base:50").settings(state)  # type: ignore[attr-defined]
        assert settings == BASELINE
        assert (settings.exploration, settings.margin_weight, settings.margin_scale) == (0.7, 0.1, 10.0)
        assert settings.evaluation == "playout" and settings.baseline_playout


def test_baseline_bot_ignores_the_games_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """``mcts-base`` keeps its margin when the game's current one differs; ``mcts`` follows the
    game's; an option overrides it."""
    from hortus.search import bots

    state = midgame("botanik", 5)
    patch_settings(monkeypatch, type(state.game), margin_weight=0.9, margin_scale=3.0)
    seen: list[SearchSettings] = []
    real = bots.analyze

    def spy(st: games.State, lim: Limits, *, settings: SearchSettings) -> Analysis:
        seen.append(settings)
        return real(st, lim, settings=settings)

    monkeypatch.setattr(bots, "analyze", spy)
    make_bot("mcts-base:50", seed=1).choose(state)
    make_bot("mcts:50", seed=1).choose(state)
    make_bot("mcts:50,margin=0.2", seed=1).choose(state)
    base, current, explicit = seen
    assert (base.margin_weight, base.margin_scale) == (0.1, 10.0)
    assert (current.margin_weight, current.margin_scale) == (0.9, 3.0)
    assert (explicit.margin_weight, explicit.margin_scale) == (0.2, 3.0)


def test_uniform_playouts_differ_from_the_policy() -> None:
    """The switch reaches the compiled search: same seed, different playouts, different tree."""
    state = midgame("botanists", 1)
    with_policy = analyze(state, Limits(iterations=300, seed=4))
    uniform = analyze(state, Limits(iterations=300, seed=4), settings=settings_for(state, playout_policy=False))
    assert comparable(with_policy) != comparable(uniform)
