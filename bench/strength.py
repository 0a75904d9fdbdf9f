"""The strength table, in one command: seeded matches with seats rotated, win rates with 95%
Wilson intervals, and (with --levels) the Elo of difficulty levels 1-8 per game.

    python bench/strength.py [--games 100] [--jobs 2] [--game NAME ...] [--levels] [--write-elo]

Matches per game: mcts:2000 vs random, vs greedy and mcts:4000 vs mcts:2000 at 2 seats
(random, greedy, double), one mcts:2000 against three greedy at 4 seats (four), and for a game
with a solo variant the mean final score of mcts:2000, greedy and random alone (solo).
--matches picks some of them (default: all).
--levels plays each level against the one below it (adjacent pairs) and chains the Elo
differences from level 1 = 0; --write-elo stores them in hortus/search/levels_elo.json.
--level-pairs N ... replays only the pairs "level N vs level N-1" and keeps the other gaps of
the stored table (the levels above N move by the change of N's gap).
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
from hortus.search.levels import ELO_FILE, LEVELS, with_gap  # noqa: E402

MATCHES = {
    "random": ["mcts:2000", "random"],
    "greedy": ["mcts:2000", "greedy"],
    "double": ["mcts:4000", "mcts:2000"],
    "four": ["mcts:2000", "greedy", "greedy", "greedy"],  # 4 seats: one MCTS vs three greedy
}
SOLO_BOTS = ["mcts:2000", "greedy", "random"]  # games with a 1-player variant: mean final score


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
    parser.add_argument("--level-pairs", nargs="+", type=int, metavar="N",
                        choices=range(2, len(LEVELS) + 1),
                        help="with --levels: only these pairs (level N vs N-1), other gaps kept")
    parser.add_argument("--matches", nargs="+", default=[*MATCHES, "solo"],
                        choices=[*MATCHES, "solo"])
    args = parser.parse_args()
    rows = []
    elo: dict[str, dict[str, float]] = json.loads(ELO_FILE.read_text()) if ELO_FILE.exists() else {}
    pairs = [] if args.no_matches else [MATCHES[m] for m in args.matches if m in MATCHES]
    if args.levels:
        uppers = sorted(set(args.level_pairs or range(2, len(LEVELS) + 1)))
        pairs += [[f"level:{upper}", f"level:{upper - 1}"] for upper in uppers]
    for name in args.game or games.names():
        game = games.get(name)
        players = max(2, game.min_players)
        chain = {"1": 0.0}
        if args.level_pairs:
            if sorted(elo.get(name, {}), key=int) != [str(i) for i in LEVELS]:
                parser.error(f"--level-pairs needs a stored Elo table for {name}; run all pairs first")
            chain = dict(elo[name])
        for specs in pairs:
            if not game.min_players <= len(specs) <= game.max_players:
                continue
            first, second = specs[0], " ".join(specs[1:])
            started = time.perf_counter()
            result = play_match(name, specs, args.games, args.seed, jobs=args.jobs,
                                players=max(players, len(specs)))
            stat = result.stats[0]
            rows.append({
                "game": name, "bot": first, "opponent": second, "seats": len(specs), "games": stat.games,
                "mean_score": stat.mean_score,
                "win_rate": stat.score_rate, "ci_low": stat.interval[0], "ci_high": stat.interval[1],
                "wins": stat.wins, "draws": stat.draws, "losses": stat.losses,
                "elo_gap": elo_difference(stat.score_rate), "seconds": time.perf_counter() - started,
            })
            if first.startswith("level:") and second.startswith("level:"):
                chain = with_gap(chain, int(first.split(":")[1]), elo_difference(stat.score_rate))
        if "solo" in args.matches and not args.no_matches and game.min_players == 1:
            for bot in SOLO_BOTS:
                started = time.perf_counter()
                result = play_match(name, [bot], args.games, args.seed, jobs=args.jobs, players=1)
                rows.append({"game": name, "bot": bot, "opponent": "(solo)", "seats": 1,
                             "games": result.games, "mean_score": result.stats[0].mean_score,
                             "seconds": time.perf_counter() - started})
        if args.levels:
            elo[name] = chain
    report("strength: seeded matches, seats rotated (win rate = mean win share of the first bot)", rows,
           ["game", "bot", "opponent", "seats", "games", "win_rate", "ci_low", "ci_high", "mean_score", "seconds"])
    if args.levels:
        print(json.dumps({"levels_elo": elo}))
        if args.write_elo:
            ELO_FILE.write_text(json.dumps(elo, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
