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

Yardsticks (each replaces the matches above when given):

    python bench/strength.py --ends [--end-levels 4 6 8] [--end-seats 2 4] [--games 10]
    python bench/strength.py --equal-time [--bot mcts:100ms] [--base mcts-base:100ms] [--games 200]
    python bench/strength.py --worth [--bot mcts:100ms] [--games 100]

--ends: natural game ends in self-play at levels 4, 6 and 8, per game with an end trigger and
seat count: the share of games ended by the rule's trigger (War of the Posies: 7 Reputation,
not the round-40 safety end; Botanical Lab: 35 VP, its only end) and rounds per game (median,
p90). --equal-time: the new default search against the frozen baseline at the same wall time,
2 seats and one seat against three at 4 seats, seats rotated, 95% Wilson intervals. --worth:
the budget multiple k (2, 4, 8) at which the baseline matches the bot: the smallest k whose
baseline scores >= 50% against it.
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
import random  # noqa: E402

from hortus.games import CHANCE, TERMINAL  # noqa: E402
from hortus.search.arena import _derive_seed, play_match  # noqa: E402
from hortus.search.levels import ELO_FILE, LEVELS, LevelBot, with_gap  # noqa: E402

MATCHES = {
    "random": ["mcts:2000", "random"],
    "greedy": ["mcts:2000", "greedy"],
    "double": ["mcts:4000", "mcts:2000"],
    "four": ["mcts:2000", "greedy", "greedy", "greedy"],  # 4 seats: one MCTS vs three greedy
}
SOLO_BOTS = ["mcts:2000", "greedy", "random"]  # games with a 1-player variant: mean final score
END_GAMES = ("war_of_the_posies", "botanical_lab")  # games whose end is triggered in play


def _triggered(name: str, state: games.State) -> bool:
    """Whether a finished game ended by its rule's trigger (not by a safety end)."""
    view = state.view(0)
    if name == "war_of_the_posies":
        return view["end_trigger"] is not None  # else the round-40 safety end
    return True  # Botanical Lab ends only when a seat reaches 35 VP (it has no other end)


def natural_end(name: str, level: int, players: int, seed: int, index: int) -> dict[str, object]:
    """One self-play game at a difficulty level: how it ended and how many rounds it took
    (a round = every seat had a turn; counted from the changes of the seat whose turn it is)."""
    game_seed = _derive_seed(seed, index)
    state = games.get(name).new_game(players=players, seed=game_seed)
    bots = [LevelBot(level, _derive_seed(seed, index, s)) for s in range(players)]
    rng = random.Random(_derive_seed(game_seed, 0x43484E43))
    turns, last_turn_player = 0, None
    while state.current_player != TERMINAL:
        if state.current_player == CHANCE:
            state.resolve_chance(rng)
            continue
        turn_player = state.view(0)["turn_player"]
        if turn_player != last_turn_player:
            turns, last_turn_player = turns + 1, turn_player
        state.apply(bots[state.current_player].choose(state))
    rounds = state.view(0)["round"] if name == "war_of_the_posies" else math.ceil(turns / players)
    return {"triggered": _triggered(name, state), "rounds": rounds, "scores": state.scores()}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def ends_rows(names: list[str], levels: list[int], seats: list[int], count: int, seed: int, jobs: int) -> list[dict[str, object]]:
    from concurrent.futures import ProcessPoolExecutor

    rows = []
    for name in names:
        game = games.get(name)
        for players in seats:
            if not game.min_players <= players <= game.max_players:
                continue
            for level in levels:
                started = time.perf_counter()
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    out = list(
                        pool.map(natural_end, [name] * count, [level] * count, [players] * count, [seed] * count, range(count))
                    )
                rounds = [float(o["rounds"]) for o in out]  # type: ignore[arg-type]
                rows.append(
                    {
                        "game": name,
                        "seats": players,
                        "level": level,
                        "games": count,
                        "triggered": sum(1 for o in out if o["triggered"]) / count,
                        "rounds_median": _percentile(rounds, 0.5),
                        "rounds_p90": _percentile(rounds, 0.9),
                        "rounds_max": max(rounds),
                        "seconds": time.perf_counter() - started,
                    }
                )
    return rows


def equal_time_rows(names: list[str], bot: str, base: str, count: int, seed: int, jobs: int) -> list[dict[str, object]]:
    rows = []
    for name in names:
        game = games.get(name)
        for specs in ([bot, base], [bot, base, base, base]):
            if not game.min_players <= len(specs) <= game.max_players:
                continue
            started = time.perf_counter()
            result = play_match(name, specs, count, seed, jobs=jobs, players=len(specs))
            stat = result.stats[0]
            rows.append(
                {
                    "game": name,
                    "bot": bot,
                    "opponent": " ".join(specs[1:]),
                    "seats": len(specs),
                    "games": stat.games,
                    "win_rate": stat.score_rate,
                    "ci_low": stat.interval[0],
                    "ci_high": stat.interval[1],
                    "fair_share": 1 / len(specs),
                    "seconds": time.perf_counter() - started,
                }
            )
    return rows


