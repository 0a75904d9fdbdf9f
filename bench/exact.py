"""Strength against ground truth: Botanik positions near the end, solved exactly.

``python bench/exact.py make`` writes ``bench/data/exact_positions.jsonl``: positions up to
``--back`` decisions before the end of seeded level-4 and level-6 self-play games, each with
every legal move's exact win probability (the compiled solver, ``hortus._ext.mcts.Solver``,
each move solved on its own; the first ``--check`` positions that the pure-Python
``hortus.search.exact.star1`` can solve in its budget are solved by it too and must agree;
positions the solver cannot finish within its node budget are left out, and counted).

``python bench/exact.py`` (``run``) reports per engine: the share of positions where its move
is exactly optimal (within 0.005 of the best exact value) with a Wilson interval, mean and
p90 regret in exact win probability, and calibration (mean absolute error of the engine's
own estimate of its move against that move's exact value), and the share of positions it
solved. ``--no-solve``: every engine searches only (``solve_endgames=False``: the engines as
they were before the analysis solved positions). JSON + a table.

``python bench/exact.py arena`` plays from positions beyond exact solving in the budget:
``--games`` / 2 positions, each ``--from-end`` (8..20) decisions before the end of a seeded
level-4 or level-6 self-play game, each played out twice with the seats swapped (paired, the
same chance draws), the default engine (which solves) against the same engine searching only
(``solve_endgames=False``), ``--time-ms`` per decision, one thread each, ``--jobs``
processes. Reports the solving engine's win share with a Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report  # noqa: E402

from hortus import games  # noqa: E402
from hortus.search import Limits, analyze  # noqa: E402
from hortus.search.arena import wilson_interval  # noqa: E402
from hortus.search.settings import BASELINE, SearchSettings, settings_for  # noqa: E402
from hortus._ext.mcts import Solver  # noqa: E402
from hortus.search.exact import SolveBudgetError, star1  # noqa: E402
from hortus.search.levels import LevelBot, choose, get_level, level_limits  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "exact_positions.jsonl"
OPTIMAL = 0.005
CHECK_BUDGET = 50_000  # nodes of the pure-Python cross-check (positions beyond are not checked)


def exact_values(position: Any, budget: int) -> dict[int, float] | None:
    """Every legal move's exact win probability for the mover, each move solved on its own
    (so each value is exact, not a bound) by the compiled solver, which shares its table of
    bounds between them; None when the node budget runs out."""
    solver = Solver(position.kernel_state, 1 << 22)
    values: dict[int, float] = {}
    for action in position.legal_actions():
        result = solver.solve([action], budget)
        if solver.status != "solved":
            return None
        values[action] = result[0][1]
    return values


def make(out: Path, games_per_level: int, back: int, budget: int, seed: int, check: int) -> None:
    game = games.get("botanik")
    rows: list[dict[str, Any]] = []
    skipped = checked = 0
    for level in (4, 6):
        for g in range(games_per_level):
            game_seed = seed * 1000 + level * 100 + g
            rng = random.Random(game_seed)
            bots = [LevelBot(level, game_seed * 2 + s) for s in range(2)]
            state = game.new_game(players=2, seed=game_seed)
            decisions = []
            while not state.is_terminal():
                if state.is_chance():
                    state.resolve_chance(rng)
                    continue
                decisions.append(state.clone())
                state.apply(bots[state.current_player].choose(state))
            for k in range(1, min(back, len(decisions)) + 1):
                position = decisions[-k]
                if len(position.legal_actions()) < 2:
                    continue
                start = time.monotonic()
                values = exact_values(position, budget)
                if values is None:
                    skipped += 1
                    continue
                seconds = time.monotonic() - start
                if checked < check:
                    # the pure-Python solver (itself tested against plain expectimax) agrees
                    try:
                        reference = star1(position, budget=CHECK_BUDGET)
                    except SolveBudgetError:
                        pass
                    else:
                        checked += 1
                        for action, v in values.items():
                            if abs(reference.values[action] - v) > 1e-9:
                                raise SystemExit(f"solvers disagree at {position.encode().hex()} move {action}")
                rows.append(
                    {
                        "state": position.encode().hex(),
                        "level": level,
                        "game_seed": game_seed,
                        "back": k,
                        "seat": position.current_player,
                        "seconds": round(seconds, 3),
                        "values": {str(a): v for a, v in values.items()},
                    }
                )
            print(
                f"level {level} game {g}: {len(rows)} positions, {skipped} over budget, {checked} checked",
                file=sys.stderr,
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")


def arena_positions(count: int, seed: int, nearest: int, farthest: int) -> list[tuple[str, int, int]]:
    """`count` positions (hex state, level, decisions before the end), each `nearest`..`farthest`
    decisions before the end of a seeded level-4 or level-6 self-play game (alternating)."""
    game = games.get("botanik")
    positions: list[tuple[str, int, int]] = []
    g = 0
    while len(positions) < count:
        level = (4, 6)[g % 2]
        game_seed = seed * 100_000 + g
        g += 1
        rng = random.Random(game_seed)
        bots = [LevelBot(level, game_seed * 2 + s) for s in range(2)]
        state = game.new_game(players=2, seed=game_seed)
        decisions = []
        while not state.is_terminal():
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            decisions.append(state.clone())
            state.apply(bots[state.current_player].choose(state))
        back = rng.randint(nearest, farthest)
        if back <= len(decisions):
            positions.append((decisions[-back].encode().hex(), level, back))
    return positions


def _arena_pair(task: tuple[int, str, float, int]) -> list[float]:
    """Play the position twice, the solving engine at seat 0 and then at seat 1 (the same
    chance draws, the same search seeds); its win share in each game."""
    index, hex_state, time_ms, seed = task
    game = games.get("botanik")
    limits = Limits(iterations=None, time_ms=time_ms, threads=1)
    shares = []
    for solving_seat in (0, 1):
        state = game.decode(bytes.fromhex(hex_state))
        rng = random.Random(seed * 1_000_003 + index)
        decision = 0
        while not state.is_terminal():
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            seat = state.current_player
            settings = settings_for(state, solve_endgames=seat == solving_seat)
            analysis = analyze(state, replace(limits, seed=seed * 7919 + index * 131 + decision), settings=settings)
            state.apply(analysis.best.action)
            decision += 1
        shares.append(float(state.returns()[solving_seat]))
    return shares


def arena(games_count: int, time_ms: float, jobs: int, seed: int, nearest: int, farthest: int) -> None:
    from concurrent.futures import ProcessPoolExecutor

    positions = arena_positions((games_count + 1) // 2, seed, nearest, farthest)
    tasks = [(i, hex_state, time_ms, seed) for i, (hex_state, _, _) in enumerate(positions)]
    shares: list[float] = []
    start = time.monotonic()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for pair in pool.map(_arena_pair, tasks):
            shares.extend(pair)
            if len(shares) % 20 == 0:
                print(
                    f"{len(shares)} games: solving {sum(shares) / len(shares):.3f} ({time.monotonic() - start:.0f} s)",
                    file=sys.stderr,
                )
    lo, hi = wilson_interval(sum(shares), len(shares))
    report(
        f"solving against searching only (botanik, 2 seats, {nearest}-{farthest} decisions from the end, {time_ms:g} ms)",
        [
            {
                "games": len(shares),
                "positions": len(positions),
                "solving_share": sum(shares) / len(shares),
                "share_lo": lo,
                "share_hi": hi,
            }
        ],
        ["games", "positions", "solving_share", "share_lo", "share_hi"],
    )


Engine = Callable[[Any, int], tuple[int, float | None, bool]]
"""(state, seed) -> (its move, its own estimate of that move's win probability, solved)"""


SOLVE = True  # False (--no-solve): every engine searches only (solve_endgames=False)


def _settings(state: Any, settings: SearchSettings | None = None) -> SearchSettings:
    """`settings` (None = the game's), searching only under --no-solve."""
    chosen = settings if settings is not None else settings_for(state)
    return chosen if SOLVE else replace(chosen, solve_endgames=False)


def _search(limits: Limits, settings: SearchSettings | None = None) -> Engine:
    def run(state: Any, seed: int) -> tuple[int, float | None, bool]:
        analysis = analyze(state, replace(limits, seed=seed, threads=1), settings=_settings(state, settings))
        return analysis.best.action, analysis.best.win_probability, analysis.solved

    return run


def _level(level: int) -> Engine:
    def run(state: Any, seed: int) -> tuple[int, float | None, bool]:
        analysis = analyze(state, level_limits(level, seed), settings=_settings(state))
        move = choose(analysis, get_level(level).temperature, random.Random(seed))
        return move.action, move.win_probability, analysis.solved

    return run


def _random(state: Any, seed: int) -> tuple[int, float | None, bool]:
    return random.Random(seed).choice(state.legal_actions()), None, False


ENGINES: dict[str, Engine] = {
    **{f"default-100ms-s{s}": _search(Limits(iterations=None, time_ms=100.0)) for s in (1, 2, 3)},
    "default-10000it": _search(Limits(iterations=10_000)),
    "mcts-base-100ms": _search(Limits(iterations=None, time_ms=100.0), BASELINE),
    **{f"level{n}": _level(n) for n in (2, 4, 6, 8)},
    "random": _random,
}


def run(path: Path, names: list[str], limit: int | None) -> None:
    game = games.get("botanik")
    positions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    positions = positions[:limit] if limit else positions
    rows = []
    for name in names:
        engine = ENGINES[name]
        seed_base = int(name[-1]) if name.startswith("default-100ms-s") else 0
        optimal = solved = 0
        regrets: list[float] = []
        errors: list[float] = []
        for i, p in enumerate(positions):
            state = game.decode(bytes.fromhex(p["state"]))
            values = {int(a): v for a, v in p["values"].items()}
            action, estimate, exact = engine(state, seed_base * 100_000 + i)
            solved += exact
            regret = max(values.values()) - values[action]
            regrets.append(regret)
            optimal += regret <= OPTIMAL
            if estimate is not None:
                errors.append(abs(estimate - values[action]))
        lo, hi = wilson_interval(optimal, len(positions))
        regrets.sort()
        rows.append(
            {
                "engine": name,
                "positions": len(positions),
                "optimal": optimal / len(positions),
                "optimal_lo": lo,
                "optimal_hi": hi,
                "mean_regret": statistics.fmean(regrets),
                "p90_regret": regrets[min(len(regrets) - 1, int(0.9 * len(regrets)))],
                "calibration_mae": statistics.fmean(errors) if errors else None,
                "solved": solved / len(positions),
            }
        )
    report(
        "exact endgames (botanik, 2 seats)",
        rows,
        ["engine", "positions", "optimal", "optimal_lo", "optimal_hi", "mean_regret", "p90_regret", "calibration_mae", "solved"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", default="run", choices=["make", "run", "arena"])
    parser.add_argument("--file", type=Path, default=DATA)
    parser.add_argument("--games", type=int, default=None, help="make: self-play games per level (10); arena: games (400)")
    parser.add_argument("--back", type=int, default=7, help="make: decisions before the end")
    parser.add_argument("--budget", type=int, default=5_000_000, help="make: solver node budget per move")
    parser.add_argument("--check", type=int, default=40, help="make: positions checked by the pure-Python solver")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--limit", type=int, default=None, help="run: first N positions only")
    parser.add_argument("--no-solve", action="store_true", help="run: search only (the engines before solving)")
    parser.add_argument("--time-ms", type=float, default=100.0, help="arena: time per decision")
    parser.add_argument("--jobs", type=int, default=2, help="arena: processes")
    parser.add_argument("--from-end", default="8-20", help="arena: decisions before the end (range)")
    args = parser.parse_args()
    global SOLVE
    SOLVE = not args.no_solve
    if args.command == "arena":
        nearest, farthest = (int(x) for x in args.from_end.split("-"))
        arena(args.games or 400, args.time_ms, args.jobs, args.seed, nearest, farthest)
    elif args.command == "make":
        make(args.file, args.games or 10, args.back, args.budget, args.seed, args.check)
    else:
        run(args.file, args.engines.split(","), args.limit)


if __name__ == "__main__":
    main()
