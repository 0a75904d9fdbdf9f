"""``hortus train --game NAME``: self-play positions, search labels, a numpy fit, and the
model file beside the game's ``components.toml``, reproducibly from the seed."""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hortus.games import Game


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", required=True, help="game name")
    p.add_argument(
        "--players", type=int, nargs="+", default=None, help="seat counts to sample (default: 2, and the game's maximum)"
    )
    p.add_argument("--games", type=int, default=120, help="self-play games per seat count")
    p.add_argument("--per-game", type=int, default=12, help="positions drawn from each game")
    p.add_argument("--play-iterations", type=int, default=64, help="self-play search per decision")
    p.add_argument("--label-iterations", type=int, default=400, help="labelling search per position")
    p.add_argument("--hidden", type=int, default=8, help="hidden tanh units (0 = logistic regression)")
    p.add_argument("--plies", type=int, default=0, help="playout decisions before the model scores")
    p.add_argument(
        "--default", action="store_true", help="make the model the game's default evaluation (only after it won at equal time)"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--out", type=Path, default=None, help="model file (default: beside components.toml)")


def run(args: argparse.Namespace) -> int:
    # Imported here: `hortus --help` and the other commands do not load the engine or numpy.
    from hortus import games
    from hortus.search.evaluation import model_path, parse_model
    from hortus.training.data import label_positions, self_play_positions
    from hortus.training.fit import fit_value_model, model_document

    game = games.get(args.game)
    if game.max_players < 2:
        print(f"hortus train: {game.name} has no multi-seat game to learn", file=sys.stderr)
        return 2
    players = args.players or sorted({max(2, game.min_players), game.max_players})
    features = _feature_count(game, players[0])
    if features <= 0:
        print(f"hortus train: {game.name}'s kernel computes no value-model features", file=sys.stderr)
        return 2
    started = time.perf_counter()
    samples = []
    for n in players:
        positions = self_play_positions(game.name, n, args.games, args.seed, args.play_iterations, args.per_game, args.jobs)
        # Game indices stay distinct across seat counts so the validation split stays by game.
        positions = [(i + 100_000 * n, p) for i, p in positions]
        samples += label_positions(game.name, positions, args.label_iterations, args.seed, args.jobs)
        print(
            f"{game.name}: {len(positions)} positions at {n} seats labelled ({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
        )
    fit = fit_value_model(samples, hidden=args.hidden, seed=args.seed)
    command = (
        f"hortus train --game {game.name} --players {' '.join(map(str, players))} --games {args.games} "
        f"--per-game {args.per_game} --play-iterations {args.play_iterations} "
        f"--label-iterations {args.label_iterations} --hidden {args.hidden} --plies {args.plies} "
        f"--seed {args.seed}" + (" --default" if args.default else "")
    )
    doc = model_document(game.name, fit, features, args.plies, args.default, {"command": command})
    out = args.out or model_path(game)
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    parse_model(out, text.encode(), game.name, features)  # the file the search will accept
    out.write_text(text)
    print(
        json.dumps({"game": game.name, "file": str(out), "seconds": round(time.perf_counter() - started, 1), **doc["training"]})
    )
    return 0


def _feature_count(game: "Game", players: int) -> int:
    """The kernel's feature count (a Search needs a decision node, so chance is resolved)."""
    from hortus.games import CHANCE
    from hortus.search import feature_count

    state = game.new_game(players=players, seed=0)
    rng = random.Random(0)
    while state.current_player == CHANCE:
        state.resolve_chance(rng)
    return feature_count(state)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hortus train", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
