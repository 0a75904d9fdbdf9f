"""``analyze(state, Limits(...)) -> Analysis``: ISMCTS from the seat to move."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from hortus._ext.engine import draw_dependence
from hortus._ext.mcts import Search, Solver
from hortus.games import CHANCE, TERMINAL, State
from hortus.search.evaluation import load_model
from hortus.search.settings import SearchSettings

_THREAD_SEED_STRIDE = 0x9E3779B97F4A7C15  # decorrelates the seeds of root-parallel trees
MAX_NODES = 2**30
"""The largest ``Limits.max_nodes``: the tree arena indexes its nodes with 32-bit signed
integers and doubles its capacity as it grows (from 1,024), so 2**30 is the last capacity
it reaches without overflow. (At 136 bytes a node that is 146 GB: memory runs out first.)"""


DRAW_PLAYOUTS = 3
"""Playouts per sampled world in the draw-dependence measurement (``analyze(draw_worlds=...)``): they
separate the players' choices from luck; 3 was the only value ever used."""


SOLVE_SHARE = 0.5
"""Of a time budget, the share kept for solving the position exactly when it looks small
enough (``SOLVE_ESTIMATE_RATIO``); the search has the rest first, and all of it otherwise.
What the solve leaves unused when it gives up (its node budget ran out first) goes back to
the search, up to the same deadline."""
SOLVE_NODES_PER_ITERATION = 1
"""With an iteration budget, the solve may expand this many positions per iteration: a
position costs about what an iteration near the end does (every move and outcome applied
once against a few decisions played out), and a node budget keeps seeded analyses
deterministic where a clock would not."""
SOLVE_NODES_PER_MS = 200
"""Positions a solve expands per millisecond at most (20-40 µs each were measured on a busy
machine): a time budget's node budget, which sizes the table and, with
``SOLVE_ESTIMATE_RATIO``, decides which positions are tried (the deadline is the bound)."""
SOLVE_ESTIMATE_RATIO = 1e5
"""A position whose game tree Knuth's estimate (every move and chance outcome, no pruning)
puts above this many times the solve's node budget is not tried: alpha-beta, Star1 and the
table were measured to cut the estimated tree by 10^3 to 10^5, so one beyond would not finish,
and trying would cost the search its share of the time."""
SOLVE_PROBES = 16
"""Random descents of that estimate (it costs about as many playouts)."""


@dataclass(frozen=True)
class Limits:
    """How much to search: the budgets of one search (it stops at whichever comes first) and
    the what-if constraints on its root. How to search is ``SearchSettings``
    (``hortus.search.settings``): the game's, from its ``search.toml``, unless a caller gives
    others (python-chess's ``Limit`` likewise holds stop conditions only).

    iterations: ISMCTS iterations per thread (None = no iteration budget).
    time_ms: wall-clock milliseconds (None = no time budget).
    seed: seeds the search's RNG; one thread + an iteration budget is deterministic.
    threads: root-parallel trees searched at once without the GIL, statistics merged.
    max_nodes: tree arena bound per thread (1..``MAX_NODES``); when full the search stops
        growing the tree and keeps iterating (``Analysis.tree_full``).
    """

    iterations: int | None = 2000
    time_ms: float | None = None
    seed: int = 0
    threads: int = 1
    max_nodes: int = 1_000_000
    allow_actions: tuple[int, ...] = ()
    """What-if constraint (KataGo's allowMoves), root only: the search and the ranking consider
    only these legal actions; () = every move. Each must be legal at the root."""
    avoid_actions: tuple[int, ...] = ()
    """What-if constraint (KataGo's avoidMoves), root only: the search and the ranking never
    consider these actions (each must be legal at the root); the rest of the tree is free."""

    def __post_init__(self) -> None:
        # Lists are accepted and kept as tuples (the limits are frozen and hashable).
        object.__setattr__(self, "allow_actions", tuple(int(a) for a in self.allow_actions))
        object.__setattr__(self, "avoid_actions", tuple(int(a) for a in self.avoid_actions))
        if self.iterations is None and self.time_ms is None:
            raise ValueError("Limits needs an iteration or a time budget")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError("iterations must be >= 1")
        if self.time_ms is not None and self.time_ms <= 0:
            raise ValueError("time_ms must be > 0")
        if not 1 <= self.threads <= 256:
            raise ValueError("threads must be in 1..256")
        if isinstance(self.max_nodes, bool) or not isinstance(self.max_nodes, int) or not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(
                f"max_nodes must be an integer in 1..{MAX_NODES} (2**30, what the arena can index), not {self.max_nodes!r}"
            )