def _scaled(spec: str, k: int) -> str:
    """A bot spec with its budget multiplied by k (``mcts-base:100ms`` -> ``mcts-base:400ms``)."""
    head, *options = spec.split(",")
    kind, _, arg = head.partition(":")
    arg = f"{float(arg[:-2]) * k:g}ms" if arg.endswith("ms") else str(int(arg or 2000) * k)
    return ",".join([f"{kind}:{arg}", *options])


def worth_rows(names: list[str], bot: str, base: str, count: int, seed: int, jobs: int) -> list[dict[str, object]]:
    """Worth in compute: baselines at 2x, 4x, 8x the bot's budget play it (2 seats), by binary
    search over those multiples; k = the smallest multiple whose baseline scores >= 50%
    (> 8 when none does, < 2 when 2x already does)."""
    rows = []
    for name in names:
        multiples = [2, 4, 8]
        low, high = 0, len(multiples) - 1
        verdict: dict[int, float] = {}
        while low <= high:
            mid = (low + high) // 2
            k = multiples[mid]
            result = play_match(name, [_scaled(base, k), bot], count, seed, jobs=jobs, players=2)
            verdict[k] = result.stats[0].score_rate
            rows.append(
                {
                    "game": name,
                    "bot": bot,
                    "opponent": _scaled(base, k),
                    "seats": 2,
                    "games": result.stats[0].games,
                    "win_rate": 1 - verdict[k],
                    "ci_low": 1 - result.stats[0].interval[1],
                    "ci_high": 1 - result.stats[0].interval[0],
                }
            )
            if verdict[k] >= 0.5:
                high = mid - 1
            else:
                low = mid + 1
        matched = [k for k in multiples if verdict.get(k, 0.0) >= 0.5]
        rows.append(
            {"game": name, "bot": bot, "opponent": "worth k", "k": (f"<={min(matched)}" if matched else f">{multiples[-1]}")}
        )
    return rows


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
    parser.add_argument(
        "--level-pairs",
        nargs="+",
        type=int,
        metavar="N",
        choices=range(2, len(LEVELS) + 1),
        help="with --levels: only these pairs (level N vs N-1), other gaps kept",
    )
    parser.add_argument("--matches", nargs="+", default=[*MATCHES, "solo"], choices=[*MATCHES, "solo"])
    parser.add_argument("--ends", action="store_true", help="natural game ends in level self-play")
    parser.add_argument("--end-levels", nargs="+", type=int, default=[4, 6, 8])
    parser.add_argument("--end-seats", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--equal-time", action="store_true", help="the bot against the frozen baseline")
    parser.add_argument("--worth", action="store_true", help="worth in compute of the bot over the baseline")
    parser.add_argument("--bot", default="mcts:100ms")
    parser.add_argument("--base", default="mcts-base:100ms")
    args = parser.parse_args()
    if args.ends or args.equal_time or args.worth:
        yard: list[dict[str, object]] = []
        if args.ends:
            yard = ends_rows(
                [g for g in args.game or END_GAMES], args.end_levels, args.end_seats, args.games, args.seed, args.jobs
            )
            columns = ["game", "seats", "level", "games", "triggered", "rounds_median", "rounds_p90", "rounds_max", "seconds"]
        else:
            pick = equal_time_rows if args.equal_time else worth_rows
            yard = pick(args.game or games.names(), args.bot, args.base, args.games, args.seed, args.jobs)
            columns = ["game", "bot", "opponent", "seats", "games", "win_rate", "ci_low", "ci_high", "k"]
        report(
            "strength: " + ("natural game ends" if args.ends else "equal time" if args.equal_time else "worth in compute"),
            yard,
            columns,
        )  # type: ignore[arg-type]
        return
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
            result = play_match(name, specs, args.games, args.seed, jobs=args.jobs, players=max(players, len(specs)))
            stat = result.stats[0]
            rows.append(
                {
                    "game": name,
                    "bot": first,
                    "opponent": second,
                    "seats": len(specs),
                    "games": stat.games,
                    "mean_score": stat.mean_score,
                    "win_rate": stat.score_rate,
                    "ci_low": stat.interval[0],
                    "ci_high": stat.interval[1],
                    "wins": stat.wins,
                    "draws": stat.draws,
                    "losses": stat.losses,
                    "elo_gap": elo_difference(stat.score_rate),
                    "seconds": time.perf_counter() - started,
                }
            )
            if first.startswith("level:") and second.startswith("level:"):
                chain = with_gap(chain, int(first.split(":")[1]), elo_difference(stat.score_rate))
        if "solo" in args.matches and not args.no_matches and game.min_players == 1:
            for bot in SOLO_BOTS:
                started = time.perf_counter()
                result = play_match(name, [bot], args.games, args.seed, jobs=args.jobs, players=1)
                rows.append(
                    {
                        "game": name,
                        "bot": bot,
                        "opponent": "(solo)",
                        "seats": 1,
                        "games": result.games,
                        "mean_score": result.stats[0].mean_score,
                        "seconds": time.perf_counter() - started,
                    }
                )
        if args.levels:
            elo[name] = chain
    report(
        "strength: seeded matches, seats rotated (win rate = mean win share of the first bot)",
        rows,
        ["game", "bot", "opponent", "seats", "games", "win_rate", "ci_low", "ci_high", "mean_score", "seconds"],
    )
    if args.levels:
        print(json.dumps({"levels_elo": elo}))
        if args.write_elo:
            ELO_FILE.write_text(json.dumps(elo, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
