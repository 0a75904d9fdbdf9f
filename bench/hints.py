"""Hint quality: how often a quick hint agrees with a much longer search, and what it costs.

    python bench/hints.py --make-positions            # writes bench/data/hint_positions.jsonl
    python bench/hints.py [--budget 100ms] [--factor 64] [--per-game 200] [--game NAME ...]

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
evaluation (``Limits.evaluation``) to compare engines on the same positions; ``--engine base``
makes the hint the frozen baseline's (``mcts-base``), judged against the same reference (today's
default engine at 64x), so that the baseline's figures sit beside today's.
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
from hortus.search.bots import BASELINE  # noqa: E402
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


def _limits(budget: str, factor: int, seed: int, evaluation: str | None) -> Limits:
    extra: dict[str, Any] = {} if evaluation is None else {"evaluation": evaluation}
    if budget.endswith("ms"):
        return Limits(iterations=None, time_ms=float(budget[:-2]) * factor, seed=seed, **extra)
    return Limits(iterations=int(budget) * factor, seed=seed, **extra)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))] if ordered else 0.0


def _baseline(limits: Limits, state: games.State) -> Limits:
    """`limits`' budgets and seed with the frozen baseline's settings (``mcts-base``: its
    search options and the game's reward margin of that day)."""
    weight, scale = state.game.baseline_search_margin(state.num_players)
    return replace(BASELINE, iterations=limits.iterations, time_ms=limits.time_ms, seed=limits.seed,
                   margin_weight=weight, margin_scale=scale)


def judge(items: list[dict[str, Any]], budget: str, factor: int, tolerance: float,
          evaluation: str | None, engine: str = "default") -> dict[str, Any]:
    agree, regrets, hint_iterations = 0, [], []
    for n, item in enumerate(items):
        state = games.get(item["game"]).decode(bytes.fromhex(item["position"]))
        limits = _limits(budget, 1, 2 * n + 1, evaluation)
        # the hint of the engine under test; the reference is always today's default engine,
        # so that both engines are judged against the same yardstick
        hint = analyze(state, _baseline(limits, state) if engine == "base" else limits)
        reference = analyze(state, _limits(budget, factor, 2 * n + 2, None))
        values = {m.action: m.win_probability for m in reference.moves if m.visits > 0}
        best = values[reference.best.action]
        regret = 100.0 * max(0.0, best - values.get(hint.best.action, min(values.values())))
        regrets.append(regret)
        agree += regret <= tolerance
        hint_iterations.append(hint.iterations)
    return {"positions": len(items), "agreement": agree / max(1, len(items)),
            "mean_regret": sum(regrets) / max(1, len(regrets)), "p90_regret": _percentile(regrets, 0.9),
            "worst_regret": max(regrets, default=0.0),
            "hint_iterations": sorted(hint_iterations)[len(hint_iterations) // 2] if hint_iterations else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make-positions", action="store_true")
    parser.add_argument("--games-per-game", type=int, default=GAMES_PER_GAME,
                        help="with --make-positions: self-play games per game (10 positions each)")
    parser.add_argument("--game", action="append")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", default="100ms", help="hint budget: 100ms or an iteration count")
    parser.add_argument("--factor", type=int, default=64, help="reference budget = factor x budget")
    parser.add_argument("--per-game", type=int, default=200,
                        help="positions per game (N spread over the games: first draws first)")
    parser.add_argument("--tolerance", type=float, default=0.5, help="agreement tolerance in points")
    parser.add_argument("--bot-evaluation", default=None, help="Limits.evaluation of the hint search")
    parser.add_argument("--engine", choices=["default", "base"], default="default",
                        help="the hint search: today's default, or the frozen baseline (mcts-base) "
                             "against the same default reference")
    parser.add_argument("--positions", type=Path, default=POSITIONS, help="the positions file (JSON lines)")
    args = parser.parse_args()
    names = args.game or games.names()
    if args.make_positions:
        items = make_positions(names, args.seed, args.games_per_game)
        args.positions.parent.mkdir(exist_ok=True)
        args.positions.write_text("".join(json.dumps(i) + "\n" for i in items))
        print(f"{len(items)} positions written to {args.positions}")
        return
    items = [json.loads(line) for line in args.positions.read_text().splitlines() if line.strip()]
    rows = []
    for name in names:
        chosen = spread([i for i in items if i["game"] == name], args.per_game)
        started = time.perf_counter()
        row = {"game": name, "budget": args.budget, "reference": f"{args.factor}x",
               "evaluation": args.bot_evaluation or "default", "engine": args.engine}
        row.update(judge(chosen, args.budget, args.factor, args.tolerance, args.bot_evaluation, args.engine))
        row["seconds"] = time.perf_counter() - started
        rows.append(row)
    report("hints: quick hint against a long reference search (regret in points of win probability)", rows,
           ["game", "budget", "reference", "evaluation", "engine", "positions", "hint_iterations", "agreement",
            "mean_regret", "p90_regret", "worst_regret", "seconds"])


if __name__ == "__main__":
    main()