@dataclass(frozen=True)
class MoveInfo:
    """One candidate decision at the root."""

    action: int
    """The action id (``State.legal_actions`` numbering)."""
    notation: str
    """The action in the game's notation."""
    visits: int
    """Iterations through this move (all threads)."""
    win_probability: float
    """Mean win share of ``Analysis.seat`` after this move, in [0, 1]."""
    expected_scores: tuple[float, ...]
    """Mean final points per seat (index = seat) after this move."""
    principal_variation: tuple[int, ...]
    """This move and the most visited continuation to the end of the mover's turn."""
    principal_variation_notation: tuple[str, ...] = field(default=())
    """The principal variation in notation."""
    value_spread: float = 0.0
    """Standard deviation of the mover's search reward (a win share plus the small margin
    term) over the iterations through this move, i.e. over simulated futures (draws, hidden
    information resampled, playouts). About sqrt(p(1-p)) for a win probability p; lower when
    the result is settled whatever comes."""
    draw_share: float | None = None
    """Share of the variance of this move's result (win share) that the draw alone explains:
    the hidden information and the chance outcomes to come, measured over sampled worlds with
    the players' choices varied inside each world (None = not measured, see
    ``analyze(draw_worlds=...)``). Near 1: a gamble on the draw; near 0: the players decide."""
    draw_spread: float | None = None
    """Standard deviation over those worlds of the win probability after this move (the part
    that the draw explains)."""
    draw_points_spread: float | None = None
    """The same for the mover's final points: how many points ride on the draw."""
    reason: str = ""
    """A short explanation built from the measured statistics (and the move's visible effect)."""
    exact: bool = False
    """``win_probability`` is this move's exact win share with best play by every seat, every
    chance outcome counted with its odds: the rest of the game was small enough to solve and
    nothing in it is hidden from any seat (see docs/exact.md). The other statistics (visits,
    expected scores, principal variation, spreads) are the search's, as for any move."""
    exact_condition: str = ""
    """For an exact move that neither surely wins nor surely loses, what its result hangs on,
    where one chance event settles it: the first chance event along the solved line of best
    play after the move, and the outcomes (in the game's notation, all public) on which it
    loses or wins, e.g. "wins unless the next chance outcome is draw red loop". "" otherwise
    (also where the analysis had no budget left to trace the line)."""


@dataclass(frozen=True)
class Analysis:
    """The result of one search from ``seat``'s point of view."""

    seat: int
    """The seat to move at the root; win probabilities are this seat's."""
    moves: tuple[MoveInfo, ...]
    """Every move the search considers at the root (``State.search_actions``: the legal moves
    less equivalent orderings of commuting ones), most visited first (when the position was
    solved, the exactly best move first); moves no iteration reached have 0 visits (and the
    reason "not searched ..."), last."""
    iterations: int
    """Iterations performed (all threads)."""
    partial: bool
    """True when cut short (cancel or deadline) before the iteration budget."""
    elapsed_ms: float
    """Wall-clock time of the search."""
    nodes: int
    """Tree nodes allocated (all threads)."""
    tree_full: bool = False
    """The node arena (``Limits.max_nodes``) filled up in at least one thread: the tree stopped
    growing and later iterations only played out from its leaves (answers stay correct, only
    weaker; moves may be left with 0 visits)."""

    solved: bool = False
    """The position was solved: the first move is the best exactly (``MoveInfo.exact``) and
    every other move was proved no better (exact too where it was valued). A solve cut short
    by the budget leaves this False but keeps the exact values it found (``MoveInfo.exact``)."""

    @property
    def best(self) -> MoveInfo:
        """The move to play: the most visited, unless a solve proved another better (when
        ``solved``, the exactly best one)."""
        return self.moves[0]


class ConstraintError(ValueError):
    """An allow/avoid constraint that the root does not admit; ``field`` names the entry
    (``allow_actions[2]``) or the list that leaves nothing to search."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def root_actions(state: State, limits: Limits) -> list[int] | None:
    """The root actions the search may expand under ``limits.allow_actions`` /
    ``avoid_actions`` (None = no constraint). Raises ConstraintError for an action that is not
    legal at the root, or constraints that leave no move.

    Allowing a move searches it even outside the game's search subset (the caller asked for
    it); avoiding moves keeps the search subset, falling back to every other legal move when
    the subset is all avoided."""
    if not limits.allow_actions and not limits.avoid_actions:
        return None
    legal = state.legal_actions()
    legal_set = set(legal)
    for name, actions in (("allow_actions", limits.allow_actions), ("avoid_actions", limits.avoid_actions)):
        for i, action in enumerate(actions):
            if action not in legal_set:
                raise ConstraintError(f"{name}[{i}]", f"action {action} is not legal in this position")
    avoid = set(limits.avoid_actions)
    if limits.allow_actions:
        allow = set(limits.allow_actions)
        allowed = [a for a in legal if a in allow and a not in avoid]
    else:
        allowed = [a for a in state.kernel_state.search_actions() if a not in avoid]
        if not allowed:
            allowed = [a for a in legal if a not in avoid]
    if not allowed:
        field = "avoid_actions" if limits.avoid_actions else "allow_actions"
        raise ConstraintError(field, "the constraints leave no legal move to search")
    return allowed


def settings_of(state: State, settings: SearchSettings | None) -> SearchSettings:
    """`settings`, or the game's at the state's seat count (its ``search.toml``)."""
    return settings if settings is not None else state.game.search_settings(state.num_players)


def _search_options(settings: SearchSettings) -> dict[str, Any]:
    """``Search.run``'s options from the settings."""
    return {
        "exploration": settings.exploration,
        "paranoid": settings.paranoid,
        "widening_c": settings.widening,
        "playout_policy": settings.playout_policy,
        "baseline_playout": settings.baseline_playout,
        "expansion_policy": settings.expansion_policy,
        "turn_max": settings.turn_max,
        "turn_min_visits": settings.turn_min_visits,
        "margin_weight": settings.margin_weight,
        "margin_scale": settings.margin_scale,
    }


