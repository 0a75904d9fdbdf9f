"""The engine's raw speed, for ``hortus bench``: uniform random playouts with no search."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hortus._ext.engine import random_playouts

if TYPE_CHECKING:
    from hortus.games import State


def random_decisions_per_second(state: State, playouts: int, seed: int = 1) -> float:
    """Decisions per second of `playouts` uniform random playouts from `state` (one thread)."""
    decisions, _, seconds = random_playouts(state.kernel_state, playouts, seed, False)
    return decisions / seconds
