"""Shared helpers of the benchmark scripts: repeats, medians, JSON and a table."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import random
import re
import statistics
import sys
from typing import Any

# Where report() keeps each run's raw JSON (not committed: the figures people read are in
# docs/benchmarks.md). HORTUS_BENCH_RESULTS points it elsewhere, e.g. a test's temporary folder.
RESULTS_DIR = pathlib.Path(os.environ.get("HORTUS_BENCH_RESULTS") or pathlib.Path(__file__).resolve().parent / "results")
# One stamp per run, so a script's several reports name the same run.
_RUN_STAMP = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def machine() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}


def table(title: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Print a table for people."""
    widths = [max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns]
    print(title)
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for r in rows:
        print("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(columns, widths)))


def report(title: str, rows: list[dict[str, Any]], columns: list[str]) -> pathlib.Path:
    """Print a table for people, then one JSON document for programs, and write that document
    to ``bench/results/<script>-<UTC time of the run>-<title>.json``; returns that path."""
    table(title, rows, columns)
    document = {
        "benchmark": title,
        "script": _script_name(),
        "run": _RUN_STAMP,
        "argv": sys.argv[1:],
        "machine": machine(),
        "results": rows,
    }
    print(json.dumps(document, indent=None))
    return write_result(title, document)


def write_result(title: str, document: dict[str, Any]) -> pathlib.Path:
    """Write one benchmark's raw JSON under RESULTS_DIR (created when missing)."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "results"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{_script_name()}-{_RUN_STAMP}-{slug}.json"
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return path


def _script_name() -> str:
    return pathlib.Path(sys.argv[0]).stem or "bench"


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