def _searches(state: State, limits: Limits, settings: SearchSettings) -> tuple[list[Search], int]:
    """One search per thread, with the value model installed when ``settings.evaluation`` asks
    for it; returns them and the playout cut (-1 = play every playout out)."""
    searches = [Search(state.kernel_state, limits.max_nodes) for _ in range(limits.threads)]
    allowed = root_actions(state, limits)
    if allowed is not None:
        for search in searches:
            search.set_root_actions(allowed)
    if settings.evaluation == "playout" or state.num_players < 2:
        if settings.evaluation == "model" and state.num_players < 2:
            raise ValueError("evaluation 'model' needs 2 or more seats (a solo game has no one to beat)")
        return searches, -1
    model = load_model(state.game, int(searches[0].num_features))
    if model is None:
        if settings.evaluation == "model":
            raise ValueError(f"evaluation 'model': {state.game.name} has no value model")
        return searches, -1
    if settings.evaluation == "default" and not (model.default and settings.value_model):
        return searches, -1
    for search in searches:
        search.set_model(
            [list(r) for r in model.w1],
            list(model.b1),
            list(model.w2),
            model.b2,
            None if model.points_w is None else list(model.points_w),
            model.points_b,
        )
    return searches, model.eval_plies if settings.eval_plies is None else settings.eval_plies


def _in_parallel(run: Callable[[int], None], threads: int) -> None:
    """run(0..threads-1), each on a thread of its own (the searches release the GIL)."""
    if threads == 1:
        run(0)
        return
    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


