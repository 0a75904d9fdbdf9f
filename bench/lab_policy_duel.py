"""Botanical Lab playout policy against the frozen baseline policy (issue 16 screen): both
seats play pure playouts (no search), one seat the current rollout_action, the others the
kernel's baseline_rollout_action, the current seat rotated. Prints the current seat's win share
with a Wilson 95% interval and mean points.

    python bench/lab_policy_duel.py --games 2000 --players 2 --seed 1
"""

from __future__ import annotations

import argparse
import math
import random

from hortus import games


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return centre - half, centre + half


def duel(game_name: str, games_n: int, players: int, seed: int) -> None:
    game = games.get(game_name)
    rng = random.Random(seed)
    share = 0.0
    points_new = 0.0
    points_old = 0.0
    decisions = 0
    for g in range(games_n):
        new_seat = g % players
        state = game.new_game(players=players, seed=seed * 100_003 + g)
        while not state.is_terminal():
            if state.is_chance():
                state.resolve_chance(rng)
                continue
            seat = state.current_player
            state.apply(state.kernel_state.rollout_action(rng.getrandbits(64), baseline=seat != new_seat))
            decisions += 1
        returns = state.returns()
        scores = state.scores()
        share += returns[new_seat]
        points_new += scores[new_seat]
        points_old += sum(scores[s] for s in range(players) if s != new_seat) / (players - 1)
    lo, hi = wilson(share, games_n)
    print(f"{game_name} {players} seats, {games_n} games, seed {seed}: current policy "
          f"{100 * share / games_n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], points "
          f"{points_new / games_n:.1f} against {points_old / games_n:.1f}, "
          f"{decisions / games_n:.0f} decisions a game")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="botanical_lab")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    duel(args.game, args.games, args.players, args.seed)


if __name__ == "__main__":
    main()
