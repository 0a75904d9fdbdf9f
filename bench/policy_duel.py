"""Playout policy against playout policy (a cheap screen): every seat plays its kernel's
rollout_action directly, no search; one seat the current policy, the others the frozen
baseline's (baseline_rollout_action, the same policy where a game has not changed it), seats
rotated. Prints the current seat's win share (the game's returns: ties split as its rules say)
with its Wilson 95% interval, and mean points of both sides, as a table and JSON.

    python bench/policy_duel.py --game botanical_lab [--players 2] [--games 2000] [--seed 1]

A policy that wins here may still lose at equal time inside the search (it costs iterations):
this only screens candidates before the arena (`hortus arena ... mcts-base:100ms`).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import report  # noqa: E402

from hortus import games  # noqa: E402
from hortus.search.arena import wilson_interval  # noqa: E402


def duel(name: str, count: int, players: int, seed: int) -> dict[str, object]:
    game = games.get(name)
    rng = random.Random(seed)
    share = points_new = points_old = 0.0
    decisions = 0
    started = time.perf_counter()
    for g in range(count):
        new_seat = g % players
        state = game.new_game(players=players, seed=seed * 100_003 + g)
        while not state.is_terminal():
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            baseline = state.current_player != new_seat
            state.apply(state.kernel_state.rollout_action(rng.getrandbits(64), baseline=baseline))
            decisions += 1
        returns, scores = state.returns(), state.scores()
        share += returns[new_seat]
        points_new += scores[new_seat]
        points_old += sum(scores[s] for s in range(players) if s != new_seat) / (players - 1)
    low, high = wilson_interval(share, count)
    return {
        "game": name,
        "seats": players,
        "games": count,
        "win_rate": share / count,
        "ci_low": low,
        "ci_high": high,
        "fair_share": 1.0 / players,
        "points": points_new / count,
        "points_baseline": points_old / count,
        "decisions": decisions / count,
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", required=True, choices=games.names())
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    game = games.get(args.game)
    if not max(2, game.min_players) <= args.players <= game.max_players:
        parser.error(f"--players: {args.game} is played by {max(2, game.min_players)}-{game.max_players} seats here")
    report(
        "policy duel: current playout policy against the baseline's, no search, seats rotated",
        [duel(args.game, args.games, args.players, args.seed)],
        [
            "game",
            "seats",
            "games",
            "win_rate",
            "ci_low",
            "ci_high",
            "fair_share",
            "points",
            "points_baseline",
            "decisions",
            "seconds",
        ],
    )


if __name__ == "__main__":
    main()
