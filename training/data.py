"""Search-labelled positions: seeded self-play supplies positions, an ISMCTS search labels each
with every seat's win share after its best move (a "q" target, as AlphaZero's, never the
outcome of one random game, which carries almost no signal here) and its expected final points
(the points head's target; the labelling search plays every playout to the end)."""

from __future__ import annotations

import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from hortus import games
from hortus.games import CHANCE, TERMINAL
from hortus.search import Limits, analyze, search_label


@dataclass(frozen=True)
class Sample:
    """One position from one seat's side: its features and the search's win share for it."""

    game_index: int
    """Which self-play game it comes from (the validation split is by game)."""
    features: tuple[float, ...]
    target: float
    points: float | None = None
    """The search's expected final points of that seat after its best move (the points
    head's target), None where not labelled."""


def _seed(*parts: object) -> int:
    return random.Random(":".join(str(p) for p in parts)).getrandbits(63)


def _one_game(game_name: str, players: int, index: int, seed: int, play_iterations: int, per_game: int) -> list[bytes]:
    """Positions (encoded) from one seeded self-play game at `play_iterations` per decision,
    `per_game` of them drawn at random among its decisions with two or more moves."""
    rng = random.Random(_seed(seed, game_name, players, index))
    state = games.get(game_name).new_game(players=players, seed=rng.getrandbits(63))
    seen: list[bytes] = []
    while state.current_player != TERMINAL:
        if state.current_player == CHANCE:
            state.resolve_chance(rng)
            continue
        legal = state.legal_actions()
        if len(legal) > 1:
            seen.append(state.encode())
            # Playouts, mean values, uniform expansion, no widening, UCT's 0.7: fixed here rather
            # than the game's defaults, so a model file stays reproducible by the command it
            # records when a game later turns one of those search settings on.
            settings = replace(
                state.game.search_settings(state.num_players),
                evaluation="playout",
                turn_max=False,
                expansion_policy=False,
                widening=0.0,
                exploration=0.7,
            )
            limits = Limits(iterations=play_iterations, seed=rng.getrandbits(63))
            state.apply(analyze(state, limits, settings=settings).best.action)
        else:
            state.apply(legal[0])
    return rng.sample(seen, min(per_game, len(seen)))


def _label(args: tuple[str, int, bytes, int, int]) -> list[Sample]:
    game_name, index, data, iterations, seed = args
    state = games.get(game_name).decode(data)
    label = search_label(state, iterations, seed, state.game.search_settings(state.num_players))
    return [Sample(index, label.features[seat], label.win_share[seat], label.points[seat]) for seat in range(state.num_players)]


def self_play_positions(
    game_name: str, players: int, games_count: int, seed: int, play_iterations: int = 64, per_game: int = 20, jobs: int = 1
) -> list[tuple[int, bytes]]:
    """(game index, encoded position) from `games_count` seeded self-play games."""
    args = [(game_name, players, i, seed, play_iterations, per_game) for i in range(games_count)]
    if jobs == 1:
        out = [_one_game(*a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            out = list(pool.map(_one_game, *zip(*args)))
    return [(i, p) for i, positions in enumerate(out) for p in positions]


def label_positions(
    game_name: str, positions: list[tuple[int, bytes]], iterations: int, seed: int, jobs: int = 1
) -> list[Sample]:
    """Every seat's sample of every position, labelled by a seeded search of `iterations`."""
    args = [(game_name, i, p, iterations, _seed(seed, "label", n)) for n, (i, p) in enumerate(positions)]
    if jobs == 1:
        out = [_label(a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            out = list(pool.map(_label, args, chunksize=16))
    return [s for samples in out for s in samples]
