"""ISMCTS iterations per second from the opening, and nanoseconds per simulated decision
(tree work included), with 1 and 2 threads, per game.

    python bench/search.py [--iterations N] [--repeats R] [--game NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, report  # noqa: E402

from hortus import games  # noqa: E402
from hortus._ext.engine import random_playouts  # noqa: E402
from hortus.search import Limits, analyze  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=20000, help="per thread and repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--game", action="append", help="default: every registered game")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    rows = []
    for name in args.game or games.names():
        game = games.get(name)
        for players in sorted({game.min_players, max(2, game.min_players), game.max_players}):
            opening = game.new_game(players=players, seed=1)
            # Decisions per simulated game, to express the speed per simulated decision.
            decisions, _, _ = random_playouts(opening.kernel_state, 200, 7, True)
            per_game = decisions / 200
            for threads in args.threads:
                rates = []
                for r in range(args.repeats):
                    a = analyze(opening, Limits(iterations=args.iterations, seed=r, threads=threads))
                    rates.append(a.iterations / (a.elapsed_ms / 1000.0))
                rate = median(rates)
                rows.append({
                    "game": name, "players": players, "threads": threads,
                    "iterations_per_s": rate,
                    "ns_per_simulated_decision": 1e9 / (rate * per_game),
                    "decisions_per_iteration": per_game,
                })
    report("search: ISMCTS from the opening (median of repeats)", rows,
           ["game", "players", "threads", "iterations_per_s", "ns_per_simulated_decision"])


if __name__ == "__main__":
    main()
