"""Hint quality: how often a quick hint agrees with a much longer search, and what it costs.

    python bench/hints.py --make-positions            # writes bench/data/hint_positions.jsonl
    python bench/hints.py [--budget 100ms] [--factor 64] [--per-game 200] [--skip 0] [--game NAME ...]

Positions: for each game (2 seats), 20 seeded self-play games at difficulty level 6, 10
decisions drawn from each (seeded; only decisions with at least two legal moves), 200 per game,
stored once in a fixed file so that every later engine is judged on the same positions.

For each position the hint is the best move of a search at ``--budget`` (one thread; ``100ms``
or an iteration count), the reference a search of ``--factor`` times that budget (64x: 6.4 s).
Figures per game, in the reference's win probability of the seat to move, in points (1 point =
0.01): top-1 agreement (the hint counts as agreeing when its reference value is within
``--tolerance`` points, 0.5, of the reference's best move), mean and p90 regret (reference
value of its best move minus that of the hint). A hint the reference never tried is valued at
the reference's worst tried move. ``--bot-evaluation`` picks the hint search's leaf
evaluation (``SearchSettings.evaluation``) to compare engines on the same positions; ``--engine default base``
also gives the frozen baseline's hint (``mcts-base``) of every position, judged against the same
reference search (today's default engine at 64x): a paired comparison in one run.
``--engine default,turn=mean`` (bot options after ``default``) judges a variant of today's
default on the same positions. ``--engine reference`` judges a second reference search of each position (same budget, another
seed) against the first: the yardstick's own noise, i.e. the agreement and regret a hint could
not beat even if it were as good as the reference.
``--values dedicated``: in War of the Posies a move the reference searched little is valued far
below what the same move is worth once searched as much (0.22 against 0.46 in one position:
its seat's own later decisions in the turn are then played by the playout policy), so a hint
that differs from the reference's best is valued, with that best, by one search of the
reference's budget restricted to each (``Limits.allow_actions``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import report  # noqa: E402

from hortus import games  # noqa: E402
from hortus.games import CHANCE, TERMINAL  # noqa: E402
from hortus.search import Limits, analyze  # noqa: E402
from hortus.search.bots import BASELINE, apply_options  # noqa: E402
from hortus.search.settings import SearchSettings, settings_for, with_changes  # noqa: E402
from hortus.search.levels import LevelBot  # noqa: E402

POSITIONS = Path(__file__).with_name("data") / "hint_positions.jsonl"
GAMES_PER_GAME, DRAWS_PER_GAME, LEVEL = 20, 10, 6


def make_positions(names: list[str], seed: int, games_per_game: int = GAMES_PER_GAME) -> list[dict[str, Any]]:
    out = []
    for name in names:
        game = games.get(name)
        players = max(2, game.min_players)
        for index in range(games_per_game):
            rng = random.Random(f"{seed}:{name}:{index}")
            state = game.new_game(players=players, seed=rng.getrandbits(63))
            bots = [LevelBot(LEVEL, rng.getrandbits(63)) for _ in range(players)]
            seen: list[bytes] = []
            while state.current_player != TERMINAL:
                if state.current_player == CHANCE:
                    state.resolve_chance(rng)
                    continue
                if len(state.legal_actions()) > 1:
                    seen.append(state.encode())
                state.apply(bots[state.current_player].choose(state))
            for k, data in enumerate(rng.sample(seen, min(DRAWS_PER_GAME, len(seen)))):
                out.append({"id": f"{name}/{index}/{k}", "game": name, "position": data.hex()})
            print(f"{name}: game {index + 1}/{games_per_game}", file=sys.stderr)
    return out


def spread(items: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The first ``count`` positions taken across games: every game's first draw, then every
    game's second..., so a short run (``--per-game 40``) still samples all 20 games."""

    def key(item: dict[str, Any]) -> tuple[int, int]:
        _, index, draw = item["id"].rsplit("/", 2)
        return int(draw), int(index)

    return sorted(items, key=key)[:count]


def chosen(items: list[dict[str, Any]], game: str, per_game: int, skip: int = 0) -> list[dict[str, Any]]:
    """The positions of `game` a run judges: draws ``skip + 1`` to ``skip + per_game`` in
    ``spread``'s order, so ``--per-game 60 --skip 60`` judges the 60 positions that follow a
    ``--per-game 60`` run's (the order does not depend on how many are taken)."""
    return spread([i for i in items if i["game"] == game], skip + per_game)[skip:]


