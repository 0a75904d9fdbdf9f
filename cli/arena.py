"""Strength and speed: ``arena`` (seeded games between bots, round robins with Elo) and
``bench`` (a quick speed check)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for annotations: the engine is imported lazily
    from hortus.search.arena import MatchResult


from hortus.cli.common import (
    CliError,
    Progress,
    add_game_setup,
    non_negative_int,
    parse_options,
    percent,
    positive_int,
    print_json,
    say,
)


def _print_match(result: "MatchResult") -> None:
    say(f"{result.game}: {' vs '.join(result.bots)}, {result.games} games, {result.players} seats, seed {result.seed}")
    headers = ["bot", "games", "wins", "draws", "losses", "score", "95% interval", "mean points"]
    rows = [
        [
            s.label,
            str(s.games),
            str(s.wins),
            str(s.draws),
            str(s.losses),
            percent(s.score_rate),
            f"[{percent(s.interval[0])}, {percent(s.interval[1])}]",
            f"{s.mean_score:.2f}",
        ]
        for s in result.stats
    ]
    widths = [max(len(r[c]) for r in [headers, *rows]) for c in range(len(headers))]
    for row in [headers, *rows]:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(widths[c]) for c, cell in enumerate(row) if c]
        say("  ".join(cells))
    rates = ", ".join(f"seat {s}: {percent(v)}" for s, v in enumerate(result.seat_score_rates()))
    say(f"score rate by seat: {rates}")
    say("score = mean win share (a win counts 1, a k-way tie 1/k)")


def _cmd_arena(args: argparse.Namespace) -> int:
    from hortus.search.arena import (  # lazy: the engine loads only here
        play_match,
        round_robin,
    )

    total = args.games * (len(args.bots) * (len(args.bots) - 1) // 2 if args.round_robin else 1)
    progress = Progress(total, 0, enabled=sys.stderr.isatty())
    try:
        if args.round_robin:
            rr = round_robin(
                args.game, args.bots, args.games, args.seed, jobs=args.jobs, progress=lambda record: progress.update()
            )
        else:
            result = play_match(
                args.game,
                args.bots,
                args.games,
                args.seed,
                jobs=args.jobs,
                players=args.players or None,
                variant=args.variant,
                options=parse_options(args.option),
                progress=lambda record: progress.update(),
            )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    finally:
        progress.close()
    if args.round_robin:
        if args.json:
            print_json(rr.to_dict())
        else:
            for match in rr.matches:
                _print_match(match)
            say("Elo (first bot = 0):")
            for bot, elo in sorted(zip(rr.bots, rr.elo), key=lambda item: -item[1]):
                say(f"  {bot:<16} {elo:+7.0f}")
        return 0
    if args.json:
        print_json(result.to_dict())
    else:
        _print_match(result)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    """Quick speed check of every game: random playouts and ISMCTS from the opening."""
    from hortus.search import Limits, analyze, random_decisions_per_second

    from hortus import games  # lazy: the engine loads only here

    rows = []
    for name in args.game or games.names():
        game = games.get(name)
        state = game.new_game(players=max(2, game.min_players), seed=1)
        random_rate = random_decisions_per_second(state, args.playouts, seed=1)
        analysis = analyze(state, Limits(iterations=args.iterations, seed=1, threads=args.threads))
        rows.append(
            {
                "game": name,
                "random_decisions_per_s": random_rate,
                "ismcts_iterations_per_s": analysis.iterations / (analysis.elapsed_ms / 1000.0),
            }
        )
    if args.json:
        print_json(rows)
    else:
        say(f"{'game':<20}{'random decisions/s':>20}{'ISMCTS iterations/s':>22}")
        for row in rows:
            say(f"{row['game']:<20}{row['random_decisions_per_s']:>20,.0f}{row['ismcts_iterations_per_s']:>22,.0f}")
    return 0


# --- parser ----------------------------------------------------------------------------------


def add_parsers(sub: Any) -> None:
    """Register arena and bench."""
    p = sub.add_parser("arena", help="play seeded games between bots (random, greedy, mcts, mcts:N)")
    p.add_argument("--game", required=True, help="game name")
    p.add_argument("--bots", nargs="+", required=True, metavar="BOT", help="bot specs, e.g. mcts:500 random")
    p.add_argument("--games", type=non_negative_int, default=10, help="number of games (default 10)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="match seed (default 0)")
    p.add_argument("--jobs", type=positive_int, default=1, help="games played at once (worker processes)")
    p.add_argument("--round-robin", action="store_true", help="every pair of bots head to head, 2 seats, with Elo")
    add_game_setup(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_arena)

    p = sub.add_parser("bench", help="quick speed check of every game (random playouts, ISMCTS)")
    p.add_argument("--game", action="append", help="a game (repeatable; default: all)")
    p.add_argument("--playouts", type=positive_int, default=500, help="random playouts per game")
    p.add_argument("--iterations", type=positive_int, default=5000, help="ISMCTS iterations per game")
    p.add_argument("--threads", type=positive_int, default=1, help="search threads")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_bench)
