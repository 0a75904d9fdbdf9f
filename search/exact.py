"""Exact solving of small positions over the public ``State`` API: the ground truth that the
bench's yardstick compares engines against, and (later) the engine's solved-root path.

Two solvers that must agree (tests/search/test_exact.py checks it):

* ``expectimax``: memoised expectimax over decisions and chance outcomes for any number of
  seats; each seat to move maximises its own objective (win share from ``State.returns()``,
  or final points from ``State.scores()`` for a solo game), chance nodes average their
  outcomes with their odds.
* ``star1``: the same value for two seats whose returns sum to 1, found by alpha-beta with
  Star1 pruning at chance nodes (Ballard 1983: a chance node's remaining outcomes are bounded
  by the value range, so it can be cut once the seen outcomes decide it) and a transposition
  table of bounds keyed by the encoded state.

Both give up cleanly (``SolveBudgetError``) when a node budget or a deadline runs out, so a
caller can fall back on sampling. Game-agnostic: the solver sees only the ``State`` API.

Fairness: solving sums over the true chance odds of the real state, so it is only fair for a
seat that can see everything the outcome depends on. ``nothing_hidden`` checks that from the
views alone: states re-dealt from every seat's view must look the same to every seat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from hortus.games.base import State

Objective = Literal["returns", "scores"]


class SolveBudgetError(RuntimeError):
    """The node budget or the deadline ran out before the position was solved."""


@dataclass(frozen=True)
class Solution:
    """Exact values of a decision node: ``values[action]`` is the objective of the seat to
    move after that action under best play by every seat (win probability for ``returns``,
    expected final points for ``scores``); ``best`` is the lowest action with the best value."""

    seat: int
    values: dict[int, float]
    best: int
    nodes: int


class _Counter:
    __slots__ = ("nodes", "budget", "deadline")

    def __init__(self, budget: int | None, deadline: float | None) -> None:
        self.nodes = 0
        self.budget = budget
        self.deadline = deadline

    def tick(self) -> None:
        self.nodes += 1
        if self.budget is not None and self.nodes > self.budget:
            raise SolveBudgetError(f"more than {self.budget} nodes")
        # The clock is read every 256 nodes: cheap, and a deadline is met within a few ms.
        if self.deadline is not None and self.nodes & 255 == 0 and time.monotonic() > self.deadline:
            raise SolveBudgetError("deadline passed")


def _leaf(state: State, objective: Objective) -> tuple[float, ...]:
    return tuple(state.returns() if objective == "returns" else state.scores())


def nothing_hidden(state: State, worlds: int = 4) -> bool:
    """True when no seat holds information another seat lacks: states re-dealt (with several
    seeds) from each seat's view look the same as the real state to every seat. Only then
    is an exact sum over the real state's chance odds a sum the mover itself could make."""
    game = state.game
    truth = [state.view(s) for s in range(state.num_players)]
    for seat in range(state.num_players):
        for w in range(worlds):
            world = game.from_view(truth[seat], seed=w)
            if any(world.view(s) != truth[s] for s in range(state.num_players)):
                return False
    return True


def expectimax(
    state: State,
    objective: Objective = "returns",
    budget: int | None = None,
    deadline: float | None = None,
) -> Solution:
    """Memoised expectimax at a decision node: exact values of every legal action."""
    if state.current_player < 0:
        raise ValueError("state: expected a decision node")
    memo: dict[bytes, tuple[float, ...]] = {}
    counter = _Counter(budget, deadline)

    def value(s: State) -> tuple[float, ...]:
        key = s.encode()
        hit = memo.get(key)
        if hit is not None:
            return hit
        counter.tick()
        if s.is_terminal():
            result = _leaf(s, objective)
        elif s.is_chance():
            acc: list[float] | None = None
            for action, p in s.chance_outcomes():
                child = s.clone()
                child.apply(action)
                v = value(child)
                acc = [p * x for x in v] if acc is None else [a + p * x for a, x in zip(acc, v)]
            assert acc is not None
            result = tuple(acc)
        else:
            mover = s.current_player
            best: tuple[float, ...] | None = None
            for action in s.legal_actions():
                child = s.clone()
                child.apply(action)
                v = value(child)
                if best is None or v[mover] > best[mover]:
                    best = v
            assert best is not None
            result = best
        memo[key] = result
        return result

    seat = state.current_player
    values: dict[int, float] = {}
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        values[action] = value(child)[seat]
    best_action = max(values, key=lambda a: (values[a], -a))
    return Solution(seat, values, best_action, counter.nodes)