def _limits(budget: str, factor: int, seed: int) -> Limits:
    if budget.endswith("ms"):
        return Limits(iterations=None, time_ms=float(budget[:-2]) * factor, seed=seed)
    return Limits(iterations=int(budget) * factor, seed=seed)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))] if ordered else 0.0


def _engine_search(
    engine: str, state: games.State, evaluation: str | None, budget: str, factor: int, n: int
) -> tuple[Limits, SearchSettings]:
    """The hint search of `engine` for the n-th position: today's default (with bot options
    and `evaluation` on top), the frozen baseline, or an independent reference (the
    reference's budget, its own seed)."""
    limits = _limits(budget, 1, 2 * n + 1)
    if engine == "base":
        return limits, BASELINE
    if engine == "reference":
        return _limits(budget, factor, 2 * n + 1), settings_for(state)
    _, *options = engine.split(",")
    changes = apply_options(options)[0]
    if evaluation is not None:
        changes = {"evaluation": evaluation, **changes}
    return limits, with_changes(settings_for(state), changes)


def _engine(spec: str) -> str:
    """--engine: default[,OPTION...] (bot options, e.g. default,turn=mean), base or reference."""
    head, *options = spec.split(",")
    if head in ("base", "reference") and not options:
        return spec
    if head != "default":
        raise argparse.ArgumentTypeError(f"{spec!r}: use default[,OPTION...], base or reference")
    try:
        apply_options(options)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{spec!r}: {error}") from None
    return spec


def _dedicated_values(state: games.State, moves: set[int], budget: str, factor: int, seed: int) -> dict[int, float]:
    """Each move's win probability from a search of the reference's budget restricted to it
    (``allow_actions``): every move valued with a subtree as developed as the others'."""
    return {
        move: analyze(state, replace(_limits(budget, factor, seed), allow_actions=(move,))).best.win_probability
        for move in sorted(moves)
    }


def _notation(analysis: Any, action: int) -> str:
    return next((m.notation for m in analysis.moves if m.action == action), str(action))


