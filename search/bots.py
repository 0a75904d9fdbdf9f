"""Bots that pick one decision at a time: random, greedy (one ply on the game's heuristic) and
MCTS. Every bot only looks at the state through legal actions, clones and the game heuristic;
the MCTS bot searches from the mover's information set."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Protocol

from hortus.games import State
from hortus.search.analysis import Limits, analyze


class Bot(Protocol):
    name: str

    def choose(self, state: State) -> int:
        """A legal action for the seat to move in `state`."""
        ...


class RandomBot:
    """Uniform over legal actions."""

    def __init__(self, seed: int = 0) -> None:
        self.name = "random"
        self._rng = random.Random(seed)

    def choose(self, state: State) -> int:
        return self._rng.choice(state.legal_actions())


class GreedyBot:
    """One ply: the action whose resulting position the game's heuristic likes best for the
    mover (ties broken at random)."""

    def __init__(self, seed: int = 0) -> None:
        self.name = "greedy"
        self._rng = random.Random(seed)

    def choose(self, state: State) -> int:
        seat = state.current_player
        best: list[int] = []
        best_value = float("-inf")
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            value = state.game.heuristic(child, seat)
            if value > best_value + 1e-9:
                best, best_value = [action], value
            elif abs(value - best_value) <= 1e-9:
                best.append(action)
        return self._rng.choice(best)


class MctsBot:
    """ISMCTS with the given limits; the seed advances each decision for variety yet stays
    reproducible."""

    def __init__(self, limits: Limits = Limits(), seed: int = 0) -> None:
        self.name = f"mcts{limits.iterations or ''}"
        self._limits = limits
        self._rng = random.Random(seed)

    def choose(self, state: State) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        limits = replace(self._limits, seed=self._rng.getrandbits(63))
        return analyze(state, limits).best.action


def make_bot(spec: str, seed: int = 0) -> Bot:
    """``random``, ``greedy``, ``mcts``, ``mcts:ITERATIONS`` or ``level:1..8``."""
    kind, _, arg = spec.partition(":")
    if kind == "level":
        from hortus.search.levels import LevelBot

        return LevelBot(int(arg) if arg else 4, seed)
    if kind == "random":
        return RandomBot(seed)
    if kind == "greedy":
        return GreedyBot(seed)
    if kind == "mcts":
        iterations = int(arg) if arg else 2000
        return MctsBot(Limits(iterations=iterations), seed)
    raise ValueError(f"unknown bot {spec!r}: use random, greedy, mcts, mcts:ITERATIONS or level:N")
