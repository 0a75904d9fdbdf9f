"""A kernel's derived cache kept up to date move by move is the one rebuilt from the core.

Kernels keep derived data after the serialized core (Botanik's machine graphs, frontiers and
the masks and colours of their neighbours...), updated incrementally by apply for speed. A
state rebuilt from its core bytes (KernelState.from_core, the kernel's rebuild) must hold the
same whole buffer, byte for byte, at every point of a game: otherwise a search from a decoded
position and one continued move by move would differ. Botanical Lab is left out: its buffer also holds the
search's move-order memory, which apply keeps and rebuild clears by design (its cache is
checked through its legal actions by the conformance suite).
"""

from __future__ import annotations

import random

import pytest

from hortus import games
from hortus._ext.engine import KernelState

CASES = [
    (name, players)
    for name in games.names()
    if name != "botanical_lab"
    for players in sorted({games.get(name).min_players, games.get(name).max_players})
]


@pytest.mark.parametrize(("name", "players"), CASES)
def test_incremental_cache_is_the_rebuilt_one(name: str, players: int) -> None:
    game = games.get(name)
    for seed in range(6):
        rng = random.Random(seed)
        ks = game.new_game(players=players, seed=seed).kernel_state.clone()
        for step in range(3000):
            p = ks.current_player()
            if p == -4:
                break
            if p == -1:
                ks.apply(ks.sample_chance(seed * 7919 + step))
            elif step % 2 and ks.rollout_action(step) is not None:
                ks.apply(ks.rollout_action(step))
            else:
                ks.apply(rng.choice(ks.legal_actions()))
            rebuilt = KernelState.from_core(ks.capsule, ks.core())
            assert rebuilt.raw() == ks.raw(), f"{name}: the cache differs from the rebuilt one at step {step}"