def judge(
    items: list[dict[str, Any]],
    budget: str,
    factor: int,
    tolerance: float,
    evaluation: str | None,
    engines: tuple[str, ...] = ("default",),
    values_by: str = "shared",
    details: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Figures per engine. Every engine's hint of a position is judged against one reference
    search of it (today's default engine at `factor` x the budget), so engines are compared
    on the same positions and the same yardstick (paired). `values_by` "dedicated": a hint
    that differs from the reference's best move is valued, with that move, by one restricted
    search each (``_dedicated_values``) instead of by the reference's own statistics.
    `details`: a record per position and engine is appended to it (the position's id in the
    positions file and its index in this run, the two moves in notation, their values, the
    regret, both searches' top moves), to see where hints go wrong."""
    agree = {e: 0 for e in engines}
    regrets: dict[str, list[float]] = {e: [] for e in engines}
    hint_iterations: dict[str, list[int]] = {e: [] for e in engines}
    for n, item in enumerate(items):
        state = games.get(item["game"]).decode(bytes.fromhex(item["position"]))
        hints = {}
        for e in engines:
            limits, settings = _engine_search(e, state, evaluation, budget, factor, n)
            hints[e] = analyze(state, limits, settings=settings)
        reference = analyze(state, _limits(budget, factor, 2 * n + 2))
        values = {m.action: m.win_probability for m in reference.moves if m.visits > 0}
        if values_by == "dedicated":
            others = {h.best.action for h in hints.values()} - {reference.best.action}
            if others:
                values = _dedicated_values(state, others | {reference.best.action}, budget, factor, 2 * n + 2)
        best = values[reference.best.action]
        for engine, hint in hints.items():
            regret = 100.0 * max(0.0, best - values.get(hint.best.action, min(values.values())))
            regrets[engine].append(regret)
            agree[engine] += regret <= tolerance
            hint_iterations[engine].append(hint.iterations)
            if details is not None:
                details.append(
                    {
                        "game": item["game"],
                        "id": item["id"],
                        "position": n,
                        "engine": engine,
                        "hint": hint.best.notation,
                        "reference_best": reference.best.notation,
                        "regret": round(regret, 3),
                        "agrees": regret <= tolerance,
                        "hint_iterations": hint.iterations,
                        "values": {
                            _notation(reference, a): round(100.0 * v, 2)
                            for a, v in values.items()
                            if a in (reference.best.action, hint.best.action)
                        },
                        "hint_top": [[m.notation, m.visits, round(100.0 * m.win_probability, 2)] for m in hint.moves[:4]],
                        "reference_top": [
                            [m.notation, m.visits, round(100.0 * m.win_probability, 2)] for m in reference.moves[:4]
                        ],
                    }
                )
    return {
        e: {
            "positions": len(items),
            "agreement": agree[e] / max(1, len(items)),
            "mean_regret": sum(regrets[e]) / max(1, len(regrets[e])),
            "p90_regret": _percentile(regrets[e], 0.9),
            "worst_regret": max(regrets[e], default=0.0),
            "hint_iterations": sorted(hint_iterations[e])[len(hint_iterations[e]) // 2] if items else 0,
        }
        for e in engines
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make-positions", action="store_true")
    parser.add_argument(
        "--games-per-game",
        type=int,
        default=GAMES_PER_GAME,
        help="with --make-positions: self-play games per game (10 positions each)",
    )
    parser.add_argument("--game", action="append")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", default="100ms", help="hint budget: 100ms or an iteration count")
    parser.add_argument("--factor", type=int, default=64, help="reference budget = factor x budget")
    parser.add_argument(
        "--per-game", type=int, default=200, help="positions per game (N spread over the games: first draws first)"
    )
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N positions per game (in the --per-game order)")
    parser.add_argument("--tolerance", type=float, default=0.5, help="agreement tolerance in points")
    parser.add_argument("--bot-evaluation", default=None, help="SearchSettings.evaluation of the hint search")
    parser.add_argument(
        "--engine",
        type=_engine,
        nargs="+",
        default=["default"],
        help="the hint search: today's default (with bot options: default,turn=mean), the "
        "frozen baseline (mcts-base: base) and/or a second reference search (reference: "
        "the yardstick's noise), each judged against the same reference searches",
    )
    parser.add_argument(
        "--values",
        choices=["shared", "dedicated"],
        default="shared",
        help="how a hint is valued: by the reference search's own statistics (shared), or, "
        "when it differs from the reference's best, by one search of the reference's "
        "budget restricted to it and one to the best (dedicated)",
    )
    parser.add_argument("--positions", type=Path, default=POSITIONS, help="the positions file (JSON lines)")
    parser.add_argument(
        "--details",
        type=Path,
        default=None,
        help="also write one JSON line per position and engine here (hint, reference best, values)",
    )
    args = parser.parse_args()
    if args.skip < 0:
        parser.error("--skip must be >= 0")
    names = args.game or games.names()
    if args.make_positions:
        items = make_positions(names, args.seed, args.games_per_game)
        args.positions.parent.mkdir(exist_ok=True)
        args.positions.write_text("".join(json.dumps(i) + "\n" for i in items))
        print(f"{len(items)} positions written to {args.positions}")
        return
    items = [json.loads(line) for line in args.positions.read_text().splitlines() if line.strip()]
    rows = []
    details: list[dict[str, Any]] | None = [] if args.details else None
    for name in names:
        started = time.perf_counter()
        judged = judge(
            chosen(items, name, args.per_game, args.skip),
            args.budget,
            args.factor,
            args.tolerance,
            args.bot_evaluation,
            tuple(args.engine),
            args.values,
            details,
        )
        seconds = time.perf_counter() - started
        for engine, figures in judged.items():
            rows.append(
                {
                    "game": name,
                    "budget": args.budget,
                    "reference": f"{args.factor}x",
                    "values": args.values,
                    "evaluation": args.bot_evaluation or "default",
                    "engine": engine,
                    **figures,
                    "seconds": seconds,
                }
            )
    if args.details and details is not None:
        args.details.write_text("".join(json.dumps(d) + "\n" for d in details))
    report(
        "hints: quick hint against a long reference search (regret in points of win probability)",
        rows,
        [
            "game",
            "budget",
            "reference",
            "values",
            "evaluation",
            "engine",
            "positions",
            "hint_iterations",
            "agreement",
            "mean_regret",
            "p90_regret",
            "worst_regret",
            "seconds",
        ],
    )


if __name__ == "__main__":
    main()
