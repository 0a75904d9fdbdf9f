"""Bots that pick one decision at a time: random, greedy (one ply on the game's heuristic) and
MCTS. Every bot only looks at the state through legal actions, clones and the game heuristic;
the MCTS bot searches from the mover's information set."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Protocol

from hortus.games import State
from hortus.search.analysis import Limits, SearchTrees, analyze, analyze_stream


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
    reproducible.

    reuse_tree: when the bot's move leads straight to its own next decision (a turn of
    several decisions, no chance event in between), the next search continues the subtree
    of that move instead of starting empty, so it gets the iterations the last search spent
    there on top of its own budget. It only ever follows the bot's own moves from a position
    it searched itself, so it knows nothing it could not see."""

    def __init__(self, limits: Limits = Limits(), seed: int = 0, name: str | None = None,
                 baseline: bool = False, reuse_tree: bool = False) -> None:
        self.name = name or f"mcts{limits.iterations or ''}"
        self._limits = limits
        self._rng = random.Random(seed)
        self._baseline = baseline
        self._reuse_tree = reuse_tree
        self._kept: SearchTrees | None = None

    def choose(self, state: State) -> int:
        legal = state.legal_actions()
        kept, self._kept = self._kept, None
        if len(legal) == 1:
            return legal[0]
        limits = replace(self._limits, seed=self._rng.getrandbits(63))
        if self._baseline and limits.margin_weight is None and limits.margin_scale is None:
            # The frozen baseline keeps the reward margin of its day even where a game's
            # default (search_margin) has changed since: see Game.baseline_search_margin.
            weight, scale = state.game.baseline_search_margin(state.num_players)
            limits = replace(limits, margin_weight=weight, margin_scale=scale)
        if not self._reuse_tree:
            return analyze(state, limits).best.action
        if kept is not None and kept.position == state.encode():
            trees = SearchTrees(kept.position, kept.seat, limits, kept.searches, kept.eval_plies)
        else:
            trees = SearchTrees.start(state, limits)
        final = None
        for final, _ in analyze_stream(state, limits, interval_ms=0, trees=trees):
            pass
        assert final is not None  # analyze_stream always yields its final analysis
        action = final.best.action
        after = state.clone()
        after.apply(action)
        self._kept = trees.follow(state, action, after)
        return action


BASELINE = Limits(iterations=2000, exploration=0.7, max_nodes=1_000_000, playout_policy=True,
                  evaluation="playout", expansion_policy=False, widening=0.0, turn_max=False,
                  baseline_playout=True)
"""The frozen baseline search (``mcts-base``): the default search of 2026-12-01, before learned
evaluation (issue 16). Every later change of the default search is measured against it at
equal time, so its settings are spelled out here and never follow ``Limits``' defaults; its
reward margin, which is per game, is the game's ``baseline_search_margin`` (the ``mcts-base``
bot applies it), not its current ``search_margin``; its playout policy is the game's policy of
that day (``baseline_playout``: a game that has changed its playout policy since keeps the old
one as its kernel's ``baseline_rollout_action``)."""



def apply_options(limits: Limits, options: list[str]) -> tuple[Limits, bool]:
    """`limits` with a bot spec's OPTIONs applied (see :func:`make_bot`), and whether ``reuse``
    was asked for; ValueError names an unknown option."""
    reuse = False
    for option in options:
        key, _, value = option.partition("=")
        if key == "uniform" and not value:
            limits = replace(limits, playout_policy=False)
        elif key == "paranoid" and not value:
            limits = replace(limits, paranoid=True)
        elif key == "turn" and value in ("max", "mean"):
            limits = replace(limits, turn_max=value == "max")
        elif key == "widen" and value:
            limits = replace(limits, widening=float(value))
        elif key == "eval" and value:
            limits = replace(limits, evaluation=value)
        elif key == "plies" and value:
            limits = replace(limits, eval_plies=int(value))
        elif key == "c" and value:
            limits = replace(limits, exploration=float(value))
        elif key == "reuse" and not value:
            reuse = True
        elif key == "expand" and value in ("policy", "uniform"):
            limits = replace(limits, expansion_policy=value == "policy")
        elif key == "margin" and value:
            limits = replace(limits, margin_weight=float(value))
        else:
            raise ValueError(f"unknown option {option!r}")
    return limits, reuse


def make_bot(spec: str, seed: int = 0) -> Bot:
    """``random``, ``greedy``, ``level:1..8``, ``mcts[:BUDGET][,OPTION...]`` or
    ``mcts-base[:BUDGET]``.

    ``mcts-base`` is the frozen baseline search (:data:`BASELINE`) with the same budgets, e.g.
    ``mcts-base:100ms`` for equal-time comparisons against today's default.

    BUDGET is iterations (``mcts:2000``, the default 2000) or wall time per decision
    (``mcts:50ms``, for comparisons at equal time). OPTIONs: ``uniform`` (uniformly random
    playouts instead of the game's playout policy), ``widen=C`` (progressive widening),
    ``paranoid``, ``eval=playout|model|default`` (leaf evaluation, ``Limits.evaluation``),
    ``plies=N`` (with a model: decisions played out before it scores), ``c=X`` (the UCT
    exploration constant, ``Limits.exploration``), ``margin=W`` (the reward's score-margin
    weight, ``Limits.margin_weight``), ``expand=policy|uniform`` (which untried move a node
    expands first, ``Limits.expansion_policy``), ``turn=max|mean`` (value a move by its seat's
    best own continuation or by its mean, ``Limits.turn_max``), ``reuse`` (continue the last search's
    subtree at the bot's next decision of the same turn, :class:`MctsBot`). Example:
    ``mcts:50ms,uniform``.
    """
    head, *options = spec.split(",")
    kind, _, arg = head.partition(":")
    if kind == "level" and not options:
        from hortus.search.levels import LevelBot

        return LevelBot(int(arg) if arg else 4, seed)
    if kind == "random" and not options and not arg:
        return RandomBot(seed)
    if kind == "greedy" and not options and not arg:
        return GreedyBot(seed)
    if kind in ("mcts", "mcts-base") and not (kind == "mcts-base" and options):
        try:
            base = BASELINE if kind == "mcts-base" else Limits()
            if arg.endswith("ms"):
                limits = replace(base, iterations=None, time_ms=float(arg[:-2]))
            else:
                limits = replace(base, iterations=int(arg) if arg else 2000)
            limits, reuse = apply_options(limits, options)
        except ValueError as error:
            raise ValueError(f"bad bot {spec!r}: {error}") from None
        return MctsBot(limits, seed, name=spec, baseline=kind == "mcts-base", reuse_tree=reuse)
    raise ValueError(f"unknown bot {spec!r}: use random, greedy, mcts, mcts:ITERATIONS, mcts:MSms "
                     "(options: ,uniform ,widen=C ,paranoid ,eval=E ,plies=N ,c=X ,margin=W ,expand=policy ,turn=max ,reuse), mcts-base[:BUDGET] or level:N")
