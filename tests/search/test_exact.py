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


def _seat0_value(state: State) -> float:
    """Seat 0's exact win share of any position (decision, chance or the end), by expectimax."""
    if state.is_terminal():
        return float(state.returns()[0])
    if state.is_chance():
        total = 0.0
        for outcome, p in state.chance_outcomes():
            child = state.clone()
            child.apply(outcome)
            total += p * _seat0_value(child)
        return total
    best = max(expectimax(state).values.values())
    return best if state.current_player == 0 else 1.0 - best


def _before_a_draw(seed: int, which: int = -1) -> tuple[State, int]:
    """A decision of a seeded random Botanik game whose move (returned too) is followed by a
    chance event: the last such decision (`which` -1, before the last draws), the one before
    (-2), ..."""
    rng = random.Random(seed)
    state = games.get("botanik").new_game(players=2, seed=seed)
    found: list[tuple[State, int]] = []
    while not state.is_terminal():
        if state.is_chance():
            state.resolve_chance(rng)
            continue
        action = rng.choice(state.legal_actions())
        before = state.clone()
        state.apply(action)
        if state.is_chance():
            found.append((before, action))
    return found[which]


def _solved_seat0_value(state: State) -> float:
    """Seat 0's exact win share of a position, by the compiled solver (its root moves) or,
    at a chance node, the odds-weighted mean over the outcomes."""
    if state.is_terminal():
        return float(state.returns()[0])
    if state.is_chance():
        total = 0.0
        for outcome, p in state.chance_outcomes():
            child = state.clone()
            child.apply(outcome)
            total += p * _solved_seat0_value(child)
        return total
    solver = Solver(state.kernel_state)
    best = max(v for _, v, _ in solver.solve(state.legal_actions(), 10_000_000, value_all=True))
    assert solver.status == "solved"
    return best if state.current_player == 0 else 1.0 - best


def test_compiled_solver_values_every_child_exactly() -> None:
    # a decision's moves, against plain expectimax
    state = _near_end("botanik", 2, 2, 2)
    solver = Solver(state.kernel_state)
    moves = solver.values([], 1_000_000)
    assert solver.status == "solved"
    assert sorted(a for a, _, _ in moves) == sorted(state.kernel_state.search_actions())
    for move, p, v in moves:
        child = state.clone()
        child.apply(move)
        assert p == 0.0 and v == pytest.approx(_seat0_value(child), abs=1e-9)
    # a chance event's outcomes (the last draws of a game), against the solver's root values
    state, action = _before_a_draw(2)
    solver = Solver(state.kernel_state)
    after = state.clone()
    after.apply(action)
    outcomes = solver.values([action], 10_000_000)
    assert [a for a, _, _ in outcomes] == [a for a, _ in after.chance_outcomes()]
    assert [p for _, p, _ in outcomes] == pytest.approx([p for _, p in after.chance_outcomes()])
    for outcome, _, v in outcomes:
        child = after.clone()
        child.apply(outcome)
        assert v == pytest.approx(_solved_seat0_value(child), abs=1e-9)
    with pytest.raises(ValueError, match=r"path\[0\]"):
        solver.values([10_000], 1000)
    assert Solver(state.kernel_state).values([action], 1) == []


def test_an_exact_reason_names_the_draw_it_hangs_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # Botanik's last draws never change who wins; the ones before can. A real position before
    # them (a seeded random game), its move compared alone as a review does (allow_actions),
    # with a node budget large enough to solve it (about a million positions).
    state, move = _before_a_draw(7, -2)
    monkeypatch.setattr(analysis, "SOLVE_NODES_PER_ITERATION", 10_000)
    result = analyze(state, Limits(iterations=300, seed=1, allow_actions=(move,)))
    best = result.best
    assert result.solved and best.exact and 0 < best.win_probability < 1
    assert best.exact_condition.startswith(("wins unless", "wins only if", "wins if", "loses if"))
    assert best.exact_condition in best.reason
    # the move leads straight to the draw: the condition names some of its outcomes, which
    # every seat sees, each settling the game as it says; their odds give the exact value
    after = state.clone()
    after.apply(move)
    outcomes = Solver(state.kernel_state).values([move], 10_000_000)
    seat = result.seat
    mine = {after.action_to_string(a): (a, p, v if seat == 0 else 1 - v) for a, p, v in outcomes}
    assert sum(p * v for _, p, v in mine.values()) == pytest.approx(best.win_probability, abs=1e-9)
    for clause in best.exact_condition.split(", "):
        named = clause.split(" the next chance outcome is ")[1].split(" or ")
        assert named and set(named) <= set(mine)
        settled = 0.0 if clause.startswith(("loses", "wins unless")) else 1.0
        assert all(mine[label][2] == pytest.approx(settled, abs=1e-9) for label in named)
        for other in range(2):
            assert not {mine[label][0] for label in named} & after.hidden_chance_outcomes(other)
    # nothing to name without solving
    search_only = analyze(
        state, Limits(iterations=300, seed=1, allow_actions=(move,)), settings=settings_for(state, solve_endgames=False)
    )
    assert not search_only.best.exact_condition
