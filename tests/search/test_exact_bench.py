"""bench/exact.py's arena: its positions lie where it says (8-20 decisions before the end of a
seeded level game) and are the same every run; a pair of games gives the solving engine a
win share per seat."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from paths import REPO

from hortus import games


def _bench() -> ModuleType:
    sys.path.insert(0, str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location("bench_exact", REPO / "bench" / "exact.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_arena_positions_are_seeded_and_far_from_the_end() -> None:
    bench = _bench()
    positions = bench.arena_positions(3, 5, 8, 20)
    assert positions == bench.arena_positions(3, 5, 8, 20)
    assert {level for _, level, _ in positions} == {4, 6}
    game = games.get("botanik")
    for hex_state, _, back in positions:
        assert 8 <= back <= 20
        state = game.decode(bytes.fromhex(hex_state))
        assert not state.is_terminal() and not state.is_chance() and state.num_players == 2


def test_a_pair_gives_a_win_share_per_game() -> None:
    bench = _bench()
    ((hex_state, _, _),) = bench.arena_positions(1, 5, 8, 8)
    shares = bench._arena_pair((0, hex_state, 5.0, 1))
    assert len(shares) == 2 and all(s in (0.0, 0.5, 1.0) for s in shares)
