"""Playout policy against playout policy (issue 16 screening): every seat plays its kernel's
rollout_action directly, no search; one seat the current policy, the others the frozen
baseline's (baseline_rollout_action), seats rotated. Prints the new seat's share of wins
(ties split) with its Wilson interval, and mean points of both sides.

    python bench/policy_duel.py --game botanists --players 2 --games 2000 --seed 1
"""

from __future__ import annotations

import argparse
import math
import random
import time

from hortus import games


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", required=True)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    game = games.get(args.game)
    wins = 0.0
    new_points = 0.0
    old_points = 0.0
    decisions = 0
    start = time.perf_counter()
    for g in range(args.games):
        seed = args.seed * 1_000_003 + g
        rng = random.Random(seed)
        new_seat = g % args.players
        state = game.new_game(players=args.players, seed=seed)
        while not state.is_terminal():
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            baseline = state.current_player != new_seat
            state.apply(state.kernel_state.rollout_action(rng.getrandbits(64), baseline=baseline))
            decisions += 1
        scores = list(state.scores())
        best = max(scores)
        winners = [s for s in range(args.players) if scores[s] == best]
        if new_seat in winners:
            wins += 1.0 / len(winners)
        new_points += scores[new_seat]
        old_points += (sum(scores) - scores[new_seat]) / (args.players - 1)
    low, high = wilson(wins, args.games)
    n = args.games
    print(f"{args.game} {args.players} seats, {n} games, seed {args.seed}: new policy "
          f"{100 * wins / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}] (fair {100 / args.players:.0f}%), "
          f"mean points {new_points / n:.1f} against {old_points / n:.1f}, "
          f"{decisions / n:.0f} decisions a game, {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
