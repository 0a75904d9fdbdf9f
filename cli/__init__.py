"""The ``hortus`` command line: the one place that composes every part (clients, server,
search, distributed runner, training).

``play``, ``suggest``, ``hints``, ``review`` and ``games`` talk gRPC to ``--target``, or to an
embedded server started on a free local port when no target is given; the engine is imported
lazily, by the subcommands that need it.

    hortus serve [--address 127.0.0.1:50051] [--workers N] [--tls-cert C --tls-key K] [--max-iterations N ...]
    hortus play botanik [--players 2] [--seat 0] [--seed N] [--iterations N | --time-ms MS]
    hortus suggest --game botanik --seed 1 [--json]
    hortus hints --game botanik --position-hex 4852... [--max-moves 5] [--json]
    hortus play botanik --record game.jsonl; hortus review game.jsonl [--iterations 2000] [--json]
    hortus evaluate positions.jsonl -o results.jsonl [--iterations N] [--streams 2]
    hortus arena --game botanik --bots mcts:200 random --games 20 --seed 1 [--jobs 2] [--json]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hortus.cli import arena, evaluate, play, serve, train
from hortus.cli.common import CliError, report
from hortus.clients.errors import AdvisorError

import hortus

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hortus", description="AI opponent and move advisor for botany board games")
    parser.add_argument("--version", action="version", version=f"hortus {hortus.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for family in (serve, play, evaluate, arena, train):
        family.add_parsers(sub)
    from hortus.balance.cli import add_parser as add_balance_parser  # the balance lab's own room

    add_balance_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 service error, 2 usage)."""
    try:
        args = build_parser().parse_args(argv)
        status: int = args.func(args)
        return status
    except CliError as exc:
        print(f"hortus: {exc}", file=sys.stderr)
        return 2
    except AdvisorError as exc:
        report(exc)
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