_EXACT, _LOWER, _UPPER = 0, 1, 2


def star1(
    state: State,
    budget: int | None = None,
    deadline: float | None = None,
) -> Solution:
    """Exact win probabilities of every legal action for a two-seat game (returns summing
    to 1), by alpha-beta with Star1 pruning at chance nodes and a bounds table."""
    if state.current_player < 0:
        raise ValueError("state: expected a decision node")
    if state.num_players != 2:
        raise ValueError("state: star1 needs two seats (constant-sum returns)")
    table: dict[bytes, tuple[int, float]] = {}
    counter = _Counter(budget, deadline)
    lo, hi = 0.0, 1.0  # seat 0's win share lies in [0, 1]

    def search(s: State, alpha: float, beta: float) -> float:
        """Seat 0's value, fail-hard within [alpha, beta]: a result <= alpha is an upper
        bound, >= beta a lower bound, strictly inside the exact value."""
        key = s.encode()
        entry = table.get(key)
        if entry is not None:
            flag, v = entry
            if flag == _EXACT or (flag == _LOWER and v >= beta) or (flag == _UPPER and v <= alpha):
                return v
        counter.tick()
        a0, b0 = alpha, beta
        if s.is_terminal():
            v = s.returns()[0]
            table[key] = (_EXACT, v)
            return v
        if s.is_chance():
            outcomes = s.chance_outcomes()
            seen = 0.0
            left = 1.0
            cut: float | None = None
            for action, p in outcomes:
                left -= p
                # Star1: the window this outcome must fall in for the node to land in
                # (alpha, beta), the other unseen outcomes taken at the extremes.
                ca = (alpha - seen - left * hi) / p
                cb = (beta - seen - left * lo) / p
                # Decided before this outcome is searched (an empty window would let a
                # child's cut pass for a bound it is not).
                if cb <= lo:
                    cut = seen + (p + left) * lo  # fails high: a lower bound >= beta
                    break
                if ca >= hi:
                    cut = seen + (p + left) * hi  # fails low: an upper bound <= alpha
                    break
                ca, cb = max(lo, ca), min(hi, cb)
                child = s.clone()
                child.apply(action)
                cv = search(child, ca, cb)
                seen += p * cv
                if cv <= ca and ca > lo:
                    cut = seen + left * hi  # fails low: an upper bound <= alpha
                    break
                if cv >= cb and cb < hi:
                    cut = seen + left * lo  # fails high: a lower bound >= beta
                    break
            v = seen if cut is None else cut
        else:
            maximise = s.current_player == 0
            v = lo if maximise else hi
            for action in s.legal_actions():
                child = s.clone()
                child.apply(action)
                cv = search(child, alpha, beta)
                if maximise:
                    if cv > v:
                        v = cv
                    alpha = max(alpha, v)
                else:
                    if cv < v:
                        v = cv
                    beta = min(beta, v)
                if alpha >= beta:
                    break
        if v <= a0:
            table[key] = (_UPPER, v)
        elif v >= b0:
            table[key] = (_LOWER, v)
        else:
            table[key] = (_EXACT, v)
        return v

    seat = state.current_player
    values: dict[int, float] = {}
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        # The full window (just outside [0, 1]) makes each root move's value exact.
        v0 = search(child, lo - 1.0, hi + 1.0)
        values[action] = v0 if seat == 0 else 1.0 - v0
    best_action = max(values, key=lambda a: (values[a], -a))
    return Solution(seat, values, best_action, counter.nodes)


def decisions_to_end(state: State) -> int:
    """How many decisions a game from `state` still needs at most (0 at the end): an upper
    bound found by walking every line, for picking positions near the end (small only)."""
    if state.is_terminal():
        return 0
    if state.is_chance():
        return max(_child_depth(state, a) for a, _ in state.chance_outcomes())
    return 1 + max(_child_depth(state, a) for a in state.legal_actions())


def _child_depth(state: State, action: int) -> int:
    child = state.clone()
    child.apply(action)
    return decisions_to_end(child)
