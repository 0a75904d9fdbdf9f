"""The exact solvers: Star1 with its bounds table agrees with plain memoised expectimax,
budgets give up cleanly, and the fairness check sees hidden hands."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

import pytest

from hortus import games
from hortus._ext.mcts import Search, Solver
from hortus.games.base import State
from hortus.search import BASELINE, Limits, analysis, analyze, analyze_stream
from hortus.search.bots import make_bot
from hortus.search.exact import SolveBudgetError, expectimax, nothing_hidden, star1
from hortus.search.settings import settings_for


def _near_end(name: str, players: int, seed: int, back: int) -> State:
    """The decision `back` decisions before the end of a seeded random game."""
    rng = random.Random(seed)
    state = games.get(name).new_game(players=players, seed=seed)
    decisions: list[State] = []
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        decisions.append(state.clone())
        state.apply(rng.choice(state.legal_actions()))
    return decisions[-back]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("back", [1, 2, 3])
def test_star1_agrees_with_expectimax(seed: int, back: int) -> None:
    state = _near_end("botanik", 2, seed, back)
    plain = expectimax(state)
    pruned = star1(state)
    assert plain.values.keys() == pruned.values.keys()
    for action, v in plain.values.items():
        assert pruned.values[action] == pytest.approx(v, abs=1e-9)
        assert 0.0 <= v <= 1.0
    assert pruned.best == plain.best


def test_last_decision_is_the_best_return() -> None:
    # One decision from the end with no chance after it: each move's value is its returns.
    state = _near_end("botanik", 2, 3, 1)
    solution = expectimax(state)
    for action, v in solution.values.items():
        child = state.clone()
        child.apply(action)
        if child.is_terminal():
            assert v == child.returns()[state.current_player]


def test_budget_gives_up() -> None:
    state = _near_end("botanik", 2, 1, 3)
    with pytest.raises(SolveBudgetError):
        star1(state, budget=2)
    with pytest.raises(SolveBudgetError):
        expectimax(state, budget=2)


def test_botanik_hides_nothing() -> None:
    assert nothing_hidden(_near_end("botanik", 2, 0, 3))


def test_hidden_hands_are_seen() -> None:
    # A card game with private hands: the solver must not be used there.
    state = games.get("war_of_the_posies").new_game(players=2, seed=1)
    rng = random.Random(1)
    state.resolve_chance(rng)
    assert not nothing_hidden(state)


# The compiled solver of the analysis (hortus._ext.mcts.Solver) and the solved path.


def _compiled(state: State, actions: list[int], budget: int = 10_000_000) -> dict[int, tuple[float, bool]]:
    solver = Solver(state.kernel_state)
    result = solver.solve(actions, budget)
    assert solver.status == "solved"
    assert sorted(a for a, _, _ in result) == sorted(actions)
    return {a: (v, valued) for a, v, valued in result}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("back", [1, 2, 3, 4])
def test_compiled_solver_agrees_with_expectimax(seed: int, back: int) -> None:
    state = _near_end("botanik", 2, seed, back)
    plain = expectimax(state)
    best = max(plain.values.values())
    # each move alone: valued exactly
    for action, v in plain.values.items():
        assert _compiled(state, [action])[action] == (pytest.approx(v, abs=1e-9), True)
    # all at once: the best exactly, the others proved no better
    found = _compiled(state, sorted(plain.values))
    valued = [a for a, (_, is_exact) in found.items() if is_exact]
    top = max(valued, key=lambda a: found[a][0])
    assert plain.values[top] == pytest.approx(best, abs=1e-9)
    for action, (v, is_exact) in found.items():
        if is_exact:
            assert v == pytest.approx(plain.values[action], abs=1e-9)
        else:
            assert plain.values[action] <= v + 1e-9 and v <= best + 1e-9


def test_compiled_solver_gives_up_on_its_budget_and_on_cancel() -> None:
    state = _near_end("botanik", 2, 1, 4)
    solver = Solver(state.kernel_state)
    assert len(solver.solve(state.legal_actions(), 2)) < len(state.legal_actions())
    assert solver.status == "node budget"
    solver.cancel()
    assert len(solver.solve(state.legal_actions(), 10_000_000)) < len(state.legal_actions())
    assert solver.status == "cancelled"


def test_compiled_solver_sees_hidden_hands() -> None:
    state = games.get("war_of_the_posies").new_game(players=2, seed=1)
    state.resolve_chance(random.Random(1))
    while state.is_chance():
        state.resolve_chance(random.Random(2))
    solver = Solver(state.kernel_state)
    assert not solver.prepare()
    assert solver.estimate(4, 1) == float("inf")
    assert solver.solve(state.legal_actions(), 1000) == []
    assert solver.status == "hidden information"


def test_analysis_is_exact_near_the_end() -> None:
    state = _near_end("botanik", 2, 2, 2)
    plain = expectimax(state)
    analysis = analyze(state, Limits(iterations=2000, seed=3))
    assert analysis.solved
    best = analysis.best
    assert best.exact
    assert best.win_probability == pytest.approx(max(plain.values.values()), abs=1e-9)
    assert "(solved)" in best.reason
    for move in analysis.moves:
        if move.exact:
            assert move.win_probability == pytest.approx(plain.values[move.action], abs=1e-9)
        else:
            assert move.win_probability <= best.win_probability + 1e-9
    # deterministic with an iteration budget
    again = analyze(state, Limits(iterations=2000, seed=3))
    assert replace(again, elapsed_ms=0.0) == replace(analysis, elapsed_ms=0.0)


def test_solving_is_a_search_setting_off_for_the_frozen_baseline() -> None:
    state = _near_end("botanik", 2, 2, 2)
    limits = Limits(iterations=500, seed=1)
    assert analyze(state, limits).solved
    assert not BASELINE.solve_endgames and not analyze(state, limits, settings=BASELINE).solved
    search_only = analyze(state, limits, settings=settings_for(state, solve_endgames=False))
    assert not search_only.solved and not any(m.exact for m in search_only.moves)
    # the setting decides, not the baseline's playout policy
    assert analyze(state, limits, settings=replace(BASELINE, solve_endgames=True)).solved
    assert make_bot("mcts:500,solve_endgames=false").changes == {"solve_endgames": False}  # type: ignore[attr-defined]


def test_large_positions_are_not_solved() -> None:
    # a few iterations give the solve too few positions: the search's answer stands
    early = games.get("botanik").new_game(players=2, seed=5)
    while early.is_chance():
        early.resolve_chance(random.Random(5))
    analysis = analyze(early, Limits(iterations=300, seed=1))
    assert not analysis.solved and not any(m.exact for m in analysis.moves)


def test_hidden_hands_are_searched_not_solved() -> None:
    rng = random.Random(4)
    state = games.get("war_of_the_posies").new_game(players=2, seed=4)
    decisions: list[State] = []
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        decisions.append(state.clone())
        state.apply(rng.choice(state.legal_actions()))
    analysis = analyze(decisions[-2], Limits(iterations=300, seed=1))
    assert not analysis.solved


def test_a_what_if_comparison_values_every_allowed_move() -> None:
    # A review compares the best move with the one played (allow_actions): both exact.
    state = _near_end("botanik", 2, 2, 2)
    plain = expectimax(state)
    worst = min(plain.values, key=lambda a: (plain.values[a], a))
    best = max(plain.values, key=lambda a: (plain.values[a], -a))
    analysis = analyze(state, Limits(iterations=1000, seed=2, allow_actions=(best, worst)))
    assert analysis.solved
    assert {m.action for m in analysis.moves} == {best, worst}
    for move in analysis.moves:
        assert move.exact
        assert move.win_probability == pytest.approx(plain.values[move.action], abs=1e-9)


def test_the_exact_flag_is_on_the_wire() -> None:
    from hortus.server.messages import analysis_message

    state = _near_end("botanik", 2, 2, 2)
    analysis = analyze(state, Limits(iterations=1000, seed=2))
    message = analysis_message(state, analysis, partial=False)
    assert [m.exact for m in message.moves] == [m.exact for m in analysis.moves]
    assert message.moves[0].exact


def test_a_solved_decision_is_reviewed_on_exact_values() -> None:
    from hortus.search import SearchHandle
    from hortus.server.review import Decision, review_decision

    state = _near_end("botanik", 2, 2, 2)
    plain = expectimax(state)
    worst = min(plain.values, key=lambda a: (plain.values[a], a))
    assert max(plain.values.values()) > plain.values[worst]  # a move that loses something
    decision = Decision(index=0, seat=state.current_player, state=state, played=worst, forced=False)
    limits = Limits(iterations=1000, seed=4)
    review, _ = review_decision(
        decision, limits, state.game.review_thresholds(2), SearchHandle(), comparison_limits=lambda: limits
    )
    assert review is not None and review.exact
    assert review.best_value[0] == pytest.approx(max(plain.values.values()), abs=1e-9)
    assert review.played_value[0] == pytest.approx(plain.values[worst], abs=1e-9)
    assert review.message().exact


def _recording_search(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The options of every ``Search.run`` the analysis makes from now on."""
    calls: list[dict[str, Any]] = []

    class Recording(Search):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            calls.append(kwargs)
            return super().run(*args, **kwargs)

    monkeypatch.setattr(analysis, "Search", Recording)
    return calls


