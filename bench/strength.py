"""The strength table, in one command: seeded matches with seats rotated, win rates with 95%
Wilson intervals, and (with --levels) the Elo of difficulty levels 1-8 per game.

    python bench/strength.py [--games 100] [--jobs 2] [--game NAME ...] [--levels] [--write-elo]

Matches per game (2 seats): mcts:2000 vs random, mcts:2000 vs greedy, mcts:4000 vs mcts:2000.
--levels plays each level against the one below it (adjacent pairs) and chains the Elo
differences from level 1 = 0; --write-elo stores them in hortus/search/levels_elo.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import report  # noqa: E402

from hortus import games  # noqa: E402
from hortus.search.arena import play_match  # noqa: E402
from hortus.search.levels import ELO_FILE, LEVELS  # noqa: E402

MATCHES = [("mcts:2000", "random"), ("mcts:2000", "greedy"), ("mcts:4000", "mcts:2000")]


def elo_difference(score_rate: float) -> float:
    """Elo gap implied by a score rate (clamped so 0% and 100% stay finite)."""
    p = min(max(score_rate, 0.01), 0.99)
    return 400.0 * math.log10(p / (1.0 - p))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", action="append")
    parser.add_argument("--levels", action="store_true", help="also calibrate difficulty levels")
    parser.add_argument("--no-matches", action="store_true", help="only the levels")
    parser.add_argument("--write-elo", action="store_true")
    args = parser.parse_args()
    rows = []
    elo: dict[str, dict[str, float]] = json.loads(ELO_FILE.read_text()) if ELO_FILE.exists() else {}
    pairs = [] if args.no_matches else list(MATCHES)
    if args.levels:
        pairs += [(f"level:{i + 1}", f"level:{i}") for i in range(1, len(LEVELS))]
    for name in args.game or games.names():
        game = games.get(name)
        players = max(2, game.min_players)
        chain = {"1": 0.0}
        for first, second in pairs:
            started = time.perf_counter()
            result = play_match(name, [first, second], args.games, args.seed, jobs=args.jobs, players=players)
            stat = result.stats[0]
            rows.append({
                "game": name, "bot": first, "opponent": second, "games": stat.games,
                "win_rate": stat.score_rate, "ci_low": stat.interval[0], "ci_high": stat.interval[1],
                "wins": stat.wins, "draws": stat.draws, "losses": stat.losses,
                "elo_gap": elo_difference(stat.score_rate), "seconds": time.perf_counter() - started,
            })
            if first.startswith("level:") and second.startswith("level:"):
                upper, lower = first.split(":")[1], second.split(":")[1]
                chain[upper] = chain[lower] + elo_difference(stat.score_rate)
        if args.levels:
            elo[name] = chain
    report("strength: seeded matches, seats rotated (win rate = mean win share of the first bot)", rows,
           ["game", "bot", "opponent", "games", "win_rate", "ci_low", "ci_high", "elo_gap", "seconds"])
    if args.levels:
        print(json.dumps({"levels_elo": elo}))
        if args.write_elo:
            ELO_FILE.write_text(json.dumps(elo, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
