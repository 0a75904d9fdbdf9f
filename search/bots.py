"""Bots that pick one decision at a time: random, greedy (one ply on the game's heuristic) and
MCTS. Every bot only looks at the state through legal actions, clones and the game heuristic;
the MCTS bot searches from the mover's information set."""

from __future__ import annotations

import random
from dataclasses import fields, replace
from typing import Any, Protocol

from hortus.games import State
from hortus.search.analysis import Limits, SearchTrees, analyze, analyze_stream
from hortus.search.settings import BASELINE, SearchSettings, with_changes

__all__ = ["BASELINE", "Bot", "GreedyBot", "MctsBot", "RandomBot", "apply_options", "make_bot"]


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
    reproducible. It searches with the game's settings at the table's seat count
    (``search.toml``), or :data:`BASELINE` with `baseline`, with `changes` (setting name ->
    value) on top.

    reuse_tree: when the bot's move leads straight to its own next decision (a turn of
    several decisions, no chance event in between), the next search continues the subtree
    of that move instead of starting empty, so it gets the iterations the last search spent
    there on top of its own budget. It only ever follows the bot's own moves from a position
    it searched itself, so it knows nothing it could not see."""

    def __init__(
        self,
        limits: Limits = Limits(),
        seed: int = 0,
        name: str | None = None,
        baseline: bool = False,
        reuse_tree: bool = False,
        changes: dict[str, Any] | None = None,
    ) -> None:
        self.name = name or f"mcts{limits.iterations or ''}"
        self.limits = limits
        self.changes = dict(changes or {})
        self.baseline = baseline
        with_changes(BASELINE, self.changes)  # a bad change fails here, not at the first move
        self._rng = random.Random(seed)
        self._reuse_tree = reuse_tree
        self._kept: SearchTrees | None = None

    def settings(self, state: State) -> SearchSettings:
        """How this bot searches `state`'s game at its seat count."""
        base = BASELINE if self.baseline else state.game.search_settings(state.num_players)
        return with_changes(base, self.changes)

    def choose(self, state: State) -> int:
        legal = state.legal_actions()
        kept, self._kept = self._kept, None
        if len(legal) == 1:
            return legal[0]
        limits = replace(self.limits, seed=self._rng.getrandbits(63))
        settings = self.settings(state)
        if not self._reuse_tree:
            return analyze(state, limits, settings=settings).best.action
        if kept is not None and kept.position == state.encode():
            trees = replace(kept, limits=limits)
        else:
            trees = SearchTrees.start(state, limits, settings)
        final = None
        for final, _ in analyze_stream(state, limits, interval_ms=0, trees=trees, settings=settings):
            pass
        assert final is not None  # analyze_stream always yields its final analysis
        action = final.best.action
        after = state.clone()
        after.apply(action)
        self._kept = trees.follow(state, action, after)
        return action


# Bot-spec options: a setting by its field name (``exploration=0.35``, ``turn_max=true``), or
# by the short names older commands use.
_ALIASES: dict[str, tuple[str, Any]] = {
    "uniform": ("playout_policy", False),
    "paranoid": ("paranoid", True),
    "turn=max": ("turn_max", True),
    "turn=mean": ("turn_max", False),
    "expand=policy": ("expansion_policy", True),
    "expand=uniform": ("expansion_policy", False),
}
_SHORT_KEYS = {"widen": "widening", "eval": "evaluation", "plies": "eval_plies", "c": "exploration", "margin": "margin_weight"}
_TYPES = {f.name: f.type for f in fields(SearchSettings)}


def _value(key: str, text: str) -> Any:
    kind = str(_TYPES[key])
    if kind == "bool":
        if text not in ("true", "false"):
            raise ValueError(f"{key} takes true or false, not {text!r}")
        return text == "true"
    if kind == "float":
        return float(text)
    if kind.startswith("int"):
        return int(text)
    return text


def apply_options(options: list[str]) -> tuple[dict[str, Any], bool]:
    """A bot spec's OPTIONs (see :func:`make_bot`) as setting changes, and whether ``reuse``
    was asked for; ValueError names an unknown option or a bad value."""
    changes: dict[str, Any] = {}
    reuse = False
    for option in options:
        key, _, value = option.partition("=")
        if option in _ALIASES:
            name, setting = _ALIASES[option]
            changes[name] = setting
        elif key == "reuse" and not value:
            reuse = True
        elif value and (key in _TYPES or key in _SHORT_KEYS):
            name = _SHORT_KEYS.get(key, key)
            changes[name] = _value(name, value)
        else:
            raise ValueError(f"unknown option {option!r}")
    with_changes(SearchSettings(), changes)  # validates every value
    return changes, reuse


def make_bot(spec: str, seed: int = 0) -> Bot:
    """``random``, ``greedy``, ``level:1..8``, ``mcts[:BUDGET][,OPTION...]`` or
    ``mcts-base[:BUDGET]``.

    ``mcts-base`` is the frozen baseline search (:data:`BASELINE` settings) with the same budgets, e.g.
    ``mcts-base:100ms`` for equal-time comparisons against today's default.

    BUDGET is iterations (``mcts:2000``, the default 2000) or wall time per decision
    (``mcts:50ms``, for comparisons at equal time). OPTIONs set ``SearchSettings`` fields by
    name over the game's settings: ``exploration=0.35``, ``turn_max=true``,
    ``evaluation=playout|model|default``, ``eval_plies=10``, ``widening=1``,
    ``expansion_policy=true``, ``margin_weight=0.2``, ``paranoid=true``,
    ``playout_policy=false``, ... The short names of older commands are kept: ``uniform``
    (``playout_policy=false``), ``paranoid``, ``widen=C``, ``eval=E``, ``plies=N``, ``c=X``,
    ``margin=W``, ``expand=policy|uniform``, ``turn=max|mean``. ``reuse``: continue the last
    search's subtree at the bot's next decision of the same turn (:class:`MctsBot`). Example:
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
            if arg.endswith("ms"):
                limits = Limits(iterations=None, time_ms=float(arg[:-2]))
            else:
                limits = Limits(iterations=int(arg) if arg else 2000)
            changes, reuse = apply_options(options)
        except ValueError as error:
            raise ValueError(f"bad bot {spec!r}: {error}") from None
        return MctsBot(limits, seed, name=spec, baseline=kind == "mcts-base", reuse_tree=reuse, changes=changes)
    raise ValueError(
        f"unknown bot {spec!r}: use random, greedy, mcts, mcts:ITERATIONS, mcts:MSms "
        "(options: ,uniform ,widen=C ,paranoid ,eval=E ,plies=N ,c=X ,margin=W ,expand=policy ,turn=max ,reuse), mcts-base[:BUDGET] or level:N"
    )
