"""Random playouts per second and nanoseconds per decision, per game (one thread, no GIL).

python bench/kernel.py [--games N] [--repeats R] [--game NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, report  # noqa: E402

from hortus import games  # noqa: E402
from hortus._ext.engine import random_playouts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000, help="playouts per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--game", action="append", help="default: every registered game")
    args = parser.parse_args()
    rows = []
    for name in args.game or games.names():
        game = games.get(name)
        for players in range(game.min_players, game.max_players + 1):
            start = game.new_game(players=players)  # from the setup chance node
            rates, ns, per_game = [], [], []
            for r in range(args.repeats):
                decisions, chance, seconds = random_playouts(start.kernel_state, args.games, r + 1, False)
                rates.append(decisions / seconds)
                ns.append(seconds / decisions * 1e9)
                per_game.append(args.games / seconds)
            rows.append(
                {
                    "game": name,
                    "players": players,
                    "decisions_per_s": median(rates),
                    "ns_per_decision": median(ns),
                    "playouts_per_s": median(per_game),
                    "decisions_per_game": decisions / args.games,
                    "chance_per_game": chance / args.games,
                }
            )
    report(
        "kernel: uniform random playouts, one thread (median of repeats)",
        rows,
        ["game", "players", "decisions_per_s", "ns_per_decision", "playouts_per_s", "decisions_per_game"],
    )


if __name__ == "__main__":
    main()