class SearchHandle:
    """Lets another thread (e.g. a gRPC cancellation callback) stop a running search."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._searches: list[Search | Solver] = []
        self.cancelled = False

    def _attach(self, searches: list[Search | Solver]) -> None:
        with self._lock:
            self._searches = searches
            if self.cancelled:
                for s in searches:
                    s.cancel()

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            for s in self._searches:
                s.cancel()


def analyze(
    state: State,
    limits: Limits = Limits(),
    handle: SearchHandle | None = None,
    detail: int = 0,
    *,
    settings: SearchSettings | None = None,
    draw_worlds: int = 0,
    draw_deadline: float | None = None,
) -> Analysis:
    """Search `state` from the seat to move and rank its legal moves.

    `settings`: how to search (None = the game's at this seat count). `draw_worlds` > 0: after
    the search, measure how much the top moves depend on the draw (``MoveInfo.draw_share``)
    over that many sampled worlds (2..4096), unless ``time.perf_counter()`` is already past
    `draw_deadline` (it takes milliseconds: a caller's deadline is kept).

    The search only uses what that seat can see: every iteration re-samples the hidden parts.
    `detail` > 0: only the first `detail` moves get their principal variation and reason (the
    others have their statistics, a one-action variation and no reason), for callers that
    keep the top moves only. Raises ValueError at chance nodes and terminal states.

    Near the end, where nothing is hidden from any seat and the rest of the game looks small
    enough, the position is also solved exactly within the budget (``Analysis.solved``,
    ``MoveInfo.exact``; docs/exact.md): with a time budget the search has half of it and the
    solve the rest (a solve that gives up gives the time it leaves back to the search), with
    an iteration budget the solve expands at most as many positions as the search has
    iterations. ``settings.solve_endgames`` False: search only.
    """
    player = state.current_player
    if player == TERMINAL:
        raise ValueError("the game is over: nothing to analyse")
    if player == CHANCE:
        raise ValueError("chance node: apply the chance outcome first")
    _check_draw_worlds(draw_worlds)
    started = time.perf_counter()
    settings = settings_of(state, settings)
    searches, eval_plies = _searches(state, limits, settings)
    plan = _plan_solve(state, limits, settings, started)
    if handle is not None:
        handle._attach([*searches, *([plan.solver] if plan else [])])
    seeds = [(limits.seed + i * _THREAD_SEED_STRIDE) & 0xFFFFFFFFFFFFFFFF for i in range(limits.threads)]

    options = _search_options(settings)
    options["eval_plies"] = eval_plies
    time_ms = _search_time_ms(limits, plan)

    def run(i: int) -> None:
        searches[i].run(iterations=limits.iterations or 0, time_ms=time_ms, seed=seeds[i], **options)

    _in_parallel(run, limits.threads)
    found = None
    if plan is not None and not (handle is not None and handle.cancelled):
        found = _run_solve(plan, _search_order(state, searches, player, limits))
        left_ms = _time_left_ms(limits, started)
        if not found.solved and left_ms > 0 and not (handle is not None and handle.cancelled):
            # the solve gave up before the deadline: the search has the time it left
            def more(i: int) -> None:
                iterations = 0
                if limits.iterations is not None:
                    iterations = limits.iterations - int(searches[i].iterations_done)
                    if iterations <= 0:
                        return
                searches[i].run(iterations=iterations, time_ms=left_ms, seed=seeds[i], resume=True, **options)

            _in_parallel(more, limits.threads)

    done = sum(int(s.iterations_done) for s in searches)
    cancelled = handle is not None and handle.cancelled
    short = limits.iterations is not None and any(int(s.iterations_done) < limits.iterations for s in searches)
    moves, solved = _rank(state, searches, player, limits, detail, None if cancelled else found)
    if not cancelled:
        moves = _measure_draws(state, moves, player, limits.seed, draw_worlds, draw_deadline)
    return Analysis(
        seat=player,
        moves=tuple(moves),
        iterations=done,
        partial=bool(cancelled or short),
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
        nodes=sum(int(s.node_count) for s in searches),
        tree_full=any(bool(s.truncated) for s in searches),
        solved=solved,
    )


@dataclass(frozen=True)
class _Solve:
    """A solve of the root planned after the search: the solver (root checked, nothing
    hidden), its node budget and its deadline (``time.perf_counter()``; None = none)."""

    solver: Solver
    max_nodes: int
    deadline: float | None
    value_all: bool
    """Value every move exactly, not only the best: for what-if comparisons (allow_actions),
    where each allowed move's value is the question (a review's loss of the move played)."""


def _plan_solve(state: State, limits: Limits, settings: SearchSettings, started: float) -> _Solve | None:
    """The exact solve to try after the search, or None: not where the settings say search
    only (``solve_endgames``; the frozen baseline plays as it was measured), only for two
    seats (with three or more max^n has no single value; a solo game's win share is the same
    for every move, and its objective is points), not where a seat cannot see everything (the
    solver's check, over the kernel's determinize), not where the estimated tree is beyond the
    budget (``SOLVE_ESTIMATE_RATIO``)."""
    if not settings.solve_endgames or state.num_players != 2:
        return None
    if limits.iterations is not None:
        max_nodes = limits.iterations * SOLVE_NODES_PER_ITERATION
    else:
        assert limits.time_ms is not None
        max_nodes = max(1, int(limits.time_ms * SOLVE_SHARE * SOLVE_NODES_PER_MS))
    # the table: 4 slots per position the budget allows, at most 2**20 (32 MB, its pages
    # mapped only as a solve touches them)
    solver = Solver(state.kernel_state, min(1 << 20, max(1024, 4 * max_nodes)))
    if solver.estimate(SOLVE_PROBES, limits.seed) > SOLVE_ESTIMATE_RATIO * max_nodes:
        return None
    deadline = None if limits.time_ms is None else started + limits.time_ms / 1000.0
    return _Solve(solver, max_nodes, deadline, value_all=bool(limits.allow_actions))


def _search_time_ms(limits: Limits, solve: _Solve | None) -> float:
    """The search's first time budget (0 = none): all of ``limits.time_ms``, less the solve's
    share (the search gets back what the solve leaves unused)."""
    if limits.time_ms is None:
        return 0.0
    return limits.time_ms * (1.0 - SOLVE_SHARE) if solve is not None else limits.time_ms


def _time_left_ms(limits: Limits, started: float) -> float:
    """Milliseconds of the time budget left (0 without one)."""
    if limits.time_ms is None:
        return 0.0
    return max(0.0, limits.time_ms - (time.perf_counter() - started) * 1000.0)


@dataclass(frozen=True)
class _Found:
    """What a solve found: (action, value, exact) in the order tried (``Solver.solve``), and
    whether every move was; `solve` is the plan that found it (its solver and its table)."""

    moves: tuple[tuple[int, float, bool], ...]
    solved: bool
    solve: _Solve


def _run_solve(solve: _Solve, order: list[int]) -> _Found:
    """Solve the root, trying the moves in `order` (the search's ranking: its favourite is
    valued first and stays first among equally good moves), within the plan's node budget
    and deadline."""
    time_ms = 0.0
    if solve.deadline is not None:
        time_ms = (solve.deadline - time.perf_counter()) * 1000.0
        if time_ms <= 0.0:
            return _Found((), False, solve)
    found = solve.solver.solve(order, solve.max_nodes, time_ms, value_all=solve.value_all)
    return _Found(tuple((int(a), float(v), bool(valued)) for a, v, valued in found), solve.solver.status == "solved", solve)


def _solved(found: _Found, moves: list[MoveInfo]) -> list[MoveInfo]:
    """`moves` (ranked) with what the solve found. A move valued exactly gets its exact win
    share; one proved no better without being valued keeps the search's estimate, capped at
    the bound the proof gives. The best move found goes first when the whole root was solved,
    or when the ranking's first move was among those tried (a move valued after it was
    proved better; a move not tried might be better still, so otherwise the order stands). A
    solve cut short keeps what it finished (often the favourite's exact value, the costly
    part)."""
    exact = {a: v for a, v, valued in found.moves if valued}
    bound = {a: v for a, v, valued in found.moves if not valued}
    if not exact:
        return moves
    best = max(exact, key=lambda a: exact[a])  # the first of the best, in the order tried
    out = []
    for m in moves:
        if m.action in exact:
            out.append(replace(m, win_probability=exact[m.action], exact=True))
        elif m.action in bound:
            out.append(replace(m, win_probability=min(m.win_probability, bound[m.action])))
        else:
            out.append(m)
    if found.solved or (moves and moves[0].action in exact.keys() | bound.keys()):
        out.sort(key=lambda m: m.action != best)  # stable: the rest keep their order
    return out


@dataclass
class SearchTrees:
    """The trees of a streamed analysis (one per thread), kept so that a later
    :func:`analyze_stream` continues them (``Analyze.continue_from``).

    They were grown from ``seat``'s information set at the position whose bytes are
    ``position`` with ``limits`` (seed, threads, what-if constraints) and ``settings``; a
    continuation must search the same position with the same limits but its budgets, and the
    same settings."""

    position: bytes
    seat: int
    limits: Limits
    settings: SearchSettings
    searches: list[Search]
    eval_plies: int

    @classmethod
    def start(cls, state: State, limits: Limits, settings: SearchSettings | None = None) -> "SearchTrees":
        """Fresh trees for `state` (the seat to move searches) with `limits` and `settings`
        (None = the game's)."""
        player = state.current_player
        if player == TERMINAL:
            raise ValueError("the game is over: nothing to analyse")
        if player == CHANCE:
            raise ValueError("chance node: apply the chance outcome first")
        settings = settings_of(state, settings)
        searches, eval_plies = _searches(state, limits, settings)
        return cls(state.encode(), player, limits, settings, searches, eval_plies)

    @property
    def iterations(self) -> int:
        """Iterations the trees hold (all threads, every call that grew them)."""
        return sum(int(s.iterations_done) for s in self.searches)

    @property
    def memory_bytes(self) -> int:
        """Bytes the trees hold (node arenas and buffers)."""
        return sum(int(s.memory_bytes) for s in self.searches)

    def continues(self, state: State, limits: Limits, settings: SearchSettings | None = None) -> bool:
        """Whether searching `state` with `limits` and `settings` (None = the game's)
        continues these trees: the same position (hence the same seat and view), the same
        limits but for the budgets, the same settings."""
        return (
            state.encode() == self.position
            and _same_search(limits, self.limits)
            and settings_of(state, settings) == self.settings
        )

    def follow(self, before: State, action: int, after: State) -> "SearchTrees | None":
        """These trees cut down to the subtree of the seat's move `action` at `before` (their
        root position), as trees of `after`, when `after` is that seat's next decision and
        nothing else happened in between: its bytes are `before`'s after `action`, so no
        chance event and no new information. None otherwise (then do not use these trees
        again: another thread's tree may already be cut). The seat's
        next search then continues the subtree instead of starting empty (tree reuse across
        one seat's consecutive decisions); the trees change in place."""
        if after.current_player != self.seat or before.encode() != self.position:
            return None
        expected = before.clone()
        if not expected.kernel_state.apply(action) or expected.encode() != after.encode():
            return None
        for search in self.searches:
            if not search.advance(after.kernel_state, [action]):
                # a thread's tree without the move (it never tried it): no reuse
                return None
        return replace(self, position=after.encode())


def _same_search(a: Limits, b: Limits) -> bool:
    """Limits that grow the same trees: equal but for the budgets and the node cap (which
    apply per call)."""

    def tree(limits: Limits) -> Limits:
        return replace(
            limits,
            iterations=1,
            time_ms=None,
            max_nodes=1,
            allow_actions=tuple(sorted(set(limits.allow_actions))),
            avoid_actions=tuple(sorted(set(limits.avoid_actions))),
        )

    return tree(a) == tree(b)


def analyze_stream(
    state: State,
    limits: Limits = Limits(),
    handle: SearchHandle | None = None,
    interval_ms: float = 100.0,
    detail: int = 0,
    trees: SearchTrees | None = None,
    *,
    settings: SearchSettings | None = None,
    draw_worlds: int = 0,
    draw_deadline: float | None = None,
) -> Iterator[tuple[Analysis, bool]]:
    """Search like :func:`analyze`, yielding ``(analysis, final)`` snapshots: one every
    `interval_ms` of search (``final`` False, ``partial`` True), then exactly one final analysis
    (``final`` True, ``partial`` as :func:`analyze` reports it).

    The search runs in slices of `interval_ms` that continue the same trees and the same RNG
    streams, so the final analysis is the one :func:`analyze` gives for the same limits,
    whatever the slicing (with an iteration budget). The search is paused while the consumer
    holds a snapshot (bounded: nothing is buffered). Cancelling `handle` ends the current slice
    at its next iteration; the final analysis follows at once. `interval_ms` <= 0: only the
    final result. `detail`, `settings`, `draw_worlds` (the final analysis only),
    `draw_deadline` as for :func:`analyze`; the exact solve (``settings.solve_endgames``) is
    tried for the final analysis only.

    `trees`: search these (``SearchTrees.start``, or kept from an earlier stream, which this
    one continues: ``trees.continues(state, limits, settings)`` must hold; ValueError otherwise). The
    budgets are this call's: `limits.iterations` more iterations per thread; the analyses
    count every iteration the trees hold (``Analysis.iterations``), and N iterations continued
    by M give exactly the analysis of one stream of N + M (same seed), as the RNG goes on.
    """
    _check_draw_worlds(draw_worlds)
    started = time.perf_counter()
    if trees is None:
        trees = SearchTrees.start(state, limits, settings)
    elif not trees.continues(state, limits, settings):
        raise ValueError("these trees were grown for another position, other limits or other settings")
    player = trees.seat
    searches = trees.searches
    for search in searches:
        search.clear_cancel()  # kept trees: a cancel of the call that grew them is over
    plan = _plan_solve(state, limits, trees.settings, started)
    if handle is not None:
        handle._attach([*searches, *([plan.solver] if plan else [])])
    base = [int(s.iterations_done) for s in searches]  # this call's budget starts here
    # the search's first deadline: the solve (at the end, for the final analysis only) has the
    # rest, and gives back to the search what it leaves unused
    first_deadline = None if limits.time_ms is None else started + _search_time_ms(limits, plan) / 1000.0
    options = _search_options(trees.settings)
    options["eval_plies"] = trees.eval_plies
    slice_s = interval_ms / 1000.0 if interval_ms > 0 else math.inf
    # analyze()'s seeds: the first run of a fresh tree seeds its RNG, every later run resumes it
    seeds = [(limits.seed + i * _THREAD_SEED_STRIDE) & 0xFFFFFFFFFFFFFFFF for i in range(limits.threads)]

    def snapshot(partial: bool, draws: bool = False, found: _Found | None = None) -> Analysis:
        moves, solved = _rank(state, searches, player, limits, detail, found)
        return Analysis(
            seat=player,
            moves=tuple(_measure_draws(state, moves, player, limits.seed, draw_worlds, draw_deadline) if draws else moves),
            iterations=trees.iterations,
            partial=partial,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            nodes=sum(int(s.node_count) for s in searches),
            tree_full=any(bool(s.truncated) for s in searches),
            solved=solved,
        )

    def left(i: int) -> int:
        if limits.iterations is None:
            return 0
        return max(0, limits.iterations - (int(searches[i].iterations_done) - base[i]))

    def search_until(deadline: float | None) -> Iterator[tuple[Analysis, bool]]:
        while True:
            now = time.perf_counter()
            cancelled = handle is not None and handle.cancelled
            out_of_time = deadline is not None and now >= deadline
            budget_done = limits.iterations is not None and all(left(i) == 0 for i in range(limits.threads))
            if cancelled or out_of_time or budget_done:
                return
            span = slice_s if deadline is None else min(slice_s, deadline - now)
            time_ms = 0.0 if math.isinf(span) else max(span * 1000.0, 0.001)

            def run(i: int) -> None:
                iterations = left(i) if limits.iterations is not None else 0
                if limits.iterations is not None and iterations == 0:
                    return
                searches[i].run(iterations=iterations, time_ms=time_ms, seed=seeds[i], resume=True, **options)

            _in_parallel(run, limits.threads)
            more = not (handle is not None and handle.cancelled)
            if more and limits.iterations is not None:
                more = any(left(i) > 0 for i in range(limits.threads))
            if more and deadline is not None:
                more = time.perf_counter() < deadline
            if more:
                yield snapshot(True), False

    yield from search_until(first_deadline)
    found = None
    if plan is not None and not (handle is not None and handle.cancelled):
        found = _run_solve(plan, _search_order(state, searches, player, limits))
        if not found.solved and plan.deadline is not None:
            # the solve gave up before the deadline: the search has the time it left
            yield from search_until(plan.deadline)
    cancelled = handle is not None and handle.cancelled
    short = limits.iterations is not None and any(left(i) > 0 for i in range(limits.threads))
    yield snapshot(bool(cancelled or short), draws=not cancelled, found=None if cancelled else found), True


@dataclass
class _Totals:
    visits: int
    win: list[float]
    score: list[float]
    reward_sq: float = 0.0
    reward: float = 0.0


def _rank(
    state: State, searches: list[Search], seat: int, limits: Limits, detail: int = 0, found: _Found | None = None
) -> tuple[list[MoveInfo], bool]:
    """Root children merged over the threads' trees, most visited first (with what a solve
    `found`: with their exact values, the exactly best first where it was proved best); the
    first `detail` moves (0 = all) with their principal variation and reason. Returns them and
    whether the position was solved."""
    moves, unsearched = _ranked(state, searches, seat, limits)
    solved = False
    if found is not None:
        ranked = _solved(found, moves + unsearched)
        solved = found.solved
        moves = [m for m in ranked if m.visits > 0 or m.exact]
        unsearched = [m for m in ranked if m.visits == 0 and not m.exact]

    def detailed(move: MoveInfo) -> MoveInfo:
        pv = _principal_variation(state, searches[0], move.action, seat)
        notation = []
        replay = state.clone()
        for a in pv:
            notation.append(replay.action_to_string(a))
            replay.apply(a)
        if found is not None and found.solved and move.exact:
            move = replace(move, exact_condition=_exact_condition(found.solve, state, move, seat))
        return replace(
            move,
            principal_variation=tuple(pv),
            principal_variation_notation=tuple(notation),
            reason=_reason(state, move, moves, seat),
        )

    shown = len(moves) if detail <= 0 else detail
    moves = [detailed(m) if i < shown else m for i, m in enumerate(moves)]
    return moves + unsearched, solved  # the unvisited ones last, in action order


def _search_order(state: State, searches: list[Search], seat: int, limits: Limits) -> list[int]:
    """The root's moves in the search's ranking, the unvisited last: the order a solve tries
    them in."""
    moves, unsearched = _ranked(state, searches, seat, limits)
    return [m.action for m in moves + unsearched]


def _ranked(state: State, searches: list[Search], seat: int, limits: Limits) -> tuple[list[MoveInfo], list[MoveInfo]]:
    """Root children merged over the threads' trees, most visited first, and the moves the
    search considers but never visited (in action order), without variations or reasons."""
    n = state.num_players
    merged: dict[int, _Totals] = {}
    for s in searches:
        for child in s.children(0):
            acc = merged.setdefault(int(child["action"]), _Totals(0, [0.0] * n, [0.0] * n))
            acc.visits += int(child["visits"])
            acc.reward_sq += float(child["mover_sq"])
            acc.reward += float(child["reward"][seat])
            for i in range(n):
                acc.win[i] += float(child["win"][i])
                acc.score[i] += float(child["score"][i])
    legal = state.legal_actions()
    allowed = root_actions(state, limits)
    if allowed is not None:  # what-if constraints: the ranking considers only the allowed moves
        legal = allowed
    moves: list[MoveInfo] = []
    unsearched: list[MoveInfo] = []
    # every move the search considers at the root, even unvisited, and every legal move it
    # visited (a determinized root may offer more than the root's own canonical subset)
    considered = set(state.search_actions()) & set(legal)
    for action in legal:
        totals = merged.get(action)
        if (totals is None or totals.visits == 0) and action not in considered:
            continue
        notation = state.action_to_string(action)
        if totals is None or totals.visits == 0:
            unsearched.append(
                MoveInfo(
                    action=action,
                    notation=notation,
                    visits=0,
                    win_probability=0.0,
                    expected_scores=tuple(0.0 for _ in range(n)),
                    principal_variation=(action,),
                    principal_variation_notation=(notation,),
                    reason=_unsearched_reason(searches),
                )
            )
            continue
        mean = totals.reward / totals.visits
        spread = math.sqrt(max(0.0, totals.reward_sq / totals.visits - mean * mean))
        moves.append(
            MoveInfo(
                action=action,
                notation=notation,
                visits=totals.visits,
                win_probability=totals.win[seat] / totals.visits,
                expected_scores=tuple(v / totals.visits for v in totals.score),
                principal_variation=(action,),
                principal_variation_notation=(notation,),
                value_spread=spread,
            )
        )
    moves.sort(key=lambda m: (-m.visits, -m.win_probability, m.action))
    return moves, unsearched


def _unsearched_reason(searches: list[Search]) -> str:
    if any(bool(s.truncated) for s in searches):
        return "not searched: the search's node arena was full (max_nodes)"
    return "not searched within the budget"


_DRAW_MOVES = 3  # the draw is measured for the top moves only: they are the ones a hint shows


def _check_draw_worlds(draw_worlds: int) -> None:
    if isinstance(draw_worlds, bool) or not isinstance(draw_worlds, int) or (draw_worlds != 0 and not 2 <= draw_worlds <= 4096):
        raise ValueError(f"draw_worlds must be 0 (off) or in 2..4096, not {draw_worlds!r}")


def _measure_draws(
    state: State, moves: list[MoveInfo], seat: int, seed: int, draw_worlds: int, draw_deadline: float | None
) -> list[MoveInfo]:
    """Adds the draw dependence of the top moves (`draw_worlds` > 0) and re-words
    their reasons. Worlds are seeded from the search's seed and sampled from the seat's own
    information set, like the search."""
    measured = [m for m in moves[:_DRAW_MOVES] if m.visits > 0]
    if draw_worlds == 0 or not measured:
        return moves
    if draw_deadline is not None and time.perf_counter() > draw_deadline:
        return moves
    stats = draw_dependence(
        state.kernel_state,
        seat,
        [m.action for m in measured],
        draw_worlds,
        DRAW_PLAYOUTS,
        (seed * 0x2545F4914F6CDD1D + 1) & 0xFFFFFFFFFFFFFFFF,
    )
    by_action = {}
    for m, (_, between, within, _, points_between, _) in zip(measured, stats):
        total = between + within
        by_action[m.action] = replace(
            m,
            draw_share=between / total if total > 1e-12 else 0.0,
            draw_spread=math.sqrt(between),
            draw_points_spread=math.sqrt(points_between),
        )
    out = [by_action.get(m.action, m) for m in moves]
    return [replace(m, reason=_reason(state, m, out, seat)) if m.action in by_action else m for m in out]


_GAMBLE_SHARE = 0.5  # the draw explains at least half of the result's variance...
_GAMBLE_SPREAD = 0.15  # ...and moves the win probability by this much (std) between worlds


def _reason(state: State, move: MoveInfo, ranked: list[MoveInfo], seat: int) -> str:
    """A short, templated explanation from measured statistics only (or solved values)."""
    parts: list[str] = []
    if move.exact:
        parts.append(_exact_words(move.win_probability))
        if move.exact_condition:
            parts.append(move.exact_condition)
    elif any(m.exact for m in ranked) and move is not ranked[0]:
        parts.append("proved no better than the best move")
    others = [m for m in ranked if m.action != move.action]
    if others:
        reference = others[0]  # the best alternative (the next best for the top move)
        points = move.expected_scores[seat] - reference.expected_scores[seat]
        chance = move.win_probability - reference.win_probability
        label = "the next best" if move is ranked[0] else "the best move"
        if abs(points) >= 0.05:
            parts.append(f"{points:+.1f} expected points vs {label}")
        if abs(chance) >= 0.005:
            parts.append(f"{chance * 100:+.0f}% win chance vs {label}")
    else:
        parts.append("the only move")
    parts.extend(state.game.action_effects(state, move.action))
    if move.draw_share is not None and move.draw_spread is not None:
        if move.draw_share >= _GAMBLE_SHARE and move.draw_spread >= _GAMBLE_SPREAD:
            parts.append(f"a gamble on the draw: it decides {move.draw_share * 100:.0f}% of the outcome")
        elif move.draw_points_spread is not None and move.draw_points_spread >= 1.0:
            parts.append(f"±{move.draw_points_spread:.1f} points ride on the draw")
    return "; ".join(parts) if parts else "as good as the alternatives"


def _exact_words(value: float) -> str:
    """What an exact win share says: every chance outcome to come was counted with its odds,
    every seat playing its best."""
    if value >= 1.0 - 1e-9:
        return "wins in every draw (solved)"
    if value <= 1e-9:
        return "loses in every draw against best play (solved)"
    return f"exactly {value * 100:.1f}% win chance with best play, every draw counted (solved)"


EXACT_LINE_DECISIONS = 12
"""The longest solved line followed from a move to its first chance event (a game whose
chance events lie further apart gets no ``MoveInfo.exact_condition``)."""
EXACT_CONDITION_OUTCOMES = 3
"""A condition names at most this many chance outcomes (more would not read as one)."""


def _exact_condition(solve: _Solve, state: State, move: MoveInfo, seat: int) -> str:
    """What `move`'s exact win share (strictly between 0 and 1) hangs on, or "": the solved
    line of best play after it (each seat's exactly best move, the first of equals in the
    searched order) up to its first chance event, whose outcomes are each valued exactly with
    the solve's table, within the plan's node budget and deadline (so a seeded analysis stays
    deterministic). Where every outcome settles the game for `seat`: "wins unless the next
    chance outcome is X" (the losing ones) or "wins only if ... is Y" (the winning ones);
    otherwise the outcomes that settle it: "wins if ... is Y", "loses if ... is X". Outcomes
    are named only when they are at most ``EXACT_CONDITION_OUTCOMES`` and not all of them."""
    if not 1e-9 < move.win_probability < 1.0 - 1e-9:
        return ""
    solver = solve.solver
    start = int(solver.nodes)

    def values(path: list[int]) -> list[tuple[int, float, float]]:
        budget = solve.max_nodes - (int(solver.nodes) - start)
        time_ms = 0.0
        if solve.deadline is not None:
            time_ms = (solve.deadline - time.perf_counter()) * 1000.0
            if time_ms <= 0.0:
                return []
        return solver.values(path, budget, time_ms) if budget > 0 else []

    path = [move.action]
    replay = state.clone()
    replay.apply(move.action)
    while not replay.is_chance():
        if replay.is_terminal() or len(path) > EXACT_LINE_DECISIONS:
            return ""
        children = values(path)
        if not children:
            return ""
        mover = replay.current_player
        # seat 0's win share: seat 0 takes the largest, seat 1 the smallest
        best = max(children, key=lambda c: c[2] if mover == 0 else -c[2])[0]
        path.append(best)
        replay.apply(best)
    outcomes = values(path)
    if not outcomes:
        return ""
    mine = [(replay.action_to_string(a), v if seat == 0 else 1.0 - v) for a, _, v in outcomes]
    wins = [label for label, v in mine if v >= 1.0 - 1e-9]
    losses = [label for label, v in mine if v <= 1e-9]

    def named(labels: list[str]) -> str | None:
        """The labels as one phrase, if they are few, not every outcome, and name no outcome
        outside them (two outcomes may share a label)."""
        unique = list(dict.fromkeys(labels))
        if not 0 < len(labels) < len(mine) or len(unique) > EXACT_CONDITION_OUTCOMES:
            return None
        if sum(label in unique for label, _ in mine) != len(labels):
            return None
        return " or ".join(unique)

    if len(wins) + len(losses) == len(mine):  # this chance event settles it
        if (lost := named(losses)) is not None:
            return f"wins unless the next chance outcome is {lost}"
        if (won := named(wins)) is not None:
            return f"wins only if the next chance outcome is {won}"
        return ""
    parts = []
    if (won := named(wins)) is not None:
        parts.append(f"wins if the next chance outcome is {won}")
    if (lost := named(losses)) is not None:
        parts.append(f"loses if the next chance outcome is {lost}")
    return ", ".join(parts)


def _principal_variation(state: State, search: Search, action: int, seat: int) -> list[int]:
    """`action`, then the most visited child while the same seat keeps deciding."""
    pv = [action]
    replay = state.clone()
    replay.apply(action)
    node = next((c["node"] for c in search.children(0) if c["action"] == action), None)
    while node is not None and replay.current_player == seat:
        legal = set(replay.legal_actions())
        children = [c for c in search.children(node) if c["action"] in legal and c["visits"] > 0]
        if not children:
            break
        best = max(children, key=lambda c: (c["visits"], -c["action"]))
        pv.append(int(best["action"]))
        replay.apply(int(best["action"]))
        node = best["node"]
    return pv
