"""``hortus balance``: the balance lab's command line (parser builder + run function)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hortus.balance.html import render_html
from hortus.balance.report import balance_report, report_json

__all__ = ["add_parser", "run"]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {value}")
    return value


def _option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"takes NAME=VALUE, not {text!r}")
    return name, value


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``balance`` subcommand to an argparse subparsers object."""
    p: argparse.ArgumentParser = sub.add_parser("balance", help="balance lab: seat advantage, game length, margins")
    p.add_argument("--game", required=True, help="game name")
    p.add_argument("--players", type=_positive, nargs="+", default=[2], help="seat counts (default 2)")
    p.add_argument("--bots", default="level:4", help="bot spec playing every seat (default level:4)")
    p.add_argument("--games", type=_positive, default=100, help="games per seat count (default 100)")
    p.add_argument("--jobs", type=_positive, default=1, help="worker processes")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a rule option of the game as given (repeatable): the report and every comparison use it",
    )
    p.add_argument(
        "--variant",
        type=_option,
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a rule option to measure (repeatable): paired deals with and without it, seat 0's difference",
    )
    p.add_argument(
        "--ablate",
        action="append",
        default=[],
        metavar="CARD",
        help="a card to remove from the supply (repeatable): paired deals with and without it, its takers' difference",
    )
    p.add_argument(
        "--swap",
        type=_option,
        action="append",
        default=[],
        metavar="A=B",
        help="card A's copies replaced by card B's (repeatable): paired deals, A's takers' difference",
    )
    p.add_argument(
        "--components",
        type=Path,
        default=None,
        metavar="FILE",
        help="a designer's edited components file: paired deals against the shipped one, seat 0's difference",
    )
    p.add_argument(
        "--base-components",
        type=Path,
        default=None,
        metavar="FILE",
        help="a components file the game as given uses: the report and every comparison are about it",
    )
    p.add_argument(
        "--cards",
        nargs="+",
        default=None,
        metavar="CARD",
        help="rank cards by their takers' difference when removed: names, or 'all' for every card of the supply",
    )
    p.add_argument("--effect-games", type=_positive, default=None, help="most paired deals per comparison (default --games)")
    p.add_argument("--effect-bot", default=None, help="bot spec of the paired comparisons (default --bots)")
    p.add_argument(
        "--no-seat-report",
        action="store_true",
        help="play only the comparisons asked for (no per seat count report)",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="play the games as Ray tasks on the cluster at ADDRESS ('local': a cluster of this machine)",
    )
    p.add_argument(
        "--skill",
        type=_positive,
        nargs="*",
        default=[],
        metavar="LEVEL",
        help="levels to play head to head at 2 seats (e.g. 1 4 8): skill matrix and upset rate",
    )
    p.add_argument("--skill-games", type=_positive, default=None, help="games per level pair (default --games)")
    p.add_argument("-o", "--output", required=True, type=Path, help="directory for report.json and report.html")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    bar: Any = None
    compares = args.variant or args.ablate or args.swap or args.components is not None or args.cards
    try:
        from tqdm import tqdm  # the progress extra

        # the comparisons stop when their sequential test decides: no total known then
        total = None if compares else args.games * len(args.players)
        bar = tqdm(total=total, file=sys.stderr, unit="game", disable=not sys.stderr.isatty())
    except ImportError:
        pass
    try:
        report = balance_report(
            args.game,
            args.players,
            args.bots,
            args.games,
            args.seed,
            jobs=args.jobs,
            ray_address=args.ray,
            options=dict(args.option) or None,
            variant=dict(args.variant) or None,
            ablate=args.ablate,
            swap=dict(args.swap) or None,
            components=str(args.components) if args.components is not None else None,
            base_components=str(args.base_components) if args.base_components is not None else None,
            cards=args.cards,
            effect_bot=args.effect_bot,
            effect_games=args.effect_games,
            seat_reports=not args.no_seat_report,
            progress=(lambda _record: bar.update(1)) if bar is not None else None,
            skill_levels=args.skill,
            skill_games=args.skill_games,
        )
    except (KeyError, ValueError) as exc:  # an unknown game, seat count, bot, option, card or file: the user's mistake
        if bar is not None:
            bar.close()
        print(f"hortus balance: {exc}", file=sys.stderr)
        return 2
    if bar is not None:
        bar.close()
    out: Path = args.output
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(report_json(report))
    (out / "report.html").write_text(render_html(report))
    print(f"wrote {out / 'report.json'} and {out / 'report.html'}")
    return 0
