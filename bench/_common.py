"""Shared helpers of the benchmark scripts: repeats, medians, JSON and a table."""

from __future__ import annotations

import json
import platform
import random
import statistics
import sys
from typing import Any


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def machine() -> dict[str, Any]:
    import os

    return {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}


def table(title: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Print a table for people."""
    widths = [max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns]
    print(title)
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(columns, widths)))


def report(title: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Print a table for people, then one JSON document for programs."""
    table(title, rows, columns)
    print(json.dumps({"benchmark": title, "machine": machine(), "results": rows}, indent=None))


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"
    return str(v)


def random_decision(game: Any, players: int | None, seed: int, moves: int, rng: random.Random) -> Any | None:
    """A decision position after up to `moves` random moves from the opening dealt with `seed`
    (`players` None: the game's default), chance drawn with `rng`; None when the game ended
    first. The positions every benchmark measures on."""
    state = game.new_game(seed=seed) if players is None else game.new_game(players=players, seed=seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        if state.is_chance():
            state.resolve_chance(rng)
        else:
            state.apply(rng.choice(state.legal_actions()))
    while state.is_chance():
        state.resolve_chance(rng)
    return None if state.is_terminal() else state