def test_a_solve_that_gives_up_gives_its_time_back_to_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _near_end("botanik", 2, 2, 4)
    calls = _recording_search(monkeypatch)
    # a node budget of one position: the solve is tried and gives up at once
    monkeypatch.setattr(analysis, "SOLVE_NODES_PER_MS", 1e-6)
    monkeypatch.setattr(analysis, "SOLVE_ESTIMATE_RATIO", math.inf)
    result = analyze(state, Limits(iterations=None, time_ms=400, seed=1))
    assert not result.solved
    assert [bool(c.get("resume")) for c in calls] == [False, True]
    assert calls[0]["time_ms"] == 400 * (1 - analysis.SOLVE_SHARE)
    assert 0 < calls[1]["time_ms"] <= 400 * analysis.SOLVE_SHARE
    # the same in a stream (the final analysis's solve), slice by slice
    calls.clear()
    final = [a for a, is_final in analyze_stream(state, Limits(iterations=None, time_ms=400, seed=1), interval_ms=0) if is_final]
    assert not final[0].solved and len(calls) == 2
    assert calls[0]["time_ms"] == pytest.approx(200, abs=5) and 0 < calls[1]["time_ms"] <= 200


def test_a_solved_position_or_an_iteration_budget_searches_once(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _near_end("botanik", 2, 2, 2)
    calls = _recording_search(monkeypatch)
    assert analyze(state, Limits(iterations=None, time_ms=400, seed=1)).solved
    assert len(calls) == 1
    calls.clear()
    monkeypatch.setattr(analysis, "SOLVE_NODES_PER_ITERATION", 1e-9)
    monkeypatch.setattr(analysis, "SOLVE_ESTIMATE_RATIO", math.inf)
    given_up = analyze(state, Limits(iterations=300, seed=1))
    assert not given_up.solved and len(calls) == 1  # the iterations were all spent: deterministic
