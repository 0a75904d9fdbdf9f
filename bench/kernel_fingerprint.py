"""A digest of everything a kernel answers along many seeded trajectories, to compare two builds.

    python bench/kernel_fingerprint.py [--game NAME ...] [--trajectories 40] [--searches 3]
    PYTHONPATH=build/bench-against/REV/build/cython_include python bench/kernel_fingerprint.py

A speed change to a kernel must not change what it answers: the same legal actions in the
same order, the same search subset, the same playout-policy choice for the same seed (current
and baseline), the same chance outcomes and weights, the same sampled outcome, scores and
returns. This walks seeded trajectories per game and seat count, from a position a player
reached and from a search's world (after determinize: search subsets then prune with their
memory), taking the policy's move, a uniform legal move or a uniform search-subset move in
turn, and hashes every answer on the way; then it hashes the root statistics of a few seeded
searches (default evaluation and full playouts) and of engine playouts. Prints one digest per
game and seat count (JSON): equal digests from two builds mean equal answers on all of it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random

from hortus import games
from hortus._ext.engine import random_playouts
from hortus.search import Limits
from hortus.search.settings import settings_for
from hortus.search.analysis import _search_options, _searches

CHANCE = -1
TERMINAL = -4


def walk(h: "hashlib._Hash", ks: object, seed: int, steps: int) -> None:
    rng = random.Random(seed)
    for step in range(steps):
        p = ks.current_player()  # type: ignore[attr-defined]
        h.update(f"p{p};".encode())
        if p == TERMINAL:
            h.update(repr((ks.scores(), ks.returns())).encode())  # type: ignore[attr-defined]
            return
        if p == CHANCE:
            outcomes = ks.chance_outcomes()  # type: ignore[attr-defined]
            h.update(repr(outcomes).encode())
            a = ks.sample_chance(seed * 1000 + step)  # type: ignore[attr-defined]
            h.update(f"c{a};".encode())
            ks.apply(a)  # type: ignore[attr-defined]
            continue
        legal = ks.legal_actions()  # type: ignore[attr-defined]
        subset = ks.search_actions()  # type: ignore[attr-defined]
        pick = ks.rollout_action(seed * 1000 + step)  # type: ignore[attr-defined]
        base = ks.rollout_action(seed * 1000 + step, True)  # type: ignore[attr-defined]
        h.update(repr((legal, subset, pick, base, ks.scores())).encode())  # type: ignore[attr-defined]
        mode = step % 3
        if mode == 0 and pick is not None:
            ks.apply(pick)  # type: ignore[attr-defined]
        elif mode == 1:
            ks.apply(rng.choice(legal))  # type: ignore[attr-defined]
        else:
            ks.apply(rng.choice(subset))  # type: ignore[attr-defined]


def search_digest(h: "hashlib._Hash", state: games.State, seed: int, evaluation: str, iterations: int) -> None:
    limits = Limits(iterations=iterations, seed=seed)
    settings = settings_for(state, evaluation=evaluation)
    searches, eval_plies = _searches(state, limits, settings)
    options = _search_options(settings)
    search = searches[0]
    search.run(iterations=iterations, seed=seed, eval_plies=eval_plies, **options)
    for child in sorted(search.children(), key=lambda c: c["action"]):
        h.update(repr(sorted(child.items())).encode())


def fingerprint(name: str, players: int, trajectories: int, searches: int) -> str:
    game = games.get(name)
    h = hashlib.sha256()
    for t in range(trajectories):
        state = game.new_game(players=players, seed=t + 1)
        raw = state.kernel_state.clone()
        walk(h, raw, t, 4000)
        world = state.kernel_state.clone()
        if world.current_player() >= 0:
            world.determinize(world.current_player(), t)
            walk(h, world, t + 7919, 4000)
    for t in range(searches):
        state = game.new_game(players=players, seed=100 + t)
        rng = random.Random(t)
        for _ in range(rng.randrange(0, 40)):  # a position some way into the game
            if state.is_terminal():
                break
            if state.is_chance():
                state.resolve_chance(rng)
            else:
                state.apply(rng.choice(state.legal_actions()))
        while state.is_chance():
            state.resolve_chance(rng)
        if state.is_terminal():
            continue
        for evaluation in ("default", "playout"):
            search_digest(h, state, t, evaluation, 300)
    for use_policy in (True, False):
        decisions, chance, _ = random_playouts(game.new_game(players=players, seed=5).kernel_state, 100, 3, use_policy)
        h.update(f"r{decisions},{chance};".encode())
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", action="append")
    parser.add_argument("--trajectories", type=int, default=40)
    parser.add_argument("--searches", type=int, default=3)
    args = parser.parse_args()
    for name in args.game or games.names():
        game = games.get(name)
        for players in range(game.min_players, game.max_players + 1):
            print(
                json.dumps(
                    {"game": name, "players": players, "digest": fingerprint(name, players, args.trajectories, args.searches)}
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
